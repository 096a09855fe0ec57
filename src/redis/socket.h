/*-------------------------------------------------------------------------
 *
 * socket.h
 *	  What a connection to Redis is made of (socket.c): its deadline, the
 *	  connection itself (plain or TLS) and the lookup of its host name,
 *	  and one wait on its socket that a cancel can end.  conn.c, tls.c and
 *	  resolve.c build on it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_SOCKET_H
#define SNOWID_REDIS_SOCKET_H

#include "portability/instr_time.h"

#include "redis/result.h"
#include "util/deadline.h"

struct redisContext;
struct SnowidLookup;

/* An open connection; context NULL when closed */
typedef struct SnowidRedisConn
{
	struct redisContext *context;
	void	   *tls;			/* SSL *, or NULL */
	bool		tls_on;			/* hiredis owns tls (frees it with
								 * context) */
	bool		tls_cert_requested; /* the server asked for a client
									 * certificate and we had none */
	struct SnowidLookup *lookup;	/* while connecting: the host name's
									 * lookup (resolve.h), or NULL */
	const SnowidDeadline *deadline;
} SnowidRedisConn;

/* TLS settings: file names, NULL or "" for none */
typedef struct SnowidRedisTls
{
	const char *ca_file;		/* NULL: the system's CAs */
	const char *cert_file;
	const char *key_file;
	const char *key_passphrase_file;	/* the key's passphrase; NULL or ""
										 * for an unencrypted key */
} SnowidRedisTls;

extern bool snowid_conn_wait(SnowidRedisConn *conn, int events,
							 SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_SOCKET_H */
