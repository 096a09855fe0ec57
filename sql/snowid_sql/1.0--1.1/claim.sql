-- The claim, as the owner: one CALL of snowid_coordinator.claim() through
-- dblink, its answer checked, the floor applied and the claim kept; a
-- refusal drops what was kept (another holder has the id now, or will).
-- want is the configured worker id, or the one held, which the claim then
-- re-asserts; prefer the one claimed before; usable_ms the later of the
-- clock plus max_drift_ms and the generator's high-water mark: the
-- coordination database fences at usable_ms + 1 the ids this holder
-- leaves, and takes none fenced past it.  quiet_ms is how long a quiet
-- period must last for this holder to re-assert (the forgetting rule): its
-- schedule, a call that takes all of timeout_ms, max_drift_ms (it may have
-- issued that far ahead) and a second, as the C edition's servers count
-- it; seen_generation and seen_counter the state record it saw last.
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
	seen_counter := coalesce(seen_counter, 0);
	-- the secret is read by the coordination server from its session's
	-- options (snowid_sql_connstr()), never written here; the arguments
	-- of the forgetting rule by name
	call := format('CALL snowid_coordinator.claim(%s, %L, pg_catalog.current_setting(%L), %s, %s, %s, %s, quiet_ms => %s, reassert => %s, seen_generation => %s, seen_counter => %s, clock_margin_ms => %s)',
				   c.datacenter_id, name, 'snowid_holder.secret', want, hi, prefer, usable,
				   quiet_ms, CASE WHEN held IS NOT NULL THEN 'true' ELSE 'false' END,
				   seen_generation, seen_counter, coord.clock_margin_ms);
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
		IF state = '57014' THEN
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
			(datacenter_id, generation, counter, answered_at, forgot_at, reassertions)
		VALUES (c.datacenter_id, r.generation, r.counter, clock_timestamp(),
				CASE WHEN forgot THEN clock_timestamp() END, forgot::integer)
		ON CONFLICT (singleton) DO UPDATE
		SET generation = excluded.generation, counter = excluded.counter,
			answered_at = excluded.answered_at,
			forgot_at = CASE WHEN forgot THEN excluded.forgot_at
				WHEN s.datacenter_id = excluded.datacenter_id THEN s.forgot_at END,
			reassertions = CASE WHEN s.datacenter_id = excluded.datacenter_id
				THEN s.reassertions ELSE 0 END + excluded.reassertions,
			datacenter_id = excluded.datacenter_id;
	ELSE
		UPDATE @extschema@.snowid_coordinator_state s SET answered_at = clock_timestamp()
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

