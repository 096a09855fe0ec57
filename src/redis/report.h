/*-------------------------------------------------------------------------
 *
 * report.h
 *	  snowid_redis_report() turns a failed SnowidRedisResult into an
 *	  ereport at the given level; for a successful claim it only warns if
 *	  Redis may evict it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_REPORT_H
#define SNOWID_REDIS_REPORT_H

#include "redis/result.h"
#include "redis/topology.h"

extern void snowid_redis_report(int elevel, const SnowidRedisRequest *request,
								const SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_REPORT_H */
