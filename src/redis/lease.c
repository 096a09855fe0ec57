/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  The Redis side of worker ids on lease: the Lua scripts that claim,
 *	  renew and give back a lease with its fence, and the reading of their
 *	  replies.  The keys are described in lease.h; connecting, logging in
 *	  and following cluster redirections is topology.c's.
 *
 * Every lease carries the token of the claim that granted it, and only the
 * process that holds that claim renews or releases it: a release that comes
 * late (after a new claim by the same server) changes nothing.
 *
 * Every script reads Redis' own clock (TIME), so a lease runs out when
 * Redis says so, whatever the clocks of the servers holding it say; the
 * fences are in the ids' clock (Unix ms), which Redis only compares and
 * stores.  Nothing here touches shared memory, takes a lock or pallocs; as
 * in a claim, only a cancel ereports (from a wait on Redis), and every
 * hiredis object is freed before a function returns or raises.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <hiredis/hiredis.h>

#include "redis/claim.h"
#include "redis/lease.h"
#include "redis/scripts.h"

/*
 * Every script takes the identity and two more arguments: its numbers,
 * separated by spaces, and a token.  (Redis refuses a command of more than
 * ten words before AUTH, which would hide why a script without a password
 * fails.)
 */

/* What every script starts with: its keys, its holder name, Redis' time */
#define SNOWID_LEASE_SCRIPT_HEAD \
"if redis.replicate_commands then pcall(redis.replicate_commands) end\n" \
"local owners, leases, fences = KEYS[1], KEYS[2], KEYS[3]\n" \
"local me = 'lease ' .. ARGV[1]\n" \
"local t = redis.call('TIME')\n" \
"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

/*
 * The lease of worker id k, if it is this server's and was granted with
 * token tok: its floor, or nil.  A lease value is "<expiry> <floor>
 * <token>"; one of an older version, without a token, is no one's.
 */
#define SNOWID_LEASE_SCRIPT_MINE \
"local function my_floor(k, tok)\n" \
"  local v = redis.call('HGET', leases, k)\n" \
"  local b, vt = string.match(v or '', '^%d+ (%d+) (%x+)$')\n" \
"  if redis.call('HGET', owners, k) ~= me or vt ~= tok then return nil end\n" \
"  return tonumber(b)\n" \
"end\n"

/*
 * The claim.  ARGV: identity; the highest worker id, the lease (ms), where
 * the claiming server's generator is (Unix ms) and the latest fence it can
 * start above now (its clock plus its drift budget); and a new token that
 * the renewals and the release of this lease name.
 *
 * The floor of a claim is always the id's fence as it is now: every id any
 * holder issued with it lies below.  A server that still holds a lease
 * (even one run out, as long as nobody took the id since) keeps it if it
 * can start above that fence; otherwise, and without a lease, it takes the
 * lowest id that is free (not in owners, or on a lease that ran out) and
 * that it can start above.  A permanent claim (an owner without "lease ")
 * is never free.  The new fence is a lease past the floor or the caller's
 * generator, whichever is later.  Replies {worker id, floor, fence, lease},
 * or refuses without a write: SNOWID_ALL_HELD <count>, or SNOWID_FENCED
 * <id> <fence> when every free id is fenced too far ahead.
 */
static const char *snowid_lease_claim_script =
SNOWID_LEASE_SCRIPT_HEAD
"local max, lease, client, usable = string.match(ARGV[2], '^(%d+) (%d+) (%d+) (%d+)$')\n"
"max, lease, client, usable = tonumber(max), tonumber(lease), tonumber(client), tonumber(usable)\n"
"local token = ARGV[3]\n"
SNOWID_REDIS_SCRIPT_WID
SNOWID_REDIS_SCRIPT_FENCES
"load_fences(redis.call('HGETALL', fences), '')\n"
"local expiry = {}\n"
"local flat = redis.call('HGETALL', leases)\n"
"for i = 1, #flat, 2 do\n"
"  local e = string.match(flat[i + 1], '^(%d+) %d+')\n"
"  if e then expiry[flat[i]] = tonumber(e) end\n"
"end\n"
"local held, mine, keep = {}, {}, nil\n"
"flat = redis.call('HGETALL', owners)\n"
"for i = 1, #flat, 2 do\n"
"  local f, who = flat[i], flat[i + 1]\n"
"  local id = wid(f)\n"
"  if who == me then\n"
"    mine[#mine + 1] = f\n"
"    if id and fenced(id) <= usable and (keep == nil or id < keep) then keep = id end\n"
"  elseif id and (string.sub(who, 1, 6) ~= 'lease ' or not expiry[f] or expiry[f] > now) then\n"
"    held[id] = true\n"
"  end\n"
"end\n"
"if keep == nil then\n"
"  for id = 0, max do\n"
"    if not held[id] and fenced(id) <= usable then keep = id break end\n"
"  end\n"
"end\n"
"if keep == nil then\n"
"  local least = least_fenced(function(id) return not held[id] end)\n"
"  if least == nil then\n"
"    return redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))\n"
"  end\n"
"  return redis.error_reply('SNOWID_FENCED ' .. least .. ' ' .. ms(fenced(least)))\n"
"end\n"
"for _, f in ipairs(mine) do\n"
"  if wid(f) ~= keep then\n"
"    redis.call('HDEL', owners, f)\n"
"    redis.call('HDEL', leases, f)\n"
"  end\n"
"end\n"
"local k, floor = tostring(keep), fenced(keep)\n"
"local new = math.max(client, floor) + lease\n"
"redis.call('HSET', owners, k, me)\n"
"redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. ms(floor) .. ' ' .. token)\n"
"redis.call('HSET', fences, k, ms(new))\n"
"return {keep, floor, new, lease}\n";

/*
 * The renewal.  ARGV: identity; the worker id, the lease (ms) and the fence
 * wanted; the token of the claim.  Succeeds only while the id is this server's lease
 * of that claim (a lease that ran out and that nobody took since still is);
 * moves the lease to a lease from now and the fence up to the one wanted,
 * never down.  Replies {worker id, floor, fence, lease} or SNOWID_LOST
 * <holder>.
 */
static const char *snowid_lease_renew_script =
SNOWID_LEASE_SCRIPT_HEAD
SNOWID_LEASE_SCRIPT_MINE
"local function ms(n) return string.format('%.0f', n) end\n"
"local k, lease, want = string.match(ARGV[2], '^(%d+) (%d+) (%d+)$')\n"
"lease, want = tonumber(lease), tonumber(want)\n"
"local b = my_floor(k, ARGV[3])\n"
"if not b then\n"
"  return redis.error_reply('SNOWID_LOST ' .. (redis.call('HGET', owners, k) or ''))\n"
"end\n"
"local fence = math.max(tonumber(redis.call('HGET', fences, k) or '0'), want)\n"
"redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. ms(b) .. ' ' .. ARGV[3])\n"
"redis.call('HSET', fences, k, ms(fence))\n"
"return {tonumber(k), b, fence, lease}\n";

/*
 * The release.  ARGV: identity; the worker id and the final fence (just past
 * the last id this server issued; it has stopped issuing); the token of the
 * claim.  Only the holder of that very claim may lower the fence, and
 * never below the floor it took the id with.  The fence goes into the
 * owners hash too, as "fence:<worker id>", where a permanent claim finds it
 * (redis_claim.h).  Replies 1, or 0 if the id was
 * not this server's lease of that claim.
 */
static const char *snowid_lease_release_script =
SNOWID_LEASE_SCRIPT_HEAD
SNOWID_LEASE_SCRIPT_MINE
"local k, final = string.match(ARGV[2], '^(%d+) (%d+)$')\n"
"local b = my_floor(k, ARGV[3])\n"
"if not b then return 0 end\n"
"local f = string.format('%.0f', math.max(tonumber(final), b))\n"
"redis.call('HSET', fences, k, f)\n"
"redis.call('HSET', owners, 'fence:' .. k, f)\n"
"redis.call('HDEL', owners, k)\n"
"redis.call('HDEL', leases, k)\n"
"return 1\n";

/*
 * Run one of the scripts on the datacenter's keys, with the identity, the
 * script's numbers and the token of the claim; the reply or NULL, as
 * snowid_redis_run().
 */
static redisReply *
snowid_lease_eval(const SnowidRedisTarget *target,
				  const SnowidLeaseRequest *request, const char *script,
				  const char *numbers, SnowidRedisResult *result)
{
	SnowidRedisKeys keys;
	const char *argv[SNOWID_SCRIPT_MAX_ARGC];
	int			argc;

	argc = snowid_script_argv(argv, &keys, script, true, request->claim,
							  numbers, request->token);
	return snowid_redis_run(target, request->claim, argc, argv, result);
}

/* Reads the reply of a renewal or a release into an outcome */
typedef SnowidLeaseOutcome (*SnowidLeaseReader) (const redisReply *reply,
												 const SnowidLeaseRequest *request,
												 SnowidLeaseGrant *grant,
												 SnowidRedisResult *result);

/*
 * Run a script on the worker id this server holds (request->worker_id),
 * with the id, the lease (with_lease) and the fence as its numbers and the
 * token of the claim, and let read say how it ended; what names the script in
 * the message of a reply read cannot place.
 */
static SnowidLeaseOutcome
snowid_lease_on_id(const SnowidRedisTarget *target,
				   const SnowidLeaseRequest *request, const char *script,
				   bool with_lease, SnowidLeaseReader read, const char *what,
				   SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	char		numbers[64];
	redisReply *reply;
	SnowidLeaseOutcome outcome;

	if (with_lease)
		snprintf(numbers, sizeof(numbers), "%d " INT64_FORMAT " " INT64_FORMAT,
				 request->worker_id, request->lease_ms, request->fence_ms);
	else
		snprintf(numbers, sizeof(numbers), "%d " INT64_FORMAT,
				 request->worker_id, request->fence_ms);
	reply = snowid_lease_eval(target, request, script, numbers, result);
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
 * Read a {worker id, floor, fence, lease} reply into grant; false if it has
 * another shape or a value no script of ours returns: the lease left is the
 * lease asked for, the fence lies past the floor.
 */
static bool
snowid_lease_read_grant(const redisReply *reply,
						const SnowidLeaseRequest *request,
						SnowidLeaseGrant *grant)
{
	size_t		i;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4)
		return false;
	for (i = 0; i < 4; i++)
	{
		if (reply->element[i]->type != REDIS_REPLY_INTEGER ||
			reply->element[i]->integer < 0)
			return false;
	}
	if (reply->element[0]->integer > request->claim->max_worker_id ||
		reply->element[2]->integer <= reply->element[1]->integer ||
		reply->element[3]->integer != request->lease_ms)
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
						  const SnowidLeaseRequest *request,
						  SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	if (reply->type == REDIS_REPLY_ERROR &&
		strncmp(reply->str, "SNOWID_LOST ", 12) == 0)
	{
		strlcpy(result->holder, reply->str + 12, sizeof(result->holder));
		return SNOWID_LEASE_LOST;
	}
	if (reply->type == REDIS_REPLY_ERROR ||
		!snowid_lease_read_grant(reply, request, grant) ||
		grant->worker_id != request->worker_id ||
		grant->fence_ms < request->fence_ms)
		return SNOWID_LEASE_FAILED;
	if (grant->fence_ms > request->fence_ms)
	{
		grant->refused_fence_ms = grant->fence_ms;
		grant->fence_ms = request->fence_ms;
	}
	return SNOWID_LEASE_OK;
}

/*
 * The reply to a release: 1 given back, 0 not this server's any more;
 * FAILED for any other.
 */
static SnowidLeaseOutcome
snowid_lease_read_release(const redisReply *reply,
						  const SnowidLeaseRequest *request,
						  SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	if (reply->type != REDIS_REPLY_INTEGER ||
		(reply->integer != 0 && reply->integer != 1))
		return SNOWID_LEASE_FAILED;
	return reply->integer == 1 ? SNOWID_LEASE_OK : SNOWID_LEASE_LOST;
}

/*
 * Claim a worker id on lease, under request->token.  Fills result (status
 * OK or why not) and, when OK, grant.
 */
void
snowid_redis_lease_claim(const SnowidRedisTarget *target,
						 const SnowidLeaseRequest *request,
						 SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	char		numbers[96];
	redisReply *reply;

	snprintf(numbers, sizeof(numbers),
			 "%d " INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT,
			 request->claim->max_worker_id, request->lease_ms,
			 request->claim->client_ms, request->claim->usable_ms);
	reply = snowid_lease_eval(target, request, snowid_lease_claim_script,
							  numbers, result);
	if (reply == NULL)
		return;

	if (reply->type == REDIS_REPLY_ERROR)
	{
		if (strncmp(reply->str, "SNOWID_ALL_HELD ", 16) == 0)
			result->status = SNOWID_REDIS_ALL_HELD;
		else if (strncmp(reply->str, "SNOWID_FENCED ", 14) == 0)
		{
			SnowidRedisKeys keys;

			snowid_redis_keys(&keys, request->claim->key_prefix,
							  request->claim->datacenter_id);
			if (!snowid_redis_read_fenced(reply->str, request->claim,
										  keys.fences, "", result))
				snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
								  "The lease claim script refused with a malformed fence.");
		}
		else
			snowid_redis_error_reply(target, reply->str, result);
	}
	else if (snowid_lease_read_grant(reply, request, grant) &&
			 grant->floor_ms <= request->claim->usable_ms &&
			 grant->fence_ms <= Max(request->claim->client_ms,
									grant->floor_ms) + request->lease_ms)
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
 * Renew this server's lease on worker_id, of the claim request->token
 * names, and move its fence up to fence_ms (Unix ms).  OK with grant filled, LOST with the holder (if any) in
 * result->holder, or FAILED with result saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_renew(const SnowidRedisTarget *target,
						 const SnowidLeaseRequest *request,
						 SnowidLeaseGrant *grant, SnowidRedisResult *result)
{
	return snowid_lease_on_id(target, request, snowid_lease_renew_script,
							  true, snowid_lease_read_renewal, "renewal",
							  grant, result);
}

/*
 * Give worker_id back, of the claim request->token names, leaving fence_ms
 * (Unix ms, just past this server's last id) as its fence.  OK, LOST if it was not this server's lease any
 * more, or FAILED with result saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_release(const SnowidRedisTarget *target,
						   const SnowidLeaseRequest *request,
						   SnowidRedisResult *result)
{
	return snowid_lease_on_id(target, request, snowid_lease_release_script,
							  false, snowid_lease_read_release, "release",
							  NULL, result);
}
