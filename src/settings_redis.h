/*-------------------------------------------------------------------------
 *
 * settings_redis.h
 *	  The snowid.redis_* settings of the Redis store (settings_redis.c):
 *	  rows of the settings table (setting_table.h) that a build with Redis
 *	  support defines after the glue's own, as stores.c lists them.
 *	  snowid.redis_url, the older name of snowid.coordinator_url, is the
 *	  glue's (settings.c), in every build.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SETTINGS_REDIS_H
#define SNOWID_SETTINGS_REDIS_H

#include "setting_table.h"

extern const SnowidSetting snowid_redis_settings[];
extern const int snowid_redis_settings_count;

#endif							/* SNOWID_SETTINGS_REDIS_H */
