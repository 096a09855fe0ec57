-- -----------------------------------------------------------------------
-- THE WORKER-ID PROTOCOL IN BRIEF (snowid's doc/internals.md; its model
-- src/coord/protocol_min.pml, whose rules the comments below name): the
-- procedures claim_4, extend_4 and release_4 of a server, and the
-- administrator's free_4(), the same calls with the same rules as the
-- functions snowid_4_claim, snowid_4_extend, snowid_4_release and
-- snowid_4_free of snowid's Redis library (src/redis/snowid.lua), beside
-- the calls the servers of this release make, which they do not touch.
-- The invariant: per worker id, the ranges of the ids' own time that
-- holders may issue in never overlap.  A range runs from its holder's
-- clock to the end this server granted (its clock, Unix ms); its holder
-- issues only inside it, and asks for the next one before it runs out.
--
-- Each call goes through its checks in the order of the other calls
-- (snowid's doc/internals.md, "The order of a call's checks"): its
-- procedure first takes the n of its proof (prove()); then every value it
-- sends is bounded (BOUND: a range no longer than the longest,
-- @SNOWID_RANGE_MAX_MS@ ms; an end no later than this server's clock plus
-- that; a worker id within the layout, max); then its proof is checked
-- (SECRET, PROOF: check_proof()); then a possible loss is noticed
-- (RESTART_LOSS, QUIET: noticed()); then the call's rule, and only then
-- the grant, which raises the fence.  Bounds and proofs are refused with
-- errors (22023; 28000, 42501), which write nothing but the n prove()
-- took; every other refusal is a row of range_outcome, so that what
-- noticed() wrote is kept, as Redis keeps it:
--	 ok			 a grant: worker_id, end_ms the end of its range, now_ms this
--				 server's clock (a release: worker_id; free_4(): end_ms the
--				 fence, holder who held it)
--	 register	 the caller's name has no key registered: holder is the pad
--				 it sends its key under, with the same call again
--	 quiet		 after a possible loss, no claim until end_ms
--	 fenced		 worker_id's last range is not over by every clock until
--				 end_ms
--	 all_held	 every worker id of the layout is held
--	 ended		 an extend of a range over by the caller's clock, end_ms the
--				 end it sent
--	 lost		 an extend or a release of an id the caller does not hold:
--				 holder holds it, or no one (NULL)
-- Each refusal is an answer (REFUSAL_ENDS: the holder drops the id and
-- extends nothing) but register and a proof's n refused as taken (28000),
-- after which the server sends its call again.
-- -----------------------------------------------------------------------

-- What this database keeps of the protocol in brief, per worker id: its
-- fence, the latest end of any range granted for it (it only rises), and
-- who holds it (a holder name, NULL: nobody), for good or on lease.  A
-- worker id without a row has neither.  Nothing else: no generation,
-- counter, declared quiet period, margin or confirmed time.
CREATE TABLE snowid_coordinator.ranges (
	datacenter integer NOT NULL
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	worker_id integer NOT NULL
		CHECK (worker_id BETWEEN 0 AND @SNOWID_MAX_ID@),
	fence_ms bigint NOT NULL
		CHECK (fence_ms >= 0),
	holder text
		CHECK (octet_length(holder) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	for_good boolean,
	PRIMARY KEY (datacenter, worker_id),
	CHECK ((holder IS NULL) = (for_good IS NULL))
);

-- the id a claim's caller holds, found by its name
CREATE INDEX ranges_holder ON snowid_coordinator.ranges (datacenter, holder)
	WHERE holder IS NOT NULL;

COMMENT ON TABLE snowid_coordinator.ranges IS
'The protocol in brief: each worker id''s fence (the latest end of a range granted for it, Unix ms) and holder';

-- And per datacenter: the run of this server that wrote the record
-- (server_now(): the install, the system identifier, the timeline and the
-- postmaster's start), the end of its last quiet period (Unix ms) and the
-- highest worker id of its layout (check_range_layout(); NULL: none yet)
CREATE TABLE snowid_coordinator.range_records (
	datacenter integer PRIMARY KEY
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	run text NOT NULL,
	quiet_until_ms bigint NOT NULL
		CHECK (quiet_until_ms >= 0),
	max_worker_id integer
		CHECK (max_worker_id BETWEEN 0 AND @SNOWID_MAX_ID@)
);

COMMENT ON TABLE snowid_coordinator.range_records IS
'The protocol in brief: the run of the server that wrote each datacenter''s record, and the end of its quiet period';

-- pg_dump dumps them with the database (a restore is another run: its
-- install is new)
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.ranges', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.range_records', '');

-- What each call of the protocol in brief returns (above)
CREATE TYPE snowid_coordinator.range_outcome AS (
	outcome text,
	worker_id integer,
	end_ms bigint,
	now_ms bigint,
	holder text
);

-- Refuses a worker id outside lo..max, the highest of the caller's layout
-- (lo -1: none)
CREATE OR REPLACE FUNCTION snowid_coordinator.check_in_layout(what text, value integer,
												   lo integer, max integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given(what, value);
	IF value < lo OR value > max THEN
		RAISE EXCEPTION '% is out of range: %', what, value
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s must lie between %s and %s (max, the highest worker id of the layout)%s.',
								  what, lo, max,
								  CASE WHEN lo < 0 THEN ', -1 meaning none'
									   ELSE '' END);
	END IF;
END
$$;

-- The bounds every server's call shares (BOUND): the datacenter, the
-- name, a holder proof (SECRET, PROOF: never the secret itself, which a
-- server of release 1.3.0 sent to the older calls) and the layout
CREATE OR REPLACE FUNCTION snowid_coordinator.check_range_call(dc integer, identity text,
													secret text, max integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(identity);
	PERFORM snowid_coordinator.check_secret(secret);
	IF (snowid_coordinator.proof_parts(secret)).n IS NULL THEN
		RAISE EXCEPTION 'a holder proof is "<n>:<proof>[:<key>]": the holder secret itself is never sent'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The calls of the protocol in brief take a holder proof only (snowid''s doc/security.md, "Holder secrets").';
	END IF;
	PERFORM snowid_coordinator.check_id('max', max, 0);
END
$$;

-- CLOCK (assumption 1 as a refusal): every server's clock lies within the
-- margin of this server's.  Each call's proof carries its caller's clock,
-- its n (microseconds): a call whose n lies further behind this server's
-- clock than the margin is refused as out of bounds (22023), whoever is
-- off, the caller or this server (a clock stepped, a failover to a standby
-- whose clock runs ahead): this database counts a range's end and a
-- fence's margin in its clock, the holders issue by their own, and a new
-- holder whose clock lies further behind than the margin issues in the
-- times of the range before its own.  A caller ahead issues later than its
-- range starts and never at or past its end (its n may also run ahead of
-- its clock, one past the last n sent); the widest margin bounds it
-- (check_proof_time()).  The caller, refused, drops its id (REFUSAL_ENDS).
-- The same rule as snowid.lua's out_of_clock().
CREATE OR REPLACE FUNCTION snowid_coordinator.check_range_clock(secret text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	n			bigint := (snowid_coordinator.proof_parts(secret)).n;
	now_us		bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
BEGIN
	IF n < now_us - @SNOWID_RANGE_MARGIN_MS@::bigint * 1000 THEN
		RAISE EXCEPTION 'the clock of the caller lies % ms behind the clock of the coordination server',
				(now_us - n) / 1000
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('n must lie between %s and %s (the n of a holder proof is its server''s clock in microseconds, which lies no further behind the coordination server''s than the clock margin, %s ms).',
								  now_us - @SNOWID_RANGE_MARGIN_MS@::bigint * 1000,
								  now_us + @SNOWID_CLOCK_MARGIN_MAX_MS@::bigint * 1000,
								  @SNOWID_RANGE_MARGIN_MS@),
				  HINT = 'Check the clocks of the snowid server and of the coordination server (NTP): a server refused so stops issuing ids with its worker id.';
	END IF;
END
$$;

-- Refuses a range's length (ms) longer than the longest this database
-- grants (BOUND: the quiet period covers no longer one)
CREATE OR REPLACE FUNCTION snowid_coordinator.check_range_ms(len bigint)
RETURNS void
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT snowid_coordinator.check_ms('range_ms', len, 1, @SNOWID_RANGE_MAX_MS@,
		'the longest range this database grants')
$$;

-- BOUND, the layout: a datacenter's servers run one layout (its highest
-- worker id, max; a switch stops them all, snowid's doc/layouts.md),
-- recorded in range_records.  A call that names a wider one than the
-- layout recorded, while a holder other than the caller is live (for good,
-- or a range not over by every clock), is refused as out of bounds
-- (22023): so no worker id beyond the layout is granted, and a datacenter
-- has no more holders than its layout has worker ids, which bounds what
-- every call reads.  A grant records the caller's layout when no other
-- holder is live, else the narrowest of the recorded one and the caller's
-- that still holds every live holder's id (grant_range()).  The same rule
-- as the older calls' (check_layout()) and Redis' out_of_layout().  Called
-- with datacenter dc's lock held, at now_ms, after noticed(); returns the
-- layout a grant records.
CREATE OR REPLACE FUNCTION snowid_coordinator.check_range_layout(dc integer, identity text,
													  max integer, now_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
	rec			integer;
	top			integer;
BEGIN
	SELECT r.max_worker_id INTO rec FROM snowid_coordinator.range_records r
	WHERE r.datacenter = dc;
	SELECT pg_catalog.max(x.worker_id) INTO top FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.holder IS NOT NULL AND x.holder <> identity
	  AND (x.for_good OR x.fence_ms + @SNOWID_RANGE_MARGIN_MS@ > now_ms);
	IF top IS NULL THEN
		RETURN max;
	END IF;
	IF rec IS NOT NULL THEN
		-- the recorded layout, which the live holders run
		PERFORM snowid_coordinator.check_in_layout('max', max, 0, rec);
	END IF;
	RETURN least(coalesce(rec, @SNOWID_MAX_ID@), greatest(max, top));
END
$$;

-- RESTART_LOSS: every restart, restore and failover of this server changes
-- its run (server_now()), and counts as a possible loss, as does a record
-- that is missing (a new datacenter, a loss of the table).  QUIET: this
-- database may then have forgotten ranges it granted, each ending no later
-- than its clock plus the longest range and the margin (BOUND), and its
-- clock may have stepped back by the margin: the record of this run names
-- a quiet period to its clock plus the longest range and twice the
-- margin, and no claim is granted
-- until a margin past that end, when every range it may have forgotten is
-- over by every clock.  Called with datacenter dc's lock held, at now_ms.
-- Returns that time while it lies ahead, else NULL.
CREATE OR REPLACE FUNCTION snowid_coordinator.noticed(dc integer, now_ms bigint)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	here		text := snowid_coordinator.server_now();
	r			snowid_coordinator.range_records;
	til			bigint;
BEGIN
	SELECT * INTO r FROM snowid_coordinator.range_records x
	WHERE x.datacenter = dc;
	til := coalesce(r.quiet_until_ms, 0);
	IF r.run IS DISTINCT FROM here THEN
		til := greatest(til, now_ms + @SNOWID_RANGE_MAX_MS@ + 2 * @SNOWID_RANGE_MARGIN_MS@);
		INSERT INTO snowid_coordinator.range_records AS x (datacenter, run, quiet_until_ms)
		VALUES (dc, here, til)
		ON CONFLICT (datacenter) DO UPDATE
		SET run = excluded.run, quiet_until_ms = excluded.quiet_until_ms;
	END IF;
	IF til + @SNOWID_RANGE_MARGIN_MS@ > now_ms THEN
		RETURN til + @SNOWID_RANGE_MARGIN_MS@;
	END IF;
	RETURN NULL;
END
$$;

-- A range granted to identity: worker id id of datacenter dc, for good or
-- on lease, to now_ms plus len (or to sent, the end an extend's caller
-- sent, if later); the fence raised to its end, the name's key
-- registered if it had none (key: what check_proof() took), the layout
-- recorded (check_range_layout()'s).
CREATE OR REPLACE FUNCTION snowid_coordinator.grant_range(dc integer, identity text,
											   secret text, key bytea,
											   id integer, good boolean,
											   len bigint, sent bigint,
											   now_ms bigint, layout integer)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	o			snowid_coordinator.range_outcome;
BEGIN
	o.outcome := 'ok';
	o.worker_id := id;
	o.end_ms := greatest(now_ms + len, coalesce(sent, 0));
	o.now_ms := now_ms;
	INSERT INTO snowid_coordinator.ranges AS x (datacenter, worker_id, fence_ms,
												holder, for_good)
	VALUES (dc, id, o.end_ms, identity, good)
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET fence_ms = greatest(x.fence_ms, excluded.fence_ms),
		holder = excluded.holder, for_good = excluded.for_good;
	UPDATE snowid_coordinator.range_records r SET max_worker_id = layout
	WHERE r.datacenter = dc;
	PERFORM snowid_coordinator.register_holder(dc, identity, secret, key);
	RETURN o;
END
$$;

-- The id a claim of identity takes in datacenter dc at now_ms, or a
-- refusal (fenced, all_held): the id this database shows it holding in
-- 0..max, once its last range is over (a restart keeps its id); else
-- prefer, if free; else the lowest free id of 0..max.  FENCE, MARGIN: an
-- id is free when nobody holds it for good, and its fence (the end of
-- every range granted for it, a lease's too) lies a margin in this
-- server's past: then every clock is past it, its last holder's too,
-- which issues no more and can never extend again (OWN_END).  Each
-- statement reads the rows of the ids that have one, by the primary key
-- or the holder's index, whatever its caller's settings (settings.sql).
CREATE OR REPLACE FUNCTION snowid_coordinator.choose_range(dc integer, identity text,
												max integer, prefer integer,
												now_ms bigint)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	w			snowid_coordinator.ranges;
	gap			integer;
	found_id	integer;
	o			snowid_coordinator.range_outcome;
BEGIN
	SELECT * INTO w FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.holder = identity AND x.worker_id <= max
	ORDER BY x.worker_id
	LIMIT 1;
	IF NOT FOUND AND prefer >= 0 THEN
		SELECT * INTO w FROM snowid_coordinator.ranges x
		WHERE x.datacenter = dc AND x.worker_id = prefer;
		IF NOT FOUND OR (NOT coalesce(w.for_good, false) AND
						 w.fence_ms + @SNOWID_RANGE_MARGIN_MS@ <= now_ms) THEN
			o.outcome := 'ok';
			o.worker_id := prefer;
			RETURN o;
		END IF;
		w := NULL;
	END IF;
	IF w.worker_id IS NOT NULL THEN
		o.worker_id := w.worker_id;
		IF w.fence_ms + @SNOWID_RANGE_MARGIN_MS@ <= now_ms THEN
			o.outcome := 'ok';
		ELSE
			o.outcome := 'fenced';
			o.end_ms := w.fence_ms + @SNOWID_RANGE_MARGIN_MS@;
		END IF;
		RETURN o;
	END IF;

	-- the lowest id without a row, and the lowest free one with a row
	SELECT min(c.id) INTO gap
	FROM (SELECT 0 AS id
		  UNION ALL
		  SELECT x.worker_id + 1 FROM snowid_coordinator.ranges x
		  WHERE x.datacenter = dc AND x.worker_id < max) c
	WHERE NOT EXISTS (SELECT FROM snowid_coordinator.ranges y
					  WHERE y.datacenter = dc AND y.worker_id = c.id);
	SELECT min(x.worker_id) INTO found_id
	FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.worker_id <= max AND NOT coalesce(x.for_good, false)
	  AND x.fence_ms + @SNOWID_RANGE_MARGIN_MS@ <= now_ms;
	o.worker_id := least(gap, found_id);
	IF o.worker_id IS NOT NULL THEN
		o.outcome := 'ok';
		RETURN o;
	END IF;

	-- none free: the one not held for good that is fenced least far
	SELECT x.worker_id, x.fence_ms + @SNOWID_RANGE_MARGIN_MS@ INTO o.worker_id, o.end_ms
	FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.worker_id <= max AND NOT coalesce(x.for_good, false)
	ORDER BY x.fence_ms, x.worker_id
	LIMIT 1;
	o.outcome := CASE WHEN o.worker_id IS NULL THEN 'all_held' ELSE 'fenced' END;
	RETURN o;
END
$$;

-- The claim: a start, or a holder past its range's end.  max is the
-- highest worker id of the layout, range_ms the range's length (a lease's;
-- for good, a check-in interval, a timeout and a second), good whether it
-- holds the id for good, prefer the id its data directory names (-1:
-- none).
CREATE OR REPLACE FUNCTION snowid_coordinator.run_claim_4(datacenter integer,
											   identity text, secret text,
											   max integer, range_ms bigint,
											   good boolean, prefer integer)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	-- what its proof is for (the procedure's arguments, see prove())
	call		text := snowid_coordinator.call_text(
		ARRAY['claim_4', datacenter::text, identity, max::text, range_ms::text,
			  good::text, prefer::text]);
	now_ms		bigint;
	quiet		bigint;
	chosen		snowid_coordinator.range_outcome;
	layout		integer;
	o			snowid_coordinator.range_outcome;
	-- the key it sent under its pad (check_proof())
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('claim_4');
	-- BOUND: a range no longer than the longest, a worker id within the
	-- layout
	PERFORM snowid_coordinator.check_range_call(dc, me, secret, max);
	PERFORM snowid_coordinator.check_range_clock(secret);
	PERFORM snowid_coordinator.check_range_ms(range_ms);
	PERFORM snowid_coordinator.check_given('good', good);
	PERFORM snowid_coordinator.check_in_layout('prefer', prefer, -1, max);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	layout := snowid_coordinator.check_range_layout(dc, me, max, now_ms);
	SELECT * INTO o.outcome, o.holder, sent_key
	FROM snowid_coordinator.check_proof(dc, me, secret, call, max);
	IF o.outcome IS NOT NULL THEN
		RETURN o;
	END IF;
	quiet := snowid_coordinator.noticed(dc, now_ms);
	-- CONTINUATION: during a quiet period no claim is granted, even of the
	-- id this database shows the caller holding: what it shows may be a
	-- backup's
	IF quiet IS NOT NULL THEN
		o.outcome := 'quiet';
		o.end_ms := quiet;
		RETURN o;
	END IF;
	chosen := snowid_coordinator.choose_range(dc, me, max, prefer, now_ms);
	IF chosen.outcome <> 'ok' THEN
		RETURN chosen;
	END IF;
	RETURN snowid_coordinator.grant_range(dc, me, secret, sent_key, chosen.worker_id,
										  good, range_ms, NULL, now_ms, layout);
END
$$;

-- The check-in of a holder for good, a lease's renewal: "I hold the worker
-- id held_worker_id until held_until_ms (this server's clock, from its
-- last grant): extend it"; the rest as run_claim_4() takes it.
CREATE OR REPLACE FUNCTION snowid_coordinator.run_extend_4(datacenter integer,
												identity text, secret text,
												held_worker_id integer,
												max integer,
												held_until_ms bigint,
												range_ms bigint, good boolean)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	id			integer := held_worker_id;
	sent		bigint := held_until_ms;
	call		text := snowid_coordinator.call_text(
		ARRAY['extend_4', datacenter::text, identity, held_worker_id::text,
			  max::text, held_until_ms::text, range_ms::text, good::text]);
	now_ms		bigint;
	quiet		bigint;
	w			snowid_coordinator.ranges;
	layout		integer;
	o			snowid_coordinator.range_outcome;
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('extend_4');
	-- BOUND: a range no longer than the longest, an end no later than this
	-- server's clock plus the longest range and the margin (a range granted
	-- as long as the longest ends at this server's clock then plus the
	-- longest, and its clock may since have stepped back by the margin), a
	-- worker id within the layout
	PERFORM snowid_coordinator.check_range_call(dc, me, secret, max);
	PERFORM snowid_coordinator.check_range_clock(secret);
	PERFORM snowid_coordinator.check_range_ms(range_ms);
	PERFORM snowid_coordinator.check_given('good', good);
	PERFORM snowid_coordinator.check_in_layout('held_worker_id', id, 0, max);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	PERFORM snowid_coordinator.check_ms('held_until_ms', sent, 0,
		now_ms + @SNOWID_RANGE_MAX_MS@ + @SNOWID_RANGE_MARGIN_MS@,
		'the clock of the coordination server plus the longest range it grants and the clock margin');
	layout := snowid_coordinator.check_range_layout(dc, me, max, now_ms);
	-- CONTINUATION: an extend that may continue a range this database
	-- forgot (its id unheld, a possible loss not yet a quiet period and a
	-- margin past: the record's run another, or its quiet period running)
	-- registers its key again whatever pads made-up names keep: the
	-- datacenter's cap on pads (check_proof()) is for other calls, and a
	-- continuation's pad is bounded per name, as Redis keeps none
	SELECT * INTO o.outcome, o.holder, sent_key
	FROM snowid_coordinator.check_proof(dc, me, secret, call,
		CASE WHEN NOT EXISTS (SELECT FROM snowid_coordinator.ranges x
							  WHERE x.datacenter = dc AND x.worker_id = id
								AND x.holder IS NOT NULL)
				  AND NOT EXISTS (SELECT FROM snowid_coordinator.range_records r
								  WHERE r.datacenter = dc
									AND r.run = snowid_coordinator.server_now()
									AND r.quiet_until_ms + @SNOWID_RANGE_MARGIN_MS@ <= now_ms)
			 THEN -1 ELSE max END);
	IF o.outcome IS NOT NULL THEN
		RETURN o;
	END IF;
	quiet := snowid_coordinator.noticed(dc, now_ms);
	-- OWN_END: only a range not over by the caller's clock (so not by this
	-- server's less the margin) is extended; a holder past its range is a
	-- new claimant, whose range may have been followed by another's that
	-- this database forgot
	IF sent + @SNOWID_RANGE_MARGIN_MS@ <= now_ms THEN
		o.outcome := 'ended';
		o.end_ms := sent;
		RETURN o;
	END IF;
	SELECT * INTO w FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.worker_id = id;
	-- the holder this database shows is extended; CONTINUATION: during a
	-- quiet period so is a live range of an id nobody holds (one this
	-- database forgot), which only the holder of the last range granted
	-- for the id can still have (MARGIN)
	IF w.holder = me OR (w.holder IS NULL AND quiet IS NOT NULL) THEN
		RETURN snowid_coordinator.grant_range(dc, me, secret, sent_key, id, good,
											  range_ms, sent, now_ms, layout);
	END IF;
	o.outcome := 'lost';
	o.holder := w.holder;
	RETURN o;
END
$$;

-- A lease given back at a clean stop: the holder removed if it is the
-- caller; the fence stays (no call lowers a fence).  ok, or lost.
CREATE OR REPLACE FUNCTION snowid_coordinator.run_release_4(datacenter integer,
												 identity text, secret text,
												 held_worker_id integer,
												 max integer)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	id			integer := held_worker_id;
	call		text := snowid_coordinator.call_text(
		ARRAY['release_4', datacenter::text, identity, held_worker_id::text,
			  max::text]);
	now_ms		bigint;
	w			snowid_coordinator.ranges;
	o			snowid_coordinator.range_outcome;
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('release_4');
	PERFORM snowid_coordinator.check_range_call(dc, me, secret, max);
	PERFORM snowid_coordinator.check_range_clock(secret);
	PERFORM snowid_coordinator.check_in_layout('held_worker_id', id, 0, max);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	SELECT * INTO o.outcome, o.holder, sent_key
	FROM snowid_coordinator.check_proof(dc, me, secret, call, max);
	IF o.outcome IS NOT NULL THEN
		RETURN o;
	END IF;
	PERFORM snowid_coordinator.noticed(dc, now_ms);
	SELECT * INTO w FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.worker_id = id;
	IF w.holder IS DISTINCT FROM me THEN
		o.outcome := 'lost';
		o.holder := w.holder;
		RETURN o;
	END IF;
	UPDATE snowid_coordinator.ranges x
	SET holder = NULL, for_good = NULL
	WHERE x.datacenter = dc AND x.worker_id = id;
	o.outcome := 'ok';
	o.worker_id := id;
	o.now_ms := now_ms;
	RETURN o;
END
$$;

-- An administrator's free() of a server that has stopped (the protocol in
-- brief's assumption 5: a freed holder for good that runs on beyond an
-- outage of this server extends its own range, and this server, back
-- without a restart, cannot tell it from one that stopped):
-- the holder of worker_id removed, the fence kept; another server takes
-- the id once its fence lies a margin in the past (MARGIN).  ok: end_ms
-- the fence (0: none), holder who held it.
CREATE OR REPLACE FUNCTION snowid_coordinator.free_4(datacenter integer, worker_id integer)
RETURNS snowid_coordinator.range_outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
	dc			integer := datacenter;
	id			integer := worker_id;
	now_ms		bigint;
	w			snowid_coordinator.ranges;
	o			snowid_coordinator.range_outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	PERFORM snowid_coordinator.noticed(dc, now_ms);
	SELECT * INTO w FROM snowid_coordinator.ranges x
	WHERE x.datacenter = dc AND x.worker_id = id;
	UPDATE snowid_coordinator.ranges x
	SET holder = NULL, for_good = NULL
	WHERE x.datacenter = dc AND x.worker_id = id AND x.holder IS NOT NULL;
	o.outcome := 'ok';
	o.worker_id := id;
	o.end_ms := coalesce(w.fence_ms, 0);
	o.now_ms := now_ms;
	o.holder := w.holder;
	RETURN o;
END
$$;

-- The servers' entry points, each a procedure called with CALL on its
-- own that commits right after its function's work (as the others, see
-- procedures.sql): the outcome in its INOUT parameters, which the caller
-- leaves out.

CREATE OR REPLACE PROCEDURE snowid_coordinator.claim_4(
	datacenter integer, identity text, secret text,
	max integer, range_ms bigint, good boolean, prefer integer,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT end_ms bigint DEFAULT NULL,
	INOUT now_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.range_outcome;
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret,
		ARRAY['claim_4', datacenter::text, identity, max::text, range_ms::text,
			  good::text, prefer::text]);
	COMMIT;
	o := snowid_coordinator.run_claim_4(datacenter, identity, secret, max,
		range_ms, good, prefer);
	COMMIT;
	SELECT o.* INTO outcome, worker_id, end_ms, now_ms, holder;
END
$$;

CREATE OR REPLACE PROCEDURE snowid_coordinator.extend_4(
	datacenter integer, identity text, secret text,
	held_worker_id integer, max integer, held_until_ms bigint,
	range_ms bigint, good boolean,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT end_ms bigint DEFAULT NULL,
	INOUT now_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.range_outcome;
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret,
		ARRAY['extend_4', datacenter::text, identity, held_worker_id::text,
			  max::text, held_until_ms::text, range_ms::text, good::text]);
	COMMIT;
	o := snowid_coordinator.run_extend_4(datacenter, identity, secret,
		held_worker_id, max, held_until_ms, range_ms, good);
	COMMIT;
	SELECT o.* INTO outcome, worker_id, end_ms, now_ms, holder;
END
$$;

CREATE OR REPLACE PROCEDURE snowid_coordinator.release_4(
	datacenter integer, identity text, secret text,
	held_worker_id integer, max integer,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT end_ms bigint DEFAULT NULL,
	INOUT now_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.range_outcome;
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret,
		ARRAY['release_4', datacenter::text, identity, held_worker_id::text,
			  max::text]);
	COMMIT;
	o := snowid_coordinator.run_release_4(datacenter, identity, secret,
		held_worker_id, max);
	COMMIT;
	SELECT o.* INTO outcome, worker_id, end_ms, now_ms, holder;
END
$$;
