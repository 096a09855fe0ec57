/*-------------------------------------------------------------------------
 *
 * report.h
 *	  snowid_redis_report() turns a failed SnowidRedisResult into an
 *	  ereport at the given level; for a successful claim it only warns if
 *	  Redis may evict it.  snowid_redis_report_script_path() warns, once a
 *	  process, of a call that ran snowid's library as a script because the
 *	  library is not loaded or the user may not FCALL (to the server log
 *	  only where the client may not see the Redis set-up).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_REPORT_H
#define SNOWID_REDIS_REPORT_H

#include "redis/result.h"
#include "redis/topology.h"

extern void snowid_redis_report(int elevel, const SnowidRedisRequest *request,
								const SnowidRedisResult *result);
extern void snowid_redis_report_script_path(const SnowidRedisRequest *request,
											 const SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_REPORT_H */
