/*-------------------------------------------------------------------------
 *
 * secret.h
 *	  Files that hold a secret (secret.c): the Redis password, the
 *	  sentinels' password, the TLS key and its passphrase.  A setting names
 *	  the file, never holds the secret: even a GUC_SUPERUSER_ONLY setting is
 *	  readable by members of pg_read_all_settings.
 *
 * The rule for the files is util/secret_file.h's.  A password
 * or passphrase is the file's first line, read at each connection and
 * wiped after use; nothing of it is kept or shown.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_SECRET_H
#define SNOWID_REDIS_SECRET_H

#include "redis/result.h"

extern int	snowid_secret_file_open(const char *path, const char *setting,
									SnowidRedisResult *result);
extern bool snowid_secret_file_read(const char *path, const char *setting,
									char *buf, size_t len,
									SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_SECRET_H */
