/*-------------------------------------------------------------------------
 *
 * claim.h
 *	  Claiming a worker id from Redis, for good: the owners hash of a
 *	  datacenter,
 *
 *	{<prefix>:dc:<datacenter>}:owners	field worker id, value identity
 *
 * so "who holds what" is HGETALL of that key.  Next to it, the lease and
 * fence keys of lease.h.  Every claim reads all three: it takes an id only
 * if it can start above the id's fence (every id its holders issued lies
 * below it), and an id whose lease ran out is free.  An id leaves its
 * holder only through a function of the library that fences it first
 * (snowid.lua's fence rule): an administrator frees one with the function
 * snowid_3_free, never with HDEL.
 * The braces are a Redis Cluster hash tag; every key this module may ever add
 * for a datacenter carries the same tag so that the claim script, which
 * touches them together, runs on a cluster.
 *
 *	snowid_redis_try_claim()	talks to Redis and fills a SnowidRedisResult;
 *								never pallocs; ereports only when
 *								CHECK_FOR_INTERRUPTS() ends a wait (a cancel,
 *								a terminate, a shutdown), and every hiredis
 *								object is freed then too.
 *
 * The caller decides what a failure means (for example, try again at the
 * next call when Redis is unreachable, remove the cache file when Redis
 * refused the claim), and reports it with snowid_redis_report() (report.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_CLAIM_H
#define SNOWID_REDIS_CLAIM_H

#include "redis/result.h"
#include "redis/topology.h"

extern void snowid_redis_try_claim(const SnowidRedisTarget *target,
								   const SnowidRedisRequest *request,
								   SnowidRedisResult *result);
extern bool snowid_redis_read_quiet(const char *err,
									const SnowidRedisRequest *request,
									SnowidRedisResult *result);
extern bool snowid_redis_read_fenced(const char *err,
									 const SnowidRedisRequest *request,
									 SnowidRedisResult *result);
extern bool snowid_redis_read_state(const struct redisReply *reply,
									size_t first, SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_CLAIM_H */
