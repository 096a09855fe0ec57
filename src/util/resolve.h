/*-------------------------------------------------------------------------
 *
 * resolve.h
 *	  A coordinator's host name resolved to its addresses (resolve.c)
 *	  within the deadline of the call, and cancellable like every wait of
 *	  it.
 *
 * snowid_resolve() starts the lookup and stores it in *lookup before it
 * waits, so that the caller can end it with snowid_lookup_end() however
 * the wait ends, a cancel raising its error included: redis/conn.c keeps it
 * in SnowidRedisConn.lookup, which snowid_conn_close() ends.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_UTIL_RESOLVE_H
#define SNOWID_UTIL_RESOLVE_H

#include "util/deadline.h"

/* The longest host name looked up, and its NUL: DNS names are 253 at most */
#define SNOWID_RESOLVE_HOST_LEN		256

/* The most host names snowid_resolve_all() looks up at once */
#define SNOWID_RESOLVE_MAX_HOSTS	16

struct addrinfo;
typedef struct SnowidLookup SnowidLookup;

extern bool snowid_host_is_address(const char *host);
extern int	snowid_resolve(const char *host, const SnowidDeadline *deadline,
						   SnowidLookup **lookup);
extern void snowid_resolve_all(const char *const *hosts, int n,
							   const SnowidDeadline *deadline, long wait_ms,
							   SnowidLookup **lookups, int *errors);
extern const struct addrinfo *snowid_lookup_addresses(const SnowidLookup *lookup);
extern void snowid_lookup_end(SnowidLookup *lookup);

#endif							/* SNOWID_UTIL_RESOLVE_H */
