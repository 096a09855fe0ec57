/*-------------------------------------------------------------------------
 *
 * conn.h
 *	  One connection to one Redis server, under one deadline: resolving
 *	  its host name, connecting, the TLS handshake, sending a command and
 *	  reading its reply, each wait cancellable and shown as a wait event.
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
 * Failures are written into a SnowidRedisResult (result.h): the status
 * and a sentence of our own, never a reply of Redis.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_CONN_H
#define SNOWID_REDIS_CONN_H

#include "redis/result.h"
#include "redis/url.h"

#include "redis/socket.h"

struct redisReply;

extern bool snowid_conn_open(SnowidRedisConn *conn,
							 const SnowidRedisNode *node,
							 const SnowidRedisTls *tls,
							 const SnowidDeadline *deadline,
							 SnowidRedisResult *result);
extern struct redisReply *snowid_conn_command(SnowidRedisConn *conn, int argc,
											  const char **argv,
											  SnowidRedisResult *result);
extern void snowid_conn_close(SnowidRedisConn *conn);

#endif							/* SNOWID_REDIS_CONN_H */
