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

#include "coord/store.h"
#include "redis/result.h"
#include "redis/topology.h"

/*
 * What this server asks of Redis about its lease: the lease request of the
 * store interface (coord/store.h), with the Redis request in place of the
 * store's.
 */
typedef struct SnowidRedisLeaseRequest
{
	const SnowidRedisRequest *claim;
	const SnowidLeaseRequest *lease;
} SnowidRedisLeaseRequest;

/*
 * The scripts; never palloc, ereport only for a cancel.  Their signatures
 * are those of the store interface's lease entries (coord/store.h), with
 * Redis' request and result.
 */
extern void snowid_redis_lease_claim(const SnowidRedisTarget *target,
									 const SnowidRedisLeaseRequest *request,
									 SnowidLeaseGrant *grant,
									 SnowidRedisResult *result);
extern SnowidLeaseOutcome snowid_redis_lease_renew(const SnowidRedisTarget *target,
												   const SnowidRedisLeaseRequest *request,
												   SnowidLeaseGrant *grant,
												   SnowidRedisResult *result);
extern SnowidLeaseOutcome snowid_redis_lease_release(const SnowidRedisTarget *target,
													 const SnowidRedisLeaseRequest *request,
													 SnowidRedisResult *result);

#endif							/* SNOWID_LEASE_H */
