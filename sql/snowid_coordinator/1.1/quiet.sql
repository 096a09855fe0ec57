-- -----------------------------------------------------------------------
-- THE FORGETTING RULE (doc/internals.md, "A coordinator that forgets").
-- A coordination database may go back in time: restored from a pg_dump,
-- recovered to a point in time, failed over to a standby that missed the
-- last transactions.  Each datacenter's row records the server it was
-- last written under (written_under: this install of the extension, made
-- by CREATE EXTENSION and never dumped, the cluster's system identifier,
-- its timeline and its postmaster's start), a generation (the time it was made, in ms, later than
-- every generation before it) and a counter that every call of a holder
-- moves up.  Each holder remembers the generation and counter it saw last
-- and sends them with every call.  recall() finds that the database may
-- have forgotten when a datacenter has no such record or one of another
-- server, or when a holder has seen a later generation, or a higher counter
-- of the same one (the database went back to an older state of itself: a
-- copy of its files restored), and then starts a quiet period: until every
-- server that may still hold an id has had time to re-assert it, no worker
-- id is granted but to the server that re-asserts it, and every other
-- grant starts at or above the floor it leaves.  new_datacenter(), an
-- administrator's step, records a brand-new datacenter without a quiet
-- period; end_quiet() ends one.  The install and the datacenter's record
-- are made in tables.sql.
-- -----------------------------------------------------------------------

-- The server this call runs on: the install, the cluster's system
-- identifier, the timeline (a point-in-time recovery or a promotion starts
-- a new one), and when its postmaster started (microseconds since 1970).
-- The start, as Redis' run id: a base backup started without
-- recovery.signal (crash recovery from its backup_label) or a data
-- directory copied back keeps the install, the system identifier and the
-- timeline, and only its start tells it from the server that wrote the
-- claims; so every restart counts as a loss, as every restart of Redis
-- does, which holders that run re-assert at no cost.
CREATE OR REPLACE FUNCTION snowid_coordinator.server_now()
RETURNS text
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT i.install_id || ' ' || s.system_identifier || ' ' ||
		   substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || ' ' ||
		   (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint
	FROM snowid_coordinator.install i, pg_control_system() s
$$;

-- Refuses a quiet period or a clock margin a caller declares (ms; NULL:
-- none) out of bounds: a quiet period from the shortest a server declares
-- (a lease of 100 ms, a coordinator timeout of 1 ms, no drift budget, and
-- a second; a shorter one would let the first call after a loss end the
-- quiet period at once) up to the longest (see check_ms()), a margin up to
-- an hour
CREATE OR REPLACE FUNCTION snowid_coordinator.check_declared(quiet_ms bigint,
												  clock_margin_ms bigint)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF quiet_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_ms('quiet_ms', quiet_ms,
			@SNOWID_QUIET_DECLARED_MIN_MS@,
			@SNOWID_QUIET_DECLARED_MAX_MS@,
			'from the shortest quiet period a snowid server declares, a lease of 100 ms, a coordinator timeout of 1 ms, no drift budget and a second, to the longest, a lease of a day, a coordinator timeout of ten minutes, a drift budget of an hour and a second');
	END IF;
	IF clock_margin_ms < 0 OR clock_margin_ms > @SNOWID_CLOCK_MARGIN_MAX_MS@ THEN
		RAISE EXCEPTION 'clock_margin_ms is out of range: %', clock_margin_ms
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'clock_margin_ms must lie between 0 and @SNOWID_CLOCK_MARGIN_MAX_MS@ ms (an hour).';
	END IF;
END
$$;

-- Refuses a generation or counter a caller says it saw (NULL: none) out
-- of bounds: a counter past 2^53 - 1, or a generation, this server's clock
-- when it was made, more than an hour (the widest clock margin) past its
-- clock now, now_ms, which was never made (see recall()).  Called with the
-- call's other bounds, before its proof (snowid's doc/internals.md, "The
-- order of a call's checks").
CREATE OR REPLACE FUNCTION snowid_coordinator.check_seen(seen_generation bigint,
											  seen_counter bigint,
											  now_ms bigint)
RETURNS void
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT snowid_coordinator.check_ms('seen_generation',
		coalesce(seen_generation, 0), 0,
		now_ms + @SNOWID_CLOCK_MARGIN_MAX_MS@,
		'an hour past the clock of the coordination server: no later generation was made');
	SELECT snowid_coordinator.check_ms('seen_counter', coalesce(seen_counter, 0),
		0, @SNOWID_STATE_MAX@, '2^53 - 1, the largest counter a store keeps')
$$;

-- Whether the database may have forgotten the claims of datacenter dc,
-- whose lock the caller holds, at now_ms: starts or lengthens the quiet
-- period, raises the floor it leaves and, for a call that declares its
-- quiet period (quiet_ms), moves the counter up.  seen_generation and
-- seen_counter are what the caller saw last (NULL: nothing yet).  Returns
-- the datacenter's row as it is now (its quiet period lasts while
-- quiet_until_ms > now_ms).  A quiet period lasts the longest quiet_ms
-- declared, and leaves a floor (forgot_floor_ms) for every grant that is
-- not a re-assertion: its end plus the widest clock_margin_ms declared
-- (how far apart the fleet's clocks may lie) plus its length (which covers
-- the drift budgets the callers declared), as free() would fence an id
-- whose holder may have issued up to then.  What a call does not declare
-- (a call by hand, a caller of another release) counts as a server of the
-- default settings for that call only, which the row does not keep: a
-- quiet period of @SNOWID_QUIET_UNDECLARED_MS@ ms (the default check-in
-- interval, timeout and drift budget, and a second) and clocks
-- @SNOWID_CLOCK_MARGIN_DEFAULT_MS@ ms apart; such a call writes the row only if it
-- changes.
--
-- No call ends or shortens a quiet period that runs: a new one, started
-- while one runs, ends no earlier.  A caller's word alone (it saw a later
-- generation or counter, while the row shows no loss: written under this
-- server) counts every time, as a loss does: it is the only way a database
-- brought back to an older state of itself under the same identity (its
-- files copied back: the same install, system identifier and timeline) is
-- noticed, the second time as the first.  A fleet member repeating the
-- word keeps the datacenter quiet: a denial, one of those the fleet's role
-- has anyway (doc/security.md, "What the fleet's role can deny").  Among
-- honest servers the word comes once: the new state is later than what
-- the caller saw (a generation past it, or, when the bound below holds the
-- generation at the caller's, a counter past the caller's), so that no
-- server that saw at most that state says it again.  A generation later
-- than an hour past this server's clock was never made, whatever the row
-- says (the row may hold one a caller pushed there, which honest servers
-- could then never send back): it is refused, and a generation made here
-- never lies past that bound either, so every server that saw it can send
-- it again, after a loss too.  The same rules as snowid.lua's recall().
CREATE OR REPLACE FUNCTION snowid_coordinator.recall(dc integer, now_ms bigint,
										  quiet_ms bigint,
										  clock_margin_ms bigint,
										  seen_generation bigint,
										  seen_counter bigint)
RETURNS snowid_coordinator.datacenters
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	d			snowid_coordinator.datacenters;
	was			snowid_coordinator.datacenters;
	here		text := snowid_coordinator.server_now();
	len			bigint;
	lost		boolean;
	told_later	boolean;
BEGIN
	SELECT * INTO d FROM snowid_coordinator.datacenters x
	WHERE x.datacenter = dc;
	was := d;
	d.longest_quiet_ms := greatest(d.longest_quiet_ms, coalesce(quiet_ms, 0));
	d.widest_margin_ms := greatest(d.widest_margin_ms,
								   coalesce(clock_margin_ms, 0));
	len := greatest(d.longest_quiet_ms, coalesce(quiet_ms, @SNOWID_QUIET_UNDECLARED_MS@));
	lost := d.written_under IS DISTINCT FROM here;
	told_later := coalesce(seen_generation > d.generation OR
						   (seen_generation = d.generation AND
							seen_counter > d.counter), false);
	IF lost OR told_later THEN
		-- may have forgotten: a new generation, later than any the
		-- caller saw, and a quiet period from now, ending no earlier than
		-- one that runs
		d.written_under := here;
		d.generation := greatest(now_ms, d.generation + 1,
								 coalesce(seen_generation, 0) + 1);
		d.generation := least(d.generation, now_ms + @SNOWID_CLOCK_MARGIN_MAX_MS@);
		-- held at the caller's generation by the bound: past its counter
		d.counter := CASE WHEN d.generation = seen_generation
			THEN coalesce(seen_counter, 0) + 1 ELSE 0 END;
		d.quiet_from_ms := now_ms;
		d.quiet_until_ms := greatest(now_ms + len, was.quiet_until_ms);
	ELSIF d.quiet_until_ms > now_ms AND
		d.quiet_from_ms + len > d.quiet_until_ms THEN
		d.quiet_until_ms := d.quiet_from_ms + len;
	END IF;
	IF d.quiet_until_ms > now_ms THEN
		d.forgot_floor_ms := greatest(d.forgot_floor_ms,
									  d.quiet_until_ms +
									  greatest(d.widest_margin_ms,
											   coalesce(clock_margin_ms, @SNOWID_CLOCK_MARGIN_DEFAULT_MS@)) +
									  (d.quiet_until_ms - d.quiet_from_ms));
	END IF;
	IF quiet_ms IS NOT NULL THEN
		d.counter := d.counter + 1;
	END IF;
	-- never a counter past what a caller may send back: at its bound, the
	-- next generation (nothing was lost: no quiet period), or the bound
	-- while the generation is at its own (a word at both bounds)
	IF d.counter > @SNOWID_STATE_MAX@ THEN
		d.counter := @SNOWID_STATE_MAX@;
		IF d.generation < now_ms + @SNOWID_CLOCK_MARGIN_MAX_MS@ THEN
			d.generation := d.generation + 1;
			d.counter := 0;
		END IF;
	END IF;
	IF quiet_ms IS NOT NULL OR d IS DISTINCT FROM was THEN
		UPDATE snowid_coordinator.datacenters x
		SET written_under = d.written_under, generation = d.generation,
			counter = d.counter, quiet_from_ms = d.quiet_from_ms,
			quiet_until_ms = d.quiet_until_ms,
			forgot_floor_ms = d.forgot_floor_ms,
			longest_quiet_ms = d.longest_quiet_ms,
			widest_margin_ms = d.widest_margin_ms
		WHERE x.datacenter = dc;
	END IF;
	RETURN d;
END
$$;

-- Whether a restart's re-assertion counts as a new claim (the restart
-- rule, doc/internals.md, "A restart after a loss"): a call that says when
-- its last granted call was (confirmed_ms: a restart, or a check-in whose
-- check-in fence was reached; NULL: a check-in of a holder that runs)
-- after a loss that d, the datacenter's row after recall(), notes (a quiet
-- period from quiet_from_ms to quiet_until_ms that no administrator
-- ended).  Only a holder that runs re-asserts after a loss: a server that
-- stopped may have been freed by an administrator and its id granted to
-- another server, a grant the database may have forgotten, and nothing in
-- the row tells it from a server that held its id up to the loss.  So its
-- claim is a new one: refused in the quiet period, granted at or above
-- its floor.  Outside any loss it changes nothing: a restart keeps its id
-- at once.  quiet_ms and clock_margin_ms are not weighed.  The same rule
-- as snowid.lua's stale().
CREATE OR REPLACE FUNCTION snowid_coordinator.stale(d snowid_coordinator.datacenters,
										 confirmed_ms bigint,
										 quiet_ms bigint,
										 clock_margin_ms bigint)
RETURNS boolean
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT confirmed_ms IS NOT NULL
		AND coalesce(d.quiet_until_ms > d.quiet_from_ms, false)
$$;

-- An administrator's step: datacenter dc, of which no server ever claimed
-- a worker id, recorded as brand new: a new generation, without a quiet
-- period or its floor, and without what the fleet declared.  Refused if
-- any worker id of it has a row (a holder or a fence), or if it has a
-- record of the server that wrote its claims (any call of a server writes
-- one, a claim the quiet period refused too: after it the database cannot
-- tell a new datacenter from one that lost its claims, as after a restore
-- that the refused claim then recorded anew).
CREATE OR REPLACE FUNCTION snowid_coordinator.new_datacenter(datacenter integer)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	now_ms		bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	IF EXISTS (SELECT FROM snowid_coordinator.worker_ids x
			   WHERE x.datacenter = dc) OR
		EXISTS (SELECT FROM snowid_coordinator.datacenters x
				WHERE x.datacenter = dc AND x.written_under IS NOT NULL) THEN
		RAISE EXCEPTION 'datacenter % is not new', dc
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'It has worker ids, or a record of the server that wrote its claims: a server called for it already.',
				  HINT = 'Mark a datacenter new only before its first claim.';
	END IF;
	UPDATE snowid_coordinator.datacenters x
	SET written_under = snowid_coordinator.server_now(),
		generation = greatest(now_ms, x.generation + 1), counter = 0,
		quiet_from_ms = now_ms, quiet_until_ms = now_ms, forgot_floor_ms = 0,
		longest_quiet_ms = 0, widest_margin_ms = 0
	WHERE x.datacenter = dc;
	o.outcome := 'ok';
	RETURN o;
END
$$;

-- An administrator's step: the quiet period of datacenter dc and its
-- floor ended now, what the fleet declared (the longest quiet period, the
-- widest clock margin) forgotten, which the servers declare again at their
-- next call, and the database recorded as the writer of its claims, for a
-- database known to have lost nothing (a failover to a synchronous
-- standby).
CREATE OR REPLACE FUNCTION snowid_coordinator.end_quiet(datacenter integer)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	now_ms		bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	UPDATE snowid_coordinator.datacenters x
	SET written_under = snowid_coordinator.server_now(),
		quiet_from_ms = now_ms, quiet_until_ms = now_ms, forgot_floor_ms = 0,
		longest_quiet_ms = 0, widest_margin_ms = 0
	WHERE x.datacenter = dc;
	o.outcome := 'ok';
	RETURN o;
END
$$;

