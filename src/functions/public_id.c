/*-------------------------------------------------------------------------
 *
 * public_id.c
 *	  Public ids: an id turned into a number that reveals neither when nor
 *	  where it was made, nor how many came before it, and that number
 *	  printed for people.  doc/public-ids.md is the specification; this
 *	  file and test/public_ids.py implement it.
 *
 * The number is a keyed pseudorandom permutation of [0, 2^63): an
 * alternating Feistel network of SNOWID_PUBLIC_ROUNDS rounds over the two
 * halves of an id, 31 and 32 bits, whose round function is SipHash-2-4
 * keyed with the 128-bit key.  Each round changes one half by a function of
 * the other, so the permutation stays inside 63 bits without cycle walking
 * and runs in constant time.
 *
 * SipHash is written out here for its one message length, a 64-bit word,
 * with the key as two words taken apart once: libsodium's
 * crypto_shorthash_siphash24() gives the same results (SipHash's published
 * vectors hold for both) but, called through its byte interface ten times a
 * conversion, took 1.8 times as long (41 ns a call against 23), too slow
 * for millions of conversions a second.
 *
 * The text is the key id, a hyphen, the number as 13 symbols of Crockford's
 * base32 and a check character: the Damm check over the quasigroup
 * x o y = 2x + y of GF(32), which is weakly totally antisymmetric, so that
 * every single wrong character and every swap of two neighbours changes the
 * check.  Reading is case-insensitive, ignores hyphens, and takes O for 0
 * and I or L for 1, as Crockford's base32 does.
 *
 * Pure functions of their arguments; no state, no locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "functions/public_id.h"

#define SNOWID_HIGH_BITS	31	/* the half above */
#define SNOWID_LOW_BITS		32	/* the half below */
#define SNOWID_HALF_MASK(bits)	((UINT64CONST(1) << (bits)) - 1)

/* The 32 symbols of Crockford's base32, by value */
static const char snowid_symbols[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

#define SNOWID_ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound */
#define SNOWID_SIPROUND \
	do { \
		v0 += v1; v1 = SNOWID_ROTL(v1, 13); v1 ^= v0; v0 = SNOWID_ROTL(v0, 32); \
		v2 += v3; v3 = SNOWID_ROTL(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = SNOWID_ROTL(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = SNOWID_ROTL(v1, 17); v1 ^= v2; v2 = SNOWID_ROTL(v2, 32); \
	} while (0)

/*
 * snowid_siphash_word
 *		SipHash-2-4 under the key (k0, k1) of the 8-byte message that is
 *		the word m in little-endian order: one block, the final block that
 *		holds only the length, and the finalization.
 */
static inline uint64
snowid_siphash_word(const uint64 *key, uint64 m)
{
	uint64		v0 = key[0] ^ UINT64CONST(0x736f6d6570736575);
	uint64		v1 = key[1] ^ UINT64CONST(0x646f72616e646f6d);
	uint64		v2 = key[0] ^ UINT64CONST(0x6c7967656e657261);
	uint64		v3 = key[1] ^ UINT64CONST(0x7465646279746573);
	uint64		last = UINT64CONST(8) << 56;	/* the message length */

	v3 ^= m;
	SNOWID_SIPROUND;
	SNOWID_SIPROUND;
	v0 ^= m;
	v3 ^= last;
	SNOWID_SIPROUND;
	SNOWID_SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SNOWID_SIPROUND;
	SNOWID_SIPROUND;
	SNOWID_SIPROUND;
	SNOWID_SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * snowid_round
 *		The round function: SipHash-2-4 of the round number and a half, as
 *		one 64-bit word (round << 32 | half).
 */
static inline uint64
snowid_round(const uint64 *key, int round, uint64 half)
{
	return snowid_siphash_word(key, ((uint64) round << 32) | half);
}

/*
 * snowid_public_key_words
 *		A 16-byte key as SipHash's two words, k0 and k1, each 8 bytes in
 *		little-endian order.
 */
void
snowid_public_key_words(const uint8 *bytes, uint64 *key)
{
	key[0] = 0;
	key[1] = 0;
	for (int i = 7; i >= 0; i--)
	{
		key[0] = (key[0] << 8) | bytes[i];
		key[1] = (key[1] << 8) | bytes[8 + i];
	}
}

/*
 * snowid_feistel
 *		The rounds of the permutation, forwards or backwards: even rounds
 *		change the high 31 bits by the low 32, odd rounds the low 32 by the
 *		high 31.  Each round undoes itself, so backwards is the inverse.
 */
static inline uint64
snowid_feistel(const uint64 *key, uint64 x, bool forwards)
{
	uint64		high = x >> SNOWID_LOW_BITS;
	uint64		low = x & SNOWID_HALF_MASK(SNOWID_LOW_BITS);

	Assert(x >> 63 == 0);
	for (int i = 0; i < SNOWID_PUBLIC_ROUNDS; i++)
	{
		int			round = forwards ? i : SNOWID_PUBLIC_ROUNDS - 1 - i;

		if (round % 2 == 0)
			high ^= snowid_round(key, round, low) &
				SNOWID_HALF_MASK(SNOWID_HIGH_BITS);
		else
			low ^= snowid_round(key, round, high) &
				SNOWID_HALF_MASK(SNOWID_LOW_BITS);
	}
	return (high << SNOWID_LOW_BITS) | low;
}

/*
 * snowid_permute
 *		The number of an id in [0, 2^63).
 */
uint64
snowid_permute(const uint64 *key, uint64 id)
{
	return snowid_feistel(key, id, true);
}

/*
 * snowid_unpermute
 *		The id of a number.
 */
uint64
snowid_unpermute(const uint64 *key, uint64 number)
{
	return snowid_feistel(key, number, false);
}

/*
 * snowid_public_symbol
 *		The value of a character of a public id, 0 to 31, or -1 if it is
 *		none: either case, O read as 0, I and L as 1; U is none.
 */
int
snowid_public_symbol(char c)
{
	const char *found;

	if (c >= 'a' && c <= 'z')
		c -= 'a' - 'A';
	if (c == 'O')
		return 0;
	if (c == 'I' || c == 'L')
		return 1;
	if (c == '\0' || (found = strchr(snowid_symbols, c)) == NULL)
		return -1;
	return (int) (found - snowid_symbols);
}

/*
 * snowid_damm_step
 *		One step of the check: state o symbol = 2 * state + symbol in
 *		GF(32) = GF(2)[x] / (x^5 + x^2 + 1), where + is exclusive or.
 */
static inline int
snowid_damm_step(int state, int symbol)
{
	int			doubled = ((state << 1) & 0x1f) ^ ((state & 0x10) ? 0x05 : 0);

	return doubled ^ symbol;
}

/*
 * snowid_public_key_id_problem
 *		What is wrong with a key id, as a sentence, or NULL if it is a good
 *		one: 1 to 8 letters and digits, none of I, L, O and U, which a
 *		public id would read as other characters or refuse.
 */
const char *
snowid_public_key_id_problem(const char *key_id, int len)
{
	if (len < 1 || len > SNOWID_PUBLIC_KEY_ID_MAX)
		return "A key id has 1 to 8 characters.";
	for (int i = 0; i < len; i++)
	{
		char		c = key_id[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9')))
			return "A key id has only letters and digits.";
		if (strchr("ILOUilou", c) != NULL)
			return "A key id has no I, L, O or U: public ids read I and L as 1, O as 0, and have no U.";
	}
	return NULL;
}

/*
 * snowid_public_key_ids_confusable
 *		Whether one wrong character count can turn a public id made with one
 *		of these key ids (good ones, in capitals) into a text that reads,
 *		check and all, as made with the other.  Only a key id one character
 *		longer than the other can, and only if it is the shorter one with a
 *		character x put in at place p where either
 *
 *		  - p is its end: a character put into the body, where the check
 *			does not see it, makes the body's first character the key id's
 *			last (as "K1" and "K10"); or
 *		  - x is 3 * s, s the check's state after the characters before p:
 *			then s o x = s, and the check does not see x (as "1" and "01",
 *			the state being 0 at the start of every text).
 *
 *		A dropped character is the same change the other way.  Two key ids
 *		of the same length are never confused by one wrong character or a
 *		swap of two neighbours: the check catches those.
 */
bool
snowid_public_key_ids_confusable(const char *a, const char *b)
{
	const char *shorter = strlen(a) < strlen(b) ? a : b;
	const char *longer = shorter == a ? b : a;
	int			len = (int) strlen(shorter);
	int			state = 0;

	if ((int) strlen(longer) != len + 1)
		return false;
	for (int p = 0; p <= len; p++)
	{
		/* longer is shorter with longer[p] put in at p? */
		if (strncmp(shorter, longer, p) == 0 &&
			strcmp(shorter + p, longer + p + 1) == 0)
		{
			int			x = snowid_public_symbol(longer[p]);

			if (p == len || x == (snowid_damm_step(state, 0) ^ state))
				return true;
		}
		if (p < len)
			state = snowid_damm_step(state, snowid_public_symbol(shorter[p]));
	}
	return false;
}

/*
 * snowid_public_format
 *		Writes the text of a number made with the key of a good key id into
 *		out (SNOWID_PUBLIC_TEXT_MAX + 1 bytes) and returns its length:
 *		KEYID-BBBBBBBBBBBBBC, in capitals.
 */
int
snowid_public_format(const char *key_id, uint64 number, char *out)
{
	int			state = 0;
	int			n = 0;

	for (const char *k = key_id; *k != '\0'; k++)
	{
		int			symbol = snowid_public_symbol(*k);

		Assert(symbol >= 0);
		out[n++] = snowid_symbols[symbol];
		state = snowid_damm_step(state, symbol);
	}
	out[n++] = '-';
	for (int i = SNOWID_PUBLIC_BODY_SYMBOLS - 1; i >= 0; i--)
	{
		int			symbol = (int) ((number >> (5 * i)) & 0x1f);

		out[n++] = snowid_symbols[symbol];
		state = snowid_damm_step(state, symbol);
	}
	/* the symbol that brings the state to 0 */
	out[n++] = snowid_symbols[snowid_damm_step(state, 0)];
	out[n] = '\0';
	return n;
}

/*
 * snowid_public_parse
 *		Reads a public id: its key id (in capitals, into key_id, which holds
 *		SNOWID_PUBLIC_KEY_ID_MAX + 1 bytes) and its number.  Returns what is
 *		wrong with it, as a sentence for an error detail, or NULL.
 */
char *
snowid_public_parse(const char *text, int len, char *key_id, uint64 *number)
{
	int			symbols[SNOWID_PUBLIC_KEY_ID_MAX + SNOWID_PUBLIC_BODY_SYMBOLS + 1];
	int			n = 0;
	int			key_len;
	int			state = 0;
	uint64		value = 0;

	for (int i = 0; i < len; i += pg_mblen(text + i))
	{
		int			symbol;

		if (text[i] == '-')
			continue;
		symbol = snowid_public_symbol(text[i]);
		if (symbol < 0)
		{
			if (text[i] == ' ')
				return pstrdup("It contains a space.");
			if ((unsigned char) text[i] < 0x20 || text[i] == 0x7f)
				return psprintf("It contains the control character 0x%02x.",
								(unsigned char) text[i]);
			return psprintf("It contains \"%.*s\", which public ids do not use.",
							pg_mblen(text + i), text + i);
		}
		if (n == lengthof(symbols))
			return psprintf("A public id is a key id of 1 to %d characters followed by %d characters; this one is longer.",
							SNOWID_PUBLIC_KEY_ID_MAX,
							SNOWID_PUBLIC_BODY_SYMBOLS + 1);
		symbols[n++] = symbol;
	}

	key_len = n - (SNOWID_PUBLIC_BODY_SYMBOLS + 1);
	if (key_len < 1)
		return psprintf("A public id is a key id of 1 to %d characters followed by %d characters; this one has %d besides hyphens.",
						SNOWID_PUBLIC_KEY_ID_MAX,
						SNOWID_PUBLIC_BODY_SYMBOLS + 1, n);

	for (int i = 0; i < n; i++)
		state = snowid_damm_step(state, symbols[i]);
	if (state != 0)
		return pstrdup("Its check character does not match: a character is wrong, or two are swapped.");

	/* the two bits above the 63 of a number are 0 */
	if (symbols[key_len] > 7)
		return pstrdup("It lies outside the range of public ids.");
	for (int i = 0; i < SNOWID_PUBLIC_BODY_SYMBOLS; i++)
		value = (value << 5) | (uint64) symbols[key_len + i];

	for (int i = 0; i < key_len; i++)
		key_id[i] = snowid_symbols[symbols[i]];
	key_id[key_len] = '\0';
	*number = value;
	return NULL;
}
