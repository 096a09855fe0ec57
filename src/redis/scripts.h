/*-------------------------------------------------------------------------
 *
 * scripts.h
 *	  Lua the claim script (claim.c) and the lease scripts (lease.c) share,
 *	  and how every one of them is called (scripts.c): EVAL with the
 *	  datacenter's three keys (owners, leases, fences) and the caller's
 *	  identity as the first argument.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_SCRIPTS_H
#define SNOWID_REDIS_SCRIPTS_H

#include "redis/topology.h"

/*
 * wid(field) is the worker id a
 * hash field names, if it lies in 0..max (the script defines max first).
 * After SNOWID_REDIS_SCRIPT_FENCES (which needs wid and the fences key):
 * ms(n) prints a time in ms as an integer, fenced(id) is an id's fence or 0,
 * and least_fenced(ok) is the id with the lowest fence of those ok(id)
 * accepts, or nil.
 */
#define SNOWID_REDIS_SCRIPT_WID \
"local function wid(field)\n" \
"  local n = tonumber(field)\n" \
"  if n and n >= 0 and n <= max and n % 1 == 0 then return n end\n" \
"end\n"

#define SNOWID_REDIS_SCRIPT_FENCES \
"local function ms(n) return string.format('%.0f', n) end\n" \
"local fence = {}\n" \
"do\n" \
"  local f = redis.call('HGETALL', fences)\n" \
"  for i = 1, #f, 2 do\n" \
"    local id, v = wid(f[i]), tonumber(f[i + 1])\n" \
"    if id and v then fence[id] = v end\n" \
"  end\n" \
"end\n" \
"local function fenced(id) return fence[id] or 0 end\n" \
"local function least_fenced(ok)\n" \
"  local best\n" \
"  for id, v in pairs(fence) do\n" \
"    if ok(id) and (best == nil or v < fence[best] or\n" \
"                   (v == fence[best] and id < best)) then best = id end\n" \
"  end\n" \
"  return best\n" \
"end\n"


/* Words of a script call before its own arguments */
#define SNOWID_SCRIPT_ARGC		7

extern int	snowid_script_argv(const char **argv, SnowidRedisKeys *keys,
							   const char *script,
							   const SnowidRedisRequest *request, int nargs,
							   const char *const *args);

#endif							/* SNOWID_REDIS_SCRIPTS_H */
