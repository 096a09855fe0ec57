/*-------------------------------------------------------------------------
 *
 * resolve.h
 *	  A Redis server's host name resolved to its addresses (resolve.c)
 *	  within the deadline of the call, and cancellable like every wait on
 *	  a socket.
 *
 * snowid_resolve() starts the lookup and stores it in *lookup before it
 * waits, so that the caller can end it with snowid_lookup_end() however
 * the wait ends, a cancel raising its error included: conn.c keeps it in
 * SnowidRedisConn.lookup, which snowid_conn_close() ends.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_RESOLVE_H
#define SNOWID_REDIS_RESOLVE_H

#include "redis/result.h"
#include "redis/socket.h"

struct addrinfo;
typedef struct SnowidLookup SnowidLookup;

extern bool snowid_host_is_address(const char *host);
extern bool snowid_resolve(const char *host, const SnowidDeadline *deadline,
						   SnowidLookup **lookup, SnowidRedisResult *result);
extern const struct addrinfo *snowid_lookup_addresses(const SnowidLookup *lookup);
extern void snowid_lookup_end(SnowidLookup *lookup);

#endif							/* SNOWID_REDIS_RESOLVE_H */
