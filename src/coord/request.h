/*-------------------------------------------------------------------------
 *
 * request.h
 *	  The coordination layer's settings and what every call to Redis asks
 *	  for (request.c): where, as whom, within how long.  The glue defines
 *	  the settings as GUCs over these variables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_REQUEST_H
#define SNOWID_COORD_REQUEST_H

#include "redis/topology.h"

extern int	snowid_worker_id;
extern const SnowidRedisTarget *snowid_redis_target;	/* NULL: no Redis */
extern char *snowid_redis_key_prefix;
extern int	snowid_redis_timeout_ms;
extern int	snowid_redis_min_replicas;
extern char *snowid_redis_tls_ca_file;
extern char *snowid_redis_tls_cert_file;
extern char *snowid_redis_tls_key_file;
extern char *snowid_redis_tls_key_passphrase_file;
extern char *snowid_redis_password_file;
extern char *snowid_redis_sentinel_password_file;
extern int	snowid_worker_lease_ms;
extern bool snowid_release_on_shutdown;

extern void snowid_worker_identity(char *identity, size_t len);
extern bool snowid_client_sees_redis(void);
extern void snowid_coord_request(SnowidRedisRequest *request, char *identity,
								 size_t len);

#endif							/* SNOWID_COORD_REQUEST_H */
