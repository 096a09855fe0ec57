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
 * Fill argv (room for SNOWID_SCRIPT_ARGC + nargs words) with the EVAL of
 * script on request's datacenter keys (named into keys, which must live as
 * long as argv), the identity, then args; returns the count of words.
 */
int
snowid_script_argv(const char **argv, SnowidRedisKeys *keys,
				   const char *script, const SnowidRedisRequest *request,
				   int nargs, const char *const *args)
{
	snowid_redis_keys(keys, request->key_prefix, request->datacenter_id);
	argv[0] = "EVAL";
	argv[1] = script;
	argv[2] = "3";
	argv[3] = keys->owners;
	argv[4] = keys->leases;
	argv[5] = keys->fences;
	argv[6] = request->identity;
	if (nargs > 0)
		memcpy(&argv[SNOWID_SCRIPT_ARGC], args, nargs * sizeof(const char *));
	return SNOWID_SCRIPT_ARGC + nargs;
}
