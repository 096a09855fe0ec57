-- -----------------------------------------------------------------------
-- THE LAYOUT OF A DATACENTER: its highest worker id (max_worker_id), which
-- a grant records.  The servers of a datacenter run one layout (a switch
-- stops them all, snowid's doc/layouts.md): a claim that declares a wider
-- one (max, the highest worker id of its layout), while a holder other than
-- the caller is live, is refused, so that no worker id beyond the layout is
-- granted and a datacenter has no more holders than its layout has ids,
-- which bounds the work of every call.  The layout is a bound of the
-- call's form, checked with the others before the holder's proof (snowid's
-- doc/internals.md, "The order of a call's checks"): refused, the call
-- writes nothing, as in Redis.  The layout a claim declares is recorded
-- when no other holder is live, or, when the datacenter has none (a
-- database of an earlier release), with the highest id another live
-- holder holds.
-- The same rule as snowid.lua's layout_refused().  The column is made in
-- tables.sql.
-- -----------------------------------------------------------------------

-- Refuses a claim of identity in datacenter dc, whose lock the caller
-- holds, at now_ms, declaring hi as the highest worker id (and want as
-- the configured one, -1: none), while hi lies beyond the datacenter's
-- layout and a holder other than identity is live, naming want if it lies
-- beyond, else hi; else returns the layout a grant of the claim records
-- (NULL: the one it has)
CREATE OR REPLACE FUNCTION snowid_coordinator.check_layout(dc integer, identity text,
												hi integer, want integer,
												now_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	recorded	integer;
	top			integer;
BEGIN
	SELECT d.max_worker_id INTO recorded
	FROM snowid_coordinator.datacenters d
	WHERE d.datacenter = dc;
	IF recorded = hi THEN
		RETURN hi;
	END IF;
	-- the highest id another live holder holds (NULL: none)
	SELECT max(x.worker_id) INTO top
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder <> check_layout.identity
	  AND (NOT x.on_lease OR x.lease_expires_ms > now_ms);
	IF hi > recorded AND top IS NOT NULL THEN
		RAISE EXCEPTION 'worker id % lies beyond the worker ids of datacenter %, 0 to %',
				CASE WHEN want > recorded THEN want ELSE hi END, dc, recorded
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Its servers hold worker ids of a layout of 0 to %s, and this one declares 0 to %s: every server of a datacenter runs the same snowid.worker_bits.', recorded, hi),
				  HINT = 'Run this server with the layout of the others; to switch the layout of the datacenter, stop every server of it and free their worker ids first (doc/layouts.md).';
	END IF;
	RETURN CASE WHEN top IS NULL THEN hi
				WHEN recorded IS NULL THEN greatest(hi, top) END;
END
$$;

-- Records hi as the highest worker id of datacenter dc (what
-- check_layout() returned, at a grant; NULL: none)
CREATE OR REPLACE FUNCTION snowid_coordinator.record_layout(dc integer, hi integer)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	UPDATE snowid_coordinator.datacenters d
	SET max_worker_id = hi
	WHERE d.datacenter = dc AND hi IS NOT NULL
	  AND d.max_worker_id IS DISTINCT FROM hi
$$;

-- -----------------------------------------------------------------------
-- The functions the snowid servers call
-- -----------------------------------------------------------------------

-- The claim, for good.
--
-- identity claims worker id want (-1: none configured) of datacenter, in
-- 0..max (the highest worker id of its layout), preferring prefer (-1:
-- none; the id it held last) when it holds none; usable_ms is the latest
-- fence it can start above now (its clock plus its drift budget).
--
-- An identity keeps the id it holds.  Without one it takes the configured
-- id if free; with none configured, the preferred id if free, or else the
-- lowest free id in 0..max.  Free is: no holder, or a lease that has run
-- out (whose fence covers all its holder issued).  An id fenced past
-- usable_ms is not taken: the choice goes on to the next free id, and a
-- configured or kept id is refused as fenced.  A server that already holds
-- its id causes no write.  The ids the identity holds besides the one it
-- keeps (beyond max after a layout change) are retired, fenced at
-- usable_ms + 1: a server may have issued up to usable_ms, that millisecond
-- included (snowid servers send the later of their clock plus drift budget
-- and their generator, which after a restart may lie ahead of both).
--
-- For the forgetting rule (see recall()), optionally: quiet_ms, how long a
-- quiet period must last for the caller's fleet; reassert, whether want or
-- prefer is the id the caller holds or its cache names; the generation and
-- counter it saw last; clock_margin_ms, how far apart the fleet's
-- clocks may lie (snowid.clock_margin); and, for a restart's re-assertion
-- only (a check-in sends none), confirmed_ms: when the caller sent its last
-- granted call, Unix ms by its clock (0: it does not know).  After a
-- loss, a restart is no re-assertion (see stale()).
--
-- ok: worker_id, and floor_ms, its fence (0 if none): the server's ids
-- start at or above it.  Refusals: all_held, fenced, quiet (until
-- fence_ms), conflict (holder holds the configured id, worker_id),
-- holds_other (worker_id is this identity's).  A configured id past max is
-- an error (a caller's mistake).
CREATE OR REPLACE FUNCTION snowid_coordinator.run_claim(datacenter integer,
											 identity text, secret text,
											 want integer, max integer,
											 prefer integer, usable_ms bigint,
											 quiet_ms bigint DEFAULT NULL,
											 reassert boolean DEFAULT false,
											 seen_generation bigint DEFAULT NULL,
											 seen_counter bigint DEFAULT NULL,
											 clock_margin_ms bigint DEFAULT NULL,
											 confirmed_ms bigint DEFAULT NULL)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	-- what its proof is for (the procedure's arguments, see prove())
	call		text := snowid_coordinator.call_text(
		ARRAY['claim', datacenter::text, identity, want::text, max::text,
			  prefer::text, usable_ms::text, quiet_ms::text, reassert::text,
			  seen_generation::text, seen_counter::text,
			  clock_margin_ms::text, confirmed_ms::text]);
	hi			integer := max;
	usable		bigint := usable_ms;
	now_ms		bigint;
	quiet_until bigint;
	st			snowid_coordinator.datacenters;
	keep		integer;
	reasserts	boolean;
	layout		integer;
	w			snowid_coordinator.worker_ids;
	f			bigint;
	o			snowid_coordinator.outcome;
	-- the key it sent under its pad (check_proof())
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('claim');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('want', want, -1);
	PERFORM snowid_coordinator.check_id('max', hi, 0);
	PERFORM snowid_coordinator.check_id('prefer', prefer, -1);
	PERFORM snowid_coordinator.check_ms('usable_ms', usable, 0);
	IF want > hi THEN
		RAISE EXCEPTION 'worker id % exceeds the highest worker id %', want, hi
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The configured worker id must lie between 0 and max.';
	END IF;
	PERFORM snowid_coordinator.check_given('reassert', reassert);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	-- the bounds against this server's clock, with the others before the
	-- proof
	PERFORM snowid_coordinator.check_ahead('usable_ms', usable, now_ms);
	PERFORM snowid_coordinator.check_seen(seen_generation, seen_counter, now_ms);
	-- a restart's last granted call, by its clock: no later than this
	-- server's clock and the margin it declares
	IF confirmed_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_ms('confirmed_ms', confirmed_ms, 0,
			now_ms + coalesce(clock_margin_ms, @SNOWID_CLOCK_MARGIN_DEFAULT_MS@),
			'the clock of the coordination server and the clock margin declared');
	END IF;
	layout := snowid_coordinator.check_layout(dc, me, hi, want, now_ms);
	SELECT * INTO o.outcome, o.holder, sent_key
	FROM snowid_coordinator.check_proof(dc, me, secret, call, hi);
	IF o.outcome IS NOT NULL THEN
		RETURN o;
	END IF;
	st := snowid_coordinator.recall(dc, now_ms, quiet_ms, clock_margin_ms,
									seen_generation, seen_counter);
	-- after a loss, a restart re-asserts nothing: a new claim (see stale())
	IF reassert AND snowid_coordinator.stale(st, confirmed_ms, quiet_ms,
											 clock_margin_ms) THEN
		reassert := false;
	END IF;
	IF st.quiet_until_ms > now_ms THEN
		-- a refusal names when a grant can be made: past the floor too
		quiet_until := greatest(st.quiet_until_ms, st.forgot_floor_ms);
	END IF;
	IF quiet_ms IS NOT NULL THEN
		o.generation := st.generation;
		o.counter := st.counter;
	END IF;

	-- the id this identity holds for good in 0..max: want if it is one,
	-- else the lowest
	SELECT x.worker_id INTO keep
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
	  AND x.worker_id <= hi
	ORDER BY x.worker_id = want DESC, x.worker_id
	LIMIT 1;

	IF want >= 0 THEN
		IF keep IS NOT NULL AND keep <> want THEN
			o.outcome := 'holds_other';
			o.worker_id := keep;
			RETURN o;
		END IF;
		IF keep IS NULL THEN
			SELECT * INTO w FROM snowid_coordinator.worker_ids x
			WHERE x.datacenter = dc AND x.worker_id = want;
			IF w.holder IS NOT NULL AND
				(NOT w.on_lease OR w.lease_expires_ms > now_ms) AND
				quiet_until IS NOT NULL AND NOT reassert THEN
				-- in a quiet period, a claim that is not a re-assertion is
				-- refused as quiet first: what the database holds may be
				-- what it forgot
				o.outcome := 'quiet';
				o.fence_ms := quiet_until;
				RETURN o;
			END IF;
			IF w.holder IS NOT NULL AND
				(NOT w.on_lease OR w.lease_expires_ms > now_ms) THEN
				o.outcome := 'conflict';
				o.worker_id := want;
				o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
				RETURN o;
			END IF;
		END IF;
		keep := want;
	ELSIF keep IS NULL THEN
		keep := snowid_coordinator.pick(dc, hi, usable, prefer, NULL, now_ms);
		IF keep IS NULL THEN
			o.outcome := 'all_held';
			RETURN o;
		END IF;
	END IF;

	-- a re-assertion names its id: the check-in of the id the server
	-- issues with, or a restart's of the id its cache file names.  An id
	-- the database holds for the identity but that it does not name is not
	-- one: the database may have gone back to a backup taken before the
	-- server moved that id onto a lease and gave it back (its cache file
	-- went then), and another server may issue with it now
	reasserts := reassert AND keep IN (want, prefer);
	-- in a quiet period, only the id this identity re-asserts
	IF quiet_until IS NOT NULL AND NOT reasserts THEN
		o.outcome := 'quiet';
		o.fence_ms := quiet_until;
		RETURN o;
	END IF;

	f := snowid_coordinator.fence_of(dc, keep);
	-- a grant that is not a re-assertion starts past the last quiet period
	IF NOT reasserts THEN
		f := greatest(f, st.forgot_floor_ms);
	END IF;
	IF f > usable THEN
		-- fenced, or held back by the floor of a quiet period: refused as
		-- quiet until then
		o.outcome := CASE WHEN f > snowid_coordinator.fence_of(dc, keep)
						  THEN 'quiet' ELSE 'fenced' END;
		o.worker_id := CASE WHEN o.outcome = 'fenced' THEN keep END;
		o.fence_ms := f;
		RETURN o;
	END IF;

	-- the other ids this identity holds for good (one beyond max after a
	-- layout change, a duplicate written by hand) retired, fenced at what
	-- it may have issued with them
	PERFORM snowid_coordinator.retire(dc, x.worker_id, usable + 1)
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
	  AND x.worker_id <> keep;

	-- taken, unless held already: from no one, or from a lease run out
	-- (whose fence stays)
	INSERT INTO snowid_coordinator.worker_ids AS x (datacenter, worker_id, holder)
	VALUES (dc, keep, me)
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET holder = excluded.holder,
		on_lease = false,
		lease_expires_ms = NULL,
		lease_floor_ms = NULL,
		lease_token = NULL
	WHERE x.holder IS DISTINCT FROM excluded.holder OR x.on_lease;
	PERFORM snowid_coordinator.record_layout(dc, layout);
	PERFORM snowid_coordinator.register_holder(dc, me, secret, sent_key);

	o.outcome := 'ok';
	o.worker_id := keep;
	o.floor_ms := f;
	RETURN o;
END
$$;

