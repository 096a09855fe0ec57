/*-------------------------------------------------------------------------
 *
 * scripts.h
 *	  Lua the claim script (claim.c) and the lease scripts (lease.c) share,
 *	  and how every one of them is called (scripts.c): EVAL with the
 *	  datacenter's owners key (the claim) or its three keys (owners, leases,
 *	  fences: the lease scripts), then the caller's identity, the script's
 *	  numbers separated by spaces, and for the lease scripts a token.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_SCRIPTS_H
#define SNOWID_REDIS_SCRIPTS_H

#include "redis/topology.h"

/*
 * wid(field) is the worker id a hash field names, if it lies in 0..max (the
 * script defines max first).  After SNOWID_REDIS_SCRIPT_FENCES (which needs
 * wid): ms(n) prints a time in ms as an integer, load_fences(flat, prefix)
 * reads the fences from the fields "<prefix><worker id>" of an HGETALL
 * reply (the fences hash, or "fence:" in the owners hash), fenced(id) is an
 * id's fence or 0, and least_fenced(ok) is the id with the lowest fence of
 * those ok(id) accepts, or nil.
 */
#define SNOWID_REDIS_SCRIPT_WID \
"local function wid(field)\n" \
"  local n = tonumber(field)\n" \
"  if n and n >= 0 and n <= max and n % 1 == 0 then return n end\n" \
"end\n"

#define SNOWID_REDIS_SCRIPT_FENCES \
"local function ms(n) return string.format('%.0f', n) end\n" \
"local fence = {}\n" \
"local function load_fences(flat, prefix)\n" \
"  for i = 1, #flat, 2 do\n" \
"    local f = string.match(flat[i], '^' .. prefix .. '(%d+)$')\n" \
"    local id, v = f and wid(f), tonumber(flat[i + 1])\n" \
"    if id and v and v > (fence[id] or 0) then fence[id] = v end\n" \
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

/*
 * The most words of a script's command: EVAL, the script, the key count,
 * three keys, the identity, the numbers and a token.  Redis refuses a
 * command of more than ten words before AUTH, which would hide why a claim
 * without a password fails.
 */
#define SNOWID_SCRIPT_MAX_ARGC	9

extern int	snowid_script_argv(const char **argv, SnowidRedisKeys *keys,
							   const char *script, bool all_keys,
							   const SnowidRedisRequest *request,
							   const char *numbers, const char *token);

#endif							/* SNOWID_REDIS_SCRIPTS_H */
