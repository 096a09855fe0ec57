/*-------------------------------------------------------------------------
 *
 * scripts.c
 *	  Calling a function of snowid's Redis function library: FCALL, or,
 *	  where that cannot be, the library compiled in (snowid_lua.h, made
 *	  from snowid.lua at build time) with EVALSHA or EVAL.  No locking
 *	  applies; as everywhere in src/redis, nothing here pallocs, and only a
 *	  cancel ereports (from a wait on Redis).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <hiredis/hiredis.h>

#include "miscadmin.h"

#include "coord/holder_secret.h"
#include "redis/scripts.h"
#include "redis/snowid_lua.h"

/*
 * The functions of the library, by SnowidScriptFunction: the name, and
 * what it does for a message ("redirected the claim more than ...")
 */
static const struct
{
	const char *name;
	const char *what;
}			snowid_script_functions[] = {
	{SNOWID_REDIS_FUNCTION_PREFIX "claim", "claim"},
	{SNOWID_REDIS_FUNCTION_PREFIX "lease_claim", "lease claim"},
	{SNOWID_REDIS_FUNCTION_PREFIX "lease_renew", "lease renewal"},
	{SNOWID_REDIS_FUNCTION_PREFIX "lease_release", "lease release"},
	{SNOWID_REDIS_FUNCTION_PREFIX "free", "free"},
	{SNOWID_REDIS_FUNCTION_PREFIX "end_quiet", "end of a quiet period"},
	{SNOWID_REDIS_FUNCTION_PREFIX "lower_fence", "lowering of a fence"},
	{SNOWID_REDIS_FUNCTION_PREFIX "reset_secret", "reset of a holder secret"},
};

/*
 * The name of a function of the library, for a message
 */
const char *
snowid_script_name(SnowidScriptFunction function)
{
	return snowid_script_functions[function].name;
}

/*
 * The most words of a call: EVAL, the script, the key count, three keys,
 * the function's name, the identity, the numbers, and the holder secret
 * (after a lease function's token and a space).  Redis refuses a command
 * of more than ten words before AUTH, which would hide why a call without
 * a password fails.
 */
#define SNOWID_SCRIPT_MAX_ARGC	10

/* A token, a space, a holder proof and the NUL */
#define SNOWID_SCRIPT_CREDENTIALS_LEN	(17 + SNOWID_HOLDER_PROOF_LEN)

/*
 * Send the call on the open session, following redirections: FCALL of the
 * function by name (script NULL), or verb (EVALSHA, EVAL) of script with
 * the function's name as the first argument; on the request's datacenter
 * keys, all three (every function reads every fence).  The holder secret
 * goes as a proof (coord/holder_secret.c) for this very call (the
 * function's name without its prefix, the keys, the identity, the numbers
 * and the token), never itself: sent again once
 * with the key when the library asks to register it (SNOWID_REGISTER), and
 * once with a larger n when it took a larger one already
 * (SNOWID_STALE_PROOF).  Returns the reply, or NULL with result filled if
 * none came.
 */
static redisReply *
snowid_script_send(SnowidRedisSession *session, const char *verb,
				   const char *script, const SnowidScriptCall *call,
				   SnowidRedisResult *result)
{
	const char *name = snowid_script_functions[call->function].name;
	SnowidRedisKeys keys;
	const char *argv[SNOWID_SCRIPT_MAX_ARGC];
	const char *parts[7];
	char		proof[SNOWID_HOLDER_PROOF_LEN];
	char		credentials[SNOWID_SCRIPT_CREDENTIALS_LEN];
	const char *pad = NULL;
	redisReply *reply;

	snowid_redis_keys(&keys, session->request->key_prefix,
					  session->request->datacenter_id);
	/* what the proof is for: the function, without its version's prefix */
	parts[0] = name + strlen(SNOWID_REDIS_FUNCTION_PREFIX);
	parts[1] = keys.owners;
	parts[2] = keys.leases;
	parts[3] = keys.fences;
	parts[4] = session->request->identity;
	parts[5] = call->numbers;
	parts[6] = call->token;
	for (int attempt = 0;; attempt++)
	{
		int			argc = 0;

		argv[argc++] = verb;
		argv[argc++] = script != NULL ? script : name;
		argv[argc++] = "3";
		argv[argc++] = keys.owners;
		argv[argc++] = keys.leases;
		argv[argc++] = keys.fences;
		if (script != NULL)
			argv[argc++] = name;
		argv[argc++] = session->request->identity;
		argv[argc++] = call->numbers;
		snowid_holder_proof(session->request->secret, SNOWID_PROOF_SHA1, pad,
							parts, call->token != NULL ? 7 : 6, proof);
		if (call->token != NULL)
			snprintf(credentials, sizeof(credentials), "%s %s", call->token,
					 proof);
		else
			strlcpy(credentials, proof, sizeof(credentials));
		argv[argc++] = credentials;
		Assert(argc <= SNOWID_SCRIPT_MAX_ARGC);
		reply = snowid_redis_command(session, argc, argv,
									 snowid_script_functions[call->function].what,
									 result);
		explicit_bzero(proof, sizeof(proof));
		explicit_bzero(credentials, sizeof(credentials));
		if (reply == NULL || reply->type != REDIS_REPLY_ERROR || attempt >= 2)
			break;
		if (strncmp(reply->str, "SNOWID_REGISTER", 15) == 0 && pad == NULL)
			pad = "";
		else if (strncmp(reply->str, "SNOWID_STALE_PROOF ", 19) != 0 ||
				 !snowid_holder_proof_after(reply->str + 19))
			break;
		freeReplyObject(reply);
	}
	return reply;
}

/*
 * Whether an error reply to FCALL says that the function cannot be called
 * that way, and *path what to do instead: Redis before 7 knows no FCALL,
 * the library is not loaded, or the user may not FCALL.  Any other error
 * is the function's own answer (or Redis' about the keys).
 */
static bool
snowid_script_fcall_refused(const char *err, SnowidScriptPath *path)
{
	if (strncmp(err, "ERR unknown command", 19) == 0)
		*path = SNOWID_SCRIPT_EVAL_OLD_REDIS;
	else if (strncmp(err, "ERR Function not found", 22) == 0)
		*path = SNOWID_SCRIPT_EVAL_NOT_LOADED;
	else if (strncmp(err, "NOPERM", 6) == 0 && strstr(err, "'fcall") != NULL)
		*path = SNOWID_SCRIPT_EVAL_NO_FCALL;
	else
		return false;
	return true;
}

/*
 * Run the function with the library compiled in: EVALSHA, and EVAL if Redis
 * does not have the script yet or the user may not EVALSHA (the users
 * documented before the library had EVAL only).  If the library is missing
 * and the user may not run scripts either, NULL with result saying so
 * (NO_LIBRARY); else the reply, or NULL with result filled if none came.
 */
static redisReply *
snowid_script_eval(SnowidRedisSession *session, const SnowidScriptCall *call,
				   SnowidRedisResult *result)
{
	redisReply *reply;

	reply = snowid_script_send(session, "EVALSHA", SNOWID_REDIS_LIBRARY_SHA1,
							   call, result);
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
		(strncmp(reply->str, "NOSCRIPT", 8) == 0 ||
		 (strncmp(reply->str, "NOPERM", 6) == 0 &&
		  strstr(reply->str, "'evalsha") != NULL)))
	{
		freeReplyObject(reply);
		reply = snowid_script_send(session, "EVAL", SNOWID_REDIS_LIBRARY,
								   call, result);
	}
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
		result->script_path == SNOWID_SCRIPT_EVAL_NOT_LOADED &&
		strncmp(reply->str, "NOPERM", 6) == 0 &&
		strstr(reply->str, "'eval") != NULL)
	{
		freeReplyObject(reply);
		snowid_redis_fail(result, SNOWID_REDIS_NO_LIBRARY,
						  "Redis has no function %s (no snowid library is loaded there, or one of an earlier release), and this Redis user may not run the library with EVALSHA or EVAL instead.",
						  snowid_script_functions[call->function].name);
		return NULL;
	}
	return reply;
}

/*
 * Call a function of the library on the open session, following
 * redirections: FCALL, or EVALSHA and EVAL where Redis knows no FCALL, the
 * library is not loaded or the user may not FCALL (result->script_path
 * says which).  Returns the reply, which the caller frees with
 * freeReplyObject(), or NULL with result filled.
 */
redisReply *
snowid_script_call(SnowidRedisSession *session, const SnowidScriptCall *call,
				   SnowidRedisResult *result)
{
	redisReply *reply = snowid_script_send(session, "FCALL", NULL, call,
										   result);

	if (reply == NULL || reply->type != REDIS_REPLY_ERROR ||
		!snowid_script_fcall_refused(reply->str, &result->script_path))
		return reply;
	freeReplyObject(reply);
	return snowid_script_eval(session, call, result);
}

/*
 * Call a function of the library (a lease function of lease.c) where a
 * claim runs: through the sentinels if the URL names them, following
 * cluster redirections, then WAIT for snowid.redis_min_replicas unless
 * Redis replied with an error; all within request->timeout_ms.  Returns the
 * reply, which the caller frees with freeReplyObject(), or NULL with result
 * filled.  As in a claim, a cancel raises its error from a wait, with
 * nothing left open.  A call that had to run the library as a script warns
 * (once a process) once the connection is closed.
 */
redisReply *
snowid_script_run(const SnowidRedisTarget *target,
				  const SnowidRedisRequest *request,
				  const SnowidScriptCall *call, SnowidRedisResult *result)
{
	SnowidRedisSession session;
	redisReply *volatile reply = NULL;

	PG_TRY();
	{
		if (snowid_redis_open(&session, target, request, result))
			reply = snowid_script_call(&session, call, result);
		if (reply != NULL && reply->type != REDIS_REPLY_ERROR &&
			!snowid_redis_wait_replicas(&session, result))
		{
			freeReplyObject(reply);
			reply = NULL;
		}
	}
	PG_CATCH();
	{
		if (reply != NULL)
			freeReplyObject(reply);
		snowid_redis_close(&session);
		PG_RE_THROW();
	}
	PG_END_TRY();
	snowid_redis_close(&session);
	snowid_script_report_path(request, result);
	return reply;
}

/*
 * snowid_script_library_path
 *		The installed file of snowid's function library, for a hint.
 */
void
snowid_script_library_path(char *path, size_t size)
{
	char		share[MAXPGPATH];

	get_share_path(my_exec_path, share);
	snprintf(path, size, "%s/%s", share, SNOWID_REDIS_LIBRARY_FILE);
}

/*
 * snowid_script_report_path
 *		Warns, once a process, that a call ran snowid's library as a script
 * (EVALSHA, EVAL) because the library is not loaded or the Redis user may
 * not FCALL: such a user may run any script, and is not the one the
 * documentation recommends.  Redis before 7, which has no functions, is
 * the documented fallback and warns nothing.  The hint names the installed
 * file, so a client that may not see the Redis set-up
 * (request->client_sees_redis) gets nothing: it goes to the server log.
 */
void
snowid_script_report_path(const SnowidRedisRequest *request,
						  const SnowidRedisResult *result)
{
	static bool warned = false;
	char		path[MAXPGPATH];
	int			elevel = request->client_sees_redis ? WARNING : LOG_SERVER_ONLY;

	if (warned || (result->script_path != SNOWID_SCRIPT_EVAL_NOT_LOADED &&
				   result->script_path != SNOWID_SCRIPT_EVAL_NO_FCALL))
		return;
	warned = true;
	snowid_script_library_path(path, sizeof(path));
	if (result->script_path == SNOWID_SCRIPT_EVAL_NOT_LOADED)
		ereport(elevel,
				(errmsg("snowid's function library is not loaded in redis, so snowid runs it with EVAL"),
				 errdetail("Redis has no function %s... of this release (no snowid library is loaded there, or one of an earlier release).  A Redis user that may run EVAL may run any script, and a script that never ends stalls Redis for every server.",
						   SNOWID_REDIS_FUNCTION_PREFIX),
				 errhint("Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < %s (on every primary of a Redis Cluster); then the Redis user needs FCALL, not EVAL.",
						 path)));
	else
		ereport(elevel,
				(errmsg("the redis user may not call snowid's functions with FCALL, so snowid runs its library with EVAL"),
				 errdetail("A Redis user that may run EVAL may run any script, and a script that never ends stalls Redis for every server."),
				 errhint("Allow the Redis user FCALL and take EVAL and EVALSHA away; the library is loaded with redis-cli -x FUNCTION LOAD REPLACE < %s.",
						 path)));
}
