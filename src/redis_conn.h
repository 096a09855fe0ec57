/*-------------------------------------------------------------------------
 *
 * redis_conn.h
 *	  One connection to one Redis server, under one deadline: connecting,
 *	  the TLS handshake, sending a command and reading its reply, each wait
 *	  on the socket cancellable and shown as a wait event.
 *
 * A claim opens a connection (or several: sentinels, cluster redirections)
 * with snowid_conn_open(), runs commands with snowid_conn_command() and
 * closes it with snowid_conn_close().  Every wait ends at the claim's
 * deadline, so however slowly a server answers, the whole claim ends within
 * snowid.redis_timeout_ms; a cancel, a terminate or a shutdown ends it
 * within one wake-up (CHECK_FOR_INTERRUPTS() raises its error from inside a
 * wait).  The caller must therefore close its connection in PG_FINALLY:
 * hiredis allocates with malloc.
 *
 * Failures are written into a SnowidClaimResult (redis_claim.h): the status
 * and a sentence of our own, never a reply of Redis.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_CONN_H
#define SNOWID_REDIS_CONN_H

#include "portability/instr_time.h"

#include "redis_claim.h"

/*
 * hiredis versions.  snowid builds with hiredis 0.14 (Debian 12) and 1.x
 * (Debian 13, Ubuntu 24.04).  The transport uses only the calls both have
 * (redisConnectNonBlock, redisConnectUnixNonBlock, redisAppendCommandArgv,
 * redisBufferWrite, redisBufferRead, redisGetReplyFromReader); the one
 * difference is TLS, which only hiredis 1.x built with hiredis_ssl offers.
 * The Makefile defines SNOWID_HAVE_HIREDIS_SSL when pkg-config finds
 * hiredis_ssl; everything that needs it is in redis_tls.c.
 */
#ifdef SNOWID_HAVE_HIREDIS_SSL
#define SNOWID_REDIS_TLS_SUPPORTED	true
#else
#define SNOWID_REDIS_TLS_SUPPORTED	false
#endif

struct redisContext;
struct redisReply;

/* The deadline of a claim, on the monotonic clock */
typedef struct SnowidDeadline
{
	instr_time	start;
	int			timeout_ms;
} SnowidDeadline;

/* An open connection; context NULL when closed */
typedef struct SnowidRedisConn
{
	struct redisContext *context;
	void	   *tls;			/* SSL *, or NULL */
	bool		tls_on;			/* hiredis owns tls (frees it with
								 * context) */
	bool		tls_cert_requested; /* the server asked for a client
									 * certificate and we had none */
	const SnowidDeadline *deadline;
} SnowidRedisConn;

/* TLS settings: file names, NULL or "" for none */
typedef struct SnowidRedisTls
{
	const char *ca_file;		/* NULL: the system's CAs */
	const char *cert_file;
	const char *key_file;
} SnowidRedisTls;

extern void snowid_deadline_start(SnowidDeadline *deadline, int timeout_ms);
extern long snowid_deadline_remaining(const SnowidDeadline *deadline);
extern double snowid_deadline_elapsed(const SnowidDeadline *deadline);

extern bool snowid_conn_open(SnowidRedisConn *conn,
							 const SnowidRedisNode *node,
							 const SnowidRedisTls *tls,
							 const SnowidDeadline *deadline,
							 SnowidClaimResult *result);
extern struct redisReply *snowid_conn_command(SnowidRedisConn *conn, int argc,
											  const char **argv,
											  SnowidClaimResult *result);
extern void snowid_conn_close(SnowidRedisConn *conn);

extern bool snowid_conn_wait(SnowidRedisConn *conn, int events,
							 SnowidClaimResult *result);

/* redis_tls.c */
extern bool snowid_tls_handshake(SnowidRedisConn *conn,
								 const SnowidRedisNode *node,
								 const SnowidRedisTls *tls,
								 SnowidClaimResult *result);
extern bool snowid_tls_pending(const SnowidRedisConn *conn);
extern void snowid_tls_free(SnowidRedisConn *conn);
extern bool snowid_tls_explain_failure(SnowidRedisConn *conn,
									   SnowidClaimResult *result);

#endif							/* SNOWID_REDIS_CONN_H */
