/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Worker ids on lease (snowid.worker_lease), the Redis side: the
 *	  scripts that claim, renew and give back a lease (lease.c).
 *
 * Keys, next to the owners hash of claim.h and with the same hash tag:
 *
 *	{<prefix>:dc:<datacenter>}:owners	field worker id, value
 *										"lease <identity>" for a lease
 *	{<prefix>:dc:<datacenter>}:leases	field worker id, value
 *										"<expiry> <floor> <token>": when the
 *										lease runs out by Redis' clock (Unix
 *										ms), the fence the holder found when
 *										it took the id, and the token of that
 *										claim (16 hex digits)
 *	{<prefix>:dc:<datacenter>}:fences	field worker id, value the fence:
 *										Unix ms below which lie all ids
 *										issued with that worker id so far,
 *										and all its holder may issue
 *
 * A fence is never removed, and only its holder lowers it, when it gives the
 * id back and has stopped issuing.  Every claim, on lease or for good
 * (claim.c), starts at or above the fence it finds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_LEASE_H
#define SNOWID_LEASE_H

#include "redis/result.h"
#include "redis/topology.h"

/* What this server asks of Redis about its lease */
typedef struct SnowidLeaseRequest
{
	const SnowidRedisRequest *claim;	/* where, as whom, how long to wait;
										 * the preferred worker id is the
										 * one held last, the explicit one
										 * unused */
	int64		lease_ms;		/* snowid.worker_lease */
	int64		wait_ms;		/* a claim: how far past what it can start
								 * above now its own lease's fence may lie
								 * (snowid.max_wait_ms: callers wait for
								 * the clock that long) */
	bool		park;			/* a release: keep the lease, its fence
								 * lowered (a clean stop) */
	const char *token;			/* names one claim: the claim's, and that of
								 * the claim a renewal or release is of */
	/* a renewal or a release only: */
	int			worker_id;		/* the id held */
	int64		fence_ms;		/* Unix ms: renewal, the fence to move up
								 * to; release, the fence to leave */
} SnowidLeaseRequest;

/* How a renewal or a release ended */
typedef enum SnowidLeaseOutcome
{
	SNOWID_LEASE_OK,
	SNOWID_LEASE_LOST,			/* the id is no longer this server's */
	SNOWID_LEASE_FAILED			/* Redis did not answer as it should; the
								 * SnowidRedisResult says why */
} SnowidLeaseOutcome;

/* What Redis answered to a claim or a renewal, in Unix ms */
typedef struct SnowidLeaseGrant
{
	int			worker_id;
	int64		floor_ms;		/* claim: ids must start at or above it */
	int64		fence_ms;		/* ids must stay below it */
	int64		left_ms;		/* lease left by Redis' clock at the reply */
	int64		refused_fence_ms;	/* renewal: the fence Redis holds, past
									 * the one asked for and so not taken;
									 * 0 if none */
} SnowidLeaseGrant;

/* The scripts; never palloc, ereport only for a cancel */
extern void snowid_redis_lease_claim(const SnowidRedisTarget *target,
									 const SnowidLeaseRequest *request,
									 SnowidLeaseGrant *grant,
									 SnowidRedisResult *result);
extern SnowidLeaseOutcome snowid_redis_lease_renew(const SnowidRedisTarget *target,
												   const SnowidLeaseRequest *request,
												   SnowidLeaseGrant *grant,
												   SnowidRedisResult *result);
extern SnowidLeaseOutcome snowid_redis_lease_release(const SnowidRedisTarget *target,
													 const SnowidLeaseRequest *request,
													 SnowidRedisResult *result);

#endif							/* SNOWID_LEASE_H */
