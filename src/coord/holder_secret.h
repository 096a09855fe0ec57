/*-------------------------------------------------------------------------
 *
 * holder_secret.h
 *	  This server's holder secret (holder_secret.c), which every call to a
 *	  claim store sends so that only this server acts as its holder name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_HOLDER_SECRET_H
#define SNOWID_COORD_HOLDER_SECRET_H

/* Hexadecimal digits of a secret (32 random bytes), without the NUL */
#define SNOWID_HOLDER_SECRET_LEN	64

extern void snowid_holder_secret(char *secret);

/*
 * A holder proof, which a call sends in place of the secret (holder_secret.c):
 * "<n>:<proof>", and to register the key ":<key>" after it; at most
 * 20 + 1 + 64 + 1 + 64 bytes and a NUL
 */
#define SNOWID_HOLDER_PROOF_LEN		160

/*
 * A proof is the hash of its text: the holder's key, n, and the call it is
 * for (the function's name, then every argument the call sends but the
 * proof, in order; an SQL NULL as nothing), each part ended by the
 * character of this code (a line feed), but the last.  No part holds one:
 * the stores refuse an identity with a control character, and the other
 * arguments are numbers, keys and tokens.  A number of the protocol, which
 * snowid.lua and snowid_coordinator name (test/tools/protocol).
 */
#define SNOWID_PROOF_SEPARATOR		10

/* The most parts of a call a proof is made for (its name and arguments) */
#define SNOWID_PROOF_CALL_PARTS_MAX	16

/* The hash a store keeps of a secret, and its proofs are made with */
typedef enum SnowidProofHash
{
	SNOWID_PROOF_SHA1,			/* Redis: redis.sha1hex */
	SNOWID_PROOF_SHA256			/* a coordination database: sha256() */
} SnowidProofHash;

extern void snowid_holder_proof(const char *secret, SnowidProofHash hash,
								const char *pad, const char *const *call,
								int call_parts, char *proof);
extern bool snowid_holder_proof_after(const char *text);

#endif							/* SNOWID_COORD_HOLDER_SECRET_H */
