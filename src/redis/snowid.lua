#!lua name=snowid
--
-- snowid.lua
--   snowid's Redis functions: claiming a worker id for good, and claiming,
--   renewing and giving back a worker id on lease.  The keys are those of
--   src/redis/claim.h and src/redis/lease.h, all of one datacenter.
--
-- Installed with the extension as $(pg_config --sharedir)/extension/snowid.lua
-- and loaded once by a Redis administrator (on every primary of a Redis
-- Cluster; replicas get it by replication):
--
--   redis-cli -x FUNCTION LOAD REPLACE < "$(pg_config --sharedir)/extension/snowid.lua"
--
-- The server then only calls FCALL.  The names carry the version of their
-- arguments and replies (snowid_1_...), so that a server never calls a
-- library of another release: a release that changes them names its
-- functions snowid_2_..., and keeps the older ones here for as long as
-- servers of an earlier release may call them (FUNCTION LOAD REPLACE swaps
-- the whole library).
--
-- Without the library (Redis 6, or not loaded) the server runs this same
-- file with EVALSHA, or EVAL, without its first line and its comment lines,
-- the function's name as the first argument: the end of the file
-- dispatches on it.
--
-- Every function takes the identity of the calling server, then its
-- numbers separated by spaces in one argument, then for a lease the token
-- of the claim.  (Redis refuses a command of more than ten words before
-- AUTH, which would hide why a call without a password fails.)  Refusals
-- are error replies whose first word says which, and they write nothing.

local prefix = 'snowid_1_'

-- The worker id a hash field names, if it lies in 0..max
local function wid(field, max)
  local n = tonumber(field)
  if n and n >= 0 and n <= max and n % 1 == 0 then return n end
end

-- A time in ms, printed as an integer
local function ms(n) return string.format('%.0f', n) end

-- The fences of the worker ids 0..max: load(flat, pre) reads them from the
-- fields "<pre><worker id>" of an HGETALL reply (the fences hash, or
-- "fence:" in the owners hash), of(id) is an id's fence or 0, and least(ok)
-- is the id with the lowest fence of those ok(id) accepts, or nil.
local function fences(max)
  local fence, f = {}, {}
  function f.load(flat, pre)
    for i = 1, #flat, 2 do
      local s = string.match(flat[i], '^' .. pre .. '(%d+)$')
      local id, v = s and wid(s, max), tonumber(flat[i + 1])
      if id and v and v > (fence[id] or 0) then fence[id] = v end
    end
  end
  function f.of(id) return fence[id] or 0 end
  function f.least(ok)
    local best
    for id, v in pairs(fence) do
      if ok(id) and (best == nil or v < fence[best] or
                     (v == fence[best] and id < best)) then best = id end
    end
    return best
  end
  return f
end

-- The id a server without one takes: first if it is free (not held, and
-- fenced no later than usable), else the lowest free id in 0..max, else the
-- one fenced least far of those not held, which the caller refuses with
-- fenced(); or nil and SNOWID_ALL_HELD when every id is held.
local function pick(fence, max, held, usable, first)
  local function free(id) return not held[id] and fence.of(id) <= usable end
  if first >= 0 and first <= max and free(first) then return first end
  for id = 0, max do
    if free(id) then return id end
  end
  local least = fence.least(function(id) return not held[id] end)
  if least == nil then
    return nil, redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))
  end
  return least
end

-- The refusal of an id fenced past where the caller can start
local function fenced(fence, id)
  return redis.error_reply('SNOWID_FENCED ' .. id .. ' ' .. ms(fence.of(id)))
end

-- The claim, for good.
--
-- keys[1] is the datacenter's owners hash: a worker id to the identity of
-- the server holding it, and "fence:<worker id>" to the fence a lease left
-- when it was given back, the time below which lie all ids its holders
-- issued.  args[1] is the claiming identity; args[2] holds five numbers: the
-- configured worker id or -1, the highest worker id, the preferred worker id
-- or -1, 1 to write the claim even if it is held already (so that a WAIT for
-- replicas covers it) or 0, and the latest fence the claiming server can
-- start above now (its clock plus its drift budget, Unix ms).
--
-- An identity keeps the id it holds.  Without one it takes the configured
-- id if free; with none configured, the preferred id if free, or else the
-- lowest free id in 0..max.  The preferred id is the one the server held
-- last: if Redis has lost the claims, the lowest free id may be one that
-- another server still uses, while the server's own last id is free unless
-- a server claimed it since.  An id fenced past that latest time is not
-- taken (an id on lease was given back, and its last holder's ids may run
-- ahead of this server's clock): the choice goes on to the next free id, and
-- a configured or kept id is refused until then.  Other entries of the same
-- identity (an id beyond max after a layout change, a duplicate written by
-- hand) are released so that an identity holds exactly one id.  A server
-- that already holds its id causes no write unless asked to write.
-- Replies {worker id, its fence or 0}: the claiming server's ids must start
-- at or above that fence.  Refusals:
--
--   SNOWID_ALL_HELD <count>         no id in 0..max is free
--   SNOWID_FENCED <id> <fence>      every free id (or the configured or kept
--                                   one) is fenced past that time; id is the
--                                   one fenced least far
--   SNOWID_CONFLICT <identity>      the configured id is held by identity
--   SNOWID_HOLDS_OTHER <id>         this identity holds id, not the configured
--   SNOWID_RANGE ...                the configured id exceeds max (a caller bug)
local function claim(keys, args)
  local owners, me = keys[1], args[1]
  local want, max, prefer, write, usable =
    string.match(args[2], '^(-?%d+) (%d+) (-?%d+) ([01]) (%d+)$')
  want, max, prefer, usable = tonumber(want), tonumber(max), tonumber(prefer), tonumber(usable)
  if want > max then
    return redis.error_reply('SNOWID_RANGE worker id ' .. want .. ' exceeds ' .. max)
  end
  local fence = fences(max)
  local taken, mine, keep = {}, {}, nil
  local flat = redis.call('HGETALL', owners)
  fence.load(flat, 'fence:')
  for i = 1, #flat, 2 do
    local id = wid(flat[i], max)
    if flat[i + 1] == me then
      mine[#mine + 1] = flat[i]
      if id and (keep == nil or id == want or (keep ~= want and id < keep)) then
        keep = id
      end
    elseif id then
      taken[id] = flat[i + 1]
    end
  end
  if want >= 0 then
    if keep ~= nil and keep ~= want then
      return redis.error_reply('SNOWID_HOLDS_OTHER ' .. keep)
    end
    if taken[want] then
      return redis.error_reply('SNOWID_CONFLICT ' .. taken[want])
    end
    keep = want
  elseif keep == nil then
    local refusal
    keep, refusal = pick(fence, max, taken, usable, prefer)
    if refusal then return refusal end
  end
  if fence.of(keep) > usable then return fenced(fence, keep) end
  local held = false
  for _, field in ipairs(mine) do
    if tonumber(field) == keep then
      held = true
    else
      redis.call('HDEL', owners, field)
    end
  end
  if not held or write == '1' then
    redis.call('HSET', owners, tostring(keep), me)
  end
  return {keep, fence.of(keep)}
end

-- What every lease function starts with: keys[1..3] are the datacenter's
-- owners, leases and fences hashes; args[1] the identity.  Returns the
-- three keys, the holder name of a lease ("lease <identity>") and Redis'
-- own time in Unix ms, by which a lease runs out.
local function lease_start(keys, args)
  if redis.replicate_commands then pcall(redis.replicate_commands) end
  local t = redis.call('TIME')
  return keys[1], keys[2], keys[3], 'lease ' .. args[1],
    tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The lease of worker id k, if it is me's and was granted with token tok:
-- its floor, or nil.  A lease value is "<expiry> <floor> <token>"; one of
-- an older version, without a token, is no one's.
local function lease_floor(owners, leases, me, k, tok)
  local v = redis.call('HGET', leases, k)
  local b, vt = string.match(v or '', '^%d+ (%d+) (%x+)$')
  if redis.call('HGET', owners, k) ~= me or vt ~= tok then return nil end
  return tonumber(b)
end

-- The lease claim.  args: identity; the highest worker id, the lease (ms),
-- where the claiming server's generator is (Unix ms) and the latest fence
-- it can start above now (its clock plus its drift budget); and a new token
-- that the renewals and the release of this lease name.
--
-- The floor of a claim is always the id's fence as it is now: every id any
-- holder issued with it lies below.  A server that still holds a lease
-- (even one run out, as long as nobody took the id since) keeps it if it
-- can start above that fence; otherwise, and without a lease, it takes the
-- lowest id that is free (not in owners, or on a lease that ran out) and
-- that it can start above.  A permanent claim (an owner without "lease ")
-- is never free.  The new fence is a lease past the floor or the caller's
-- generator, whichever is later.  Replies {worker id, floor, fence, lease},
-- or refuses: SNOWID_ALL_HELD <count>, or SNOWID_FENCED <id> <fence> when
-- every free id is fenced too far ahead.
local function lease_claim(keys, args)
  local owners, leases, fences_key, me, now = lease_start(keys, args)
  local max, lease, client, usable = string.match(args[2], '^(%d+) (%d+) (%d+) (%d+)$')
  max, lease, client, usable = tonumber(max), tonumber(lease), tonumber(client), tonumber(usable)
  local token = args[3]
  local fence = fences(max)
  fence.load(redis.call('HGETALL', fences_key), '')
  local expiry = {}
  local flat = redis.call('HGETALL', leases)
  for i = 1, #flat, 2 do
    local e = string.match(flat[i + 1], '^(%d+) %d+')
    if e then expiry[flat[i]] = tonumber(e) end
  end
  local held, mine, keep = {}, {}, nil
  flat = redis.call('HGETALL', owners)
  for i = 1, #flat, 2 do
    local f, who = flat[i], flat[i + 1]
    local id = wid(f, max)
    if who == me then
      mine[#mine + 1] = f
      if id and fence.of(id) <= usable and (keep == nil or id < keep) then keep = id end
    elseif id and (string.sub(who, 1, 6) ~= 'lease ' or not expiry[f] or expiry[f] > now) then
      held[id] = true
    end
  end
  if keep == nil then
    local refusal
    keep, refusal = pick(fence, max, held, usable, -1)
    if refusal then return refusal end
  end
  if fence.of(keep) > usable then return fenced(fence, keep) end
  for _, f in ipairs(mine) do
    if wid(f, max) ~= keep then
      redis.call('HDEL', owners, f)
      redis.call('HDEL', leases, f)
    end
  end
  local k, floor = tostring(keep), fence.of(keep)
  local new = math.max(client, floor) + lease
  redis.call('HSET', owners, k, me)
  redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. ms(floor) .. ' ' .. token)
  redis.call('HSET', fences_key, k, ms(new))
  return {keep, floor, new, lease}
end

-- The renewal.  args: identity; the worker id, the lease (ms) and the fence
-- wanted; the token of the claim.  Succeeds only while the id is this
-- server's lease of that claim (a lease that ran out and that nobody took
-- since still is); moves the lease to a lease from now and the fence up to
-- the one wanted, never down.  Replies {worker id, floor, fence, lease} or
-- SNOWID_LOST <holder>.
local function lease_renew(keys, args)
  local owners, leases, fences_key, me, now = lease_start(keys, args)
  local k, lease, want = string.match(args[2], '^(%d+) (%d+) (%d+)$')
  lease, want = tonumber(lease), tonumber(want)
  local b = lease_floor(owners, leases, me, k, args[3])
  if not b then
    return redis.error_reply('SNOWID_LOST ' .. (redis.call('HGET', owners, k) or ''))
  end
  local fence = math.max(tonumber(redis.call('HGET', fences_key, k) or '0'), want)
  redis.call('HSET', leases, k, ms(now + lease) .. ' ' .. ms(b) .. ' ' .. args[3])
  redis.call('HSET', fences_key, k, ms(fence))
  return {tonumber(k), b, fence, lease}
end

-- The release.  args: identity; the worker id and the final fence (just
-- past the last id this server issued; it has stopped issuing); the token
-- of the claim.  Only the holder of that very claim may lower the fence,
-- and never below the floor it took the id with.  The fence goes into the
-- owners hash too, as "fence:<worker id>", where a permanent claim finds it.
-- Replies 1, or 0 if the id was not this server's lease of that claim.
local function lease_release(keys, args)
  local owners, leases, fences_key, me = lease_start(keys, args)
  local k, final = string.match(args[2], '^(%d+) (%d+)$')
  local b = lease_floor(owners, leases, me, k, args[3])
  if not b then return 0 end
  local f = ms(math.max(tonumber(final), b))
  redis.call('HSET', fences_key, k, f)
  redis.call('HSET', owners, 'fence:' .. k, f)
  redis.call('HDEL', owners, k)
  redis.call('HDEL', leases, k)
  return 1
end

-- Every function, by name; flags as FUNCTION LOAD takes them (a function
-- that never writes would say {'no-writes'}, and be called with FCALL_RO).
local functions = {
  {name = 'claim', callback = claim, flags = {}},
  {name = 'lease_claim', callback = lease_claim, flags = {}},
  {name = 'lease_renew', callback = lease_renew, flags = {}},
  {name = 'lease_release', callback = lease_release, flags = {}},
}

-- (Loading a library offers no ipairs.)
if redis.register_function then
  for i = 1, #functions do
    local f = functions[i]
    redis.register_function{function_name = prefix .. f.name,
                            callback = f.callback, flags = f.flags}
  end
else
  for i = 1, #functions do
    local f = functions[i]
    if prefix .. f.name == ARGV[1] then
      return f.callback(KEYS, {unpack(ARGV, 2)})
    end
  end
  return redis.error_reply('SNOWID_NO_FUNCTION ' .. tostring(ARGV[1]))
end
