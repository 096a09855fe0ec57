/*-------------------------------------------------------------------------
 *
 * store.h
 *	  Redis as a claim store (store.c): the SnowidStore that src/stores.c
 *	  registers, and the snowid.redis_* settings it is configured by, which
 *	  the glue defines as GUCs over these variables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_STORE_H
#define SNOWID_REDIS_STORE_H

#include "coord/store.h"
#include "redis/url.h"

extern char *snowid_redis_key_prefix;
extern int	snowid_redis_timeout_ms;
extern int	snowid_redis_min_replicas;
extern char *snowid_redis_tls_ca_file;
extern char *snowid_redis_tls_cert_file;
extern char *snowid_redis_tls_key_file;
extern char *snowid_redis_tls_key_passphrase_file;
extern char *snowid_redis_password_file;
extern char *snowid_redis_sentinel_password_file;
extern const SnowidRedisHostList *snowid_redis_redirect_hosts;

extern const SnowidStore snowid_redis_store;

#endif							/* SNOWID_REDIS_STORE_H */
