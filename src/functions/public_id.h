/*-------------------------------------------------------------------------
 *
 * public_id.h
 *	  Public ids (public_id.c): a keyed pseudorandom permutation of the
 *	  non-negative 63-bit ids, and its text of Crockford's base32 with a
 *	  check character.  Pure functions of their arguments: the key comes
 *	  from the caller.  doc/public-ids.md is the specification.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_FUNCTIONS_PUBLIC_ID_H
#define SNOWID_FUNCTIONS_PUBLIC_ID_H

#define SNOWID_PUBLIC_KEY_BYTES		16	/* 128 bits, SipHash's key */
#define SNOWID_PUBLIC_KEY_WORDS		2	/* the same as k0 and k1 */
#define SNOWID_PUBLIC_ROUNDS		10	/* Feistel rounds, as in NIST FF1 */
#define SNOWID_PUBLIC_KEY_ID_MAX	8	/* characters of a key id */

/* 13 base32 symbols hold 65 bits, the 63 of a number with 2 to spare */
#define SNOWID_PUBLIC_BODY_SYMBOLS	13

/* key id, hyphen, body, check character */
#define SNOWID_PUBLIC_TEXT_MAX \
	(SNOWID_PUBLIC_KEY_ID_MAX + 1 + SNOWID_PUBLIC_BODY_SYMBOLS + 1)

extern void snowid_public_key_words(const uint8 *bytes, uint64 *key);
extern uint64 snowid_permute(const uint64 *key, uint64 id);
extern uint64 snowid_unpermute(const uint64 *key, uint64 number);
extern int	snowid_public_symbol(char c);
extern const char *snowid_public_key_id_problem(const char *key_id, int len);
extern bool snowid_public_key_ids_confusable(const char *a, const char *b);
extern int	snowid_public_format(const char *key_id, uint64 number,
								 char *out);
extern char *snowid_public_parse(const char *text, int len, char *key_id,
								 uint64 *number);

#endif							/* SNOWID_FUNCTIONS_PUBLIC_ID_H */
