-- -------------------------------------------------------------------------
-- The worker id claimed from a coordination database (doc/managed.md)
-- -------------------------------------------------------------------------
-- With claim_worker_id on, the worker id is claimed through dblink from a
-- coordination database (sql/snowid_coordinator--1.0.sql) under a holder
-- name and a holder secret of this database's own, once: at the first call
-- that needs it, or by snowid_claim().  What was claimed is kept in the
-- sequence snowid_claimed, which like the position replicates, survives a
-- crash (its claim is on disk before any id that uses it), does not roll
-- back with the transaction that claimed (the coordination database does
-- not either), and is not dumped: a restored copy claims a worker id of
-- its own.  The claim's floor moves the position up before the claim is
-- kept, so no id of the claimed worker id lies below its fence.
--
-- The functions that connect run as the extension's owner, never as a
-- superuser that did not install it: dblink's rules for a role that is no
-- superuser then hold (a password the coordination server asks for, or
-- dblink_connect_u granted to the owner), and the owner's connection is
-- never made with the server's own files or sockets as a superuser's.

-- The coordination database: only the owner reads it.  conninfo holds
-- libpq's keywords and values (not a URI) but the password, which has a
-- column of its own so that it is never part of a text libpq quotes in a
-- message; timeout_ms bounds the connection and the claim.
CREATE TABLE @extschema@.snowid_coordination (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	conninfo text NOT NULL,
	password text,
	timeout_ms integer NOT NULL DEFAULT 2000
);

COMMENT ON TABLE @extschema@.snowid_coordination IS
'the coordination database the worker id is claimed from (claim_worker_id of snowid_config): libpq keywords, a password apart; only the owner reads it';

-- This database's holder: the name it claims under and its secret, made
-- here, once; only the owner reads it.  Neither is dumped: a database
-- restored from a dump is another holder.
CREATE TABLE @extschema@.snowid_holder (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	name text NOT NULL,
	secret text NOT NULL CHECK (secret ~ '^[0-9a-f]{64}$')
);

COMMENT ON TABLE @extschema@.snowid_holder IS
'the holder name and secret this database claims its worker id under; only the owner reads it';

-- A new holder: the name carries the system identifier and the database's
-- oid of when it was made, and 64 random bits; the secret is 32 random
-- bytes from two random UUIDs (gen_random_uuid() draws from the operating
-- system's random source, as pg_strong_random does) through SHA-256
CREATE FUNCTION @extschema@.snowid_sql_new_holder(OUT name text, OUT secret text)
LANGUAGE sql VOLATILE
BEGIN ATOMIC
	SELECT pg_catalog.format('sql sysid=%s db=%s instance=%s',
				  (SELECT c.system_identifier FROM pg_catalog.pg_control_system() c),
				  (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()),
				  pg_catalog.left(pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', ''), 16)),
		   pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
				pg_catalog.gen_random_uuid()::text OPERATOR(pg_catalog.||) pg_catalog.gen_random_uuid()::text, 'UTF8')), 'hex');
END;

INSERT INTO @extschema@.snowid_holder (name, secret)
SELECT * FROM @extschema@.snowid_sql_new_holder();

-- What is claimed: 0 for nothing, else 1 + (datacenter_id << 29 |
-- worker_bits << 24 | worker_id)
CREATE SEQUENCE @extschema@.snowid_claimed
	AS bigint MINVALUE 0 MAXVALUE 9007199254740991 START WITH 0 NO CYCLE;

REVOKE ALL ON @extschema@.snowid_coordination, @extschema@.snowid_holder,
	@extschema@.snowid_claimed FROM PUBLIC;
GRANT SELECT ON @extschema@.snowid_claimed TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON @extschema@.snowid_coordination TO @extowner@;
GRANT SELECT, UPDATE ON @extschema@.snowid_holder, @extschema@.snowid_claimed TO @extowner@;

-- The worker id that a value of snowid_claimed (NULL: none) says is
-- claimed for a datacenter id and worker bits, and for a worker id if one
-- is named (NULL: any), or NULL
CREATE FUNCTION @extschema@.snowid_sql_claimed_of(claimed bigint, datacenter_id integer,
	worker_bits integer, worker_id integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN claimed OPERATOR(pg_catalog.>) 0
			 AND (claimed OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.>>) 29 OPERATOR(pg_catalog.=) datacenter_id
			 AND ((claimed OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.>>) 24) OPERATOR(pg_catalog.&) 31
				 OPERATOR(pg_catalog.=) worker_bits
			 AND ((claimed OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.&) 16777215)
				 OPERATOR(pg_catalog.=) coalesce(worker_id, (claimed OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.&) 16777215)
	THEN ((claimed OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.&) 16777215)::integer END;

-- The worker id claimed for a configuration, or NULL: one claimed for its
-- datacenter id and worker bits, and its worker id if it names one
CREATE FUNCTION @extschema@.snowid_sql_claimed(c @extschema@.snowid_config)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT @extschema@.snowid_sql_claimed_of(CASE WHEN s.is_called THEN s.last_value END,
											 c.datacenter_id, c.worker_bits, c.worker_id)
	FROM @extschema@.snowid_claimed s;
END;

-- The words of a connection string in libpq's keyword = value form, or
-- NULL if it is not one
CREATE FUNCTION @extschema@.snowid_sql_conninfo_keywords(conninfo text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE WHEN conninfo ~ $re$^\s*([A-Za-z_]+\s*=\s*('([^'\\]|\\.)*'|([^\s'\\]|\\.)([^\s\\]|\\.)*)\s*)*$$re$
		THEN ARRAY(SELECT pg_catalog.lower(m[1]) FROM pg_catalog.regexp_matches(conninfo,
				$re$([A-Za-z_]+)\s*=\s*(?:'(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)(?:[^\s\\]|\\.)*)$re$, 'g') m)
		END;
END;

-- The problem with a coordination row, as a sentence, or NULL
CREATE FUNCTION @extschema@.snowid_sql_coordination_problem(r @extschema@.snowid_coordination)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	words text[] := @extschema@.snowid_sql_conninfo_keywords(r.conninfo);
BEGIN
	IF r.conninfo ~* '^\s*postgres(ql)?://' THEN
		RETURN 'conninfo is a URI; write it as libpq''s keywords and values, as host=db1.example.com port=5432 dbname=snowid_coord user=snowid_fleet sslmode=verify-full, and the password in the column password.';
	ELSIF words IS NULL THEN
		RETURN 'conninfo is not a list of libpq''s keywords and values, as host=db1.example.com dbname=snowid_coord user=snowid_fleet; a value with a space or a quote is quoted, as password=''a b\''c''.';
	ELSIF 'password' = ANY (words) THEN
		RETURN 'conninfo names a password; give it in the column password, which libpq never quotes in a message.';
	ELSIF 'options' = ANY (words) THEN
		RETURN 'conninfo names options, which snowid_sql sets itself (its holder secret and the time limits of the claim).';
	ELSIF r.password ~ '[\x01-\x1f]' THEN
		RETURN 'password holds a control character.';
	ELSIF r.timeout_ms NOT BETWEEN 100 AND 60000 THEN
		RETURN format('timeout_ms is %s; it runs from 100 to 60000.', r.timeout_ms);
	END IF;
	RETURN NULL;
END
$$;

CREATE FUNCTION @extschema@.snowid_sql_coordination_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_coordination_problem(NEW);
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid coordination database in snowid_coordination'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_coordination_check BEFORE INSERT OR UPDATE
	ON @extschema@.snowid_coordination
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_coordination_check();

-- A value quoted for a connection string
CREATE FUNCTION @extschema@.snowid_sql_conninfo_quote(value text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN '''' || pg_catalog.replace(pg_catalog.replace(value, '\', '\\'), '''', '\''') || '''';

-- The connection string of a claim: the owner's, the password, the time
-- limits and, in the options of the session, the holder secret, which so
-- is part of no statement the coordination server may log
CREATE FUNCTION @extschema@.snowid_sql_connstr()
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r @extschema@.snowid_coordination;
	secret text;
BEGIN
	SELECT * INTO STRICT r FROM @extschema@.snowid_coordination;
	SELECT h.secret INTO STRICT secret FROM @extschema@.snowid_holder h;
	RETURN r.conninfo
		|| CASE WHEN r.password IS NOT NULL
			THEN ' password=' || @extschema@.snowid_sql_conninfo_quote(r.password) ELSE '' END
		|| ' connect_timeout=' || greatest(2, (r.timeout_ms + 999) / 1000)
		|| ' options=' || @extschema@.snowid_sql_conninfo_quote(format(
			'-c statement_timeout=%s -c lock_timeout=%s -c search_path=pg_catalog -c snowid_holder.secret=%s',
			r.timeout_ms, r.timeout_ms, secret));
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_connstr() FROM PUBLIC;

-- Moves the generator up so that its next position lies at or above
-- floor_ms (Unix ms), as a writer (snowid_sql_move()), waiting for the
-- lock at most 10 s
CREATE FUNCTION @extschema@.snowid_sql_raise_floor(floor_ms bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	floor_rel bigint := floor_ms - @extschema@.snowid_sql_unix_ms(c.epoch);
BEGIN
	IF floor_rel <= 0 THEN
		RETURN;
	END IF;
	IF floor_rel > @extschema@.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'the floor % lies past the last time of the layout %', floor_ms, @extschema@.snowid_sql_layout(c)
			USING ERRCODE = 'numeric_value_out_of_range';
	END IF;
	PERFORM @extschema@.snowid_sql_move(floor_rel << c.sequence_bits, 0, NULL, true);
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_raise_floor(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.snowid_sql_raise_floor(bigint) TO @extowner@;

-- The claim, as the owner: one CALL of snowid_coordinator.claim() through
-- dblink, its answer checked, the floor applied and the claim kept; a
-- refusal drops what was kept (another holder has the id now, or will).
-- want is the configured worker id, prefer the one claimed before, and
-- usable_ms the later of the clock plus max_drift_ms and the generator's
-- high-water mark: the coordination database fences at usable_ms + 1 the
-- ids this holder leaves, and takes none fenced past it.
CREATE FUNCTION @extschema@.snowid_sql_claim_now(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	want integer;
	prefer integer;
	hi integer := (1 << c.worker_bits) - 1;
	usable bigint;
	dblink_schema name;
	name text;
	call text;
	r record;
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
	PERFORM 1 FROM @extschema@.snowid_coordination;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no coordination database to claim a worker id from'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'claim_worker_id of snowid_config is on, and snowid_coordination holds no row.',
				  HINT = 'As the owner of the extension: INSERT INTO snowid_coordination (conninfo, password) VALUES (''host=... dbname=... user=...'', ''...'') (doc/managed.md).';
	END IF;
	SELECT @extschema@.snowid_sql_coordination_problem(x) INTO msg FROM @extschema@.snowid_coordination x;
	IF msg IS NOT NULL THEN
		RAISE EXCEPTION 'invalid coordination database in snowid_coordination'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = msg;
	END IF;

	SELECT format('dc=%s %s', c.datacenter_id, h.name) INTO STRICT name FROM @extschema@.snowid_holder h;
	SELECT x.worker_id INTO STRICT want FROM @extschema@.snowid_config x;
	want := coalesce(want, -1);
	-- the worker id kept from an earlier claim of this datacenter
	SELECT ((s.last_value - 1) & 16777215)::integer INTO prefer
	FROM @extschema@.snowid_claimed s
	WHERE s.is_called AND s.last_value > 0 AND (s.last_value - 1) >> 29 = c.datacenter_id
	  AND ((s.last_value - 1) & 16777215) <= hi;
	prefer := coalesce(prefer, -1);
	usable := greatest(@extschema@.snowid_sql_unix_ms(clock_timestamp()) + c.max_drift_ms,
					   @extschema@.snowid_sql_unix_ms((@extschema@.snowid_status()).high_water_time));
	-- the secret is read by the coordination server from its session's
	-- options (snowid_sql_connstr()), never written here
	call := format('CALL snowid_coordinator.claim(%s, %L, pg_catalog.current_setting(%L), %s, %s, %s, %s)',
				   c.datacenter_id, name, 'snowid_holder.secret', want, hi, prefer, usable);
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
		EXECUTE format('SELECT t.outcome, t.worker_id, t.floor_ms, t.fence_ms, t.holder FROM %I.dblink(%L, %L) AS t(outcome text, worker_id integer, floor_ms bigint, fence_ms bigint, lease_ms bigint, holder text, generation bigint, counter bigint)',
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

	-- the answer, checked before anything of it is used
	IF r.outcome IS NULL OR r.outcome NOT IN ('ok', 'all_held', 'fenced', 'conflict', 'holds_other')
		OR (r.outcome = 'ok' AND (r.worker_id IS NULL OR r.worker_id NOT BETWEEN 0 AND hi
								  OR (want >= 0 AND r.worker_id <> want)
								  OR r.floor_ms IS NULL OR r.floor_ms NOT BETWEEN 0 AND usable)) THEN
		RAISE EXCEPTION 'the coordination database gave an answer snowid_sql cannot use'
			USING ERRCODE = 'protocol_violation',
				  DETAIL = format('It answered outcome %s, worker id %s and floor %s to a claim of %s in 0..%s starting at most at %s.',
								  coalesce(r.outcome, 'NULL'), coalesce(r.worker_id::text, 'NULL'),
								  coalesce(r.floor_ms::text, 'NULL'),
								  CASE WHEN want >= 0 THEN 'worker id ' || want ELSE 'any worker id' END, hi, usable);
	END IF;
	IF r.outcome <> 'ok' THEN
		-- whatever was kept is not this holder's to use any more
		PERFORM setval('@extschema@.snowid_claimed', 0, true);
		RAISE EXCEPTION 'snowid_sql could not claim a worker id of datacenter %', c.datacenter_id
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = CASE r.outcome
					WHEN 'all_held' THEN format('Every worker id from 0 to %s is held.', hi)
					WHEN 'fenced' THEN format('Worker id %s is fenced until %s, past this server''s clock plus max_drift_ms.',
											 r.worker_id, @extschema@.snowid_sql_timestamptz(r.fence_ms))
					WHEN 'conflict' THEN format('Worker id %s is held by %s.', r.worker_id, r.holder)
					ELSE format('This holder (%s) holds worker id %s, not the configured %s.', name, r.worker_id, want) END,
				  HINT = CASE r.outcome
					WHEN 'fenced' THEN 'Wait until then, or raise max_drift_ms.'
					WHEN 'holds_other' THEN 'Set worker_id of snowid_config to it, or NULL; or have an administrator free it (doc/coordinator.md).'
					ELSE 'Have an administrator free the worker id of a server that is gone (doc/coordinator.md), or widen worker_bits before the first id.' END;
	END IF;

	-- the floor first, then the claim: on disk in that order
	PERFORM @extschema@.snowid_sql_raise_floor(r.floor_ms);
	PERFORM setval('@extschema@.snowid_claimed',
				   1 + ((c.datacenter_id::bigint << 29) | (c.worker_bits::bigint << 24) | r.worker_id), true);
	datacenter_id := c.datacenter_id;
	worker_id := r.worker_id;
	floor_time := @extschema@.snowid_sql_timestamptz(r.floor_ms);
	holder := name;
	IF prefer <> r.worker_id THEN
		RAISE LOG 'snowid_sql claimed worker id % of datacenter % from the coordination database as "%"',
			r.worker_id, c.datacenter_id, name;
	END IF;
END
$$;

-- One claim at a time in a database: a session lock, let go before the
-- function returns
CREATE FUNCTION @extschema@.snowid_claim(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
AS $$
DECLARE
	r record;
BEGIN
	PERFORM pg_advisory_lock(1936617335, 5460301);
	BEGIN
		r := @extschema@.snowid_sql_claim_now();
	EXCEPTION WHEN OTHERS OR query_canceled THEN
		PERFORM pg_advisory_unlock(1936617335, 5460301);
		RAISE;
	END;
	PERFORM pg_advisory_unlock(1936617335, 5460301);
	datacenter_id := r.datacenter_id;
	worker_id := r.worker_id;
	floor_time := r.floor_time;
	holder := r.holder;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_claim() IS
'claims (or re-asserts) the worker id from the coordination database of snowid_coordination, as the owner';

REVOKE ALL ON FUNCTION @extschema@.snowid_claim() FROM PUBLIC;

-- The claim of the first call: only while nothing is claimed for the
-- configuration (so no caller makes this database connect again and again)
CREATE FUNCTION @extschema@.snowid_sql_claim_once()
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
AS $$
BEGIN
	PERFORM pg_advisory_lock(1936617335, 5460301);
	BEGIN
		IF (@extschema@.snowid_sql_config(false)).worker_id IS NULL THEN
			PERFORM @extschema@.snowid_sql_claim_now();
		END IF;
	EXCEPTION WHEN OTHERS OR query_canceled THEN
		PERFORM pg_advisory_unlock(1936617335, 5460301);
		RAISE;
	END;
	PERFORM pg_advisory_unlock(1936617335, 5460301);
END
$$;

-- A copy of this database's files that runs beside it (a snapshot
-- restored, a branch, a clone) is the same holder: made another one, with
-- nothing claimed, it claims a worker id of its own at its next call
CREATE FUNCTION @extschema@.snowid_new_holder()
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	h record := @extschema@.snowid_sql_new_holder();
BEGIN
	UPDATE @extschema@.snowid_holder SET name = h.name, secret = h.secret;
	PERFORM setval('@extschema@.snowid_claimed', 0, true);
	RETURN h.name;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_new_holder() IS
'makes this database another holder, with nothing claimed: for a copy of its files that runs beside it';

-- The functions above run as the extension's owner
ALTER FUNCTION @extschema@.snowid_new_holder() OWNER TO @extowner@;
ALTER FUNCTION @extschema@.snowid_sql_connstr() OWNER TO @extowner@;
ALTER FUNCTION @extschema@.snowid_sql_claim_now() OWNER TO @extowner@;
ALTER FUNCTION @extschema@.snowid_claim() OWNER TO @extowner@;
ALTER FUNCTION @extschema@.snowid_sql_claim_once() OWNER TO @extowner@;
REVOKE ALL ON FUNCTION @extschema@.snowid_sql_connstr(), @extschema@.snowid_sql_claim_now(),
	@extschema@.snowid_claim(), @extschema@.snowid_new_holder() FROM PUBLIC;

-- Called by the functions that issue ids, as their caller, before they
-- need a worker id: claims one if the configuration wants it claimed and
-- none is.  Never in a superuser's session unless the owner is one: the
-- claim runs functions the owner may change.  Returns true.
CREATE FUNCTION @extschema@.snowid_sql_claim_first()
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
BEGIN
	IF NOT c.claim_worker_id OR c.worker_id IS NOT NULL THEN
		RETURN true;
	END IF;
	IF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user)
		AND NOT (SELECT r.rolsuper FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
				 WHERE p.oid = '@extschema@.snowid_sql_claim_once()'::regprocedure) THEN
		RAISE EXCEPTION 'snowid_sql does not claim its worker id in a superuser''s session'
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'The claim runs functions that the owner of the extension, who is no superuser, may change.',
				  HINT = 'Have the owner of the extension run SELECT snowid_claim() once, or take the first id as another role.';
	END IF;
	PERFORM @extschema@.snowid_sql_claim_once();
	RETURN true;
END
$$;

