/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  The worker id claim: the Lua script that claims a worker id
 *	  atomically, sent through snowid_redis_command() (topology.c), then
 *	  WAIT for replicas and a look at the eviction policy.
 *
 * The claim runs once per server start, in whatever process the caller
 * chooses; nothing here touches shared memory or takes a lock, so the
 * caller's locking rule is the only one that applies.  The functions that
 * talk to Redis never palloc, and ereport only through the
 * CHECK_FOR_INTERRUPTS() of a wait; the open connection is closed in
 * PG_FINALLY, so no hiredis object outlives the claim.  All other ereports
 * live in snowid_redis_report() (report.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include <hiredis/hiredis.h>

#include "redis/claim.h"
#include "redis/scripts.h"
#include "redis/topology.h"

/*
 * The claim, run atomically by EVAL.
 *
 * KEYS[1] is the datacenter's owners hash: a worker id to the identity of
 * the server holding it, and "fence:<worker id>" to the fence a lease left
 * when it was given back, the time below which lie all ids its holders
 * issued (redis_claim.h).  ARGV[1] is the claiming identity; ARGV[2] holds five numbers: the
 * configured worker id or -1, the highest worker id, the preferred worker id
 * or -1, 1 to write the claim even if it is held already (so that a WAIT for
 * replicas covers it) or 0, and the latest fence the claiming server can
 * start above now (its clock plus its drift budget, Unix ms).  (Redis
 * refuses a command of more than ten words before AUTH, which would hide
 * why a claim without a password fails.)
 *
 * An identity keeps the id it holds.  Without one it takes the configured
 * id if free; with none configured, the preferred id if free, or else the
 * lowest free id in 0..max.  The preferred id is the one the server held
 * last: if Redis has lost the claims, the lowest free id may be one that
 * another server still uses, while the server's own last id is free unless
 * a server claimed it since.  An id fenced past that latest time is not
 * taken (an id on lease was given back, and its last holder's ids may run
 * ahead of this server's clock): the choice goes on to the next free id, and
 * a configured or kept id is refused until then.  Other entries of the same
 * identity (an id beyond max after a layout change, a duplicate written by
 * hand) are released so that an identity holds exactly one id.  A server
 * that already holds its id causes no write unless asked to write.
 * Replies {worker id, its fence or 0}: the claiming server's ids must start
 * at or above that fence.  Refusals are error replies whose first word says
 * which, and they write nothing:
 *
 *	SNOWID_ALL_HELD <count>			no id in 0..max is free
 *	SNOWID_FENCED <id> <fence>		every free id (or the configured or kept
 *									one) is fenced past that time; id is
 *									the one fenced least far
 *	SNOWID_CONFLICT <identity>		the configured id is held by identity
 *	SNOWID_HOLDS_OTHER <id>			this identity holds id, not the configured
 *	SNOWID_RANGE ...				the configured id exceeds max (a caller bug)
 */
static const char *snowid_claim_script =
"local owners, me = KEYS[1], ARGV[1]\n"
"local want, max, prefer, write, usable =\n"
"  string.match(ARGV[2], '^(-?%d+) (%d+) (-?%d+) ([01]) (%d+)$')\n"
"want, max, prefer, usable = tonumber(want), tonumber(max), tonumber(prefer), tonumber(usable)\n"
"if want > max then\n"
"  return redis.error_reply('SNOWID_RANGE worker id ' .. want .. ' exceeds ' .. max)\n"
"end\n"
SNOWID_REDIS_SCRIPT_WID
SNOWID_REDIS_SCRIPT_FENCES
"local taken, mine, keep = {}, {}, nil\n"
"local flat = redis.call('HGETALL', owners)\n"
"load_fences(flat, 'fence:')\n"
"for i = 1, #flat, 2 do\n"
"  local id = wid(flat[i])\n"
"  if flat[i + 1] == me then\n"
"    mine[#mine + 1] = flat[i]\n"
"    if id and (keep == nil or id == want or (keep ~= want and id < keep)) then\n"
"      keep = id\n"
"    end\n"
"  elseif id then\n"
"    taken[id] = flat[i + 1]\n"
"  end\n"
"end\n"
"if want >= 0 then\n"
"  if keep ~= nil and keep ~= want then\n"
"    return redis.error_reply('SNOWID_HOLDS_OTHER ' .. keep)\n"
"  end\n"
"  if taken[want] then\n"
"    return redis.error_reply('SNOWID_CONFLICT ' .. taken[want])\n"
"  end\n"
"  keep = want\n"
"elseif keep == nil then\n"
"  local function free(id) return not taken[id] and fenced(id) <= usable end\n"
"  if prefer >= 0 and prefer <= max and free(prefer) then\n"
"    keep = prefer\n"
"  else\n"
"    for id = 0, max do\n"
"      if free(id) then\n"
"        keep = id\n"
"        break\n"
"      end\n"
"    end\n"
"  end\n"
"  if keep == nil then\n"
"    local least = least_fenced(function(id) return not taken[id] end)\n"
"    if least == nil then\n"
"      return redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))\n"
"    end\n"
"    keep = least\n"
"  end\n"
"end\n"
"if fenced(keep) > usable then\n"
"  return redis.error_reply('SNOWID_FENCED ' .. keep .. ' ' .. ms(fenced(keep)))\n"
"end\n"
"local held = false\n"
"for _, field in ipairs(mine) do\n"
"  if tonumber(field) == keep then\n"
"    held = true\n"
"  else\n"
"    redis.call('HDEL', owners, field)\n"
"  end\n"
"end\n"
"if not held or write == '1' then\n"
"  redis.call('HSET', owners, tostring(keep), me)\n"
"end\n"
"return {keep, fenced(keep)}\n";

/*
 * Read a {worker id, fence} reply of the claim script into result; false
 * if it has another shape or a value out of range.
 */
static bool
snowid_read_claim_grant(const redisReply *reply,
						const SnowidRedisRequest *request,
						SnowidRedisResult *result)
{
	const redisReply *id;
	const redisReply *fence;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
		reply->element[0]->type != REDIS_REPLY_INTEGER ||
		reply->element[1]->type != REDIS_REPLY_INTEGER)
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The claim script returned a reply of unexpected shape.");
		return false;
	}
	id = reply->element[0];
	fence = reply->element[1];
	if (id->integer < 0 || id->integer > request->max_worker_id ||
		(request->explicit_worker_id >= 0 &&
		 id->integer != request->explicit_worker_id))
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The claim script returned worker id %lld, which is out of range.",
						  (long long) id->integer);
		return false;
	}
	if (fence->integer < 0 || fence->integer > request->usable_ms)
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The claim script returned a fence of %lld ms for worker id %lld, which lies past what this server can start above.",
						  (long long) fence->integer, (long long) id->integer);
		return false;
	}
	result->worker_id = (int) id->integer;
	result->floor_ms = fence->integer;
	return true;
}

/*
 * Read "SNOWID_FENCED <id> <fence>" into result; false if malformed.  The
 * script read that fence from the field field_prefix<id> of key: one past
 * request->plausible_ms was not written by snowid, and makes the status
 * IMPLAUSIBLE, with a message naming the key and the field.
 */
bool
snowid_redis_read_fenced(const char *err, const SnowidRedisRequest *request,
						 const char *key, const char *field_prefix,
						 SnowidRedisResult *result)
{
	long long	id;
	long long	fence;
	int			end = 0;

	if (sscanf(err, "SNOWID_FENCED %lld %lld%n", &id, &fence, &end) != 2 ||
		err[end] != '\0' || id < 0 || id > request->max_worker_id ||
		fence <= request->usable_ms)
		return false;
	result->status = SNOWID_REDIS_FENCED;
	result->worker_id = (int) id;
	result->floor_ms = fence;
	if (fence > request->plausible_ms)
		snowid_redis_fail(result, SNOWID_REDIS_IMPLAUSIBLE,
						  "Field \"%s%lld\" of key %s holds the fence %lld, %lld ms past the latest one a snowid server can have written by now.",
						  field_prefix, id, key, fence,
						  fence - request->plausible_ms);
	return true;
}

/*
 * Read the script's answer into result.
 */
static void
snowid_read_claim_reply(const redisReply *reply,
						const SnowidRedisTarget *target,
						const SnowidRedisRequest *request,
						SnowidRedisResult *result)
{
	const char *err = reply->type == REDIS_REPLY_ERROR ? reply->str : "";

	if (reply->type != REDIS_REPLY_ERROR)
	{
		if (snowid_read_claim_grant(reply, request, result))
			result->status = SNOWID_REDIS_OK;
	}
	else if (strncmp(err, "SNOWID_ALL_HELD ", 16) == 0)
		result->status = SNOWID_REDIS_ALL_HELD;
	else if (strncmp(err, "SNOWID_FENCED ", 14) == 0)
	{
		SnowidRedisKeys keys;

		snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);
		if (!snowid_redis_read_fenced(err, request, keys.owners, "fence:",
									  result))
			snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
							  "The claim script refused with a malformed fence.");
	}
	else if (strncmp(err, "SNOWID_CONFLICT ", 16) == 0)
	{
		result->status = SNOWID_REDIS_CONFLICT;
		result->worker_id = request->explicit_worker_id;
		snowid_redis_text(result->holder, sizeof(result->holder), target,
						  err + 16);
	}
	else if (strncmp(err, "SNOWID_HOLDS_OTHER ", 19) == 0 &&
			 snowid_parse_number(err + 19, strlen(err + 19), 0, INT_MAX,
								 &result->worker_id))
	{
		/* the script says so only when a worker id is configured */
		if (request->explicit_worker_id >= 0)
			result->status = SNOWID_REDIS_HOLDS_OTHER;
		else
			snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
							  "The claim script answered that this server holds worker id %d, which it answers only when snowid.worker_id is set; it is not.",
							  result->worker_id);
	}
	else
		snowid_redis_quote(result, target, snowid_classify_error(err, false),
						   "Redis replied: ", err);
}

/*
 * Ask Redis for its eviction policy and note whether it may drop our keys,
 * which have no expiry: only the allkeys-* policies do.  Best effort: a
 * managed Redis or an ACL may refuse CONFIG, which is not an error; only
 * the deadline or a cancel end the claim here.
 */
static bool
snowid_check_eviction(SnowidRedisConn *conn, const SnowidRedisTarget *target,
					  SnowidRedisResult *result)
{
	const char *argv[] = {"CONFIG", "GET", "maxmemory-policy"};
	SnowidRedisResult scratch;
	redisReply *reply;

	memset(&scratch, 0, sizeof(scratch));
	reply = snowid_conn_command(conn, 3, argv, &scratch);
	if (reply == NULL)
		return true;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
		reply->element[1]->type == REDIS_REPLY_STRING &&
		strncmp(reply->element[1]->str, "allkeys-", 8) == 0)
	{
		result->evictable = true;
		snowid_redis_text(result->message, sizeof(result->message), target,
						  reply->element[1]->str);
		snowid_end_sentence(result->message, sizeof(result->message));
	}
	freeReplyObject(reply);
	return true;
}

/*
 * The claim on an open session: run the script (following redirections),
 * then WAIT for replicas and check the eviction policy.  Fills result.
 */
static void
snowid_claim_on(SnowidRedisSession *session, SnowidRedisResult *result)
{
	const SnowidRedisRequest *request = session->request;
	SnowidRedisKeys keys;
	char		numbers[96];
	const char *argv[SNOWID_SCRIPT_MAX_ARGC];
	int			argc;
	redisReply *reply;

	snprintf(numbers, sizeof(numbers), "%d %d %d %d " INT64_FORMAT,
			 request->explicit_worker_id, request->max_worker_id,
			 request->preferred_worker_id, request->min_replicas > 0 ? 1 : 0,
			 request->usable_ms);
	argc = snowid_script_argv(argv, &keys, snowid_claim_script, false,
							  request, numbers, NULL);

	reply = snowid_redis_command(session, argc, argv, "claim", result);
	if (reply == NULL)
		return;
	snowid_read_claim_reply(reply, session->target, request, result);
	freeReplyObject(reply);

	if (result->status != SNOWID_REDIS_OK)
		return;
	if (!snowid_redis_wait_replicas(session, result))
		return;
	snowid_check_eviction(&session->conn, session->target, result);
}

/*
 * Claim a worker id: find and connect to the server (through the sentinels
 * if the URL names them), log in, and claim there; the whole of it within
 * request->timeout_ms.  Fills *result and returns; a cancel raises its
 * error from a wait, and the connection is closed either way.
 */
void
snowid_redis_try_claim(const SnowidRedisTarget *target,
					   const SnowidRedisRequest *request,
					   SnowidRedisResult *result)
{
	SnowidRedisSession session;

	Assert(request->explicit_worker_id >= -1 &&
		   request->explicit_worker_id <= request->max_worker_id);
	Assert(request->preferred_worker_id >= -1 &&
		   request->preferred_worker_id <= request->max_worker_id);
	Assert(strlen(request->key_prefix) < SNOWID_REDIS_KEY_PREFIX_LEN);

	PG_TRY();
	{
		if (snowid_redis_open(&session, target, request, result))
			snowid_claim_on(&session, result);
		result->elapsed_ms = snowid_deadline_elapsed(&session.deadline);
	}
	PG_CATCH();
	{
		snowid_redis_close(&session);
		PG_RE_THROW();
	}
	PG_END_TRY();
	snowid_redis_close(&session);
}
