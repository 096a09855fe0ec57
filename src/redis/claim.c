/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  The worker id claim: the function of snowid's library that claims a
 *	  worker id atomically, called through snowid_script_call()
 *	  (scripts.c), then WAIT for replicas and a look at the eviction
 *	  policy.
 *
 * The claim runs once per server start, in whatever process the caller
 * chooses; nothing here touches shared memory or takes a lock, so the
 * caller's locking rule is the only one that applies.  The functions that
 * talk to Redis never palloc, and ereport only through the
 * CHECK_FOR_INTERRUPTS() of a wait; the open connection is closed in
 * PG_FINALLY, so no hiredis object outlives the claim.  All other ereports
 * live in report.c: snowid_redis_report(), and the warning of a claim that
 * had to run the library as a script.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include <hiredis/hiredis.h>

#include "coord/store.h"
#include "redis/claim.h"
#include "redis/scripts.h"
#include "redis/topology.h"

/*
 * The claim runs atomically as the function snowid_3_claim of snowid.lua,
 * which says what it does.  KEYS are the datacenter's owners, leases and
 * fences hashes (a claim reads every fence, and takes an id whose lease ran
 * out); ARGV the
 * claiming identity and five numbers: the configured worker id or -1, the
 * highest worker id, the preferred worker id or -1, 1 to write the claim
 * even if it is held already (so that a WAIT for replicas covers it) or 0,
 * and the latest fence the claiming server can start above now (its clock
 * plus its drift budget, Unix ms); then (the forgetting rule) how long a
 * quiet period lasts, 1 if the id is this server's own to re-assert, the
 * generation and counter of the state record this server saw last, and
 * how far apart the fleet's clocks may lie (snowid.clock_margin); and, for
 * a restart's re-assertion only, an eleventh: when this server sent its
 * last granted call (the confirmed re-assertion rule).  A library of an
 * older release takes ten numbers and refuses eleven as SNOWID_USAGE,
 * which is reported as a library to load again.
 * Replies {worker id, its fence or 0, generation, counter}, or refuses with
 * SNOWID_ALL_HELD, SNOWID_FENCED, SNOWID_QUIET, SNOWID_CONFLICT,
 * SNOWID_HOLDS_OTHER or SNOWID_RANGE.
 */

/*
 * Read the state record that a grant's reply ends with, elements first and
 * first + 1, into result; false if they are not a generation and a counter
 * in range.  A reply without them (a library of before the counter, still
 * loaded in Redis) leaves the state unknown.
 */
bool
snowid_redis_read_state(const redisReply *reply, size_t first,
						SnowidRedisResult *result)
{
	const redisReply *generation;
	const redisReply *counter;

	memset(&result->state, 0, sizeof(result->state));
	if (reply->elements == first)
		return true;
	if (reply->elements != first + 2)
		return false;
	generation = reply->element[first];
	counter = reply->element[first + 1];
	if (generation->type != REDIS_REPLY_INTEGER ||
		counter->type != REDIS_REPLY_INTEGER ||
		generation->integer <= 0 || generation->integer > SNOWID_STATE_MAX ||
		counter->integer < 0 || counter->integer > SNOWID_STATE_MAX)
		return false;
	result->state.generation = generation->integer;
	result->state.counter = counter->integer;
	return true;
}

/*
 * Read a {worker id, fence, generation, counter} reply of the claim script
 * into result; false if it has another shape or a value out of range.
 */
static bool
snowid_read_claim_grant(const redisReply *reply,
						const SnowidRedisRequest *request,
						SnowidRedisResult *result)
{
	const redisReply *id;
	const redisReply *fence;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
		reply->element[0]->type != REDIS_REPLY_INTEGER ||
		reply->element[1]->type != REDIS_REPLY_INTEGER ||
		!snowid_redis_read_state(reply, 2, result))
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The claim script returned a reply of unexpected shape.");
		return false;
	}
	id = reply->element[0];
	fence = reply->element[1];
	if (!snowid_store_claim_fits(request->store, id->integer, fence->integer))
	{
		snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
						  "The claim script granted worker id %lld with a fence of %lld ms, which the claim did not ask for.",
						  (long long) id->integer, (long long) fence->integer);
		return false;
	}
	result->worker_id = (int) id->integer;
	result->floor_ms = fence->integer;
	return true;
}

/*
 * Read "SNOWID_FENCED <id> <fence>", the refusal of any claim, into result;
 * false if malformed.  A fence past request->plausible_ms was not written
 * by snowid, and makes the status IMPLAUSIBLE, with a message naming the
 * fields it is read from.
 */
bool
snowid_redis_read_fenced(const char *err, const SnowidRedisRequest *request,
						 SnowidRedisResult *result)
{
	long long	id;
	long long	fence;
	int			end = 0;
	SnowidRedisKeys keys;

	if (sscanf(err, "SNOWID_FENCED %lld %lld%n", &id, &fence, &end) != 2 ||
		err[end] != '\0' || !snowid_store_fenced_fits(request->store, id, fence))
		return false;
	result->status = SNOWID_REDIS_FENCED;
	result->worker_id = (int) id;
	result->floor_ms = fence;
	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);
	if (fence > request->plausible_ms)
		snowid_redis_fail(result, SNOWID_REDIS_IMPLAUSIBLE,
						  "Field \"%lld\" of key %s (or field \"fence:%lld\" of key %s) holds the fence %lld, %lld ms past the latest one a snowid server can have written by now.",
						  id, keys.fences, id, keys.owners, fence,
						  fence - request->plausible_ms);
	return true;
}

/*
 * Read "SNOWID_QUIET <until>", the refusal of a claim while Redis may have
 * forgotten claims (the forgetting rule), into result; false if malformed.
 * A time further off than any quiet period lasts is still this refusal,
 * reported as it is (snowid_report_quiet).
 */
bool
snowid_redis_read_quiet(const char *err, const SnowidRedisRequest *request,
						SnowidRedisResult *result)
{
	long long	until;
	int			end = 0;

	if (sscanf(err, "SNOWID_QUIET %lld%n", &until, &end) != 1 ||
		err[end] != '\0' || until <= 0)
		return false;
	result->status = SNOWID_REDIS_QUIET;
	result->floor_ms = until;
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
		if (!snowid_redis_read_fenced(err, request, result))
			snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
							  "The claim script refused with a malformed fence.");
	}
	else if (strncmp(err, "SNOWID_QUIET ", 13) == 0)
	{
		if (!snowid_redis_read_quiet(err, request, result))
			snowid_redis_fail(result, SNOWID_REDIS_PROTOCOL_ERROR,
							  "The claim script refused with a malformed end of a quiet period.");
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
 * Ask Redis for its eviction policy (INFO memory, never CONFIG, which would
 * need a user that may read Redis' passwords) and note whether it may drop
 * our keys, which have no expiry: only the allkeys-* policies do.  Best
 * effort: a Redis that refuses INFO, or whose INFO names no policy, is not
 * an error; only the deadline or a cancel end the claim here.
 */
static void
snowid_check_eviction(SnowidRedisConn *conn, const SnowidRedisTarget *target,
					  SnowidRedisResult *result)
{
	const char *argv[] = {"INFO", "memory"};
	const char *field = "maxmemory_policy:";
	SnowidRedisResult scratch;
	redisReply *reply;
	char	   *line;

	memset(&scratch, 0, sizeof(scratch));
	reply = snowid_conn_command(conn, 2, argv, &scratch);
	if (reply == NULL)
		return;
	line = reply->type == REDIS_REPLY_STRING ?
		strstr(reply->str, field) : NULL;
	if (line != NULL && (line == reply->str || line[-1] == '\n') &&
		strncmp(line + strlen(field), "allkeys-", 8) == 0)
	{
		line += strlen(field);
		line[strcspn(line, "\r\n")] = '\0';
		result->evictable = true;
		snowid_redis_text(result->message, sizeof(result->message), target,
						  line);
		snowid_end_sentence(result->message, sizeof(result->message));
	}
	freeReplyObject(reply);
}

/*
 * A check-in answered from reads alone: the owners hash names this server
 * as the holder of the explicit id, and its state record (snowid.lua's
 * forgetting rule) was written under this run of Redis and is no older
 * than the one this server saw last, so there is nothing to re-assert and
 * nothing is written; result->state is that record.  False if anything
 * else holds or a read fails (a redirection, a user without INFO): the
 * caller then calls the claim function, which re-asserts.
 */
static bool
snowid_checkin_unchanged(SnowidRedisSession *session,
						 SnowidRedisResult *result)
{
	const SnowidRedisRequest *request = session->request;
	SnowidRedisKeys keys;
	SnowidRedisResult scratch;
	char		field[16];
	const char *holder[] = {"HGET", keys.owners, field};
	const char *state[] = {"HGET", keys.owners, "state"};
	const char *info[] = {"INFO", "server"};
	redisReply *reply;
	char		run[64] = "";
	long long	generation = 0;
	long long	counter = 0;
	const char *line;
	size_t		len;
	bool		same;

	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);
	snprintf(field, sizeof(field), "%d", request->explicit_worker_id);
	memset(&scratch, 0, sizeof(scratch));
	reply = snowid_conn_command(&session->conn, 3, holder, &scratch);
	if (reply == NULL)
		return false;
	same = reply->type == REDIS_REPLY_STRING &&
		strcmp(reply->str, request->identity) == 0;
	freeReplyObject(reply);
	if (!same)
		return false;

	reply = snowid_conn_command(&session->conn, 3, state, &scratch);
	if (reply == NULL)
		return false;
	if (reply->type == REDIS_REPLY_STRING &&
		sscanf(reply->str, "%llx %63s %*d %*d %lld", &generation, run,
			   &counter) != 3)
		run[0] = '\0';
	freeReplyObject(reply);
	len = strlen(run);
	if (len == 0 || strcmp(run, "unknown") == 0 ||
		generation <= 0 || generation > SNOWID_STATE_MAX ||
		counter < 0 || counter > SNOWID_STATE_MAX ||
		request->seen.generation > generation ||
		(request->seen.generation == generation &&
		 request->seen.counter > counter))
		return false;

	reply = snowid_conn_command(&session->conn, 2, info, &scratch);
	if (reply == NULL)
		return false;
	line = reply->type == REDIS_REPLY_STRING ?
		strstr(reply->str, "run_id:") : NULL;
	same = line != NULL && strncmp(line + 7, run, len) == 0 &&
		(line[7 + len] == '\r' || line[7 + len] == '\n');
	freeReplyObject(reply);
	if (same)
	{
		result->state.generation = generation;
		result->state.counter = counter;
	}
	return same;
}

/*
 * The claim on an open session: call the function (following redirections),
 * then WAIT for replicas and check the eviction policy.  Fills result.
 */
static void
snowid_claim_on(SnowidRedisSession *session, SnowidRedisResult *result)
{
	const SnowidRedisRequest *request = session->request;
	char		numbers[256];
	SnowidScriptCall call = {SNOWID_SCRIPT_CLAIM, numbers, NULL};
	redisReply *reply;
	size_t		len;

	if (request->checkin && snowid_checkin_unchanged(session, result))
	{
		result->status = SNOWID_REDIS_OK;
		result->worker_id = request->explicit_worker_id;
		result->floor_ms = 0;
		return;
	}

	snprintf(numbers, sizeof(numbers), "%d %d %d %d " INT64_FORMAT " "
			 INT64_FORMAT " %d " INT64_FORMAT " " INT64_FORMAT " " INT64_FORMAT,
			 request->explicit_worker_id, request->max_worker_id,
			 request->preferred_worker_id, request->min_replicas > 0 ? 1 : 0,
			 request->usable_ms, request->quiet_ms, request->reassert ? 1 : 0,
			 request->seen.generation, request->seen.counter,
			 request->clock_margin_ms);
	len = strlen(numbers);
	if (request->confirmed_ms >= 0)
		snprintf(numbers + len, sizeof(numbers) - len, " " INT64_FORMAT,
				 request->confirmed_ms);
	reply = snowid_script_call(session, &call, result);
	if (reply == NULL)
		return;
	snowid_read_claim_reply(reply, session->target, request, result);
	freeReplyObject(reply);

	/* a library of an older release, which takes no eleventh number */
	if (result->status == SNOWID_REDIS_ERROR && request->confirmed_ms >= 0 &&
		strstr(result->message, "SNOWID_USAGE claim takes") != NULL &&
		strstr(result->message, "<confirmed ms>") == NULL)
		snowid_redis_fail(result, SNOWID_REDIS_ERROR,
						  "The snowid library loaded in Redis is of an older release: it does not take the time of this server's last granted call, which a restart sends with the worker id it re-asserts.  Load the library of this release again (doc/redis.md).");

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
 * error from a wait, and the connection is closed either way.  A claim that
 * had to run the library as a script warns (once a process) after that.
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
	snowid_script_report_path(request, result);
}
