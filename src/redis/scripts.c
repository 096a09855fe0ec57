/*-------------------------------------------------------------------------
 *
 * scripts.c
 *	  How a script is called on a datacenter's keys: the one shape of
 *	  argument vector the claim and the lease scripts all take.  No locking
 *	  applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "redis/scripts.h"

/*
 * Fill argv (room for SNOWID_SCRIPT_MAX_ARGC words) with the EVAL of script
 * on request's datacenter keys (named into keys, which must live as long as
 * argv): the owners key, or with all_keys all three; then the identity, the
 * numbers and the token (unless NULL).  Returns the count of words.
 */
int
snowid_script_argv(const char **argv, SnowidRedisKeys *keys,
				   const char *script, bool all_keys,
				   const SnowidRedisRequest *request, const char *numbers,
				   const char *token)
{
	int			argc = 0;

	snowid_redis_keys(keys, request->key_prefix, request->datacenter_id);
	argv[argc++] = "EVAL";
	argv[argc++] = script;
	argv[argc++] = all_keys ? "3" : "1";
	argv[argc++] = keys->owners;
	if (all_keys)
	{
		argv[argc++] = keys->leases;
		argv[argc++] = keys->fences;
	}
	argv[argc++] = request->identity;
	argv[argc++] = numbers;
	if (token != NULL)
		argv[argc++] = token;
	Assert(argc <= SNOWID_SCRIPT_MAX_ARGC);
	return argc;
}
