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

/* The hash a store keeps of a secret, and its proofs are made with */
typedef enum SnowidProofHash
{
	SNOWID_PROOF_SHA1,			/* Redis: redis.sha1hex */
	SNOWID_PROOF_SHA256			/* a coordination database: sha256() */
} SnowidProofHash;

extern void snowid_holder_proof(const char *secret, SnowidProofHash hash,
								const char *pad, char *proof);
extern void snowid_holder_proof_after(int64 last_n);

#endif							/* SNOWID_COORD_HOLDER_SECRET_H */
