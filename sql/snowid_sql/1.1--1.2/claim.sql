-- -------------------------------------------------------------------------
-- The claim
-- -------------------------------------------------------------------------

-- A claim re-asserted since the server started.  The C edition re-asserts
-- its worker id when it starts, before its first id; a database of the
-- SQL edition kept its claim in its tables, and issued with it as soon as
-- its server was back, until the next snowid_claim(): a coordination
-- database that forgot while the server was down had meanwhile given the
-- worker id to another server, after the quiet period, and both issued
-- with it (the attack on issue 55: 312 ids twice in 0.8 s).  Every claim
-- granted sets the sequence snowid_sql_claimed_run to this run of its
-- server (see snowid_sql_claim_run()): like snowid_claimed, a sequence,
-- which no rollback undoes.  Unless it holds this run, the claim is stale: no
-- writer moves the generator with it (snowid_sql_move()), and the next
-- call re-asserts it (snowid_sql_claim_first()) where its role may claim,
-- as snowid_claim() does.  The first build noted the start in a row of
-- snowid_coordinator_state, which a rollback undid while snowid_claimed
-- kept the claim (the first id taken in a transaction that rolled back,
-- or cancelled after the grant), and a database without the row (one of
-- a coordination database that keeps no state record, or such a claim)
-- was never held back: stopped before its next snowid_claim(), it issued
-- at its restart with the worker id another server had taken meanwhile
-- (the attack on 1.2: 7 ids of 760 twice; test 140).
--
-- The run: a hash of the server's start (pg_postmaster_start_time(), in
-- microseconds), which a restart, a standby's promotion (the standby's
-- own start) and a copy change, and of the last reset of the cumulative
-- statistics (the background writer's), which crash recovery makes (a
-- crash restart keeps the postmaster, and its start; PostgreSQL resets
-- every statistic then, and restores them after a clean shutdown).  A
-- reset by hand (pg_stat_reset_shared()) makes the claim stale too: it is
-- re-asserted.  The sequence is logged.  The second build kept the start
-- in an UNLOGGED sequence, which crash recovery and a promotion reset
-- from its init fork; but a standby replays the page of that fork into
-- shared buffers alone, and a promotion copies the fork's file: where no
-- restartpoint or eviction had written the page yet (a server with
-- buffers to spare, promoted soon after replaying the creation, by
-- CREATE EXTENSION or the update), the promoted server's sequence was a
-- page of zeros, and its first claim check failed an assertion, a crash
-- (test 142: every round on 17beta2, none on 18.6; without assertions,
-- "bad magic number in sequence" at every check).
CREATE SEQUENCE @extschema@.snowid_sql_claimed_run AS bigint
	MINVALUE -9223372036854775808 START WITH 0 NO CYCLE;
REVOKE ALL ON @extschema@.snowid_sql_claimed_run FROM PUBLIC;

-- This run of the server (see above).  No SET clause, so that the common
-- path's call (snowid_sql_next()) is inlined: the body, BEGIN ATOMIC, was
-- bound to its functions when it was made, whatever the caller's
-- search_path.
CREATE FUNCTION @extschema@.snowid_sql_claim_run()
RETURNS bigint
LANGUAGE sql STABLE
BEGIN ATOMIC
	-- the reset's microseconds hashed with the start's as the seed
	SELECT pg_catalog.hashint8extended(
		(extract(epoch FROM pg_catalog.pg_stat_get_bgwriter_stat_reset_time()) * 1000000)::bigint,
		(extract(epoch FROM pg_catalog.pg_postmaster_start_time()) * 1000000)::bigint);
END;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_claim_run() FROM PUBLIC;

-- A claim held at the update (1.0 and 1.1 re-asserted at no start) is
-- taken as this run's: ids go on without a claim (a first id of a role
-- that may not claim would fail until the owner's snowid_claim()), and it
-- is re-asserted from the next start on.
SELECT setval('@extschema@.snowid_sql_claimed_run', @extschema@.snowid_sql_claim_run(), true)
FROM @extschema@.snowid_claimed s
WHERE s.is_called AND s.last_value > 0;

-- Whether the claim of this database was granted under another run of
-- its server than this one: before a restart, a crash restart or a
-- promotion, or on another server (see above); for any caller.  Never on
-- a standby, which issues no id.  The statistics read as they are
-- (stats_fetch_consistency = none), not from the snapshot a transaction
-- keeps to its end (cache, the default; this drops that snapshot): a
-- transaction that took an id before a reset of the statistics otherwise
-- found the claim stale after the scheduled re-assertion, re-asserted it
-- and noted it under the old run, holding the row 'claim' to its end, and
-- every other session found it stale again and waited for that row (the
-- attack on 1.2: 70 s, then an error, while the transaction lasted; test
-- 145).  The common path's check (snowid_sql_next(), inlined, which a SET
-- clause would prevent) reads the snapshot: where it finds the claim
-- stale, the table's path checks here.
CREATE FUNCTION @extschema@.snowid_sql_claim_stale()
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET stats_fetch_consistency = none
BEGIN ATOMIC
	SELECT CASE WHEN pg_is_in_recovery() THEN false
		ELSE pg_sequence_last_value('@extschema@.snowid_sql_claimed_run')
			IS DISTINCT FROM @extschema@.snowid_sql_claim_run() END;
END;

-- The claim (see 1.1), whose re-assertion after its server started sends
-- confirmed_ms, as the C edition's restarts do (the confirmed re-assertion
-- rule, doc/internals.md): when this database sent its last claim that
-- was granted, kept in snowid_coordinator_state.  Without it, after two
-- losses, a database stopped before the first and restarted after the
-- coordination database was restored from a backup that still named its
-- claim was granted the worker id another server had taken between them,
-- and both issued with it (the attack on 1.2: 2,622 ids twice in 0.8 s).
-- Its scheduled claims, check-ins, send none.
--
-- The time kept is the earlier of this server's clock and the
-- coordination server's, both read before the call (the latter over the
-- claim's connection, one statement more): never later than the grant by
-- the clock the rule compares it with, however far this server's clock
-- ran ahead then, and, as the C edition's, never later than this server's
-- clock either.  By this server's clock alone, a clock stepped forward
-- past the margin while a claim was granted, then put right, left the
-- time that far ahead, and a database stopped with it passed the rule at
-- a restart after a second loss, and was granted the worker id another
-- server had taken between the losses (issue 55's third attack, closed in
-- the C edition by its monotonic clock, which PL/pgSQL has not; test
-- 138).
ALTER TABLE @extschema@.snowid_coordinator_state ADD COLUMN confirmed_ms bigint
	CHECK (confirmed_ms BETWEEN 0 AND 9007199254740991);

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claim_now(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	coord @extschema@.snowid_coordination;
	want integer;
	prefer integer;
	-- the worker id claimed for this configuration: re-asserted
	held integer := c.worker_id;
	hi integer := (1 << c.worker_bits) - 1;
	usable bigint;
	quiet_ms bigint;
	seen_generation bigint;
	seen_counter bigint;
	has_state boolean;
	forgot boolean := false;
	-- a restart's re-assertion: when this database sent its last claim
	-- that was granted, Unix ms (0: not known)
	confirmed bigint;
	-- when this claim is sent: the earlier of this server's clock and the
	-- coordination server's (its reply, text until checked)
	sent_ms bigint;
	coord_clock text;
	coord_ms bigint;
	now_ms bigint;
	dblink_schema name;
	name text;
	call text;
	r record;
	reason text;
	step text;
	left_open boolean;
	by_u boolean;
	state text;
	msg text;
	detail text;
BEGIN
	IF NOT c.claim_worker_id THEN
		RAISE EXCEPTION 'snowid_sql does not claim its worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'claim_worker_id of snowid_config is off.',
				  HINT = 'As the owner of the extension: UPDATE snowid_config SET claim_worker_id = true, after filling snowid_coordination (doc/managed.md).';
	END IF;
	SELECT n.nspname INTO dblink_schema
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'dblink';
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql claims its worker id through dblink, which is not installed in this database'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'claim_worker_id of snowid_config is on.',
				  HINT = 'A superuser (on a managed service, its administrator role) runs CREATE EXTENSION dblink in this database; or set worker_id in snowid_config and claim_worker_id off.';
	END IF;
	SELECT * INTO coord FROM @extschema@.snowid_coordination;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no coordination database to claim a worker id from'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'claim_worker_id of snowid_config is on, and snowid_coordination holds no row.',
				  HINT = 'As the owner of the extension: INSERT INTO snowid_coordination (conninfo, password) VALUES (''host=... dbname=... user=...'', ''...'') (doc/managed.md).';
	END IF;
	msg := @extschema@.snowid_sql_coordination_problem(coord);
	IF msg IS NOT NULL THEN
		RAISE EXCEPTION 'invalid coordination database in snowid_coordination'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = msg;
	END IF;

	SELECT format('dc=%s %s', c.datacenter_id, h.name) INTO STRICT name FROM @extschema@.snowid_holder h;
	SELECT x.worker_id INTO STRICT want FROM @extschema@.snowid_config x;
	want := coalesce(held, want, -1);
	-- the worker id kept from an earlier claim of this datacenter
	SELECT ((s.last_value - 1) & 16777215)::integer INTO prefer
	FROM @extschema@.snowid_claimed s
	WHERE s.is_called AND s.last_value > 0 AND (s.last_value - 1) >> 29 = c.datacenter_id
	  AND ((s.last_value - 1) & 16777215) <= hi;
	prefer := coalesce(prefer, -1);
	usable := greatest(@extschema@.snowid_sql_unix_ms(clock_timestamp()) + c.max_drift_ms,
					   @extschema@.snowid_sql_unix_ms((@extschema@.snowid_status()).high_water_time));
	quiet_ms := coord.checkin_interval_ms::bigint + coord.timeout_ms + c.max_drift_ms + 1000;
	SELECT s.generation, s.counter INTO seen_generation, seen_counter
	FROM @extschema@.snowid_coordinator_state s
	WHERE s.datacenter_id = c.datacenter_id;
	seen_generation := coalesce(seen_generation, 0);
	IF held IS NOT NULL AND @extschema@.snowid_sql_claim_stale() THEN
		SELECT coalesce(s.confirmed_ms, 0) INTO confirmed
		FROM @extschema@.snowid_coordinator_state s WHERE s.datacenter_id = c.datacenter_id;
		confirmed := coalesce(confirmed, 0);
	END IF;
	seen_counter := coalesce(seen_counter, 0);
	-- the secret is read by the coordination server from its session's
	-- options (snowid_sql_connstr()), never written here; the arguments
	-- of the forgetting rule by name
	call := format('CALL snowid_coordinator.claim(%s, %L, pg_catalog.current_setting(%L), %s, %s, %s, %s, quiet_ms => %s, reassert => %s, seen_generation => %s, seen_counter => %s, clock_margin_ms => %s%s)',
				   c.datacenter_id, name, 'snowid_holder.secret', want, hi, prefer, usable,
				   quiet_ms, CASE WHEN held IS NOT NULL THEN 'true' ELSE 'false' END,
				   seen_generation, seen_counter, coord.clock_margin_ms,
				   CASE WHEN confirmed IS NOT NULL THEN ', confirmed_ms => ' || confirmed ELSE '' END);
	by_u := has_function_privilege(format('%I.dblink_connect_u(text, text)', dblink_schema), 'EXECUTE');

	BEGIN
		-- a connection of that name left in this session is closed first
		step := 'connect';
		EXECUTE format('SELECT %L = ANY (%I.dblink_get_connections())', 'snowid_sql_claim', dblink_schema)
			INTO left_open;
		IF left_open THEN
			EXECUTE format('SELECT %I.dblink_disconnect(%L)', dblink_schema, 'snowid_sql_claim');
		END IF;
		EXECUTE format('SELECT %I.%I(%L, @extschema@.snowid_sql_connstr())', dblink_schema,
					   CASE WHEN by_u THEN 'dblink_connect_u' ELSE 'dblink_connect' END, 'snowid_sql_claim');
		-- the coordination server's clock, over the connection of the
		-- call, then checked: input from outside, as the answer below
		step := 'clock';
		sent_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp());
		EXECUTE format('SELECT t.ms FROM %I.dblink(%L, %L) AS t(ms text)', dblink_schema, 'snowid_sql_claim',
					   'SELECT pg_catalog.floor(pg_catalog.date_part(''epoch'', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8')
			INTO coord_clock;
		step := 'check';
		IF coord_clock ~ '^[0-9]{1,16}$' THEN
			coord_ms := coord_clock::bigint;
		END IF;
		IF coord_ms IS NULL OR coord_ms NOT BETWEEN 1 AND sent_ms + 176400000 THEN
			RAISE EXCEPTION 'the coordination database gave a time snowid_sql cannot use'
				USING ERRCODE = 'protocol_violation',
					  DETAIL = format('Its clock read %s Unix ms, where snowid_sql takes from 1 ms to two days and an hour past this server''s clock, %s ms.',
									  CASE WHEN coord_clock ~ '^-?[0-9]{1,20}$' THEN coord_clock
										   WHEN coord_clock IS NULL THEN 'NULL' ELSE 'no number' END,
									  sent_ms),
					  HINT = 'Check the clocks of both servers, and that snowid_coordination names a coordination database; no claim was sent.';
		END IF;
		sent_ms := least(sent_ms, coord_ms);
		step := 'call';
		EXECUTE format('SELECT t.outcome, t.worker_id, t.floor_ms, t.fence_ms, t.lease_ms, t.holder, t.generation, t.counter FROM %I.dblink(%L, %L) AS t(outcome text, worker_id integer, floor_ms bigint, fence_ms bigint, lease_ms bigint, holder text, generation bigint, counter bigint)',
					   dblink_schema, 'snowid_sql_claim', call) INTO r;
		step := 'disconnect';
		EXECUTE format('SELECT %I.dblink_disconnect(%L)', dblink_schema, 'snowid_sql_claim');
	EXCEPTION WHEN OTHERS OR query_canceled THEN
		GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
		-- libpq's reasons span lines: one sentence each
		msg := rtrim(regexp_replace(msg, '\s*\n\s*', ' ', 'g'), '. ');
		detail := nullif(rtrim(regexp_replace(detail, '\s*\n\s*', ' ', 'g'), '. '), '');
		IF step <> 'connect' THEN
			BEGIN
				EXECUTE format('SELECT %I.dblink_disconnect(%L)', dblink_schema, 'snowid_sql_claim');
			EXCEPTION WHEN OTHERS THEN
				NULL;
			END;
		END IF;
		IF state = '57014' OR step = 'check' THEN
			RAISE;
		ELSIF state = '42501' AND msg LIKE 'wrong holder secret%' THEN
			RAISE EXCEPTION 'the coordination database refused this database''s holder secret'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = format('The coordination database answered: %s (SQLSTATE %s).', msg, state),
					  HINT = 'Another secret was registered for this database''s holder name: another server claims under its name, or snowid_holder was changed.  Once sure that no other server uses that name, an administrator of the coordination database calls snowid_coordinator.reset_secret() for it (doc/coordinator.md).';
		ELSIF step = 'connect' THEN
			RAISE EXCEPTION 'snowid_sql could not connect to the coordination database'
				USING ERRCODE = CASE WHEN state LIKE '08%' OR state = '2F003' THEN state ELSE 'sqlclient_unable_to_establish_sqlconnection' END,
					  DETAIL = format('dblink: %s%s.', msg, ': ' || detail),
					  HINT = CASE WHEN state = '2F003'
						THEN 'dblink connects a role that is no superuser only with a password the coordination server asks for: give it in snowid_coordination.password, or have a superuser GRANT EXECUTE ON FUNCTION dblink_connect_u(text, text) to the owner of the extension (doc/managed.md).'
						ELSE 'Check snowid_coordination (host, port, dbname, user, password) and that the coordination server is up; no id is issued until a claim succeeds.' END;
		ELSIF state LIKE '08%' THEN
			RAISE EXCEPTION 'snowid_sql lost its connection to the coordination database during the claim'
				USING ERRCODE = state,
					  DETAIL = format('dblink: %s.', msg),
					  HINT = 'The next call claims again; no id is issued until a claim succeeds.';
		ELSE
			RAISE EXCEPTION 'the claim of a worker id from the coordination database failed'
				USING ERRCODE = state,
					  DETAIL = format('The coordination database answered: %s.', msg),
					  HINT = 'Check that the role of snowid_coordination may CALL snowid_coordinator.claim() (doc/coordinator.md, "Roles").';
		END IF;
	END;

	-- the answer, checked before anything of it is used: no number
	-- negative, a holder fit for a message, each outcome with what only it
	-- names, a quiet period no longer than any lasts past the latest time a
	-- snowid server can have written (a day ahead of this clock, plus the
	-- longest drift budget and lease, plus a day), the state record in the
	-- range of the C edition's
	now_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp());
	IF r.outcome IS NULL OR r.outcome NOT IN ('ok', 'all_held', 'fenced', 'conflict', 'holds_other', 'quiet')
		OR coalesce(least(r.worker_id, r.floor_ms, r.fence_ms, r.lease_ms, r.generation, r.counter) < 0, false)
		OR coalesce(greatest(r.generation, r.counter) > 9007199254740991, false)
		OR coalesce(octet_length(r.holder) > 518 OR r.holder ~ '[\x01-\x1f\x7f]', false)
		OR (r.outcome = 'ok' AND (r.worker_id IS NULL OR r.worker_id NOT BETWEEN 0 AND hi
								  OR (want >= 0 AND r.worker_id <> want)
								  OR r.floor_ms IS NULL OR r.floor_ms NOT BETWEEN 0 AND usable))
		OR (r.outcome = 'fenced' AND (r.worker_id IS NULL OR r.worker_id NOT BETWEEN 0 AND hi
									  OR r.fence_ms IS NULL OR r.fence_ms <= usable))
		OR (r.outcome = 'conflict' AND (want < 0 OR r.worker_id IS DISTINCT FROM want
										OR r.holder IS NULL))
		OR (r.outcome = 'holds_other' AND (want < 0 OR r.worker_id IS NULL
										   OR r.worker_id NOT BETWEEN 0 AND 16777215
										   OR r.worker_id = want))
		OR (r.outcome = 'quiet' AND (r.fence_ms IS NULL OR r.fence_ms NOT BETWEEN 1 AND now_ms + 262800000)) THEN
		RAISE EXCEPTION 'the coordination database gave an answer snowid_sql cannot use'
			USING ERRCODE = 'protocol_violation',
				  DETAIL = format('It answered outcome %s, worker id %s, floor %s, fence %s, generation %s and counter %s to a claim of %s in 0..%s starting at most at %s.',
								  coalesce(r.outcome, 'NULL'), coalesce(r.worker_id::text, 'NULL'),
								  coalesce(r.floor_ms::text, 'NULL'), coalesce(r.fence_ms::text, 'NULL'),
								  coalesce(r.generation::text, 'NULL'), coalesce(r.counter::text, 'NULL'),
								  CASE WHEN want >= 0 THEN 'worker id ' || want ELSE 'any worker id' END, hi, usable);
	END IF;
	IF r.outcome = 'quiet' THEN
		-- nothing is dropped: the id held, if any, is this holder's still
		RAISE EXCEPTION 'snowid_sql cannot claim a worker id of datacenter % until %',
			c.datacenter_id, @extschema@.snowid_sql_timestamptz(r.fence_ms)
			USING ERRCODE = 'object_in_use',
				  DETAIL = format('The coordination database may have forgotten its claims (restored from an older backup, failed over to a copy that missed writes, or emptied), and grants worker ids only to servers re-asserting theirs until %s.',
								  @extschema@.snowid_sql_timestamptz(r.fence_ms)),
				  HINT = 'Try again then; no id was issued.  Servers already issuing ids go on.';
	END IF;
	IF r.outcome <> 'ok' THEN
		-- whatever was kept is not this holder's to use any more
		PERFORM setval('@extschema@.snowid_claimed', 0, true);
		reason := CASE r.outcome
			WHEN 'all_held' THEN format('Every worker id from 0 to %s is held.', hi)
			WHEN 'fenced' THEN format('Worker id %s is fenced until %s, past this server''s clock plus max_drift_ms.',
									 r.worker_id, @extschema@.snowid_sql_timestamptz(r.fence_ms))
			WHEN 'conflict' THEN format('Worker id %s is held by %s.', r.worker_id, r.holder)
			ELSE format('This holder (%s) holds worker id %s, not %s.', name, r.worker_id, want) END;
		IF held IS NOT NULL THEN
			-- a re-assertion refused: the id was given away meanwhile
			RAISE EXCEPTION 'snowid_sql stopped issuing ids with worker id % of datacenter %', held, c.datacenter_id
				USING ERRCODE = 'object_in_use',
					  DETAIL = format('The coordination database refused this database''s claim on it: %s  It forgot the claim, and the id may have been given to another server meanwhile.', reason),
					  HINT = format('The next call claims another worker id; the ids issued so far lie below %s.',
									(@extschema@.snowid_status()).high_water_time);
		END IF;
		RAISE EXCEPTION 'snowid_sql could not claim a worker id of datacenter %', c.datacenter_id
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = reason,
				  HINT = CASE r.outcome
					WHEN 'fenced' THEN 'Try again after then (no id was issued), or raise max_drift_ms.'
					WHEN 'holds_other' THEN 'Set worker_id of snowid_config to it, or NULL; or have an administrator free it (doc/coordinator.md).'
					ELSE 'Have an administrator free the worker id of a server that is gone (doc/coordinator.md), or widen worker_bits before the first id.' END;
	END IF;

	-- the floor first, then the claim: on disk in that order
	PERFORM @extschema@.snowid_sql_raise_floor(r.floor_ms);
	PERFORM setval('@extschema@.snowid_claimed',
				   1 + ((c.datacenter_id::bigint << 29) | (c.worker_bits::bigint << 24) | r.worker_id), true);

	-- the state record, kept if later than the one seen: a new generation
	-- means the coordination database had forgotten, and this claim
	-- re-asserted into it
	has_state := coalesce(r.generation > 0 AND r.counter >= 0, false);
	IF has_state AND (r.generation > seen_generation
					  OR (r.generation = seen_generation AND r.counter > seen_counter)) THEN
		forgot := seen_generation > 0 AND r.generation <> seen_generation;
		INSERT INTO @extschema@.snowid_coordinator_state AS s
			(datacenter_id, generation, counter, answered_at, forgot_at, reassertions, confirmed_ms)
		VALUES (c.datacenter_id, r.generation, r.counter, clock_timestamp(),
				CASE WHEN forgot THEN clock_timestamp() END, forgot::integer, sent_ms)
		ON CONFLICT (singleton) DO UPDATE
		SET generation = excluded.generation, counter = excluded.counter,
			answered_at = excluded.answered_at, confirmed_ms = excluded.confirmed_ms,
			forgot_at = CASE WHEN forgot THEN excluded.forgot_at
				WHEN s.datacenter_id = excluded.datacenter_id THEN s.forgot_at END,
			reassertions = CASE WHEN s.datacenter_id = excluded.datacenter_id
				THEN s.reassertions ELSE 0 END + excluded.reassertions,
			datacenter_id = excluded.datacenter_id;
	ELSE
		UPDATE @extschema@.snowid_coordinator_state s SET answered_at = clock_timestamp(), confirmed_ms = sent_ms
		WHERE s.datacenter_id = c.datacenter_id;
	END IF;

	datacenter_id := c.datacenter_id;
	worker_id := r.worker_id;
	floor_time := @extschema@.snowid_sql_timestamptz(r.floor_ms);
	holder := name;
	IF forgot THEN
		RAISE LOG 'snowid_sql re-asserted worker id % of datacenter % as "%" in a coordination database that had forgotten claims',
			r.worker_id, c.datacenter_id, name;
	ELSIF prefer <> r.worker_id THEN
		RAISE LOG 'snowid_sql claimed worker id % of datacenter % from the coordination database as "%"',
			r.worker_id, c.datacenter_id, name;
	END IF;
END
$$;

-- A claim granted: noted under this run of the server, outside the
-- transaction, the statistics read as they are (see
-- snowid_sql_claim_stale())
CREATE FUNCTION @extschema@.snowid_sql_claim_noted()
RETURNS void
LANGUAGE sql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET stats_fetch_consistency = none
BEGIN ATOMIC
	SELECT setval('@extschema@.snowid_sql_claimed_run', @extschema@.snowid_sql_claim_run(), true);
END;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_claim_noted() FROM PUBLIC;

-- Before a claim, as the owner: a holder made on another server (this
-- database is a copy) is replaced by one of this server's, with nothing
-- claimed
CREATE FUNCTION @extschema@.snowid_sql_holder_renew()
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	h record;
BEGIN
	IF NOT @extschema@.snowid_sql_holder_here() THEN
		h := @extschema@.snowid_sql_new_holder();
		UPDATE @extschema@.snowid_holder
		SET name = h.name, secret = h.secret, server = @extschema@.snowid_sql_here();
		PERFORM setval('@extschema@.snowid_claimed', 0, true);
		RAISE LOG 'snowid_sql made a new holder "%": its holder was made on another server', h.name;
	END IF;
	IF (@extschema@.snowid_sql_fixed()).server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
		PERFORM @extschema@.snowid_sql_refix();
	END IF;
END
$$;

-- Whether the session's role may claim: one whose privileges the owner of
-- the extension has (the claim runs functions of the owner's, which the
-- owner may alter: ALTER FUNCTION ... SECURITY INVOKER, SET, or a body
-- replaced, and which would then run as that role), and so a superuser
-- only where the owner is one.  Raises with the hint given otherwise.
-- The extension's own: it runs none of the owner's code.
CREATE FUNCTION @extschema@.snowid_sql_claim_caller(hint text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF NOT pg_has_role((SELECT p.proowner FROM pg_proc p
						WHERE p.oid = '@extschema@.snowid_sql_claim_once()'::regprocedure),
					   (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user), 'USAGE') THEN
		IF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
			RAISE EXCEPTION 'snowid_sql does not claim its worker id in a superuser''s session'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The claim runs functions that the owner of the extension, who is no superuser, may change.',
					  HINT = hint;
		END IF;
		PERFORM @extschema@.snowid_sql_not_owner();
	END IF;
END
$$;

-- snowid_claim() of 1.0 and 1.1 was the owner's, which may replace it:
-- a superuser's call then ran the owner's code as the superuser.  It
-- goes on as the owner's snowid_sql_claim_owned(), and snowid_claim() is
-- the extension's, calling it for a role that may claim.
ALTER FUNCTION @extschema@.snowid_claim() RENAME TO snowid_sql_claim_owned;

-- One claim at a time in a database: the row 'claim' of snowid_locks,
-- held to the end of the transaction
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claim_owned(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
SET client_min_messages = error
AS $$
DECLARE
	r record;
BEGIN
	PERFORM FROM @extschema@.snowid_locks l WHERE l.name = 'claim' FOR UPDATE;
	PERFORM @extschema@.snowid_sql_holder_renew();
	r := @extschema@.snowid_sql_claim_now();
	PERFORM @extschema@.snowid_sql_claim_noted();
	datacenter_id := r.datacenter_id;
	worker_id := r.worker_id;
	floor_time := r.floor_time;
	holder := r.holder;
END
$$;

CREATE FUNCTION @extschema@.snowid_claim(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.snowid_sql_claim_caller(
		'Run SELECT snowid_claim() as the owner of the extension (SET ROLE to it), as its schedule does.');
	SELECT * INTO datacenter_id, worker_id, floor_time, holder FROM @extschema@.snowid_sql_claim_owned();
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_claim() IS
'claims the worker id from the coordination database, or re-asserts the one held, as the owner of the extension';

REVOKE ALL ON FUNCTION @extschema@.snowid_claim() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.snowid_claim() TO @extowner@;

-- The claim of the first call takes the row 'claim' to the end of the
-- caller's transaction: only in a session whose role the owner has the
-- privileges of (as snowid_sql_claim_first() allows), and only while
-- nothing is claimed, or the claim is stale (re-asserted)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claim_once()
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
SET client_min_messages = error
AS $$
BEGIN
	IF NOT pg_has_role(CURRENT_USER, SESSION_USER, 'USAGE') THEN
		PERFORM @extschema@.snowid_sql_not_owner();
	END IF;
	IF (@extschema@.snowid_sql_config(false)).worker_id IS NOT NULL
		AND NOT @extschema@.snowid_sql_claim_stale() THEN
		RETURN;
	END IF;
	PERFORM FROM @extschema@.snowid_locks l WHERE l.name = 'claim' FOR UPDATE;
	PERFORM @extschema@.snowid_sql_holder_renew();
	IF (@extschema@.snowid_sql_config(false)).worker_id IS NULL
		OR @extschema@.snowid_sql_claim_stale() THEN
		PERFORM @extschema@.snowid_sql_claim_now();
		PERFORM @extschema@.snowid_sql_claim_noted();
	END IF;
END
$$;

-- Called by the functions that issue ids, as their caller, before they
-- need a worker id: claims one if the configuration wants it claimed and
-- none is, in a session whose role the owner of the extension has the
-- privileges of (a superuser's only where the owner is one): the claim
-- runs functions the owner may alter (ALTER FUNCTION ... SECURITY
-- INVOKER, SET), which would run as that role.  Returns true.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claim_first()
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
BEGIN
	IF NOT c.claim_worker_id
		OR (c.worker_id IS NOT NULL AND NOT @extschema@.snowid_sql_claim_stale()) THEN
		RETURN true;
	END IF;
	PERFORM @extschema@.snowid_sql_claim_caller(
		CASE WHEN c.worker_id IS NULL
		THEN 'Have the owner of the extension run SELECT snowid_claim() once, or take the first id as another role.'
		ELSE 'The server started, crashed or was copied, or its statistics were reset, since the worker id was claimed: have the owner of the extension run SELECT snowid_claim() (schedule it at the server''s start too), or take the first id as another role.' END);
	PERFORM @extschema@.snowid_sql_claim_once();
	RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_new_holder()
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	h record := @extschema@.snowid_sql_new_holder();
BEGIN
	UPDATE @extschema@.snowid_holder
	SET name = h.name, secret = h.secret, server = @extschema@.snowid_sql_here();
	PERFORM setval('@extschema@.snowid_claimed', 0, true);
	RETURN h.name;
END
$$;

-- snowid_new_holder() of 1.0 and 1.1 was the owner's, which a superuser's
-- call ran as the superuser once the owner replaced it: the extension's
-- now (it runs none of the owner's code), for the owner to call
ALTER FUNCTION @extschema@.snowid_new_holder() OWNER TO CURRENT_USER;
REVOKE ALL ON FUNCTION @extschema@.snowid_new_holder() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.snowid_new_holder() TO @extowner@;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_holder_renew() FROM PUBLIC;

