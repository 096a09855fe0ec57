/*-------------------------------------------------------------------------
 *
 * scripts.h
 *	  Calling a function of snowid's Redis function library (snowid.lua,
 *	  loaded once with FUNCTION LOAD): the claim script of claim.c and the
 *	  lease scripts of lease.c all go through here (scripts.c).
 *
 * A call is FCALL of the function on the datacenter's three keys (owners,
 * leases, fences), with the caller's identity, the function's numbers
 * separated by spaces, and for the lease functions a token.  Where Redis
 * knows no FCALL (Redis 6), or the library is not loaded, or the user may
 * not FCALL, the same file, compiled in, runs with EVALSHA or EVAL instead,
 * the function's name as its first argument; if the user may not do that
 * either, the call fails with SNOWID_REDIS_NO_LIBRARY.
 * snowid_script_report_path() warns, once a process, of a call that ran the
 * library as a script because it is not loaded or the user may not FCALL
 * (to the server log only where the client may not see the Redis set-up);
 * snowid_script_library_path() names the installed file, for hints.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_SCRIPTS_H
#define SNOWID_REDIS_SCRIPTS_H

#include "redis/topology.h"

/* The installed library's file, under PostgreSQL's share directory */
#define SNOWID_REDIS_LIBRARY_FILE	"extension/snowid.lua"

/* The functions of the library */
typedef enum SnowidScriptFunction
{
	SNOWID_SCRIPT_CLAIM,		/* the claim for good */
	SNOWID_SCRIPT_LEASE_CLAIM,
	SNOWID_SCRIPT_LEASE_RENEW,
	SNOWID_SCRIPT_LEASE_RELEASE,
	SNOWID_SCRIPT_FREE,			/* an administrator's: never called here */
	SNOWID_SCRIPT_END_QUIET,	/* an administrator's: never called here */
	SNOWID_SCRIPT_LOWER_FENCE,	/* an administrator's: never called here */
	SNOWID_SCRIPT_RESET_SECRET	/* an administrator's: never called here */
} SnowidScriptFunction;

/* One call of a function */
typedef struct SnowidScriptCall
{
	SnowidScriptFunction function;
	const char *numbers;		/* the function's numbers, separated by
								 * spaces */
	const char *token;			/* a lease function's token, or NULL */
} SnowidScriptCall;

struct redisReply;

extern const char *snowid_script_name(SnowidScriptFunction function);
extern void snowid_script_library_path(char *path, size_t size);
extern void snowid_script_report_path(const SnowidRedisRequest *request,
									  const SnowidRedisResult *result);

extern struct redisReply *snowid_script_call(SnowidRedisSession *session,
											 const SnowidScriptCall *call,
											 SnowidRedisResult *result);
extern struct redisReply *snowid_script_run(const SnowidRedisTarget *target,
											const SnowidRedisRequest *request,
											const SnowidScriptCall *call,
											SnowidRedisResult *result);

#endif							/* SNOWID_REDIS_SCRIPTS_H */
