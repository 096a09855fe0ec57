#!lua name=snowid
--
-- snowid.lua
--   snowid's Redis functions: claiming a worker id for good, and claiming,
--   renewing and giving back a worker id on lease.  The keys are those of
--   src/redis/claim.h and src/redis/lease.h, all of one datacenter.
--
-- Installed with the extension as $(pg_config --sharedir)/extension/snowid.lua
-- (the pg_config of the installation it went into) and loaded once by a
-- Redis administrator (on every primary of a Redis Cluster; replicas get it
-- by replication):
--
--   redis-cli -x FUNCTION LOAD REPLACE < "$("$PG_CONFIG" --sharedir)/extension/snowid.lua"
--
-- The server then only calls FCALL.  The names carry the version of their
-- arguments and replies (snowid_3_..., prefix below: the one place it is
-- written, which the build gives the servers too): a release that changes
-- them names its functions snowid_4_..., and keeps the older ones here
-- while servers of an earlier release may call them (FUNCTION LOAD REPLACE
-- swaps the whole library).  So a server finds no function of its version
-- in a library of an earlier release, and asks for this one to be loaded
-- (or runs its own with EVAL, where its Redis user may), never calling an
-- older one with arguments it does not take.  snowid_3_ came after release
-- 1.3.0: a holder proof where the secret was, the answers SNOWID_REGISTER
-- and SNOWID_STALE_PROOF.  The snowid_2_... functions of 1.3.0 stay, for
-- its servers (which send the secret itself, taken as before) and for an
-- administrator's commands written for it; the snowid_1_... functions of
-- release 1.2 too: snowid_1_claim named the owners key alone, and finds
-- the other two by their names (its hash tag, so its Redis Cluster slot).
-- Without the library (Redis 6, or not loaded) the server runs this file
-- with EVALSHA, or EVAL, without its first line and its comment lines, the
-- function's name as the first argument: the end of the file dispatches.
--
-- Every function takes the datacenter's three keys (owners, leases,
-- fences), the identity of the calling server, then its numbers separated
-- by spaces in one argument, then its holder proof: for a lease, after
-- the token of the claim and a space, in the same argument.  (Redis
-- refuses a command of more than ten words before AUTH, which would hide
-- why a call without a password fails.)  Refusals are error replies whose
-- first word says which; they write nothing but the state record of the
-- forgetting rule.
--
-- THE HOLDER'S SECRET.  Every server has a secret of its own (64
-- lower-case hex digits, kept in its data directory), which it proves and
-- never sends (see check_secret()).  Its hash (redis.sha1hex), the
-- holder's key, is registered for the identity, in the field
-- "secret <identity>" of the fences hash, by that identity's first call
-- that is granted; a later call of that identity that does not show that
-- key, or shows none (a server of release 1.2), is refused with
-- SNOWID_WRONG_SECRET and writes nothing.  An administrator's
-- reset_secret() removes the hash of a server that lost its secret.  This
-- binds a holder name to its server for callers of these functions only:
-- the commands the functions run are checked against the caller's ACL,
-- so a Redis user that may call them may also write the three hashes
-- directly (doc/redis.md, "The Redis user").

local prefix = 'snowid_3_'

-- The numbers and words of the protocol below are named as in snowid's
-- C headers (src/core/layout.h, src/core/mark.h, src/coord/store.h,
-- src/coord/request.h), between two @, and the build writes in their
-- values (test/tools/protocol): the library installed holds them as the
-- servers do.

-- THE FENCE RULE.  For every worker id, each new holder's first id lies
-- above every id any earlier holder could have issued.  It is kept in one
-- place and by two helpers that every function goes through:
--
--   * The fence of a worker id is its field in the fences hash: Unix ms
--     below which lie all ids any holder of that id issued so far, and all
--     that a lease holder may issue before its lease runs out.  A fence
--     only ever rises, but when the holder of a lease gives it back or
--     parks it, having stopped issuing (never below the floor it took the
--     id with).
--   * load() reads every fence (and the "fence:<worker id>" fields of the
--     owners hash that release 1.2 wrote there), and every claim, of any
--     kind, starts at or above the fence it finds, or refuses.
--   * retire() is the only way a worker id leaves its holder: a release, a
--     lease claim that moves to another id, an expired lease taken over, an
--     id beyond the layout, an administrator's free().  It raises the fence
--     to what the holder may have issued, mirrors it into the owners hash
--     (where servers of release 1.2, running the library as a script, read
--     it), and only then removes the holder.
--
-- A permanent holder has no fence while it holds: it may issue for as long
-- as it runs.  Only free(), which an administrator calls once that server
-- is gone for good, takes such an id away, fenced at Redis' clock plus a
-- margin the administrator gives (see free()).

-- The worker id a hash field names, if it lies in 0..max
local function wid(field, max)
  local n = tonumber(field)
  if n and n >= 0 and n <= max and n % 1 == 0 then return n end
end

-- A time in ms, printed as an integer
local function ms(n) return string.format('%.0f', n) end

-- A number a caller sends, parsed strictly: digits only, without a sign or
-- a leading zero ("0" itself), at most 16 of them (exact in Lua's
-- numbers); or "-1" where none_ok (none).  nil for anything else: "-0",
-- "007" or "+1" would name a number under another field than the one
-- every call reads ("-0" is the number 0, printed "-0").
local function strict(word, none_ok)
  if word == '-1' and none_ok then return -1 end
  if word and #word <= 16 and (word == '0' or string.match(word, '^[1-9]%d*$')) then
    return tonumber(word)
  end
end

-- What the owners hash and the answers put before an identity to name the
-- holder of a lease; no identity begins with it (identity_refused())
local LEASE_PREFIX = '@SNOWID_LEASE_HOLDER_PREFIX@'

-- Redis' clock (TIME), read once at the start of every function: in ms
-- and in microseconds
local function clock()
  if redis.replicate_commands then pcall(redis.replicate_commands) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000),
         tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The state of a datacenter's worker ids, read once at the start of every
-- function: keys {owners, leases, fences}.
-- Redis' own clock (TIME) says when a lease has run out.
--   st.fence(id)     the id's fence, or 0
--   st.holder[f]     who holds the id of field f (identity, or "lease
--                    <identity>"), for every field of the owners hash that
--                    is not a fence
--   st.live(id)      whether the id is held: by a permanent claim, or by a
--                    lease that has not run out
--   st.least(max, ok) the id in 0..max with the lowest fence of those ok(id)
--                    accepts
--   st.known(max)    the ids in 0..max that have a holder or a fence,
--                    ascending, and the lowest id in 0..max that has
--                    neither (free, without a fence), or nil
-- No function walks all of 0..max, which with 24 worker bits takes longer
-- than Redis lets a function run: only the ids that have a field, whose
-- number the hashes bound.
local function load(keys)
  -- every fence is read, also of ids beyond max (a layout narrowed since),
  -- so that retiring such an id never lowers its fence
  local any = @SNOWID_MAX_ID@
  local st = {owners = keys[1], leases = keys[2], fences = keys[3],
              holder = {}, expiry = {}, fence_of = {}, empty = {}}
  st.now, st.now_us = clock()
  local function raise(f, v)
    v = tonumber(v)
    if v and v > (st.fence_of[f] or 0) then st.fence_of[f] = v end
  end
  local flat = redis.call('HGETALL', st.fences)
  st.empty[st.fences] = #flat == 0
  for i = 1, #flat, 2 do
    local id = wid(flat[i], any)
    if id then raise(tostring(id), flat[i + 1]) end
  end
  flat = redis.call('HGETALL', st.owners)
  for i = 1, #flat, 2 do
    local f = string.match(flat[i], '^fence:(%d+)$')
    if f then
      local id = wid(f, any)
      if id then raise(tostring(id), flat[i + 1]) end
    elseif flat[i] == 'state' then
      st.state = flat[i + 1]
    else
      st.holder[flat[i]] = flat[i + 1]
    end
  end
  flat = redis.call('HGETALL', st.leases)
  st.empty[st.leases] = #flat == 0
  for i = 1, #flat, 2 do
    local e = string.match(flat[i + 1], '^(%d+) %d+')
    if e then st.expiry[flat[i]] = tonumber(e) end
  end
  local known, seen = {}, {}
  local function note(f)
    local id = wid(f, any)
    if id and not seen[id] then
      seen[id] = true
      known[#known + 1] = id
    end
  end
  for f in pairs(st.holder) do note(f) end
  for f in pairs(st.fence_of) do note(f) end
  table.sort(known)
  function st.known(hi)
    local ids, gap = {}, 0
    for _, id in ipairs(known) do
      if id > hi then break end
      ids[#ids + 1] = id
      if id == gap then gap = id + 1 end
    end
    if gap > hi then gap = nil end
    return ids, gap
  end
  function st.fence(id) return st.fence_of[tostring(id)] or 0 end
  function st.live(id)
    local who = st.holder[tostring(id)]
    if who == nil then return false end
    if string.sub(who, 1, #LEASE_PREFIX) ~= LEASE_PREFIX then return true end
    local e = st.expiry[tostring(id)]
    return e ~= nil and e > st.now
  end
  function st.least(max, ok)
    local ids, gap = st.known(max)
    local best
    if gap ~= nil and ok(gap) then best = gap end
    for _, id in ipairs(ids) do
      if ok(id) and (best == nil or st.fence(id) < st.fence(best) or
                     (st.fence(id) == st.fence(best) and id < best)) then
        best = id
      end
    end
    return best
  end
  return st
end

-- Make sure the leases and fences hashes exist next to the owners hash
-- once an id is granted (a hash cannot be empty: a field "format" holds the
-- version of what they hold), so that a Redis Cluster slot being migrated
-- moves all three keys and a function on them is served once they are
-- moved, rather than answered TRYAGAIN for keys that never existed.
local function ensure(st)
  for _, key in ipairs({st.leases, st.fences}) do
    if st.empty[key] then
      redis.call('HSET', key, 'format', '2')
      st.empty[key] = false
    end
  end
end

-- Raise the fence of field f to at least v (Unix ms)
local function raise_fence(st, f, v)
  local new = math.max(st.fence_of[f] or 0, v)
  st.fence_of[f] = new
  redis.call('HSET', st.fences, f, ms(new))
end

-- Take the id of field f from its holder: its fence raised to at least v
-- first (0: the fence as it is, which covers every lease) and mirrored into
-- the owners hash, then the holder and its lease removed.
local function retire(st, f, v)
  raise_fence(st, f, v)
  redis.call('HSET', st.owners, 'fence:' .. f, ms(st.fence_of[f]))
  redis.call('HDEL', st.owners, f)
  redis.call('HDEL', st.leases, f)
  st.holder[f] = nil
end

-- The refusal of the first of checks, each {name, value, lo, hi}, whose
-- value is missing or outside lo..hi, or nil: an impossible number is
-- refused before the call changes anything
local function out_of_bounds(checks)
  for i = 1, #checks do
    local c = checks[i]
    if c[2] == nil or c[2] < c[3] or c[2] > c[4] then
      return redis.error_reply('SNOWID_USAGE ' .. c[1] .. ' must lie between ' .. ms(c[3]) ..
        ' and ' .. ms(c[4]) .. ', not ' .. (c[2] and ms(c[2]) or 'none'))
    end
  end
end

-- THE HOLDER'S PROOF (doc/security.md, "Holder secrets").  A server of
-- this release never sends its secret: Redis' SLOWLOG and MONITOR show
-- every argument.  Its key is the hash registered for it, sha1hex(secret),
-- and each call sends "<n>:<proof>": n is its clock in microseconds (or
-- one past the last n it sent), proof the sha1hex of the key, n and the
-- call, each followed by a line feed but the last (see proof_of()).  The
-- first call of that identity that is granted registers the key, sent
-- once as "<n>:<proof>:<key>" when Redis answers SNOWID_REGISTER (a user
-- that may call these functions may write the hashes directly anyway,
-- doc/redis.md, "The Redis user").  Four rules, each for a proof read
-- from a log:
--   * the proof covers the call (the function's name and every argument
--     but the proof): it can make only the call it was made for;
--   * Redis takes n before the call does anything else, refusal or not
--     (a call refused as out of bounds too, whose refusal comes first, as
--     the coordination database's prove() takes it before the call), and
--     refuses an n no larger than the last it took (SNOWID_STALE_PROOF
--     <last n>: the server then sends a larger one): it makes its call
--     once;
--   * n made before this run of Redis started counts as taken: a restart
--     from an older snapshot brings back an older last n;
--   * n lies within the widest clock margin of Redis' clock: a proof Redis
--     never took is worth nothing after that, whatever Redis forgot.
-- A secret itself (release 1.3.0), or none (release 1.2, refused once a
-- key is registered), is checked against the key as before.
-- Where these checks come among a call's: doc/internals.md, "The order
-- of a call's checks" (Redis keeps no pad: SNOWID_REGISTER writes nothing).

-- The largest n of a proof: every integer up to it is exact in Lua's
-- numbers
local PROOF_N_MAX = @SNOWID_STATE_MAX@

-- The proof of key for n and call (a list of strings)
local function proof_of(key, n, call)
  local sep = string.char(@SNOWID_PROOF_SEPARATOR@)
  return redis.sha1hex(key .. sep .. n .. sep .. table.concat(call, sep))
end

-- When this run of Redis started, in microseconds by its clock, or 0 for
-- a user that may not INFO: no earlier than that (INFO's uptime is the
-- whole seconds of the clock since those of the start, so the start lies
-- within the second after the clock's seconds less the uptime)
local function started_us(st)
  local ok, info = pcall(redis.call, 'INFO', 'server')
  local up = ok and type(info) == 'string' and tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  if not up then return 0 end
  return (math.floor(st.now_us / 1000000) - up + 1) * 1000000
end

-- The refusal of a call of identity me (without "lease ") whose secret or
-- proof (nil: none sent) does not show the key registered for me for this
-- call (the function's name and its arguments but the proof), or nil if
-- it may go on, with the key in st.key (nil: none) and n in st.proof_n;
-- or SNOWID_USAGE for a secret or proof of another shape or an n too far
-- from Redis' clock.  Takes the n of a proof at once.
local function check_secret(st, me, secret, call)
  local n, proof, key
  if secret ~= nil then n, proof, key = string.match(secret, '^(%d+):(%x+):?(%x*)$') end
  if secret ~= nil and n == nil and
     (#secret ~= 64 or string.match(secret, '^[0-9a-f]+$') == nil) then
    return redis.error_reply('SNOWID_USAGE a holder secret is 64 lower-case hexadecimal digits,' ..
      ' a holder proof "<n>:<proof>[:<key>]"')
  end
  local known = redis.call('HGET', st.fences, 'secret ' .. me)
  if n == nil then
    if known and (secret == nil or redis.sha1hex(secret) ~= known) then
      return redis.error_reply('SNOWID_WRONG_SECRET another holder secret is registered for this identity')
    end
    st.key = secret and redis.sha1hex(secret)
    return
  end
  if #n > 16 or tonumber(n) < 1 or tonumber(n) > PROOF_N_MAX or #proof ~= 40 or
     string.match(proof, '^[0-9a-f]+$') == nil or (key ~= '' and
       (#key ~= 40 or string.match(key, '^[0-9a-f]+$') == nil)) then
    return redis.error_reply('SNOWID_USAGE a holder proof is "<n>:<proof>[:<key>]", n from 1 to ' ..
      ms(PROOF_N_MAX) .. ', proof and key 40 lower-case hexadecimal digits')
  end
  local margin_us = @SNOWID_CLOCK_MARGIN_MAX_MS@ * 1000
  local bad = out_of_bounds({{'the n of a holder proof (microseconds)', tonumber(n),
                              st.now_us - margin_us, st.now_us + margin_us}})
  if bad then return bad end
  local last = math.max(tonumber(redis.call('HGET', st.fences, 'proof ' .. me) or '0') or 0,
                        started_us(st))
  if tonumber(n) <= last then
    return redis.error_reply('SNOWID_STALE_PROOF ' .. ms(last))
  end
  if not known and key == '' then
    return redis.error_reply('SNOWID_REGISTER no key is registered for this identity: send it once')
  end
  if proof_of(known or key, n, call) ~= proof then
    return redis.error_reply('SNOWID_WRONG_SECRET another holder secret is registered for this identity')
  end
  if known then
    redis.call('HSET', st.fences, 'proof ' .. me, n)
    st.empty[st.fences] = false
  end
  st.key, st.proof_n = known or key, n
end

-- Register me's key, if it has none yet: after a call of me was granted.
local function register_secret(st, me, secret)
  if st.key ~= nil then
    if not redis.call('HGET', st.fences, 'secret ' .. me) then
      redis.call('HSET', st.fences, 'secret ' .. me, st.key)
      if st.proof_n then redis.call('HSET', st.fences, 'proof ' .. me, st.proof_n) end
    end
    st.empty[st.fences] = false
  end
end

-- A lease call's last argument: "<token> <secret or proof>", or a token
-- alone (a server of release 1.2)
local function token_and_secret(arg)
  local token, secret = string.match(arg or '', '^(%x+) (%S+)$')
  if token then return token, secret end
  return arg, nil
end

-- THE FORGETTING RULE (doc/internals.md, "A coordinator that forgets").
-- Redis may lose what it was told: FLUSHALL, eviction, a restart from an
-- older RDB or AOF, a failover to a replica that missed writes.  A
-- datacenter's state record, the field "state" of its owners hash,
-- "<generation> <run id> <quiet from> <quiet until> <counter> <floor>
-- <longest quiet> <widest clock margin>", says who wrote the claims; the
-- generation (hexadecimal) is Redis' clock when the record was made, later
-- than every generation before it, and the counter goes up at every call
-- of a holder.  The leases and fences hashes carry the generation in a
-- field "generation".  Holders send the generation and counter they saw.
-- recall() finds that Redis may have forgotten when there is no record,
-- when it was written under another run of Redis (run_id of INFO: every
-- restart and every failover changes it), when a hash lacks the generation
-- (evicted), or when the caller has seen a later generation, or a higher
-- counter of this one (Redis went back to an older state of itself).  It
-- then starts a quiet period: until every server that may still hold an
-- id has had time to re-assert it, no worker id is granted but to the
-- server that re-asserts it, and every other grant starts at or above the
-- floor it leaves.  An administrator's new_datacenter() writes the record
-- of a brand-new datacenter without a quiet period; end_quiet() ends one.

-- The largest generation or counter a caller may send: every integer up to
-- it is exact in Lua's numbers
local SEEN_MAX = @SNOWID_STATE_MAX@

-- The most a call may declare of a quiet period: the longest a server
-- declares, with every setting at its most (a lease of a day, a
-- coordinator timeout of ten minutes, a drift budget of an hour, and a
-- second); the most it may declare of how far apart the fleet's clocks
-- (and Redis') may lie (snowid.clock_margin); and what a call that
-- declares none is taken to: a server of release 1.2 or a call by hand, as
-- a server of the default settings with the default clock margin
local QUIET_MAX, MARGIN_MAX = @SNOWID_QUIET_DECLARED_MAX_MS@, @SNOWID_CLOCK_MARGIN_MAX_MS@
local QUIET_DEFAULT, MARGIN_DEFAULT = @SNOWID_QUIET_UNDECLARED_MS@, @SNOWID_CLOCK_MARGIN_DEFAULT_MS@

-- The least a call may declare of a quiet period: the shortest a server
-- declares, with every setting at its least (a lease of 100 ms, a
-- coordinator timeout of 1 ms, no drift budget, and a second).  A shorter
-- one would let the first call after a loss end the quiet period at once.
local QUIET_MIN = @SNOWID_QUIET_DECLARED_MIN_MS@

-- The most of the other numbers a call sends: a worker id (24 bits of
-- datacenter, worker and sequence), a lease (snowid.worker_lease's most, a
-- day), a lease claim's wait (snowid.max_wait_ms' most, an hour), and how
-- far past Redis' clock a time may lie (a generator, a usable time, a
-- fence wanted or left, free()'s margin): a drift budget and a lease at
-- their most, and a day by which a server's clock may run ahead of Redis',
-- past which the servers refuse a fence as one no snowid server wrote
local ID_MAX, LEASE_MAX, WAIT_MAX, AHEAD_MAX =
  @SNOWID_MAX_ID@, @SNOWID_MAX_LEASE_MS@, @SNOWID_MAX_WAIT_MS@, @SNOWID_FENCE_SLACK_MS@

-- THE LAYOUT OF A DATACENTER: its highest worker id, the field "layout" of
-- the fences hash, which a grant records.  The servers of a datacenter run
-- one layout (a switch stops them all, doc/layouts.md): a claim that
-- declares a wider one (max, the highest worker id of its layout), while a
-- holder other than the caller (identity me) is live, is refused, so that
-- no worker id beyond the layout is granted and a datacenter has no more
-- holders than its layout has ids, which bounds the work of every call.
-- The layout is a bound of the call's form, checked with the others before
-- the holder's proof (doc/internals.md, "The order of a call's checks"):
-- refused, the call writes nothing, as in a coordination database.  The
-- layout a claim declares is recorded when no other holder is live, or,
-- when the datacenter has none (a store of an earlier release), with the
-- highest id another live holder holds.  Returns the refusal, naming want
-- (the configured id, -1: none) if it lies beyond, else max; or nil, with
-- st.layout_next what a grant records.  The same rule as
-- snowid_coordinator's check_layout().
local function layout_refused(st, me, max, want)
  local rec = tonumber(redis.call('HGET', st.fences, 'layout') or '')
  local alone, top = true, -1
  if rec == nil or rec ~= max then
    for f, who in pairs(st.holder) do
      local other = wid(f, ID_MAX)
      if other and who ~= me and who ~= LEASE_PREFIX .. me and st.live(other) then
        alone, top = false, math.max(top, other)
      end
    end
  end
  if rec ~= nil and max > rec and not alone then
    return redis.error_reply('SNOWID_LAYOUT ' .. ms(rec) .. ' worker id ' ..
      ms(want > rec and want or max) ..
      ' lies beyond the datacenter\'s worker ids, 0 to ' .. ms(rec) .. ', which its servers hold')
  end
  if alone then st.layout_next = max
  elseif rec == nil then st.layout_next = math.max(max, top) end
  st.layout = rec
end

-- Record the layout of a grant (after layout_refused())
local function record_layout(st)
  if st.layout_next ~= nil and st.layout_next ~= st.layout then
    redis.call('HSET', st.fences, 'layout', ms(st.layout_next))
    st.layout = st.layout_next
  end
end

-- The run of Redis this function runs in
local function run_id()
  local ok, info = pcall(redis.call, 'INFO', 'server')
  local id = ok and type(info) == 'string' and string.match(info, 'run_id:(%x+)')
  return id or 'unknown'
end

-- Write the state record, and with all the generation into the other two
-- hashes
local function write_state(st, gen, run, from, til, counter, all, floor, longest, widest)
  redis.call('HSET', st.owners, 'state', gen .. ' ' .. run .. ' ' .. ms(from) ..
             ' ' .. ms(til) .. ' ' .. ms(counter) .. ' ' .. ms(floor or 0) ..
             ' ' .. ms(longest or 0) .. ' ' .. ms(widest or 0))
  if all then
    redis.call('HSET', st.leases, 'generation', gen, 'format', '2')
    redis.call('HSET', st.fences, 'generation', gen, 'format', '2')
    st.empty[st.leases], st.empty[st.fences] = false, false
  end
end

-- What a call says of the forgetting rule, from its trailing numbers
-- (strings of digits, empty for none): what it saw last of the state record
-- (false: nothing), the quiet period and clock margin it declares (nil:
-- none); or a refusal of numbers out of bounds.  A generation is Redis'
-- clock when the record was made: one more than an hour (the widest clock
-- margin) past Redis' clock now was never made, whatever the record says
-- (the record may hold one a caller pushed there, which honest servers
-- could then never send back).  A generation Redis makes (see recall())
-- never lies past that bound either, so every server that saw it can send
-- it again, after a loss too.
local function told(st, gen, counter, quiet_ms, margin)
  local seen = ((gen or '') ~= '' or (counter or '') ~= '') and
    {generation = tonumber(gen) or -1, counter = tonumber(counter) or -1}
  local gen_max = st.now + MARGIN_MAX
  quiet_ms, margin = tonumber(quiet_ms), tonumber(margin)
  local bad = out_of_bounds({
    {'quiet_ms', quiet_ms or QUIET_MIN, QUIET_MIN, QUIET_MAX},
    {'clock_margin_ms', margin or 0, 0, MARGIN_MAX},
    {'seen_generation', seen and seen.generation or 0, 0, math.min(SEEN_MAX, gen_max)},
    {'seen_counter', seen and seen.counter or 0, 0, SEEN_MAX}})
  if bad then return nil, nil, nil, bad end
  return seen, quiet_ms, margin
end

-- Whether Redis may have forgotten this datacenter's claims, after load():
-- starts or lengthens the quiet period, raises the floor it leaves, and,
-- for a call that declares its quiet period, moves the counter up; seen is
-- what the caller saw last (false: nothing).  Returns the end of the quiet
-- period (Redis' clock), or nil outside one, and leaves the record's
-- generation and counter in st.generation and st.counter.  A quiet period
-- lasts the longest quiet_ms declared; its floor lies past its end by the
-- widest margin declared for the fleet's clocks, and by its length (which
-- covers the drift budgets), as free() fences an id whose holder may have
-- issued until then.  What a call does not declare counts as the defaults
-- for that call only, which the record does not keep; such a call writes
-- the record only if it changes.
--
-- No call ends or shortens a quiet period that runs: a new one, started
-- while one runs, ends no earlier.  A caller's word alone (it saw a later
-- generation or counter, while the record, its run and the other hashes
-- show no loss) counts every time, as a loss does: it is the only way a
-- Redis brought back to an older state of itself under the same run (a
-- snapshot, for a fleet that may not INFO) is noticed, the second time as
-- the first.  A fleet member repeating the word keeps the datacenter
-- quiet: a denial, one of those the fleet's user has anyway
-- (doc/security.md, "What the fleet's role can deny").  Among honest
-- servers the word comes once: the new state is later than what the
-- caller saw (a generation past it, or, when the bound of an hour past
-- Redis' clock holds the generation at the caller's, a counter past the
-- caller's), so that no server that saw at most that state says it again.
local function recall(st, quiet_ms, margin, seen)
  local gen, run, from, til, counter, floor, longest, widest =
    string.match(st.state or '',
      '^(%x+) (%S+) (%d+) (%d+) ?(%d*) ?(%d*) ?(%d*) ?(%d*)$')
  local g = tonumber(gen or '0', 16) or 0
  local was = {tonumber(til), tonumber(floor) or 0, tonumber(longest) or 0, tonumber(widest) or 0}
  counter, floor = tonumber(counter) or 0, was[2]
  longest, widest = math.max(was[3], quiet_ms or 0), math.max(was[4], margin or 0)
  local len = math.max(longest, quiet_ms or QUIET_DEFAULT)
  -- a user that may not INFO runs under 'unknown': only lost keys count
  local now_run = run_id()
  local lost = gen == nil or
    (run ~= now_run and run ~= 'unknown' and now_run ~= 'unknown') or
    redis.call('HGET', st.leases, 'generation') ~= gen or
    redis.call('HGET', st.fences, 'generation') ~= gen
  local told_later = seen and (seen.generation > g or
                               (seen.generation == g and seen.counter > counter))
  local forgot = lost or told_later
  if forgot then
    g = math.max(st.now, g + 1, (seen and seen.generation or 0) + 1)
    g = math.min(g, st.now + MARGIN_MAX)
    -- held at the caller's generation by the bound: past its counter
    counter = 0
    if seen and g == seen.generation then
      counter = seen.counter + 1
    end
    gen, run, from, til = string.format('%x', g), now_run, st.now, st.now + len
    if was[1] and was[1] > til then til = was[1] end
  else
    from, til = tonumber(from), tonumber(til)
    if til > st.now and from + len > til then til = from + len end
  end
  if til > st.now then
    floor = math.max(floor, til + math.max(widest, margin or MARGIN_DEFAULT) + (til - from))
  end
  if quiet_ms then counter = counter + 1 end
  -- never a counter past what told() takes back: at its bound, the next
  -- generation (nothing was lost: no quiet period), or the bound while the
  -- generation is at its own (a word at both bounds)
  local moved = false
  if counter > SEEN_MAX then
    counter = SEEN_MAX
    if g < st.now + MARGIN_MAX then
      g, gen, counter, moved = g + 1, string.format('%x', g + 1), 0, true
    end
  end
  if quiet_ms or forgot or moved or til ~= was[1] or floor ~= was[2] or longest ~= was[3] or
     widest ~= was[4] then
    write_state(st, gen, run, from, til, counter, forgot or moved, floor, longest, widest)
  end
  st.generation, st.counter, st.forgot_floor = g, counter, floor
  st.quiet_from, st.quiet_until = tonumber(from), tonumber(til)
  st.widest = math.max(widest, margin or MARGIN_DEFAULT)
  if til > st.now then return til end
end

-- THE RESTART RULE (doc/internals.md, "A restart after a loss").  Whether
-- a restart's re-assertion of its cache file's id counts as a new claim: a
-- call that says when its last granted call was (confirmed: a restart, or
-- a check-in whose check-in fence was reached; nil: a check-in of a holder
-- that runs) after a loss the state record notes (a quiet period from
-- "from" to "til" that no administrator ended).  Only a holder that runs
-- re-asserts after a loss: a server that stopped may have been freed by an
-- administrator, and its id granted to another server, a grant Redis may
-- have forgotten; nothing in the record tells that server from one that
-- held its id up to the loss.  So its claim is a new one: refused in the
-- quiet period, granted at or above its floor (its own id, if no other
-- server re-asserted it meanwhile).  Outside any loss (no quiet period
-- noted, or one an administrator ended) a restart keeps its id at once.
local function stale(st, confirmed)
  if confirmed == nil then return false end
  local from, til = st.quiet_from, st.quiet_until
  return from ~= nil and til ~= nil and til > from
end

-- A grant's reply, with the state record after it when the caller sent
-- what it saw
local function granted(st, seen, reply)
  if seen and st.generation then
    reply[#reply + 1] = st.generation
    reply[#reply + 1] = st.counter
  end
  return reply
end

-- The refusal of a grant during a quiet period that ends at til: it names
-- the time from which the grant can be made, past the floor the quiet
-- period leaves too (see recall()), after which such a claim waits no
-- more
local function quiet(st, til)
  return redis.error_reply('SNOWID_QUIET ' .. ms(math.max(til, st.forgot_floor or 0)))
end

-- The administrator's mark of a brand-new datacenter, one no server ever
-- claimed a worker id of: its state record, without a quiet period or its
-- floor.  Refused if any of the datacenter's three keys exists (any call
-- of a server writes its state record, a claim the quiet period refused
-- too, after which Redis cannot tell a new datacenter from one that lost
-- its claims, as after a restart from an older snapshot that the refused
-- claim then wrote anew; and a grant writes the other two hashes, so that
-- an owners hash evicted alone leaves them as evidence), and while Redis'
-- maxmemory-policy is one that evicts keys without an expiry (allkeys-*:
-- all three may have been evicted) or cannot be read.  args: a name for
-- the log (unused).  Replies 1.
local function new_datacenter(keys, args)
  local st = load(keys)
  if st.state ~= nil or next(st.fence_of) ~= nil or next(st.holder) ~= nil or
      redis.call('EXISTS', keys[1], keys[2], keys[3]) > 0 then
    return redis.error_reply('SNOWID_NOT_NEW the datacenter has claims, fences or a state record already')
  end
  -- nor while Redis may have evicted all three (its policy evicts keys
  -- without an expiry, or cannot be read)
  do
    local ok, info = pcall(redis.call, 'INFO', 'memory')
    local policy = ok and type(info) == 'string' and
      string.match(info, 'maxmemory_policy:([%w-]+)')
    if not policy or string.sub(policy, 1, 8) == 'allkeys-' then
      return redis.error_reply('SNOWID_NOT_NEW Redis cannot tell that the datacenter is new: ' ..
        'its maxmemory-policy ' .. (policy and ('is ' .. policy .. ', which evicts keys without an expiry')
                                    or 'could not be read') ..
        ', so its keys may have been evicted')
    end
  end
  write_state(st, string.format('%x', st.now), run_id(), st.now, st.now, 0, true)
  return 1
end

-- The administrator's end of a quiet period, for a Redis known to have
-- lost nothing (a failover to a replica that had every write): the state
-- record written under this run, its quiet period and its floor ended now,
-- and what the fleet declared (the longest quiet period, the widest clock
-- margin) forgotten: the servers declare theirs again at their next call.
-- args: a name for the log (unused).  Replies 1.
local function end_quiet(keys, args)
  local st = load(keys)
  local gen, counter = string.match(st.state or '', '^(%x+) %S+ %d+ %d+ ?(%d*)')
  write_state(st, gen or string.format('%x', st.now), run_id(), st.now, st.now,
              tonumber(counter) or 0, true)
  return 1
end

-- The id a server without one takes: first if it is free (not live, and
-- fenced no later than usable), else the lowest free id in 0..max, else the
-- one fenced least far of those not live, which the caller refuses with
-- too_far(); or nil and SNOWID_ALL_HELD when every id is held.  mine(id)
-- says whether the caller holds id itself (it may take that one too).
local function pick(st, max, usable, first, mine)
  local function open(id) return mine(id) or not st.live(id) end
  local function free(id) return open(id) and st.fence(id) <= usable end
  if first >= 0 and first <= max and free(first) then return first end
  local ids, gap = st.known(max)
  for _, id in ipairs(ids) do
    if gap ~= nil and gap < id then break end
    if free(id) then return id end
  end
  if gap ~= nil then return gap end
  local least = st.least(max, open)
  if least == nil then
    return nil, redis.error_reply('SNOWID_ALL_HELD ' .. (max + 1))
  end
  return least
end

-- The refusal of a grant of id whose floor f lies past where the caller
-- can start: fenced by the id's fence, or held back by the floor of a quiet
-- period (see recall()), which is refused as quiet until then
local function too_far(st, id, f)
  if f > st.fence(id) then return quiet(st, f) end
  return redis.error_reply('SNOWID_FENCED ' .. id .. ' ' .. ms(f))
end

-- The floor of a grant of id that is not a re-assertion (see recall())
local function new_floor(st, id)
  return math.max(st.fence(id), st.forgot_floor or 0)
end

-- Give the caller's other ids up (an id beyond max after a layout change,
-- a duplicate written by hand, a lease it moves away from), so that an
-- identity holds exactly one id; v bounds what it issued with them.
local function give_up_others(st, name, keep, max, v)
  local fields = {}
  for f, who in pairs(st.holder) do
    if who == name and f ~= tostring(keep) then fields[#fields + 1] = f end
  end
  for _, f in ipairs(fields) do
    if tonumber(f) then
      retire(st, f, v)
    else
      redis.call('HDEL', st.owners, f)
      st.holder[f] = nil
    end
  end
end

-- The ids a server of release 1.2 or earlier held for good, under its
-- holder name without the instance of its data directory ("dc=… host=…
-- port=… sysid=…"): its first claim under its full name takes them over,
-- in st only; the caller writes what it keeps.  Returns the set of fields
-- taken over.
local function adopt(st, me)
  local old, adopted = string.match(me, '^(.*) instance=%x+$'), {}
  if old then
    for f, who in pairs(st.holder) do
      if who == old then
        st.holder[f] = me
        adopted[f] = true
      end
    end
  end
  return adopted
end

-- The claim, for good.  args[1] is the claiming identity; args[2] holds
-- five numbers: the configured worker id or -1, the highest worker id, the
-- preferred worker id or -1, 1 to write the claim even if it is held
-- already (so that a WAIT for replicas covers it) or 0, and the latest
-- fence the claiming server can start above now (its clock plus its drift
-- budget, Unix ms); then, for the forgetting rule, optionally: its quiet
-- period (ms), 1 to re-assert the configured or preferred id, the
-- generation and counter it saw last, and its clock margin (ms); and, for
-- a restart's re-assertion only (a check-in sends none), when its last
-- granted call was sent, Unix ms by its clock (0: it does not know; see
-- stale()).  A library of an older release, which takes ten numbers,
-- refuses eleven with SNOWID_USAGE: the servers then ask for this library
-- to be loaded.
--
-- An identity keeps the id it holds (or that it held under the name of an
-- older release, see adopt()).  Without one it takes the configured id if
-- free; with none configured, the preferred id if free, or else the lowest
-- free id in 0..max.  Free is: no holder, or a lease that has run out
-- (whose fence covers all its holder issued).  The preferred id is the one
-- the server held last: if Redis has lost the claims, the lowest free id
-- may be one that another server still uses, while the server's own last
-- id is free unless a server claimed it since.  An id fenced past that
-- latest time is not taken: the choice goes on to the next free id, and a
-- configured or kept id is refused until then.  Its other ids are retired
-- just past that latest time, which covers all it issued (the servers send
-- the later of their clock plus drift budget and their generator), as
-- free() asks: that millisecond included, plus 1.  Replies {worker id, its
-- fence or 0}: the claiming server's ids must start at or above that
-- fence.  Refusals:
--
--   SNOWID_ALL_HELD <count>         no id in 0..max is free
--   SNOWID_FENCED <id> <fence>      every free id (or the configured or kept
--                                   one) is fenced past that time; id is the
--                                   one fenced least far
--   SNOWID_QUIET <until>            no grant until then (see recall())
--   SNOWID_CONFLICT <identity>      the configured id is held by identity
--   SNOWID_HOLDS_OTHER <id>         this identity holds id, not the configured
--   SNOWID_RANGE ...                the configured id exceeds max (a caller bug)
--   SNOWID_LAYOUT <highest> ...     max lies beyond the datacenter's layout, 0
--                                   to highest, which another holder runs
--                                   (see layout_refused())
--   SNOWID_REGISTER ...             no key is registered for the identity: the
--                                   server sends the call again with it
--   SNOWID_STALE_PROOF <n>          the proof's n is no larger than the last
--                                   taken, n (see check_secret())
local function claim(keys, args)
  local me = args[1]
  local st = load(keys)
  -- the proof's n taken first, before anything else of the call, its
  -- refusal after the form's (check_secret())
  local refused = check_secret(st, me, args[3], {'claim', keys[1], keys[2], keys[3], me, args[2]})
  local want, max, prefer, write, usable, quiet_ms, reassert, sg, sc, margin, confirmed =
    string.match(args[2] or '',
                 '^(-?%d+) (%d+) (-?%d+) ([01]) (%d+) ?(%d*) ?([01]?) ?(%d*) ?(%d*) ?(%d*) ?(%d*)$')
  if not want then
    return redis.error_reply('SNOWID_USAGE claim takes "<want> <max> <prefer> <write> <usable ms>' ..
      ' [<quiet ms> <reassert> <generation> <counter> <clock margin ms> [<confirmed ms>]]"')
  end
  confirmed = tonumber(confirmed)
  want, max, prefer, usable = strict(want, true), tonumber(max), strict(prefer, true), tonumber(usable)
  local bad = out_of_bounds({{'max', max, 0, ID_MAX}, {'want', want, -1, ID_MAX},
                             {'prefer', prefer, -1, ID_MAX}})
  if bad then return bad end
  if want > max then
    return redis.error_reply('SNOWID_RANGE worker id ' .. want .. ' exceeds ' .. max)
  end
  bad = out_of_bounds({{'usable_ms', usable, 0, st.now + AHEAD_MAX}})
  if bad then return bad end
  local seen, q, m
  seen, q, m, bad = told(st, sg, sc, quiet_ms, margin)
  if bad then return bad end
  -- a restart's last granted call, by its clock: no later than Redis' clock
  -- and the margin it declares
  if confirmed then
    bad = out_of_bounds({{'confirmed_ms', confirmed, 0, st.now + (m or MARGIN_DEFAULT)}})
    if bad then return bad end
  end
  local adopted = adopt(st, me)
  bad = layout_refused(st, me, max, want)
  if bad then return bad end
  if refused then return refused end
  local til = recall(st, q, m, seen)
  -- after a loss, a restart re-asserts nothing: a new claim (see stale())
  if reassert == '1' and stale(st, confirmed) then reassert = '0' end
  local keep
  for f, who in pairs(st.holder) do
    local id = wid(f, max)
    if who == me and id and (keep == nil or id == want or (keep ~= want and id < keep)) then
      keep = id
    end
  end
  if want >= 0 then
    if keep ~= nil and keep ~= want then
      return redis.error_reply('SNOWID_HOLDS_OTHER ' .. keep)
    end
    if keep == nil and st.live(want) then
      -- quiet first: what the store holds may be what it forgot
      if til and reassert ~= '1' then return quiet(st, til) end
      return redis.error_reply('SNOWID_CONFLICT ' .. st.holder[tostring(want)])
    end
    keep = want
  elseif keep == nil then
    local refusal
    keep, refusal = pick(st, max, usable, prefer, function() return false end)
    if refusal then return refusal end
  end
  local k = tostring(keep)
  local held = st.holder[k] == me
  -- a re-assertion names its id: the check-in of the id the server issues
  -- with, or a restart's of the id its cache file names.  An id Redis
  -- holds for the server but that it does not name is not one: Redis may
  -- have gone back to a backup taken before the server moved that id onto
  -- a lease and gave it back (its cache file went then), and another
  -- server may issue with it now
  local reasserts = reassert == '1' and (keep == want or keep == prefer)
  -- in a quiet period, only the id this server re-asserts
  if til and not reasserts then return quiet(st, til) end
  local floor = reasserts and st.fence(keep) or new_floor(st, keep)
  if floor > usable then return too_far(st, keep, floor) end
  give_up_others(st, me, keep, max, usable + 1)
  if st.holder[k] ~= nil and not held then
    retire(st, k, 0)
  end
  if not held or write == '1' or adopted[k] then
    redis.call('HSET', st.owners, k, me)
    ensure(st)
  end
  record_layout(st)
  register_secret(st, me, args[3])
  return granted(st, seen, {keep, math.max(floor, st.fence(keep))})
end

-- The lease of worker id k, if it is me's and was granted with token tok:
-- its floor, or nil.  A lease value is "<expiry> <floor> <token>"; one of
-- an older version, without a token, is no one's.
local function lease_floor(st, me, k, tok)
  local v = redis.call('HGET', st.leases, k)
  local b, vt = string.match(v or '', '^%d+ (%d+) (%x+)$')
  if st.holder[k] ~= me or vt ~= tok then return nil end
  return tonumber(b)
end

-- The lease claim.  args: identity; the highest worker id, the lease (ms),
-- where the claiming server's generator is (Unix ms), the latest fence it
-- can start above now (its clock plus its drift budget) and, optionally,
-- the worker id it held last (or -1), how long its callers may wait for
-- its clock (ms), its quiet period, the generation and counter it saw last
-- and its clock margin (see claim()); and a new token that the renewals
-- and the release of this lease name.
--
-- The floor of a claim is the id's fence as it is now: every id any holder
-- issued with it lies below.  A server that still holds a lease (even one
-- run out, as long as nobody took the id since; a clean stop parks it, its
-- fence lowered to its last id) keeps it if it can start above that fence,
-- or within the wait; otherwise it takes the id it held last if that is
-- free (no holder, or a lease that ran out) and it can start above its
-- fence now, else the lowest such id.  A permanent claim is never free, but
-- to its own holder: a server moved from a claim for good onto a lease
-- takes that id on lease (as its own lease, within the wait), and its
-- other ids held for good are retired, fenced past its generator and its
-- clock plus its drift budget.  The new fence is a lease past the floor or
-- the caller's generator, whichever is later.  Replies {worker id, floor,
-- fence, lease}, or refuses as claim() does.
-- (Its head looks like claim()'s: each entry point parses and bounds its own
-- arguments, of another format.)
local function lease_claim(keys, args)
  local st = load(keys)
  local token, secret = token_and_secret(args[3])
  -- the proof's n taken first, before anything else of the call, its
  -- refusal after the form's (check_secret())
  local refused = check_secret(st, args[1], secret,
                               {'lease_claim', keys[1], keys[2], keys[3], args[1], args[2], token})
  local max, lease, client, usable, prefer, wait, quiet_ms, sg, sc, margin =
    string.match(args[2] or '',
                 '^(%d+) (%d+) (%d+) (%d+) ?(-?%d*) ?(%d*) ?(%d*) ?(%d*) ?(%d*) ?(%d*)$')
  if not max then
    return redis.error_reply('SNOWID_USAGE lease_claim takes "<max> <lease ms> <client ms>' ..
      ' <usable ms> [<prefer> <wait ms> <quiet ms> <generation> <counter> <clock margin ms>]"')
  end
  max, lease, client, usable = tonumber(max), tonumber(lease), tonumber(client), tonumber(usable)
  prefer, wait = prefer == '' and -1 or strict(prefer, true), tonumber(wait) or 0
  local bad = out_of_bounds({{'max', max, 0, ID_MAX}, {'prefer', prefer, -1, ID_MAX}})
  if bad then return bad end
  if not string.match(token or '', '^' .. string.rep('[0-9a-f]', 16) .. '$') then
    return redis.error_reply('SNOWID_USAGE a lease token is 16 lower-case hexadecimal digits')
  end
  -- the fence it writes, a lease past client_ms: no later than the servers
  -- take one
  bad = out_of_bounds({{'lease_ms', lease, 1, LEASE_MAX},
                       {'client_ms', client, 0, st.now + AHEAD_MAX - lease},
                       {'usable_ms', usable, 0, st.now + AHEAD_MAX},
                       {'prefer', prefer, -1, ID_MAX}, {'wait_ms', wait, 0, WAIT_MAX}})
  if bad then return bad end
  local seen, q, m
  seen, q, m, bad = told(st, sg, sc, quiet_ms, margin)
  if bad then return bad end
  bad = layout_refused(st, args[1], max, -1)
  if bad then return bad end
  if refused then return refused end
  local til = recall(st, q, m, seen)
  local me = LEASE_PREFIX .. args[1]
  local function mine(id) return st.holder[tostring(id)] == me end
  local keep
  local held = st.known(max)
  for _, id in ipairs(held) do
    if keep == nil and mine(id) and new_floor(st, id) <= usable + wait then keep = id end
  end
  -- a server moved from a claim for good onto a lease: that id is its lease
  for _, id in ipairs(held) do
    if keep == nil and st.holder[tostring(id)] == args[1] and
        new_floor(st, id) <= usable + wait then
      keep = id
    end
  end
  if keep == nil then
    -- in a quiet period, only a lease this server holds
    if til then return quiet(st, til) end
    local refusal
    keep, refusal = pick(st, max, usable, prefer, mine)
    if refusal then return refusal end
    local fresh = new_floor(st, keep)
    if fresh > usable then return too_far(st, keep, fresh) end
  end
  local k = tostring(keep)
  give_up_others(st, me, keep, max, 0)
  -- its other ids held for good retired, fenced past what it issued
  give_up_others(st, args[1], keep, max, math.max(client, usable + 1))
  if st.holder[k] ~= nil and st.holder[k] ~= me then retire(st, k, 0) end
  -- never a re-assertion (a renewal is): even its own lease, whose record
  -- may be one the store went back to, starts past the quiet's floor
  local floor = new_floor(st, keep)
  local new = math.max(client, floor) + lease
  redis.call('HSET', st.owners, k, me)
  redis.call('HSET', st.leases, k, ms(st.now + lease) .. ' ' .. ms(floor) .. ' ' .. token)
  raise_fence(st, k, new)
  ensure(st)
  record_layout(st)
  register_secret(st, args[1], secret)
  return granted(st, seen, {keep, floor, new, lease})
end

-- The renewal.  args: identity; the worker id, the lease (ms), the fence
-- wanted and, optionally, the quiet period, the generator (unused: read
-- for servers that send it), the generation and counter seen and the clock
-- margin (see claim()); the token of the claim.  Succeeds only while the
-- id is this server's lease of that claim and the lease has not run out by
-- Redis' clock; moves the lease to a lease from now and the fence up to the
-- one wanted, never down.  A lease that ran out, or that Redis does not
-- hold (it forgot it: in a quiet period too), is not renewed: its holder
-- may have been stopped past it while another server took the id, which
-- Redis may have forgotten.  The holder's next call is a lease claim, held
-- to every rule of a new grant.  Replies {worker id, floor, fence, lease}
-- or SNOWID_LOST <holder>.
local function lease_renew(keys, args)
  local st = load(keys)
  local token, secret = token_and_secret(args[3])
  -- the proof's n taken first, before anything else of the call, its
  -- refusal after the form's (check_secret())
  local refused = check_secret(st, args[1], secret,
                               {'lease_renew', keys[1], keys[2], keys[3], args[1], args[2], token})
  local k, lease, want, quiet_ms, client, sg, sc, margin =
    string.match(args[2] or '', '^(%d+) (%d+) (%d+) ?(%d*) ?(%d*) ?(%d*) ?(%d*) ?(%d*)$')
  if not k then
    return redis.error_reply('SNOWID_USAGE lease_renew takes "<worker id> <lease ms> <fence ms>' ..
      ' [<quiet ms> <client ms> <generation> <counter> <clock margin ms>]"')
  end
  local bad = out_of_bounds({{'worker_id', tonumber(k), 0, ID_MAX}})
  if bad then return bad end
  k, lease, want = tostring(tonumber(k)), tonumber(lease), tonumber(want)
  bad = out_of_bounds({{'lease_ms', lease, 1, LEASE_MAX},
                       {'want_ms', want, 0, st.now + AHEAD_MAX},
                       {'client_ms', tonumber(client) or 0, 0, st.now + AHEAD_MAX}})
  if bad then return bad end
  local seen, q, m
  seen, q, m, bad = told(st, sg, sc, quiet_ms, margin)
  if bad then return bad end
  if refused then return refused end
  recall(st, q, m, seen)
  local b = lease_floor(st, LEASE_PREFIX .. args[1], k, token)
  if not st.live(tonumber(k)) then b = nil end
  if not b then
    return redis.error_reply('SNOWID_LOST ' .. (st.holder[k] or ''))
  end
  redis.call('HSET', st.leases, k, ms(st.now + lease) .. ' ' .. ms(b) .. ' ' .. token)
  raise_fence(st, k, want)
  register_secret(st, args[1], secret)
  return granted(st, seen, {tonumber(k), b, st.fence(k), lease})
end

-- The release.  args: identity; the worker id, the final fence (just past
-- the last id this server issued; it has stopped issuing) and, optionally,
-- 1 to park the lease rather than give it back; the token of the claim.
-- Only the holder of that very claim may lower the fence, and never below
-- the floor it took the id with.  A parked lease stays this server's until
-- it runs out, with its fence lowered, so that the server, started again
-- as the same holder, takes it back at once above its last id (a clean
-- stop parks its lease).  Replies 1, or 0 if the id was not this server's
-- lease of that claim.
local function lease_release(keys, args)
  local st = load(keys)
  local token, secret = token_and_secret(args[3])
  -- the proof's n taken first, before anything else of the call, its
  -- refusal after the form's (check_secret())
  local refused = check_secret(st, args[1], secret,
                               {'lease_release', keys[1], keys[2], keys[3], args[1], args[2], token})
  local k, final, park = string.match(args[2] or '', '^(%d+) (%d+) ?([01]?)$')
  if not k then
    return redis.error_reply('SNOWID_USAGE lease_release takes "<worker id> <fence ms> [<park>]"')
  end
  local bad = out_of_bounds({{'worker_id', tonumber(k), 0, ID_MAX}})
  if bad then return bad end
  k = tostring(tonumber(k))
  bad = out_of_bounds({{'final_ms', tonumber(final), 0, st.now + AHEAD_MAX}})
  if bad then return bad end
  if refused then return refused end
  local b = lease_floor(st, LEASE_PREFIX .. args[1], k, token)
  if not b then return 0 end
  st.fence_of[k] = nil
  if park == '1' then raise_fence(st, k, math.max(tonumber(final), b))
  else retire(st, k, math.max(tonumber(final), b)) end
  register_secret(st, args[1], secret)
  return 1
end

-- An administrator's repair: worker id k taken from whoever holds it (a
-- server gone for good, or a lease that will not come back), its fence
-- raised to Redis' clock plus margin ms, never lowered.  A server may have
-- issued up to its clock plus its drift budget, that millisecond included:
-- the margin covers how far its clock ran ahead of Redis', plus its
-- snowid.max_drift_ms, plus 1, unless it stopped longer ago than that.
-- args: a name for the log (unused); the worker id and the margin.
-- Replies the fence.
local function free(keys, args)
  local k, margin = string.match(args[2] or '', '^(%d+) (%d+)$')
  if not k then
    return redis.error_reply('SNOWID_USAGE free takes "<worker id> <margin ms>"')
  end
  local bad = out_of_bounds({{'worker_id', tonumber(k), 0, ID_MAX},
                             {'margin_ms', tonumber(margin), 0, AHEAD_MAX}})
  if bad then return bad end
  local st = load(keys)
  k = tostring(tonumber(k))
  retire(st, k, st.now + tonumber(margin))
  return st.fence(k)
end

-- An administrator's undoing of a fence no holder's ids need: the fence of
-- worker id k set to Redis' clock plus margin ms, lowered too, which no
-- other call does.  For a fence a fleet member's call set far ahead (a
-- lease claim's generator, a renewal's or a release's fence, a claim's
-- usable time), once the administrator knows that no server issued ids
-- with that worker id past Redis' clock plus margin: the margin as free()
-- takes it.  Refused while a live holder holds the id (free() it first).
-- args: a name for the log (unused); the worker id and the margin.
-- Replies the fence.
local function lower_fence(keys, args)
  local k, margin = string.match(args[2] or '', '^(%d+) (%d+)$')
  if not k then
    return redis.error_reply('SNOWID_USAGE lower_fence takes "<worker id> <margin ms>"')
  end
  local bad = out_of_bounds({{'worker_id', tonumber(k), 0, ID_MAX},
                             {'margin_ms', tonumber(margin), 0, AHEAD_MAX}})
  if bad then return bad end
  local st = load(keys)
  k = tostring(tonumber(k))
  if st.live(tonumber(k)) then
    return redis.error_reply('SNOWID_HELD ' .. k .. ' is held by ' .. st.holder[k] ..
      ': free it first (' .. prefix .. 'free), once that server is stopped for good')
  end
  st.fence_of[k] = nil
  retire(st, k, st.now + tonumber(margin))
  return st.fence(k)
end

-- The refusal of an identity that is not one, or nil: the rule of
-- snowid_coordinator's check_identity() and of the servers (coord/store.h):
-- 1 to @SNOWID_IDENTITY_MAX@ bytes, no control character, not beginning as
-- the name of a lease holder does; so that every answer naming a holder
-- fits the servers' buffers and names one holder only
local function identity_refused(me)
  if type(me) ~= 'string' or #me < 1 or #me > @SNOWID_IDENTITY_MAX@ or string.find(me, '%c') or
     string.sub(me, 1, #LEASE_PREFIX) == LEASE_PREFIX then
    return redis.error_reply('SNOWID_USAGE an identity has 1 to @SNOWID_IDENTITY_MAX@ bytes,' ..
      ' no control characters, and does not begin with "' .. LEASE_PREFIX .. '"')
  end
end

-- An administrator's step for a server that lost its secret file (its
-- calls are refused with SNOWID_WRONG_SECRET): the hash registered for
-- identity args[1] removed, so that its next granted call registers its
-- new secret.  Call it only once sure that the server refused is the one
-- of that identity: whoever calls first then becomes it.  Replies 1, or 0
-- if the identity had none.
local function reset_secret(keys, args)
  if not args[1] or args[1] == '' then
    return redis.error_reply('SNOWID_USAGE reset_secret takes "<identity>"')
  end
  local refused = identity_refused(args[1])
  if refused then return refused end
  return redis.call('HDEL', keys[3], 'secret ' .. args[1])
end

-- snowid_1_claim of release 1.2 named the owners key alone
local function claim_1(keys, args)
  local base = string.match(keys[1], '^(.*):owners$')
  if keys[2] then return claim(keys, args) end
  if not base then return redis.error_reply('SNOWID_USAGE an owners key ending in :owners') end
  return claim({keys[1], base .. ':leases', base .. ':fences'}, args)
end

-- A function of a server, which refuses an identity (args[1]) as
-- identity_refused() does
local function of_server(callback)
  return function(keys, args)
    local refused = identity_refused(args[1])
    if refused then return refused end
    return callback(keys, args)
  end
end

-- THE WORKER-ID PROTOCOL IN BRIEF (doc/internals.md; its model
-- src/coord/protocol_min.pml, whose rules the comments below name): the
-- functions snowid_4_claim, snowid_4_extend and snowid_4_release of a
-- server, and the administrator's snowid_4_free.  The invariant: per
-- worker id, the ranges of the ids' own time that holders may issue in
-- never overlap.  A range runs from its holder's clock to the end Redis
-- granted (Redis' clock, Unix ms); its holder issues only inside it, and
-- asks for the next one before it runs out.
--
-- Each function takes one key, the datacenter's hash, which holds all
-- that Redis keeps of it:
--   "<worker id>"   "<fence>", or "<fence> good|lease <holder name>": the
--                   latest end of any range granted for the id (it only
--                   rises), and who holds it, for good or on lease
--   "record"        "<run> <end of quiet>[ <max>]": the run of Redis that
--                   wrote the record, the end of its last quiet period, and
--                   the highest worker id of the datacenter's layout
--                   (out_of_layout())
--   "secret <name>" the key registered for a holder name, and the last n
--   "proof <name>"  of its proofs (check_secret(), register_secret()),
--                   while the name holds a worker id (forget_name())
-- and nothing else: no generation, counter, declared quiet period, margin
-- or confirmed time.  A server's call: FCALL <function> 1 <key> <holder
-- name> "<numbers>" "<n>:<proof>[:<key>]", the proof covering the
-- function's name, the key, the name and the numbers.
--
-- Each call bounds its numbers (BOUND), checks its proof (SECRET, PROOF),
-- notices a possible loss (RESTART_LOSS, QUIET), then applies its rule,
-- and only then grants, raising the fence.  A grant replies {worker id,
-- end of the range, Redis' clock}; refusals are error replies whose first
-- word says which, each of them an answer (REFUSAL_ENDS: the holder drops
-- the id and extends nothing) but SNOWID_STALE_PROOF and SNOWID_REGISTER,
-- after which the server sends its call again:
--   SNOWID_USAGE ...             a number out of bounds, or no proof (first)
--   SNOWID_WRONG_SECRET ...,     the proof does not show the name's key, or
--   SNOWID_STALE_PROOF <n>,      its n was taken, or the name has no key
--   SNOWID_REGISTER ...          yet: send it once (check_secret())
--   SNOWID_NO_RUN ...            Redis' run id cannot be read (INFO server)
--   SNOWID_QUIET <time>          after a possible loss, no claim until then
--   SNOWID_FENCED <id> <time>    the id's last range is not over by every
--                                clock until then
--   SNOWID_ALL_HELD <count>      every id of the layout is held
--   SNOWID_ENDED <end>           an extend of a range over by the caller's
--                                clock
--   SNOWID_LOST <holder>         an extend of an id the caller does not hold
local MIN_PREFIX = 'snowid_4_'
local RANGE_MAX, MARGIN = @SNOWID_RANGE_MAX_MS@, @SNOWID_RANGE_MARGIN_MS@

-- Redis' clock, for a call on the datacenter's hash key (st.fences is
-- where check_secret() and register_secret() keep the keys and proofs)
local function min_begin(key)
  local st = {fences = key, empty = {}}
  st.now, st.now_us = clock()
  return st
end

-- BOUND at entry: the numbers of a call, arg, exactly #form words
-- separated by single spaces, each parsed by strict() (form[i] true: it
-- may be -1, none); the numbers, or nil
local function numbers_of(arg, form)
  local out = {}
  for word in string.gmatch((arg or '') .. ' ', '([^ ]*) ') do
    local n = strict(word, form[#out + 1])
    if n == nil or #out >= #form then return nil end
    out[#out + 1] = n
  end
  if #out == #form then return out end
end

-- A worker id's field: its fence (0: none), its holder's name (nil: none)
-- and whether it holds the id for good
local function slot_of(v)
  local fence, kind, name = string.match(v or '', '^(%d+) (%a+) (.+)$')
  if fence then return tonumber(fence), name, kind == 'good' end
  return tonumber(v) or 0
end

-- Writes a worker id's field: its fence, and its holder if name is not nil
local function write_slot(st, id, fence, name, good)
  redis.call('HSET', st.fences, ms(id), ms(fence) ..
             (name and ((good and ' good ' or ' lease ') .. name) or ''))
end

-- The datacenter's record: its run, the end of its last quiet period
-- (0: none) and its layout (nil: none); nil for no record
local function read_record(st)
  local run, til, layout = string.match(redis.call('HGET', st.fences, 'record') or '',
                                        '^(%S+) (%d+) ?(%d*)$')
  return run, tonumber(til) or 0, tonumber(layout)
end

local function write_record(st, run, til, layout)
  redis.call('HSET', st.fences, 'record', run .. ' ' .. ms(til) .. (layout and ' ' .. ms(layout) or ''))
end

-- SECRET, PROOF: a call under a holder name proves its secret and never
-- sends it; a secret itself, which check_secret() takes from servers of
-- release 1.3.0, is refused.  Takes the proof's n at once (before the
-- call's bounds are checked, whose refusal comes first); returns
-- check_secret()'s refusal, or nil with the key in st.key
local function proved(st, me, proof, call)
  if not string.match(proof or '', '^%d+:%x+:?%x*$') then
    return redis.error_reply('SNOWID_USAGE a holder proof is "<n>:<proof>[:<key>]":' ..
      ' the holder secret itself is never sent')
  end
  return check_secret(st, me, proof, call)
end

-- CLOCK (assumption 1 as a refusal): every server's clock lies within the
-- margin of Redis' clock.  Each call's proof carries its caller's clock,
-- its n (microseconds); a call whose n lies further behind Redis' clock
-- than the margin is refused as out of bounds, whoever is off, the caller
-- or Redis (a clock stepped, a failover to a replica whose clock runs
-- ahead): Redis counts a range's end and a fence's margin in its clock,
-- the holders issue by their own, and a new holder whose clock lies
-- further behind than the margin issues in the times of the range before
-- its own.  A caller ahead issues later than its range starts and never
-- at or past its end (its n may also run ahead of its clock: one past the
-- last n sent, or past this run's start, which Redis knows to the second,
-- check_secret()); the widest margin bounds it.  The caller, refused,
-- drops its id (REFUSAL_ENDS), and the refusal names both clocks.
-- Checked with the bounds, after the proof's n is taken.
local function out_of_clock(st, proof)
  local n = tonumber(string.match(proof or '', '^(%d+):') or '')
  if n == nil then return end
  return out_of_bounds({{'the caller\'s clock (the n of its holder proof, microseconds:' ..
                           ' no further behind Redis\' clock than the clock margin)', n,
                         st.now_us - MARGIN * 1000, st.now_us + MARGIN_MAX * 1000}})
end

-- The run of Redis a record names: its run id (every restart and restore
-- changes it) and its replication id (master_replid, which every
-- promotion changes: a failover, and a failback to a process that kept
-- its run id while a replica took its place); 'unknown' if either cannot
-- be read
local function min_run()
  local run = run_id()
  local ok, info = pcall(redis.call, 'INFO', 'replication')
  local replid = ok and type(info) == 'string' and string.match(info, 'master_replid:(%x+)')
  if run == 'unknown' or not replid then return 'unknown' end
  return run .. ':' .. replid
end

-- RESTART_LOSS: every restart, restore and failover of Redis changes its
-- run (min_run()), and counts as a possible loss, as does a record that is missing
-- (FLUSHALL, an eviction, a new datacenter).  QUIET: Redis may then have
-- forgotten ranges it granted, each ending no later than its clock plus
-- RANGE_MAX and the margin (BOUND), and its clock may have stepped back by
-- the margin: the record of this run names a quiet period to its clock
-- plus RANGE_MAX and twice the margin, and no claim is granted until a
-- margin past that end,
-- when every range it may have forgotten is over by every clock.  Returns
-- that time while it lies ahead, else nil; or nil and a refusal if the run
-- id cannot be read.
local function noticed(st)
  local run = min_run()
  if run == 'unknown' then
    return nil, redis.error_reply('SNOWID_NO_RUN Redis\' run id or replication id cannot be read' ..
      ' (INFO server, INFO replication): without them a restart or a failover cannot be told' ..
      ' from a Redis that kept every claim')
  end
  local was, til, layout = read_record(st)
  if was ~= run then
    til = math.max(til, st.now + RANGE_MAX + 2 * MARGIN)
    write_record(st, run, til, layout)
  end
  if til + MARGIN > st.now then return til + MARGIN end
end

-- The fields of worker ids 0..max: {id = {fence, name, good}}, and the ids
-- ascending.  Only the ids that have a field: with 24 worker bits, 0..max
-- is more than Redis lets a function walk.
local function read_slots(st, max)
  local flat = redis.call('HGETALL', st.fences)
  local slots, ids = {}, {}
  for i = 1, #flat, 2 do
    local id = string.match(flat[i], '^%d+$') and wid(flat[i], max)
    if id then
      local fence, name, good = slot_of(flat[i + 1])
      slots[id] = {fence = fence, name = name, good = good}
      ids[#ids + 1] = id
    end
  end
  table.sort(ids)
  return slots, ids
end

-- A name that holds no worker id any more (its lease released, its id
-- freed or taken by another after its range): its key and the n of its
-- proofs removed, so that the hash keeps a name only while it holds an
-- id, as many as the layout has ids, and what every call reads is bounded
-- by the layout, whatever names a fleet member makes up.  (Its next call
-- registers its key again: SNOWID_REGISTER.)
local function forget_name(st, name)
  if name == nil then return end
  local slots, ids = read_slots(st, ID_MAX)
  for _, id in ipairs(ids) do
    if slots[id].name == name then return end
  end
  redis.call('HDEL', st.fences, 'secret ' .. name, 'proof ' .. name)
end

-- A range granted to me: worker id id, for good or on lease, to Redis'
-- clock plus len ms (or to the end the caller sent, for an extend, if
-- later); the fence raised to its end, the name's key registered if it
-- had none.  Replies {worker id, end, Redis' clock}.
local function grant(st, me, id, good, len, fence, sent_end)
  local til = math.max(st.now + len, sent_end or 0)
  local _, was = slot_of(redis.call('HGET', st.fences, ms(id)))
  write_slot(st, id, math.max(fence, til), me, good)
  if was ~= me then forget_name(st, was) end
  if st.layout_next then
    local run, til = read_record(st)
    write_record(st, run, til, st.layout_next)
  end
  register_secret(st, me)
  return {id, til, st.now}
end

-- BOUND, the layout: a datacenter's servers run one layout (its highest
-- worker id, max; a switch stops them all, doc/layouts.md), recorded in
-- the field "layout" of its hash.  A call that names a wider one than the
-- layout recorded, while a holder other than the caller is live (for good,
-- or a range not over by every clock), is refused as out of bounds: so no
-- worker id beyond the layout is granted, and a datacenter has no more
-- holders than its layout has worker ids, which bounds what every call
-- reads.  A grant records the caller's layout when no other holder is live,
-- else the narrowest of the recorded one and the caller's that still holds
-- every live holder's id.  The same rule as the older calls'
-- (layout_refused()).  Returns the refusal, or nil with the layout a grant
-- records in st.layout_next.
local function out_of_layout(st, me, max)
  local _, _, rec = read_record(st)
  local slots, ids = read_slots(st, ID_MAX)
  local top = -1
  for _, id in ipairs(ids) do
    local s = slots[id]
    if s.name and s.name ~= me and (s.good or s.fence + MARGIN > st.now) then top = id end
  end
  if rec and top >= 0 then
    local bad = out_of_bounds({{'max', max, 0, rec}})
    if bad then return bad end
  end
  st.layout_next = top < 0 and max or math.min(rec or ID_MAX, math.max(max, top))
end

-- The id a claim of me takes, or nil and its refusal: the id Redis shows
-- me holding, once its last range is over (a restart keeps its id); else
-- prefer, if free; else the lowest free id of 0..max.  FENCE, MARGIN: an
-- id is free when nobody holds it for good, and its fence (the end of
-- every range granted for it, a lease's too) lies a margin in Redis'
-- past: then every clock is past it, its last holder's too, which issues
-- no more and can never extend again (OWN_END).
local function choose(st, me, max, prefer)
  local slots, ids = read_slots(st, max)
  local function over(id) return (slots[id] and slots[id].fence or 0) + MARGIN <= st.now end
  local function open(id) return slots[id] == nil or not slots[id].good end
  local function fenced(id)
    return redis.error_reply('SNOWID_FENCED ' .. ms(id) .. ' ' .. ms(slots[id].fence + MARGIN))
  end
  for _, id in ipairs(ids) do
    if slots[id].name == me then
      if over(id) then return id, slots[id].fence end
      return nil, fenced(id)
    end
  end
  if prefer >= 0 and open(prefer) and over(prefer) then
    return prefer, slots[prefer] and slots[prefer].fence or 0
  end
  local gap, soonest = 0
  for _, id in ipairs(ids) do
    if id > gap then break end
    gap = id + 1
  end
  for _, id in ipairs(ids) do
    if id > gap then break end
    if open(id) and over(id) then return id, slots[id].fence end
    if open(id) and (soonest == nil or slots[id].fence < slots[soonest].fence) then
      soonest = id
    end
  end
  if gap <= max then return gap, 0 end
  if soonest then return nil, fenced(soonest) end
  return nil, redis.error_reply('SNOWID_ALL_HELD ' .. ms(max + 1))
end

-- The claim: a start, or a holder past its range's end.  numbers: "<max>
-- <range ms> <good> <prefer>": the highest worker id of the layout, the
-- range's length (a lease's; for good, a check-in interval, a timeout and
-- a second), 1 for good or 0 on lease, the id the server's data directory
-- names or -1.
local function claim_4(keys, args)
  local me = args[1]
  local v = numbers_of(args[2], {false, false, false, true})
  if not v or v[3] > 1 then
    return redis.error_reply('SNOWID_USAGE claim takes "<max> <range ms> <good> <prefer>",' ..
      ' each digits only (good 0 or 1, prefer -1 for none)')
  end
  local max, len, good, prefer = v[1], v[2], v[3] == 1, v[4]
  local st = min_begin(keys[1])
  local refused = proved(st, me, args[3], {MIN_PREFIX .. 'claim', keys[1], me, args[2]})
  -- BOUND: a range no longer than RANGE_MAX, a worker id within the layout
  local bad = out_of_bounds({{'max', max, 0, ID_MAX}, {'range_ms', len, 1, RANGE_MAX},
                             {'prefer', prefer, -1, max}}) or out_of_clock(st, args[3]) or
              out_of_layout(st, me, max)
  if bad then return bad end
  if refused then return refused end
  local quiet
  quiet, refused = noticed(st)
  if refused then return refused end
  -- CONTINUATION: during a quiet period no claim is granted, even of the
  -- id Redis shows the caller holding: what it shows may be a backup's
  if quiet then return redis.error_reply('SNOWID_QUIET ' .. ms(quiet)) end
  local id, fence = choose(st, me, max, prefer)
  if id == nil then return fence end
  return grant(st, me, id, good, len, fence)
end

-- The check-in of a holder for good, a lease's renewal: "I hold the worker
-- id until end: extend it".  numbers: "<worker id> <max> <end> <range ms>
-- <good>", the end the caller holds it until (Redis' clock, from its last
-- grant), the rest as claim's.
local function extend_4(keys, args)
  local me = args[1]
  local v = numbers_of(args[2], {false, false, false, false, false})
  if not v or v[5] > 1 then
    return redis.error_reply('SNOWID_USAGE extend takes "<worker id> <max> <end ms> <range ms> <good>",' ..
      ' each digits only (good 0 or 1)')
  end
  local id, max, sent, len, good = v[1], v[2], v[3], v[4], v[5] == 1
  local st = min_begin(keys[1])
  local refused = proved(st, me, args[3], {MIN_PREFIX .. 'extend', keys[1], me, args[2]})
  -- BOUND: a range no longer than RANGE_MAX, an end no later than Redis'
  -- clock plus RANGE_MAX and the margin (a range granted as long as
  -- RANGE_MAX ends at Redis' clock then plus RANGE_MAX, and its clock may
  -- since have stepped back by the margin), a worker id within the layout
  local bad = out_of_bounds({{'max', max, 0, ID_MAX}, {'worker_id', id, 0, max},
                             {'range_ms', len, 1, RANGE_MAX},
                             {'end_ms', sent, 0, st.now + RANGE_MAX + MARGIN}}) or
              out_of_clock(st, args[3]) or
              out_of_layout(st, me, max)
  if bad then return bad end
  if refused then return refused end
  local quiet
  quiet, refused = noticed(st)
  if refused then return refused end
  -- OWN_END: only a range not over by the caller's clock (so not by Redis'
  -- less the margin) is extended; a holder past its range is a new
  -- claimant, whose range may have been followed by another's that Redis
  -- forgot
  if sent + MARGIN <= st.now then return redis.error_reply('SNOWID_ENDED ' .. ms(sent)) end
  local fence, name = slot_of(redis.call('HGET', st.fences, ms(id)))
  -- the holder Redis shows is extended; CONTINUATION: during a quiet
  -- period so is a live range of an id nobody holds (one Redis forgot),
  -- which only the holder of the last range granted for the id can still
  -- have (MARGIN)
  if name == me or (name == nil and quiet) then
    return grant(st, me, id, good, len, fence, sent)
  end
  return redis.error_reply('SNOWID_LOST ' .. (name or ''))
end

-- A lease given back at a clean stop.  numbers: "<worker id> <max>".  The
-- holder removed if it is the caller; the fence stays (no call lowers a
-- fence).  Replies 1, or 0 if the caller did not hold the id.
local function release_4(keys, args)
  local me = args[1]
  local v = numbers_of(args[2], {false, false})
  if not v then
    return redis.error_reply('SNOWID_USAGE release takes "<worker id> <max>", each digits only')
  end
  local id, max = v[1], v[2]
  local st = min_begin(keys[1])
  local refused = proved(st, me, args[3], {MIN_PREFIX .. 'release', keys[1], me, args[2]})
  local bad = out_of_bounds({{'max', max, 0, ID_MAX}, {'worker_id', id, 0, max}}) or
              out_of_clock(st, args[3])
  if bad then return bad end
  if refused then return refused end
  local _
  _, refused = noticed(st)
  if refused then return refused end
  local fence, name = slot_of(redis.call('HGET', st.fences, ms(id)))
  if name ~= me then return 0 end
  write_slot(st, id, fence)
  forget_name(st, me)
  return 1
end

-- An administrator's free() of a server that has stopped (the protocol in
-- brief's assumption 5: a freed holder for good that runs on beyond an
-- outage of Redis extends its own range, and Redis, back without a
-- restart, cannot tell it from one that stopped).
-- args: a name for the log (unused); the worker id.  The holder removed,
-- the fence kept: another server takes the id once its fence lies a
-- margin in the past (MARGIN).  Replies the fence.
local function free_4(keys, args)
  local v = numbers_of(args[2], {false})
  local id = v and v[1]
  if not id then
    return redis.error_reply('SNOWID_USAGE free takes "<worker id>", digits only')
  end
  local bad = out_of_bounds({{'worker_id', id, 0, ID_MAX}})
  if bad then return bad end
  local st = min_begin(keys[1])
  local _, refused = noticed(st)
  if refused then return refused end
  local v = redis.call('HGET', st.fences, ms(id))
  if not v then return 0 end
  local fence, name = slot_of(v)
  write_slot(st, id, fence)
  forget_name(st, name)
  return fence
end

-- Every function, by name; flags as FUNCTION LOAD takes them (a function
-- that never writes would say {'no-writes'}, and be called with FCALL_RO).
local functions = {
  {name = prefix .. 'claim', callback = of_server(claim), flags = {}},
  {name = prefix .. 'lease_claim', callback = of_server(lease_claim), flags = {}},
  {name = prefix .. 'lease_renew', callback = of_server(lease_renew), flags = {}},
  {name = prefix .. 'lease_release', callback = of_server(lease_release), flags = {}},
  {name = prefix .. 'free', callback = free, flags = {}},
  {name = prefix .. 'lower_fence', callback = lower_fence, flags = {}},
  {name = prefix .. 'reset_secret', callback = reset_secret, flags = {}},
  {name = prefix .. 'new_datacenter', callback = new_datacenter, flags = {}},
  {name = prefix .. 'end_quiet', callback = end_quiet, flags = {}},
  -- the protocol in brief, which servers of this release do not call yet
  {name = MIN_PREFIX .. 'claim', callback = of_server(claim_4), flags = {}},
  {name = MIN_PREFIX .. 'extend', callback = of_server(extend_4), flags = {}},
  {name = MIN_PREFIX .. 'release', callback = of_server(release_4), flags = {}},
  {name = MIN_PREFIX .. 'free', callback = free_4, flags = {}},
  -- release 1.3.0's, which its servers and an administrator's commands
  -- written for it call
  {name = 'snowid_2_claim', callback = of_server(claim), flags = {}},
  {name = 'snowid_2_lease_claim', callback = of_server(lease_claim), flags = {}},
  {name = 'snowid_2_lease_renew', callback = of_server(lease_renew), flags = {}},
  {name = 'snowid_2_lease_release', callback = of_server(lease_release), flags = {}},
  {name = 'snowid_2_free', callback = free, flags = {}},
  {name = 'snowid_2_reset_secret', callback = reset_secret, flags = {}},
  {name = 'snowid_2_new_datacenter', callback = new_datacenter, flags = {}},
  {name = 'snowid_2_end_quiet', callback = end_quiet, flags = {}},
  -- release 1.2's
  {name = 'snowid_1_claim', callback = of_server(claim_1), flags = {}},
  {name = 'snowid_1_lease_claim', callback = of_server(lease_claim), flags = {}},
  {name = 'snowid_1_lease_renew', callback = of_server(lease_renew), flags = {}},
  {name = 'snowid_1_lease_release', callback = of_server(lease_release), flags = {}},
}

-- (Loading a library offers no ipairs.)
if redis.register_function then
  for i = 1, #functions do
    local f = functions[i]
    redis.register_function{function_name = f.name,
                            callback = f.callback, flags = f.flags}
  end
else
  for i = 1, #functions do
    local f = functions[i]
    if f.name == ARGV[1] then
      return f.callback(KEYS, {unpack(ARGV, 2)})
    end
  end
  return redis.error_reply('SNOWID_NO_FUNCTION ' .. tostring(ARGV[1]))
end
