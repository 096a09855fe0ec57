/*-------------------------------------------------------------------------
 *
 * tls.h
 *	  TLS on a connection (rediss://): the handshake, and what the
 *	  connection needs to know of it.  Without hiredis_ssl every function
 *	  reports that TLS is not available.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_TLS_H
#define SNOWID_REDIS_TLS_H

#include "redis/socket.h"
#include "redis/url.h"

extern bool snowid_tls_handshake(SnowidRedisConn *conn,
								 const SnowidRedisNode *node,
								 const SnowidRedisTls *tls,
								 SnowidRedisResult *result);
extern bool snowid_tls_pending(const SnowidRedisConn *conn);
extern void snowid_tls_free(SnowidRedisConn *conn);
extern bool snowid_tls_explain_failure(SnowidRedisConn *conn,
									   SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_TLS_H */
