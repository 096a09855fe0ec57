/*-------------------------------------------------------------------------
 *
 * resolve.h
 *	  A coordinator's host name resolved to its addresses (resolve.c)
 *	  within the deadline of the call, and cancellable like every wait of
 *	  it.
 *
 * snowid_resolve_all() starts the lookups and stores them in lookups[]
 * before it waits, so that the caller can end them with snowid_lookup_end()
 * however the wait ends, a cancel raising its error included: redis/conn.c
 * keeps its one in SnowidRedisConn.lookup, which snowid_conn_close() ends,
 * pgcoord/conn.c its own in the session.  A name's addresses, every one of
 * them to be tried in turn, come out as the text of numeric addresses.
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

/* The most addresses of one name that are tried */
#define SNOWID_RESOLVE_MAX_ADDRESSES	16

/* The longest numeric address (an IPv6 one with a zone), and its NUL */
#define SNOWID_RESOLVE_ADDRESS_LEN	64

typedef struct SnowidLookup SnowidLookup;

extern bool snowid_host_is_address(const char *host);
extern void snowid_resolve_all(const char *const *hosts, int n,
							   const SnowidDeadline *deadline, long wait_ms,
							   SnowidLookup **lookups, int *errors);
extern int	snowid_lookup_count(const SnowidLookup *lookup);
extern bool snowid_lookup_address(const SnowidLookup *lookup, int n,
								  char *text, size_t len);
extern void snowid_resolve_problem(char *buf, size_t len, const char *host,
								   int error, const char *setting,
								   int timeout_ms);
extern void snowid_lookup_end(SnowidLookup *lookup);

#endif							/* SNOWID_UTIL_RESOLVE_H */
