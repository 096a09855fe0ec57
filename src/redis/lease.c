/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  The Redis side of worker ids on lease: calling the functions of
 *	  snowid's library (snowid.lua) that claim, renew and give back a lease
 *	  with its fence, and the reading of their replies.  The keys are described in lease.h; connecting, logging in
 *	  and following cluster redirections is topology.c's.
 *
 * Every lease carries the token of the claim that granted it, and only the
 * process that holds that claim renews or releases it: a release that comes
 * late (after a new claim by the same server) changes nothing.
 *
 * Every function reads Redis' own clock (TIME), so a lease runs out when
 * Redis says so, whatever the clocks of the servers holding it say; the
 * fences are in the ids' clock (Unix ms), which Redis only compares and
 * stores.  Nothing here touches shared memory, takes a lock or pallocs; as
 * in a claim, only a cancel ereports (from a wait on Redis), and every
 * hiredis object is freed before a function returns or raises.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include <hiredis/hiredis.h>

#include "redis/claim.h"
#include "redis/lease.h"
#include "redis/scripts.h"

/*
 * The functions of snowid.lua that this file calls, which say what they do:
 *
 *	snowid_3_lease_claim	numbers: the highest worker id, the lease (ms),
 *							where the claiming server's generator is (Unix
 *							ms), the latest fence it can start above now,
 *							the worker id it held last or -1, how far
 *							past that its own lease's fence may lie, and
 *							for the forgetting rule the quiet period, the
 *							generation and counter seen and the clock
 *							margin; replies {worker id, floor, fence,
 *							lease}, or refuses with SNOWID_ALL_HELD,
 *							SNOWID_FENCED or SNOWID_QUIET
 *	snowid_3_lease_renew	numbers: the worker id, the lease (ms), the fence
 *							wanted, the quiet period, the generator, the
 *							generation and counter seen and the clock
 *							margin; replies {worker id, floor, fence,
 *							lease} or SNOWID_LOST <holder>
 *	snowid_3_lease_release	numbers: the worker id, the final fence and
 *							1 to park the lease (keep it, its fence
 *							lowered); replies 1, or 0 if the id was not
 *							this server's lease of that claim
 *
 * Each takes the datacenter's three keys, the identity, its numbers and the
 * token of the claim.
 */

/* Reads the reply of a renewal or a release into an outcome */
typedef SnowidLeaseOutcome (*SnowidLeaseReader) (const redisReply *reply,
												 const SnowidRedisLeaseRequest *request,
												 SnowidLeaseGrant *grant,
												 SnowidRedisResult *result);

/*
 * Call a function on the worker id this server holds
 * (request->lease->worker_id), with the id, the lease (with_lease) and the
 * fence (and for a release whether to park) as its numbers and the token of
 * the claim, and let read say how it ended; what names the function in the
 * message of a reply read cannot place.
 */
static SnowidLeaseOutcome
snowid_lease_on_id(const SnowidRedisTarget *target,
				   const SnowidRedisLeaseRequest *request,
				   SnowidScriptFunction function, bool with_lease,
				   SnowidLeaseReader read, const char *what,
				   SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	char		numbers[192];
	SnowidScriptCall call = {function, numbers, request->lease->token};
	redisReply *reply;
	SnowidLeaseOutcome outcome;

	/* a renewal: with what re-asserts the lease in a quiet period */
	if (with_lease)
		snprintf(numbers, sizeof(numbers), "%d " INT64_FORMAT " " INT64_FORMAT
				 " " INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT " "
				 INT64_FORMAT " " INT64_FORMAT,
				 request->lease->worker_id, request->lease->lease_ms,
				 request->lease->fence_ms, request->claim->quiet_ms,
				 request->claim->client_ms, request->claim->seen.generation,
				 request->claim->seen.counter,
				 request->claim->clock_margin_ms);
	else
		snprintf(numbers, sizeof(numbers), "%d " INT64_FORMAT "%s",
				 request->lease->worker_id, request->lease->fence_ms,
				 request->lease->park ? " 1" : "");
	reply = snowid_script_run(target, request->claim, &call, result);
	if (reply == NULL)
		return SNOWID_LEASE_FAILED;
	outcome = read(reply, request, grant, result);
	if (outcome == SNOWID_LEASE_OK || outcome == SNOWID_LEASE_LOST)
		result->status = SNOWID_REDIS_OK;
	else if (reply->type == REDIS_REPLY_ERROR)
		snowid_redis_error_reply(target, reply->str, result);
	else
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The lease %s script returned a reply of unexpected shape.",
						  what);
	freeReplyObject(reply);
	return outcome;
}

/*
 * Read a {worker id, floor, fence, lease, generation, counter} reply into
 * grant and result's state; false if it has another shape or a value no
 * script of ours returns.  The caller checks the grant against its request
 * (coord/store.c).
 */
static bool
snowid_lease_read_grant(const redisReply *reply,
						const SnowidRedisLeaseRequest *request,
						SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	size_t		i;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 4 ||
		!snowid_redis_read_state(reply, 4, result))
		return false;
	for (i = 0; i < 4; i++)
	{
		if (reply->element[i]->type != REDIS_REPLY_INTEGER ||
			reply->element[i]->integer < 0)
			return false;
	}
	if (reply->element[0]->integer > INT_MAX)
		return false;
	grant->worker_id = (int) reply->element[0]->integer;
	grant->floor_ms = reply->element[1]->integer;
	grant->fence_ms = reply->element[2]->integer;
	grant->left_ms = reply->element[3]->integer;
	grant->refused_fence_ms = 0;
	return true;
}

/*
 * The reply to a renewal: the grant, or SNOWID_LOST with the holder;
 * FAILED for any other.  The script returns the fence Redis holds if that
 * is past the one asked for, which no holder of this claim wrote: it is not
 * taken (grant->refused_fence_ms keeps it for the caller to report); the
 * fence asked for is, as Redis holds at least that.
 */
static SnowidLeaseOutcome
snowid_lease_read_renewal(const redisReply *reply,
						  const SnowidRedisLeaseRequest *request,
						  SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	if (reply->type == REDIS_REPLY_ERROR &&
		strncmp(reply->str, "SNOWID_LOST ", 12) == 0)
	{
		strlcpy(result->holder, reply->str + 12, sizeof(result->holder));
		return SNOWID_LEASE_LOST;
	}
	if (reply->type == REDIS_REPLY_ERROR ||
		!snowid_lease_read_grant(reply, request, grant, result) ||
		!snowid_store_renewal_fits(request->lease, grant))
		return SNOWID_LEASE_FAILED;
	return SNOWID_LEASE_OK;
}

/*
 * The reply to a release: 1 given back, 0 not this server's any more;
 * FAILED for any other.
 */
static SnowidLeaseOutcome
snowid_lease_read_release(const redisReply *reply,
						  const SnowidRedisLeaseRequest *request,
						  SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	if (reply->type != REDIS_REPLY_INTEGER ||
		(reply->integer != 0 && reply->integer != 1))
		return SNOWID_LEASE_FAILED;
	return reply->integer == 1 ? SNOWID_LEASE_OK : SNOWID_LEASE_LOST;
}

/*
 * Claim a worker id on lease, under request->lease->token.  Fills result
 * (status OK or why not) and, when OK, grant.
 */
void
snowid_redis_lease_claim(const SnowidRedisTarget *target,
						 const SnowidRedisLeaseRequest *request,
						 SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	char		numbers[192];
	SnowidScriptCall call = {SNOWID_SCRIPT_LEASE_CLAIM, numbers,
	request->lease->token};
	redisReply *reply;

	snprintf(numbers, sizeof(numbers),
			 "%d " INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT " %d "
			 INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT
			 " " INT64_FORMAT,
			 request->claim->max_worker_id, request->lease->lease_ms,
			 request->claim->client_ms, request->claim->usable_ms,
			 request->claim->preferred_worker_id, request->lease->wait_ms,
			 request->claim->quiet_ms, request->claim->seen.generation,
			 request->claim->seen.counter, request->claim->clock_margin_ms);
	reply = snowid_script_run(target, request->claim, &call, result);
	if (reply == NULL)
		return;

	if (reply->type == REDIS_REPLY_ERROR)
	{
		if (strncmp(reply->str, "SNOWID_ALL_HELD ", 16) == 0)
			result->status = SNOWID_REDIS_ALL_HELD;
		else if (strncmp(reply->str, "SNOWID_QUIET ", 13) == 0)
		{
			if (!snowid_redis_read_quiet(reply->str, request->claim, result))
				snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
								  "The lease claim script refused with a malformed end of a quiet period.");
		}
		else if (strncmp(reply->str, "SNOWID_FENCED ", 14) == 0)
		{
			if (!snowid_redis_read_fenced(reply->str, request->claim, result))
				snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
								  "The lease claim script refused with a malformed fence.");
		}
		else
			snowid_redis_error_reply(target, reply->str, result);
	}
	else if (snowid_lease_read_grant(reply, request, grant, result) &&
			 snowid_store_lease_fits(request->lease, grant))
	{
		result->status = SNOWID_REDIS_OK;
		result->worker_id = grant->worker_id;
		result->floor_ms = grant->floor_ms;
	}
	else
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The lease claim script returned a reply of unexpected shape.");
	freeReplyObject(reply);
}

/*
 * Renew this server's lease on worker_id, of the claim
 * request->lease->token names, and move its fence up to fence_ms (Unix
 * ms).  OK with grant filled, LOST with the holder (if any) in
 * result->holder, or FAILED with result saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_renew(const SnowidRedisTarget *target,
						 const SnowidRedisLeaseRequest *request,
						 SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	return snowid_lease_on_id(target, request, SNOWID_SCRIPT_LEASE_RENEW,
							  true, snowid_lease_read_renewal, "renewal",
							  grant, result);
}

/*
 * Give worker_id back, of the claim request->lease->token names, leaving
 * fence_ms (Unix ms, just past this server's last id) as its fence.  OK,
 * LOST if it was not this server's lease any more, or FAILED with result
 * saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_release(const SnowidRedisTarget *target,
						   const SnowidRedisLeaseRequest *request,
						   SnowidRedisResult *result)
{
	return snowid_lease_on_id(target, request, SNOWID_SCRIPT_LEASE_RELEASE,
							  false, snowid_lease_read_release, "release",
							  NULL, result);
}
