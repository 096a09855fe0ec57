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

#endif							/* SNOWID_COORD_HOLDER_SECRET_H */
