/*-------------------------------------------------------------------------
 *
 * redis_lease.c
 *	  The Redis side of worker ids on lease: the Lua scripts that claim,
 *	  renew and give back a lease with its fence, and the reading of their
 *	  replies.  The keys are described in lease.h; connecting, logging in
 *	  and following cluster redirections is redis_claim.c's.
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

#include "lease.h"

/* Key buffer: braces, prefix, ":dc:", an int and ":owners" */
#define SNOWID_LEASE_KEY_LEN		(SNOWID_REDIS_KEY_PREFIX_LEN + 32)

/* What every script starts with: its keys, its holder name, Redis' time */
#define SNOWID_LEASE_SCRIPT_HEAD \
"if redis.replicate_commands then pcall(redis.replicate_commands) end\n" \
"local owners, leases, fences = KEYS[1], KEYS[2], KEYS[3]\n" \
"local me = 'lease ' .. ARGV[1]\n" \
"local t = redis.call('TIME')\n" \
"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
"local function ms(n) return string.format('%.0f', n) end\n"

/*
 * The claim.  ARGV: identity, highest worker id, lease (ms), where the
 * claiming server's generator is (Unix ms).
 *
 * A server that still holds a lease (even one run out, as long as nobody
 * took the id since) keeps it, with the floor it had when it took the id:
 * its own ids since then are covered by its high-water mark.  Otherwise it
 * takes the lowest id that is free: not in owners, or on a lease that ran
 * out.  A permanent claim (an owner without "lease ") is never free.  Its
 * floor is that id's fence: every id issued with it so far lies below.
 * The new fence is a lease past the floor or the caller's generator,
 * whichever is later, and never below the old one.  Replies
 * {worker id, floor, fence, lease} or SNOWID_ALL_HELD <count>.
 */
static const char *snowid_lease_claim_script =
SNOWID_LEASE_SCRIPT_HEAD
"local max, lease, client = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])\n"
"local function wid(field)\n"
"  local n = tonumber(field)\n"
"  if n and n >= 0 and n <= max and n % 1 == 0 then return n end\n"
"end\n"
"local expiry, base = {}, {}\n"
"local flat = redis.call('HGETALL', leases)\n"
"for i = 1, #flat, 2 do\n"
"  local e, b = string.match(flat[i + 1], '^(%d+) (%d+)$')\n"
"  if e then expiry[flat[i]], base[flat[i]] = tonumber(e), tonumber(b) end\n"
"end\n"
"local held, mine, keep = {}, {}, nil\n"
"flat = redis.call('HGETALL', owners)\n"
"for i = 1, #flat, 2 do\n"
"  local f, who = flat[i], flat[i + 1]\n"
"  local id = wid(f)\n"
"  if who == me then\n"
"    mine[#mine + 1] = f\n"
"    if id and base[f] and (keep == nil or id < keep) then keep = id end\n"
"  elseif id and (string.sub(who, 1, 6) ~= 'lease ' or not expiry[f] or expiry[f] > now) then\n"
"    held[id] = true\n"
"  end\n"
"end\n"
"for _, f in ipairs(mine) do\n"
"  if keep == nil or wid(f) ~= keep then\n"
"    redis.call('HDEL', owners, f)\n"
"    redis.call('HDEL', leases, f)\n"
"  end\n"
"end\n"
"local floor\n"
"if keep ~= nil then\n"
"  floor = base[tostring(keep)]\n"
"else\n"
"  for id = 0, max do\n"
"    if not held[id] then keep = id break end\n"
"  end\n"
"  if keep == nil then\n"
"    return redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))\n"
"  end\n"
"  floor = tonumber(redis.call('HGET', fences, tostring(keep)) or '0')\n"
"end\n"
"local k = tostring(keep)\n"
"local fence = tonumber(redis.call('HGET', fences, k) or '0')\n"
"fence = math.max(fence, math.max(client, floor) + lease)\n"
"redis.call('HSET', owners, k, me)\n"
"redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. ms(floor))\n"
"redis.call('HSET', fences, k, ms(fence))\n"
"return {keep, floor, fence, lease}\n";

/*
 * The renewal.  ARGV: identity, worker id, lease (ms), the fence wanted.
 * Succeeds only while the id is this server's lease (a lease that ran out
 * and that nobody took since still is); moves the lease to a lease from
 * now and the fence up to the one wanted, never down.  Replies {worker id,
 * floor, fence, lease} or SNOWID_LOST <holder>.
 */
static const char *snowid_lease_renew_script =
SNOWID_LEASE_SCRIPT_HEAD
"local k, lease, want = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
"local who = redis.call('HGET', owners, k)\n"
"local v = redis.call('HGET', leases, k)\n"
"local b = v and string.match(v, '^%d+ (%d+)$')\n"
"if who ~= me or not b then\n"
"  return redis.error_reply('SNOWID_LOST ' .. (who or ''))\n"
"end\n"
"local fence = math.max(tonumber(redis.call('HGET', fences, k) or '0'), want)\n"
"redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. b)\n"
"redis.call('HSET', fences, k, ms(fence))\n"
"return {tonumber(k), tonumber(b), fence, lease}\n";

/*
 * The release.  ARGV: identity, worker id, the final fence: just past the
 * last id this server issued, which has stopped issuing.  Only the holder
 * may lower the fence, and never below the floor it took the id with.
 * Replies 1, or 0 if the id was not this server's lease.
 */
static const char *snowid_lease_release_script =
SNOWID_LEASE_SCRIPT_HEAD
"local k = ARGV[2]\n"
"local v = redis.call('HGET', leases, k)\n"
"local b = v and string.match(v, '^%d+ (%d+)$')\n"
"if redis.call('HGET', owners, k) ~= me or not b then return 0 end\n"
"redis.call('HSET', fences, k, ms(math.max(tonumber(ARGV[3]), tonumber(b))))\n"
"redis.call('HDEL', owners, k)\n"
"redis.call('HDEL', leases, k)\n"
"return 1\n";

/* The three keys of a datacenter, as EVAL arguments */
typedef struct SnowidLeaseKeys
{
	char		owners[SNOWID_LEASE_KEY_LEN];
	char		leases[SNOWID_LEASE_KEY_LEN];
	char		fences[SNOWID_LEASE_KEY_LEN];
} SnowidLeaseKeys;

/*
 * Names of a datacenter's keys.
 */
static void
snowid_lease_keys(const SnowidLeaseRequest *request, SnowidLeaseKeys *keys)
{
	const SnowidClaimRequest *claim = request->claim;

	snowid_redis_owners_key(keys->owners, sizeof(keys->owners),
							claim->key_prefix, claim->datacenter_id);
	snprintf(keys->leases, sizeof(keys->leases), "{%s:dc:%d}:leases",
			 claim->key_prefix, claim->datacenter_id);
	snprintf(keys->fences, sizeof(keys->fences), "{%s:dc:%d}:fences",
			 claim->key_prefix, claim->datacenter_id);
}

/*
 * Run one of the scripts with its four arguments; the reply or NULL, as
 * snowid_redis_run().
 */
static redisReply *
snowid_lease_eval(const SnowidRedisTarget *target,
				  const SnowidLeaseRequest *request, const char *script,
				  const char *arg2, const char *arg3, const char *arg4,
				  SnowidClaimResult *result)
{
	SnowidLeaseKeys keys;
	const char *argv[9];

	snowid_lease_keys(request, &keys);
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = "3";
	argv[3] = keys.owners;
	argv[4] = keys.leases;
	argv[5] = keys.fences;
	argv[6] = request->claim->identity;
	argv[7] = arg2;
	argv[8] = arg3;
	if (arg4 == NULL)
		return snowid_redis_run(target, request->claim, 9, argv, result);
	else
	{
		const char *argv10[10];

		memcpy(argv10, argv, sizeof(argv));
		argv10[9] = arg4;
		return snowid_redis_run(target, request->claim, 10, argv10, result);
	}
}

/*
 * Read a {worker id, floor, fence, lease} reply into grant; false if it has
 * another shape.
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
		reply->element[2]->integer <= reply->element[1]->integer)
		return false;
	grant->worker_id = (int) reply->element[0]->integer;
	grant->floor_ms = reply->element[1]->integer;
	grant->fence_ms = reply->element[2]->integer;
	grant->left_ms = reply->element[3]->integer;
	return true;
}

/*
 * Claim a worker id on lease.  client_ms is where this server's generator
 * is, in Unix ms.  Fills result (status OK or why not) and, when OK, grant.
 */
void
snowid_redis_lease_claim(const SnowidRedisTarget *target,
						 const SnowidLeaseRequest *request, int64 client_ms,
						 SnowidLeaseGrant *grant, SnowidClaimResult *result)
{
	char		max[16];
	char		lease[24];
	char		client[24];
	redisReply *reply;

	snprintf(max, sizeof(max), "%d", request->claim->max_worker_id);
	snprintf(lease, sizeof(lease), INT64_FORMAT, request->lease_ms);
	snprintf(client, sizeof(client), INT64_FORMAT, client_ms);
	reply = snowid_lease_eval(target, request, snowid_lease_claim_script,
							  max, lease, client, result);
	if (reply == NULL)
		return;

	if (reply->type == REDIS_REPLY_ERROR)
	{
		if (strncmp(reply->str, "SNOWID_ALL_HELD ", 16) == 0)
			result->status = SNOWID_CLAIM_ALL_HELD;
		else
			snowid_redis_error_reply(target, reply->str, result);
	}
	else if (snowid_lease_read_grant(reply, request, grant))
	{
		result->status = SNOWID_CLAIM_OK;
		result->worker_id = grant->worker_id;
	}
	else
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The lease claim script returned a reply of unexpected shape.");
	freeReplyObject(reply);
}

/*
 * Renew this server's lease on worker_id and move its fence up to fence_ms
 * (Unix ms).  OK with grant filled, LOST with the holder (if any) in
 * result->holder, or FAILED with result saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_renew(const SnowidRedisTarget *target,
						 const SnowidLeaseRequest *request, int worker_id,
						 int64 fence_ms, SnowidLeaseGrant *grant,
						 SnowidClaimResult *result)
{
	char		id[16];
	char		lease[24];
	char		fence[24];
	redisReply *reply;
	SnowidLeaseOutcome outcome = SNOWID_LEASE_FAILED;

	snprintf(id, sizeof(id), "%d", worker_id);
	snprintf(lease, sizeof(lease), INT64_FORMAT, request->lease_ms);
	snprintf(fence, sizeof(fence), INT64_FORMAT, fence_ms);
	reply = snowid_lease_eval(target, request, snowid_lease_renew_script,
							  id, lease, fence, result);
	if (reply == NULL)
		return SNOWID_LEASE_FAILED;

	if (reply->type == REDIS_REPLY_ERROR &&
		strncmp(reply->str, "SNOWID_LOST ", 12) == 0)
	{
		strlcpy(result->holder, reply->str + 12, sizeof(result->holder));
		outcome = SNOWID_LEASE_LOST;
	}
	else if (reply->type == REDIS_REPLY_ERROR)
		snowid_redis_error_reply(target, reply->str, result);
	else if (snowid_lease_read_grant(reply, request, grant) &&
			 grant->worker_id == worker_id)
	{
		result->status = SNOWID_CLAIM_OK;
		outcome = SNOWID_LEASE_OK;
	}
	else
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The lease renewal script returned a reply of unexpected shape.");
	freeReplyObject(reply);
	return outcome;
}

/*
 * Give worker_id back, leaving fence_ms (Unix ms, just past this server's
 * last id) as its fence.  OK, LOST if it was not this server's lease any
 * more, or FAILED with result saying why.
 */
SnowidLeaseOutcome
snowid_redis_lease_release(const SnowidRedisTarget *target,
						   const SnowidLeaseRequest *request, int worker_id,
						   int64 fence_ms, SnowidClaimResult *result)
{
	char		id[16];
	char		fence[24];
	redisReply *reply;
	SnowidLeaseOutcome outcome = SNOWID_LEASE_FAILED;

	snprintf(id, sizeof(id), "%d", worker_id);
	snprintf(fence, sizeof(fence), INT64_FORMAT, fence_ms);
	reply = snowid_lease_eval(target, request, snowid_lease_release_script,
							  id, fence, NULL, result);
	if (reply == NULL)
		return SNOWID_LEASE_FAILED;

	if (reply->type == REDIS_REPLY_INTEGER &&
		(reply->integer == 0 || reply->integer == 1))
	{
		result->status = SNOWID_CLAIM_OK;
		outcome = reply->integer == 1 ? SNOWID_LEASE_OK : SNOWID_LEASE_LOST;
	}
	else if (reply->type == REDIS_REPLY_ERROR)
		snowid_redis_error_reply(target, reply->str, result);
	else
		snowid_redis_fail(result, SNOWID_CLAIM_PROTOCOL_ERROR,
						  "The lease release script returned a reply of unexpected shape.");
	freeReplyObject(reply);
	return outcome;
}
