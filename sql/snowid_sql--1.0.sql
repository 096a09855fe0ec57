/* snowid_sql--1.0.sql: the SQL edition of snowid (doc/managed.md) */

\echo Use "CREATE EXTENSION snowid_sql" to load this file. \quit

-- The same ids, decodes, serials, time bounds and public ids as the C
-- edition (doc/reference.md), in SQL and PL/pgSQL only, for servers that
-- load no C extension.  The generator's state is one sequence,
-- snowid_position, whose value is the position of the last id issued:
-- (milliseconds since the epoch << sequence_bits) | sequence.  A sequence
-- is shared by every session, never rolls back and is WAL-logged, so a
-- crash or a promoted standby skips positions but repeats none that a
-- flushed transaction used.
--
-- Every session takes positions with nextval(), holding no lock.  When the
-- clock has moved past the sequence, one call at a time moves it forward
-- with setval() under an advisory lock taken exclusively (the writers'
-- lock, which only calls that move it take), and within a window marked by
-- a second sequence, snowid_generation: odd from before the writer reads
-- the position until after it sets it.  A call reads the generation before
-- and after its nextval() and uses the position only if it read the same
-- even value twice: a nextval() that a writer's reading and setting may
-- enclose (a setval() that could move the sequence back below it) is
-- never used.  So the sequence never goes back below a position in use,
-- whatever the clock does.  The writers' lock is held for a few statements
-- and let go before the function returns (never to the end of the
-- transaction).
--
-- Objects beside the functions: snowid_config (one row: worker id, layout,
-- epoch, drift and wait bounds), snowid_public_keys (keys of public ids,
-- readable only by the extension's owner), snowid_position and the
-- counters of snowid_status(); for a worker id claimed from a coordination
-- database, snowid_coordination and snowid_holder (the owner's alone) and
-- snowid_claimed.  The functions that use them are SECURITY
-- DEFINER with a fixed search_path and name every object with its schema.

CREATE TABLE @extschema@.snowid_config (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	datacenter_id integer NOT NULL DEFAULT 0,
	worker_id integer,
	epoch timestamptz NOT NULL DEFAULT '2010-11-04 01:42:54.657+00',
	datacenter_bits integer NOT NULL DEFAULT 5,
	worker_bits integer NOT NULL DEFAULT 5,
	sequence_bits integer NOT NULL DEFAULT 12,
	max_drift_ms integer NOT NULL DEFAULT 1000,
	max_wait_ms integer NOT NULL DEFAULT 2000,
	claim_worker_id boolean NOT NULL DEFAULT false,
	-- what snowid_sql_config_fault() checks, held by the table itself: the
	-- trigger below refuses a bad row first, naming what is wrong, and this
	-- refuses one that a path past the trigger writes (a replica's apply,
	-- session_replication_role), so the generator need not check the row
	CONSTRAINT snowid_config_valid CHECK (
		datacenter_bits BETWEEN 0 AND 24 AND worker_bits BETWEEN 0 AND 24
		AND sequence_bits BETWEEN 0 AND 24
		AND datacenter_bits + worker_bits + sequence_bits <= 24
		AND datacenter_id BETWEEN 0 AND (1 << datacenter_bits) - 1
		AND worker_id BETWEEN 0 AND (1 << worker_bits) - 1
		AND epoch >= pg_catalog.to_timestamp(0) AND epoch < pg_catalog.to_timestamp(253402300800)
		AND pg_catalog.date_trunc('milliseconds', epoch AT TIME ZONE 'UTC') = epoch AT TIME ZONE 'UTC'
		AND max_drift_ms BETWEEN 0 AND 3600000 AND max_wait_ms BETWEEN 0 AND 3600000)
);

COMMENT ON TABLE @extschema@.snowid_config IS
'the settings of the snowid SQL edition: one row, as snowid.* of the C edition; worker_id NULL until set, or claimed from the coordination database of snowid_coordination if claim_worker_id';

INSERT INTO @extschema@.snowid_config DEFAULT VALUES;

CREATE SEQUENCE @extschema@.snowid_position
	AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
-- The writers' generation (snowid_sql_move()): odd while a call moves the
-- position, even otherwise; not dumped (a restored database starts it over)
CREATE SEQUENCE @extschema@.snowid_generation AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
CREATE SEQUENCE @extschema@.snowid_waits AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE @extschema@.snowid_clock_steps AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE @extschema@.snowid_clock_errors AS bigint MINVALUE 0 START WITH 0;

CREATE TABLE @extschema@.snowid_public_keys (
	key_id text PRIMARY KEY,
	key bytea NOT NULL,
	rank integer NOT NULL UNIQUE
);

COMMENT ON TABLE @extschema@.snowid_public_keys IS
'the keys of public ids: the key of the smallest rank makes new ones, every key reads them';

-- the configuration and the position go into pg_dump's output
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_config', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_public_keys', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_position', '');

REVOKE ALL ON @extschema@.snowid_config, @extschema@.snowid_public_keys,
	@extschema@.snowid_position, @extschema@.snowid_generation, @extschema@.snowid_waits,
	@extschema@.snowid_clock_steps, @extschema@.snowid_clock_errors FROM PUBLIC;
GRANT SELECT ON @extschema@.snowid_config TO PUBLIC;
GRANT SELECT, UPDATE ON @extschema@.snowid_config TO @extowner@;
GRANT SELECT, INSERT, UPDATE, DELETE ON @extschema@.snowid_public_keys TO @extowner@;

-- -------------------------------------------------------------------------
-- The configuration
-- -------------------------------------------------------------------------

-- A timestamptz as Unix milliseconds, rounded down; NULL if infinite or
-- NULL.  The seconds of an interval from 2000 (PostgreSQL's own epoch, so
-- the subtraction never overflows), not of the timestamptz itself: that
-- EXTRACT is immutable, and the function not STRICT (the CASE is not), so
-- the planner inlines it where it is called with anything but a volatile
-- argument (which it would use twice), and a call runs no query of its own.
CREATE FUNCTION @extschema@.snowid_sql_unix_ms(ts timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.isfinite(ts)
	THEN pg_catalog.floor(EXTRACT(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000)::bigint
		+ 946684800000 END;

-- Unix milliseconds as a timestamptz, exactly (no floating point)
CREATE FUNCTION @extschema@.snowid_sql_timestamptz(unix_ms bigint)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((timestamp '1970-01-01'
		 + pg_catalog.make_interval(days => (unix_ms / 86400000)::integer))
		+ (unix_ms % 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';

-- What is wrong with a configuration row: 0 for nothing, else the number
-- of the first check it fails (snowid_sql_config_problem() says which).
-- The same checks as the constraint snowid_config_valid, one by one, for
-- the trigger's message.  The epoch lies from 1970 to before the year
-- 10000 (Unix milliseconds from 0 to 253402300799999), infinities
-- excluded, and on a whole millisecond.
CREATE FUNCTION @extschema@.snowid_sql_config_fault(c @extschema@.snowid_config)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
	WHEN c.datacenter_bits NOT BETWEEN 0 AND 24 THEN 1
	WHEN c.worker_bits NOT BETWEEN 0 AND 24 THEN 2
	WHEN c.sequence_bits NOT BETWEEN 0 AND 24 THEN 3
	WHEN c.datacenter_bits + c.worker_bits + c.sequence_bits > 24 THEN 4
	WHEN c.datacenter_id NOT BETWEEN 0 AND (1 << c.datacenter_bits) - 1 THEN 5
	WHEN c.worker_id NOT BETWEEN 0 AND (1 << c.worker_bits) - 1 THEN 6
	WHEN NOT (c.epoch >= pg_catalog.to_timestamp(0) AND c.epoch < pg_catalog.to_timestamp(253402300800)) THEN 7
	WHEN pg_catalog.date_trunc('milliseconds', c.epoch AT TIME ZONE 'UTC') <> c.epoch AT TIME ZONE 'UTC' THEN 8
	WHEN c.max_drift_ms NOT BETWEEN 0 AND 3600000 THEN 9
	WHEN c.max_wait_ms NOT BETWEEN 0 AND 3600000 THEN 10
	ELSE 0 END;

-- The problem with a configuration row, as a sentence, or NULL
CREATE FUNCTION @extschema@.snowid_sql_config_problem(c @extschema@.snowid_config)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE @extschema@.snowid_sql_config_fault(c)
	WHEN 1 THEN
		pg_catalog.format('datacenter_bits is %s; it runs from 0 to 24.', c.datacenter_bits)
	WHEN 2 THEN
		pg_catalog.format('worker_bits is %s; it runs from 0 to 24.', c.worker_bits)
	WHEN 3 THEN
		pg_catalog.format('sequence_bits is %s; it runs from 0 to 24.', c.sequence_bits)
	WHEN 4 THEN
		pg_catalog.format('datacenter_bits, worker_bits and sequence_bits add up to %s, leaving the timestamp %s bits; it needs at least 39.',
			   c.datacenter_bits + c.worker_bits + c.sequence_bits,
			   63 - c.datacenter_bits - c.worker_bits - c.sequence_bits)
	WHEN 5 THEN
		pg_catalog.format('datacenter_id is %s; with datacenter_bits = %s, datacenter ids run from 0 to %s.',
			   c.datacenter_id, c.datacenter_bits, (1 << c.datacenter_bits) - 1)
	WHEN 6 THEN
		pg_catalog.format('worker_id is %s; with worker_bits = %s, worker ids run from 0 to %s.',
			   c.worker_id, c.worker_bits, (1 << c.worker_bits) - 1)
	WHEN 7 THEN
		'epoch must lie from 1970-01-01 00:00:00 UTC to before the year 10000.'
	WHEN 8 THEN
		'epoch must be a whole number of milliseconds.'
	WHEN 9 THEN
		pg_catalog.format('max_drift_ms is %s; it runs from 0 to 3600000.', c.max_drift_ms)
	WHEN 10 THEN
		pg_catalog.format('max_wait_ms is %s; it runs from 0 to 3600000.', c.max_wait_ms)
	END;

-- The configuration, checked: a bad one is an error naming what is wrong.
-- No search_path of its own: it names every object with its schema, and
-- its callers set pg_catalog's.
CREATE FUNCTION @extschema@.snowid_sql_config(need_worker boolean)
RETURNS @extschema@.snowid_config
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	c @extschema@.snowid_config;
	problem text;
BEGIN
	SELECT * INTO c FROM @extschema@.snowid_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no configuration'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The table snowid_config holds no row.',
				  HINT = 'Drop the extension and create it again, then set the worker id.';
	END IF;
	problem := @extschema@.snowid_sql_config_problem(c);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'Correct the row of snowid_config as the owner of the extension (doc/managed.md).';
	END IF;
	IF c.claim_worker_id THEN
		-- the worker id claimed for this configuration, or none
		c.worker_id := @extschema@.snowid_sql_claimed(c);
		IF need_worker AND c.worker_id IS NULL THEN
			RAISE EXCEPTION 'snowid has not claimed a worker id'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'claim_worker_id of snowid_config is on, and no worker id is claimed for its datacenter_id, worker_bits and worker_id.',
					  HINT = 'The first call of snowid_next() by a role that is no superuser claims one, or the owner of the extension with SELECT snowid_claim().';
		END IF;
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- Checks a new configuration row; the layout and the epoch stay as they
-- are once an id is issued, since an id of one layout can equal an id of
-- another (doc/layouts.md)
CREATE FUNCTION @extschema@.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_config_problem(NEW);
	used boolean;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM @extschema@.snowid_position;
	IF used AND (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'An id of one layout can equal an id of the other, so new ids could collide with old ones.',
				  HINT = 'To switch layouts deliberately, follow doc/managed.md: drop the extension and create it again with the new layout.';
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_check BEFORE INSERT OR UPDATE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_check();

-- An insert of the row where one is (a restore: CREATE EXTENSION made the
-- row before the dump's COPY of it) updates that row instead, all but its
-- worker id: a restored database is another server, whose position is the
-- dump's, below the ids its source issued since, so it issues no id until
-- it is given a worker id of its own or claims one.  Fires after the check
-- above (triggers fire in the order of their names), on the row inserted.
CREATE FUNCTION @extschema@.snowid_sql_config_restore()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	UPDATE @extschema@.snowid_config x
	SET datacenter_id = NEW.datacenter_id, epoch = NEW.epoch,
		datacenter_bits = NEW.datacenter_bits, worker_bits = NEW.worker_bits,
		sequence_bits = NEW.sequence_bits, max_drift_ms = NEW.max_drift_ms,
		max_wait_ms = NEW.max_wait_ms, claim_worker_id = NEW.claim_worker_id
	WHERE x.singleton;
	IF FOUND THEN
		RETURN NULL;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_restore BEFORE INSERT
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_restore();

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
	SELECT format('sql sysid=%s db=%s instance=%s',
				  (SELECT c.system_identifier FROM pg_catalog.pg_control_system() c),
				  (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()),
				  pg_catalog.left(pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', ''), 16)),
		   pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
				pg_catalog.gen_random_uuid()::text || pg_catalog.gen_random_uuid()::text, 'UTF8')), 'hex');
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
RETURN CASE WHEN claimed > 0
			 AND (claimed - 1) >> 29 = datacenter_id
			 AND ((claimed - 1) >> 24) & 31 = worker_bits
			 AND ((claimed - 1) & 16777215) = coalesce(worker_id, (claimed - 1) & 16777215)
	THEN ((claimed - 1) & 16777215)::integer END;

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

-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- The configuration as the common path of the generator reads it: the row
-- of snowid_config made constants in the body of snowid_sql_fixed(), which
-- the planner inlines and folds into the expressions that use it, so that
-- a call reads no table.  The triggers on snowid_config make it anew from
-- the row whenever the row changes, in the transaction that changes it,
-- however it changes (ENABLE ALWAYS: also under session_replication_role =
-- replica and in a replica's apply; TRUNCATE too).  Plans that inlined it
-- are planned again once a session sees the change: a transaction that
-- begins after the change commits reads the new row; one open before may
-- read the old one until it ends, as one in REPEATABLE READ reads the old
-- row of the table.  STABLE, not IMMUTABLE: the planner folds a call of
-- an immutable function to its value without noting that the plan depends
-- on the function, and such a plan would keep the old row for good.  Like
-- every function of the extension, it is the owner's.
CREATE TYPE @extschema@.snowid_sql_fixed AS (
	claim_worker_id boolean,
	datacenter_id integer,
	worker_id integer,
	datacenter_bits integer,
	worker_bits integer,
	sequence_bits integer,
	-- the epoch in Unix milliseconds, and the last millisecond of the
	-- layout since it
	epoch_ms bigint,
	max_ms bigint,
	-- how far ahead of the clock a position the common path takes may lie
	near_ms integer
);

-- As made for no row (and so before the first change): no worker id
CREATE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(false, 0, NULL, 0, 0, 0, 0, 0, 0)::@extschema@.snowid_sql_fixed;

-- The id at a position, for a node and a layout: one expression, which
-- the planner inlines where it is called
CREATE FUNCTION @extschema@.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| (datacenter_id::bigint << (worker_bits + sequence_bits))
	| (worker_id::bigint << sequence_bits)
	| (pos & ((1::bigint << sequence_bits) - 1));

-- The id at a position, for the node of snowid_sql_fixed() and a worker id
CREATE FUNCTION @extschema@.snowid_sql_fixed_id(worker_id integer, pos bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN @extschema@.snowid_sql_id(pos, (@extschema@.snowid_sql_fixed()).datacenter_id, worker_id,
	(@extschema@.snowid_sql_fixed()).datacenter_bits, (@extschema@.snowid_sql_fixed()).worker_bits,
	(@extschema@.snowid_sql_fixed()).sequence_bits);

-- Makes snowid_sql_fixed() anew from the row of snowid_config, or as for
-- none.  Its body holds only numbers and booleans of the row, which the
-- table's constraint holds in their ranges.
CREATE FUNCTION @extschema@.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
BEGIN
	SELECT * INTO c FROM @extschema@.snowid_config;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %s)::@extschema@.snowid_sql_fixed$f$,
		CASE WHEN c.claim_worker_id THEN 'true' ELSE 'false' END, coalesce(c.datacenter_id, 0),
		coalesce(c.worker_id::text, 'NULL'), coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(@extschema@.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(@extschema@.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0));
	RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_fix() FROM PUBLIC;

CREATE TRIGGER snowid_config_fix AFTER INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_fix();
CREATE TRIGGER snowid_config_fix_truncate AFTER TRUNCATE
	ON @extschema@.snowid_config
	FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.snowid_sql_fix();
ALTER TABLE @extschema@.snowid_config ENABLE ALWAYS TRIGGER snowid_config_fix,
	ENABLE ALWAYS TRIGGER snowid_config_fix_truncate;

-- The one way snowid_position is set: positions from first to first + got
-- - 1 made this call's, where first is the later of the position after
-- the last one taken (last) and low, and got is n, or fewer where the
-- positions would pass high (a NULL high: no bound), or none.  With got 0
-- the sequence still moves up to low - 1 if it lies below.
--
-- A writer: under the generator's lock taken exclusively, so that writers
-- take turns and none sets the sequence from a reading another's setting
-- made old, and within the window, snowid_generation odd from before the
-- reading until after the setting.  A nextval() that the window may
-- enclose gets a position that the setval() may set the sequence back
-- below; the call that took it sees the generation odd or changed and does
-- not use it (snowid_sql_next()).  With wait, the lock is waited for (at
-- most the caller's lock_timeout); without, only tried: first is NULL if
-- another writer holds it.  The writers hold it for a few statements.
--
-- Called only by the functions of the generator, which run as the owner
-- with search_path set: this one has neither of its own, which would cost
-- every writer two settings changed and changed back.
--
-- The lock and the flag that says it is held are set in one expression
-- (pg_advisory_lock() returns void, which IS NOT NULL): PL/pgSQL checks for
-- a cancel between statements, and one between the two would leave the
-- lock held with the handler not knowing it.  The handler lets the lock go
-- on any error or cancel.  A window left open so (the generation odd)
-- sends the calls that see it here, to wait for the lock; the next writer
-- closes it.
CREATE FUNCTION @extschema@.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
	OUT first bigint, OUT got bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	locked boolean := false;
	-- what a call returns that is not used (an assignment is cheaper than
	-- PERFORM, which runs a query)
	done bigint;
BEGIN
	BEGIN
		IF wait THEN
			locked := pg_catalog.pg_advisory_lock(1936617335, 5460300) IS NOT NULL;
		ELSE
			locked := pg_catalog.pg_try_advisory_lock(1936617335, 5460300);
		END IF;
		IF locked THEN
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further)
			done := pg_catalog.nextval('@extschema@.snowid_generation');
			IF done % 2 = 0 THEN
				done := pg_catalog.nextval('@extschema@.snowid_generation');
			END IF;
			-- the last position, read under the sequence's buffer lock (a
			-- nextval() may run meanwhile); before the first, the one below
			last := pg_catalog.pg_sequence_last_value('@extschema@.snowid_position');
			IF last IS NULL THEN
				SELECT s.last_value - 1 INTO last FROM @extschema@.snowid_position s;
			END IF;
			first := greatest(last + 1, low);
			got := greatest(least(n, high - first + 1), 0);
			IF first + got - 1 > last THEN
				done := pg_catalog.setval('@extschema@.snowid_position', first + got - 1);
			END IF;
			-- and closes: even again
			done := pg_catalog.nextval('@extschema@.snowid_generation');
			locked := NOT pg_catalog.pg_advisory_unlock(1936617335, 5460300);
		END IF;
	EXCEPTION WHEN OTHERS OR query_canceled THEN
		IF locked THEN
			PERFORM pg_catalog.pg_advisory_unlock(1936617335, 5460300);
		END IF;
		IF SQLSTATE = '55P03' THEN
			RAISE EXCEPTION 'the snowid generator''s lock was not free within lock_timeout'
				USING ERRCODE = 'lock_not_available',
					  DETAIL = 'Another session held the advisory lock (1936617335, 5460300) of snowid_sql for 10 s.',
					  HINT = 'Look for that session in pg_locks; snowid_sql holds the lock only while it moves the generator.';
		END IF;
		RAISE;
	END;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_move(bigint, bigint, bigint, boolean) FROM PUBLIC;

-- Takes up to n consecutive positions (at least one), all at or after the
-- clock's millisecond and at most max_drift_ms ahead of it; first is the
-- first of them, got how many.  Waits at most max_wait_ms in all for the
-- clock when the positions run that far ahead.  given is a position that
-- snowid_sql_next() took and could not use at once, or NULL: it is kept if
-- the clock allows it, as a position taken here would be.  Otherwise takes
-- them as a writer, waiting for the lock at most 10 s.
CREATE FUNCTION @extschema@.snowid_sql_take(n integer, c @extschema@.snowid_config,
	given bigint, OUT first bigint, OUT got integer)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	s integer := c.sequence_bits;
	epoch_ms bigint := @extschema@.snowid_sql_unix_ms(c.epoch);
	now_ms bigint;
	allowed bigint;
	v bigint;
	m record;
	-- the time slept, counted rather than read from the wall clock, which
	-- may step back during the wait
	waited_ms integer := 0;
	nap_ms integer;
BEGIN
	IF pg_is_in_recovery() THEN
		RAISE EXCEPTION 'cannot generate snowids during recovery'
			USING ERRCODE = 'read_only_sql_transaction',
				  HINT = 'Take ids from the primary, or promote this server first.';
	END IF;
	LOOP
		now_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
		IF now_ms > @extschema@.snowid_sql_max_ms(c) THEN
			RAISE EXCEPTION 'snowid has run out of timestamps'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The layout %s holds no time after %s.', @extschema@.snowid_sql_layout(c),
									  @extschema@.snowid_sql_timestamptz(@extschema@.snowid_sql_max_ms(c) + epoch_ms));
		END IF;
		-- the last position the drift bound allows
		allowed := ((now_ms + c.max_drift_ms + 1) << s) - 1;
		v := given;
		given := NULL;
		IF v IS NULL THEN
			-- at or after the clock, and up to the drift bound
			m := @extschema@.snowid_sql_move(now_ms << s, n, allowed, true);
			first := m.first;
			got := m.got;
			IF now_ms < (m.last >> s) - 100 AND waited_ms = 0 THEN
				PERFORM nextval('@extschema@.snowid_clock_steps');
			END IF;
		ELSE
			first := v;
			got := CASE WHEN v <= allowed THEN 1 ELSE 0 END;
			IF (v >> s) > now_ms + 100 AND waited_ms = 0 THEN
				PERFORM nextval('@extschema@.snowid_clock_steps');
			END IF;
		END IF;
		IF got >= 1 THEN
			RETURN;
		END IF;
		-- the positions run too far ahead of the clock: wait for it
		IF waited_ms >= c.max_wait_ms THEN
			PERFORM nextval('@extschema@.snowid_clock_errors');
			RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
				(first >> s) - now_ms
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
									  c.max_drift_ms, c.max_wait_ms),
					  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
		END IF;
		IF waited_ms = 0 THEN
			PERFORM nextval('@extschema@.snowid_waits');
		END IF;
		nap_ms := least(10, c.max_wait_ms - waited_ms);
		PERFORM pg_sleep(nap_ms / 1000.0);
		waited_ms := waited_ms + nap_ms;
		IF v IS NOT NULL THEN
			-- the position taken is ours: wait until the clock allows it
			LOOP
				now_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
				IF v <= ((now_ms + c.max_drift_ms + 1) << s) - 1 THEN
					first := v;
					got := 1;
					RETURN;
				END IF;
				IF waited_ms >= c.max_wait_ms THEN
					PERFORM nextval('@extschema@.snowid_clock_errors');
					RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
						(v >> s) - now_ms
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
											  c.max_drift_ms, c.max_wait_ms),
							  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
				END IF;
				nap_ms := least(10, c.max_wait_ms - waited_ms);
				PERFORM pg_sleep(nap_ms / 1000.0);
				waited_ms := waited_ms + nap_ms;
			END LOOP;
		END IF;
	END LOOP;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_take(integer, @extschema@.snowid_config, bigint) FROM PUBLIC;

-- The id at a position, for the node of the configuration
CREATE FUNCTION @extschema@.snowid_sql_compose(c @extschema@.snowid_config, pos bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN @extschema@.snowid_sql_id(pos, c.datacenter_id, c.worker_id, c.datacenter_bits,
	c.worker_bits, c.sequence_bits);

-- One id, as snowid_next(); NULL instead if the worker id is to be claimed
-- and is not, unless claimed says a claim was just made.
--
-- The common path takes no lock, opens no subtransaction, reads no table
-- and runs few statements (PL/pgSQL's cost is mostly per statement): the
-- worker id (snowid_sql_fixed()'s, or the claimed one), the clock, then
-- the generation is read, one position taken with nextval() and the
-- generation read again.  The position is used if both readings are the
-- same even value (no writer's window can have enclosed the nextval(), see
-- snowid_sql_move()) and it lies in the clock's millisecond or up to 100
-- ms ahead (and no more than max_drift_ms).
--
-- Why no position is used twice: nextval() gives each position at most
-- once, and only a setval() moves the sequence back, which only a writer
-- does, within a window; a position that a window may have enclosed is
-- never used, and every position taken outside the windows lies below
-- each later setting (a writer reads the sequence after its window
-- opens).  Writers take turns on the lock, and each uses only positions it
-- set itself under it.
--
-- A position behind the clock (the first call of each millisecond, below
-- 4096 ids a millisecond) or one a window may have enclosed is skipped:
-- the call becomes a writer, which moves the sequence to the clock's
-- millisecond and takes that position.  Anything else takes the path of
-- snowid_sql_config() and snowid_sql_take(), which read the table, with
-- the position taken here if it is this call's: a configuration with
-- something missing (said there), a standby, the end of the layout's time,
-- or a position far ahead of the clock (counted, and waited for).
CREATE FUNCTION @extschema@.snowid_sql_next(claimed boolean)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
	w integer;
	now_ms bigint;
	g bigint;
	v bigint;
BEGIN
	w := CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id
		THEN @extschema@.snowid_sql_claimed_of(pg_sequence_last_value('@extschema@.snowid_claimed'),
											   (@extschema@.snowid_sql_fixed()).datacenter_id,
											   (@extschema@.snowid_sql_fixed()).worker_bits,
											   (@extschema@.snowid_sql_fixed()).worker_id)
		ELSE (@extschema@.snowid_sql_fixed()).worker_id END;
	now_ms := CASE WHEN w IS NOT NULL AND NOT pg_is_in_recovery()
		THEN floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint
			- (@extschema@.snowid_sql_fixed()).epoch_ms END;
	g := pg_sequence_last_value('@extschema@.snowid_generation');
	v := CASE WHEN now_ms <= (@extschema@.snowid_sql_fixed()).max_ms THEN nextval('@extschema@.snowid_position') END;
	IF g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
		AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
		RETURN @extschema@.snowid_sql_fixed_id(w, v);
	END IF;
	IF v IS NOT NULL THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer
		IF NOT coalesce(g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
						AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
							> now_ms + (@extschema@.snowid_sql_fixed()).near_ms, false) THEN
			v := (@extschema@.snowid_sql_move(now_ms << (@extschema@.snowid_sql_fixed()).sequence_bits,
											  1, NULL, false)).first;
		END IF;
		IF (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
			RETURN @extschema@.snowid_sql_fixed_id(w, v);
		END IF;
	END IF;

	c := @extschema@.snowid_sql_config(false);
	IF c.worker_id IS NULL THEN
		IF c.claim_worker_id AND NOT claimed THEN
			RETURN NULL;
		END IF;
		c := @extschema@.snowid_sql_config(true);
	END IF;
	RETURN @extschema@.snowid_sql_compose(c, (@extschema@.snowid_sql_take(1, c, v)).first);
END
$$;

-- Issuing runs as the caller until the worker id is claimed (see
-- snowid_sql_claim_first()), then in the functions above
CREATE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN coalesce(@extschema@.snowid_sql_next(false),
				@extschema@.snowid_sql_next(@extschema@.snowid_sql_claim_first()));

COMMENT ON FUNCTION @extschema@.snowid_next() IS
'the next id of this server''s generator';

CREATE FUNCTION @extschema@.snowid_sql_next_batch(n integer, claimed boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE STRICT
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 10
AS $$
DECLARE
	c @extschema@.snowid_config;
	t record;
	taken integer := 0;
BEGIN
	IF n < 1 OR n > 100000 THEN
		RAISE EXCEPTION 'batch size % is out of range', n
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'snowid_next_batch() hands out from 1 to 100000 ids in one call.';
	END IF;
	c := @extschema@.snowid_sql_config(true);
	WHILE taken < n LOOP
		t := @extschema@.snowid_sql_take(n - taken, c, NULL);
		RETURN QUERY SELECT @extschema@.snowid_sql_compose(c, t.first + g)
			FROM generate_series(0::bigint, t.got - 1) g;
		taken := taken + t.got;
	END LOOP;
END
$$;

CREATE FUNCTION @extschema@.snowid_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
ROWS 10
BEGIN ATOMIC
	SELECT @extschema@.snowid_sql_next_batch(n, @extschema@.snowid_sql_claim_first());
END;

COMMENT ON FUNCTION @extschema@.snowid_next_batch(integer) IS
'n ids (1 to 100,000) in ascending order';

-- -------------------------------------------------------------------------
-- Decoding and time ranges
-- -------------------------------------------------------------------------

-- The last millisecond since the epoch that ids can hold
CREATE FUNCTION @extschema@.snowid_sql_max_ms(c @extschema@.snowid_config)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least((1::bigint << (63 - c.datacenter_bits - c.worker_bits - c.sequence_bits)) - 1,
			 253402300800000 - 1 - @extschema@.snowid_sql_unix_ms(c.epoch));

-- The milliseconds field of an id a user gave, checked
CREATE FUNCTION @extschema@.snowid_sql_ms(c @extschema@.snowid_config, id bigint)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
	ms bigint := id >> (c.datacenter_bits + c.worker_bits + c.sequence_bits);
BEGIN
	IF id < 0 THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A snowid is never negative: its sign bit is always 0.';
	END IF;
	IF ms > @extschema@.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Its timestamp field lies after 9999-12-31 23:59:59.999 UTC, the last time snowids can hold.';
	END IF;
	RETURN ms;
END
$$;

CREATE FUNCTION @extschema@.snowid_decode(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	ms bigint := @extschema@.snowid_sql_ms(c, id);
BEGIN
	ts := @extschema@.snowid_sql_timestamptz(ms + @extschema@.snowid_sql_unix_ms(c.epoch));
	datacenter_id := (id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1);
	worker_id := (id >> c.sequence_bits) & ((1 << c.worker_bits) - 1);
	sequence := id & ((1 << c.sequence_bits) - 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_decode(bigint) IS
'takes an id apart: its time, datacenter id, worker id and sequence';

CREATE FUNCTION @extschema@.snowid_time(id bigint)
RETURNS timestamptz
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
BEGIN
	RETURN @extschema@.snowid_sql_timestamptz(@extschema@.snowid_sql_ms(c, id)
											  + @extschema@.snowid_sql_unix_ms(c.epoch));
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_time(bigint) IS
'the time a snowid was made: the ts of snowid_decode()';

CREATE FUNCTION @extschema@.snowid_from_time(ts timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	epoch_ms bigint := @extschema@.snowid_sql_unix_ms(c.epoch);
	max_ms bigint := @extschema@.snowid_sql_max_ms(c);
	unix_ms bigint;
BEGIN
	-- past the year 294000 or so, Unix microseconds do not fit 64 bits
	IF isfinite(ts) THEN
		unix_ms := @extschema@.snowid_sql_unix_ms(ts);
	END IF;
	IF unix_ms IS NULL OR unix_ms < epoch_ms OR unix_ms - epoch_ms > max_ms THEN
		RAISE EXCEPTION 'timestamp out of range for snowid: "%"', ts
			USING ERRCODE = 'datetime_field_overflow',
				  DETAIL = format('Ids can hold times from %s to %s.',
								  @extschema@.snowid_sql_timestamptz(epoch_ms),
								  @extschema@.snowid_sql_timestamptz(epoch_ms + max_ms));
	END IF;
	RETURN (unix_ms - epoch_ms) << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_time(timestamptz) IS
'the smallest id any server could issue at a given time';

CREATE FUNCTION @extschema@.snowid_span(span interval)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	max_ms bigint := @extschema@.snowid_sql_max_ms(c);
	months bigint := EXTRACT(year FROM span)::bigint * 12 + EXTRACT(month FROM span)::bigint;
	days bigint := EXTRACT(day FROM span)::bigint;
	time_us bigint := (EXTRACT(hour FROM span)::bigint * 60 + EXTRACT(minute FROM span)::bigint)
		* 60000000 + EXTRACT(microseconds FROM span)::bigint;
	ms bigint;
BEGIN
	IF months <> 0 THEN
		RAISE EXCEPTION 'interval "%" has no fixed length in milliseconds', span
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Months and years are not a fixed number of milliseconds, so they are not a fixed number of ids.',
				  HINT = 'Give the span in days or smaller units, or bound each month with snowid_from_time() of its first day.';
	END IF;
	IF time_us % 1000 <> 0 THEN
		RAISE EXCEPTION 'interval "%" is not a whole number of milliseconds', span
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Ids count time in whole milliseconds.';
	END IF;
	ms := days * 86400000 + time_us / 1000;
	IF ms < 0 OR ms > max_ms THEN
		RAISE EXCEPTION 'interval "%" out of range for snowid', span
			USING ERRCODE = 'interval_field_overflow',
				  DETAIL = format('A span of ids lasts from 0 to %s (a day counted as 24 hours) under the layout %s.',
								  make_interval(days => (max_ms / 86400000)::integer)
								  + (max_ms % 86400000) * interval '1 millisecond',
								  @extschema@.snowid_sql_layout(c));
	END IF;
	RETURN ms << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_span(interval) IS
'how many ids wide a span of time is: snowid_from_time(t + d) - snowid_from_time(t)';

-- -------------------------------------------------------------------------
-- Serial numbers
-- -------------------------------------------------------------------------

-- What is wrong with a serial prefix, as a sentence, or NULL
CREATE FUNCTION @extschema@.snowid_sql_prefix_problem(prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	bad text;
BEGIN
	IF prefix = '' THEN
		RETURN 'The prefix is empty.';
	END IF;
	bad := substring(prefix FROM '[^A-Za-z0-9_-]');
	IF bad = ' ' THEN
		RETURN 'The prefix contains a space.';
	ELSIF bad IS NOT NULL AND (ascii(bad) < 32 OR ascii(bad) = 127) THEN
		RETURN format('The prefix contains the control character 0x%s.', lpad(to_hex(ascii(bad)), 2, '0'));
	ELSIF bad IS NOT NULL THEN
		RETURN format('The prefix contains "%s".', bad);
	ELSIF length(prefix) > 16 THEN
		RETURN format('The prefix has %s characters; at most 16 are allowed.', length(prefix));
	END IF;
	RETURN NULL;
END
$$;

CREATE FUNCTION @extschema@.snowid_sql_check_prefix(prefix text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text;
BEGIN
	IF prefix IS NULL THEN
		RAISE EXCEPTION 'serial prefix must not be null'
			USING ERRCODE = 'null_value_not_allowed',
				  HINT = 'A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, "_" and "-".';
	END IF;
	problem := @extschema@.snowid_sql_prefix_problem(prefix);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid serial prefix "%"', prefix
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, "_" and "-".';
	END IF;
END
$$;

-- The decimal digits of the largest value of a field of the given width
CREATE FUNCTION @extschema@.snowid_sql_width(bits integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN length(((1::bigint << bits) - 1)::text);

-- The serial of an id under a checked configuration, the prefix checked
CREATE FUNCTION @extschema@.snowid_sql_format_serial(c @extschema@.snowid_config,
													prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	unix_ms bigint := @extschema@.snowid_sql_ms(c, id) + @extschema@.snowid_sql_unix_ms(c.epoch);
BEGIN
	RETURN prefix
		|| to_char((timestamp '1970-01-01'
					+ make_interval(days => (unix_ms / 86400000)::integer))
				   + (unix_ms % 86400000) * interval '1 millisecond',
				   'YYYYMMDDHH24MISSMS')
		|| lpad(((id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1))::text,
				@extschema@.snowid_sql_width(c.datacenter_bits), '0')
		|| lpad(((id >> c.sequence_bits) & ((1 << c.worker_bits) - 1))::text,
				@extschema@.snowid_sql_width(c.worker_bits), '0')
		|| lpad((id & ((1 << c.sequence_bits) - 1))::text,
				@extschema@.snowid_sql_width(c.sequence_bits), '0');
END
$$;

CREATE FUNCTION @extschema@.snowid_serial(prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF prefix IS NOT NULL OR id IS NOT NULL THEN
		PERFORM @extschema@.snowid_sql_check_prefix(prefix);
	END IF;
	IF id IS NULL THEN
		RETURN NULL;
	END IF;
	RETURN @extschema@.snowid_sql_format_serial(@extschema@.snowid_sql_config(false), prefix, id);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_serial(text, bigint) IS
'the serial number of an existing id';

CREATE FUNCTION @extschema@.snowid_serial(prefix text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN @extschema@.snowid_serial(prefix, @extschema@.snowid_next());

COMMENT ON FUNCTION @extschema@.snowid_serial(text) IS
'the serial number of a new id: the prefix, the UTC time, then the datacenter id, worker id and sequence';

CREATE FUNCTION @extschema@.snowid_from_serial(serial text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	wd integer := @extschema@.snowid_sql_width(c.datacenter_bits);
	ww integer := @extschema@.snowid_sql_width(c.worker_bits);
	ws integer := @extschema@.snowid_sql_width(c.sequence_bits);
	total integer := 17 + wd + ww + ws;
	prefix_len integer := length(serial) - total;
	d text;
	y integer; mo integer; dd integer; h integer; mi integer; sec integer; milli integer;
	dc bigint; w bigint; sq bigint;
	unix_ms bigint;
	ms bigint;
	problem text;
BEGIN
	IF prefix_len < 1 THEN
		problem := format('A serial is a prefix followed by %s digits; this one has only %s characters.',
						  total, length(serial));
	ELSE
		d := substr(serial, prefix_len + 1);
		IF d !~ '^[0-9]*$' THEN
			problem := format('A serial ends in %s digits (17 for the time, then %s, %s and %s for the datacenter id, worker id and sequence).',
							  total, wd, ww, ws);
		END IF;
		IF problem IS NULL THEN
			problem := @extschema@.snowid_sql_prefix_problem(substr(serial, 1, prefix_len));
		END IF;
	END IF;
	IF problem IS NULL THEN
		y := substr(d, 1, 4)::integer;
		mo := substr(d, 5, 2)::integer;
		dd := substr(d, 7, 2)::integer;
		h := substr(d, 9, 2)::integer;
		mi := substr(d, 11, 2)::integer;
		sec := substr(d, 13, 2)::integer;
		milli := substr(d, 15, 3)::integer;
		IF mo NOT BETWEEN 1 AND 12 OR dd < 1 OR dd >
			(ARRAY[31, CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END,
				   31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[mo] THEN
			problem := format('%s is not a date.', substr(d, 1, 8));
		ELSIF h > 23 OR mi > 59 OR sec > 59 THEN
			problem := format('%s is not a time of day.', substr(d, 9, 6));
		ELSE
			unix_ms := @extschema@.snowid_sql_days(y, mo, dd) * 86400000
				+ ((h * 60 + mi) * 60 + sec) * 1000::bigint + milli;
			ms := unix_ms - @extschema@.snowid_sql_unix_ms(c.epoch);
			dc := substr(d, 18, wd)::bigint;
			w := substr(d, 18 + wd, ww)::bigint;
			sq := substr(d, 18 + wd + ww, ws)::bigint;
			IF ms < 0 OR ms > @extschema@.snowid_sql_max_ms(c) THEN
				problem := format('Its time %s lies outside the range of snowid timestamps.', substr(d, 1, 17));
			ELSIF dc > (1 << c.datacenter_bits) - 1 THEN
				problem := format('Its datacenter id %s is larger than %s, the largest snowid.datacenter_bits = %s can hold.',
								  dc, (1 << c.datacenter_bits) - 1, c.datacenter_bits);
			ELSIF w > (1 << c.worker_bits) - 1 THEN
				problem := format('Its worker id %s is larger than %s, the largest snowid.worker_bits = %s can hold.',
								  w, (1 << c.worker_bits) - 1, c.worker_bits);
			ELSIF sq > (1 << c.sequence_bits) - 1 THEN
				problem := format('Its sequence %s is larger than %s, the largest snowid.sequence_bits = %s can hold.',
								  sq, (1 << c.sequence_bits) - 1, c.sequence_bits);
			END IF;
		END IF;
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid serial "%"', serial
			USING ERRCODE = 'invalid_text_representation', DETAIL = problem;
	END IF;
	RETURN (ms << (c.datacenter_bits + c.worker_bits + c.sequence_bits))
		| (dc << (c.worker_bits + c.sequence_bits)) | (w << c.sequence_bits) | sq;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_serial(text) IS
'the id a serial number was printed from';

-- Days from 1970-01-01 to a date of the proleptic Gregorian calendar
CREATE FUNCTION @extschema@.snowid_sql_days(y integer, m integer, d integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (make_date(2000, 1, 1) - date '1970-01-01')::bigint
	+ ((y - 2000) / 400) * 146097::bigint
	+ (make_date(2000 + (y - 2000) % 400 + CASE WHEN (y - 2000) % 400 < 0 THEN 400 ELSE 0 END, m, d)
	   - make_date(2000, 1, 1))
	- CASE WHEN (y - 2000) % 400 < 0 THEN 146097 ELSE 0 END;

-- -------------------------------------------------------------------------
-- snowid_status()
-- -------------------------------------------------------------------------

CREATE FUNCTION @extschema@.snowid_sql_layout(c @extschema@.snowid_config)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN format('%s/%s/%s/%s', 63 - c.datacenter_bits - c.worker_bits - c.sequence_bits,
			  c.datacenter_bits, c.worker_bits, c.sequence_bits);

CREATE FUNCTION @extschema@.snowid_status(
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT worker_source text,
	OUT last_time timestamptz,
	OUT drift_ms bigint,
	OUT ids_issued bigint,
	OUT waits bigint,
	OUT clock_steps bigint,
	OUT clock_errors bigint,
	OUT high_water_time timestamptz,
	OUT layout text,
	OUT epoch timestamptz,
	OUT ceiling_ids_per_s bigint,
	OUT exhausted_at timestamptz,
	OUT time_left interval,
	OUT js_safe_until timestamptz,
	OUT lease_expires_at timestamptz,
	OUT fence_time timestamptz,
	OUT renewals bigint,
	OUT failed_renewals bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	epoch_ms bigint := @extschema@.snowid_sql_unix_ms(c.epoch);
	node_seq_bits integer := c.datacenter_bits + c.worker_bits + c.sequence_bits;
	clock_ms bigint := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
	end_ms bigint := @extschema@.snowid_sql_max_ms(c) + 1;
	safe_end_ms bigint := 1::bigint << (53 - node_seq_bits);
	left_ms bigint;
	last bigint;
	called boolean;
BEGIN
	SELECT s.last_value, s.is_called INTO last, called FROM @extschema@.snowid_position s;
	datacenter_id := c.datacenter_id;
	worker_id := c.worker_id;
	worker_source := CASE WHEN c.worker_id IS NULL THEN 'none'
		WHEN c.claim_worker_id THEN 'coordinator' ELSE 'config' END;
	IF called THEN
		last_time := @extschema@.snowid_sql_timestamptz((last >> c.sequence_bits) + epoch_ms);
		drift_ms := greatest((last >> c.sequence_bits) - clock_ms, 0);
		high_water_time := @extschema@.snowid_sql_timestamptz((last >> c.sequence_bits) + 1 + epoch_ms);
	ELSE
		drift_ms := 0;
		high_water_time := @extschema@.snowid_sql_timestamptz(epoch_ms);
	END IF;
	SELECT s.last_value + s.is_called::integer INTO waits FROM @extschema@.snowid_waits s;
	SELECT s.last_value + s.is_called::integer INTO clock_steps FROM @extschema@.snowid_clock_steps s;
	SELECT s.last_value + s.is_called::integer INTO clock_errors FROM @extschema@.snowid_clock_errors s;
	layout := @extschema@.snowid_sql_layout(c);
	epoch := c.epoch;
	ceiling_ids_per_s := (1::bigint << c.sequence_bits) * 1000;
	exhausted_at := @extschema@.snowid_sql_timestamptz(end_ms + epoch_ms);
	left_ms := greatest(end_ms - clock_ms, 0);
	time_left := make_interval(days => (left_ms / 86400000)::integer)
		+ (left_ms % 86400000) * interval '1 millisecond';
	IF safe_end_ms > end_ms - 1 THEN
		js_safe_until := 'infinity';
	ELSIF clock_ms < safe_end_ms THEN
		js_safe_until := @extschema@.snowid_sql_timestamptz(safe_end_ms + epoch_ms);
	END IF;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_status() IS
'the state of this database''s snowid generator (SQL edition)';

-- -------------------------------------------------------------------------
-- Public ids (doc/public-ids.md, "Specification")
-- -------------------------------------------------------------------------
-- Words of 64 bits are bigints holding the same bits; additions wrap, as
-- SipHash needs, by adding the halves apart.

-- SipHash-2-4 under the key (k0, k1) of the 8-byte message m
CREATE FUNCTION @extschema@.snowid_sql_siphash(k0 bigint, k1 bigint, m bigint)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v0 bigint := k0 # 8317987319222330741;	-- 0x736f6d6570736575
	v1 bigint := k1 # 7237128888997146477;	-- 0x646f72616e646f6d
	v2 bigint := k0 # 7816392313619706465;	-- 0x6c7967656e657261
	v3 bigint := k1 # 8387220255154660723;	-- 0x7465646279746573
	lo bigint;
	b bigint := 8::bigint << 56;
	w bigint;
BEGIN
	FOR r IN 1 .. 8 LOOP
		IF r = 1 THEN
			w := m;
			v3 := v3 # w;
		ELSIF r = 3 THEN
			v0 := v0 # w;
			w := b;
			v3 := v3 # w;
		ELSIF r = 5 THEN
			v0 := v0 # w;
			v2 := v2 # 255;
		END IF;
		-- one SipRound
		lo := (v0 & 4294967295) + (v1 & 4294967295);
		v0 := (((v0 >> 32) + (v1 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v1 := (v1 << 13) | ((v1 >> 51) & 8191);
		v1 := v1 # v0;
		v0 := (v0 << 32) | ((v0 >> 32) & 4294967295);
		lo := (v2 & 4294967295) + (v3 & 4294967295);
		v2 := (((v2 >> 32) + (v3 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v3 := (v3 << 16) | ((v3 >> 48) & 65535);
		v3 := v3 # v2;
		lo := (v0 & 4294967295) + (v3 & 4294967295);
		v0 := (((v0 >> 32) + (v3 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v3 := (v3 << 21) | ((v3 >> 43) & 2097151);
		v3 := v3 # v0;
		lo := (v2 & 4294967295) + (v1 & 4294967295);
		v2 := (((v2 >> 32) + (v1 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v1 := (v1 << 17) | ((v1 >> 47) & 131071);
		v1 := v1 # v2;
		v2 := (v2 << 32) | ((v2 >> 32) & 4294967295);
	END LOOP;
	RETURN v0 # v1 # v2 # v3;
END
$$;

-- A 64-bit word of 8 bytes of a key, little-endian
CREATE FUNCTION @extschema@.snowid_sql_key_word(key bytea, start integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (get_byte(key, start)::bigint) | (get_byte(key, start + 1)::bigint << 8)
	| (get_byte(key, start + 2)::bigint << 16) | (get_byte(key, start + 3)::bigint << 24)
	| (get_byte(key, start + 4)::bigint << 32) | (get_byte(key, start + 5)::bigint << 40)
	| (get_byte(key, start + 6)::bigint << 48) | (get_byte(key, start + 7)::bigint << 56);

-- The ten-round Feistel permutation of a number of 63 bits, forwards or
-- backwards
CREATE FUNCTION @extschema@.snowid_sql_permute(key bytea, x bigint, backwards boolean)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k0 bigint := @extschema@.snowid_sql_key_word(key, 0);
	k1 bigint := @extschema@.snowid_sql_key_word(key, 8);
	h bigint := x >> 32;
	l bigint := x & 4294967295;
	r integer;
BEGIN
	FOR i IN 0 .. 9 LOOP
		r := CASE WHEN backwards THEN 9 - i ELSE i END;
		IF r % 2 = 0 THEN
			h := h # (@extschema@.snowid_sql_siphash(k0, k1, (r::bigint << 32) | l) & 2147483647);
		ELSE
			l := l # (@extschema@.snowid_sql_siphash(k0, k1, (r::bigint << 32) | h) & 4294967295);
		END IF;
	END LOOP;
	RETURN (h << 32) | l;
END
$$;

-- One step of the check: 2 * state + symbol in GF(32)
CREATE FUNCTION @extschema@.snowid_sql_damm(state integer, symbol integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (((state << 1) & 31) # CASE WHEN state & 16 <> 0 THEN 5 ELSE 0 END) # symbol;

-- The symbols of public ids, Crockford's base32
CREATE FUNCTION @extschema@.snowid_sql_symbols()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

-- What is wrong with a key id, as a sentence, or NULL
CREATE FUNCTION @extschema@.snowid_sql_key_id_problem(key_id text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE
	WHEN key_id !~ '^[A-Za-z0-9]{1,8}$'
		THEN 'A key id has 1 to 8 ASCII letters and digits.'
	WHEN key_id ~ '[IiLlOoUu]'
		THEN 'A key id has none of I, L, O and U.'
	END;

CREATE FUNCTION @extschema@.snowid_sql_check_id(id bigint, function_name text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF id < 0 THEN
		RAISE EXCEPTION '% takes a non-negative number, not %', function_name, id
			USING ERRCODE = 'numeric_value_out_of_range',
				  DETAIL = 'Ids and their public numbers lie from 0 to 9223372036854775807.';
	END IF;
END
$$;

-- The key of the smallest rank, which makes new public ids
CREATE FUNCTION @extschema@.snowid_sql_first_key(OUT key_id text, OUT key bytea)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	SELECT k.key_id, k.key INTO key_id, key
	FROM @extschema@.snowid_public_keys k ORDER BY k.rank LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_public_keys holds no key'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Public ids are made with the keys of that table.',
				  HINT = 'As the owner of the extension, insert a key of 16 random bytes, with core functions only: INSERT INTO snowid_public_keys VALUES (''K1'', substr(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())), 1, 16), 1) (doc/managed.md).';
	END IF;
END
$$;

CREATE FUNCTION @extschema@.snowid_scramble(id bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.snowid_sql_check_id(id, 'snowid_scramble()');
	RETURN @extschema@.snowid_sql_permute((@extschema@.snowid_sql_first_key()).key, id, false);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_scramble(bigint) IS
'the public number of an id: the permutation of snowid_public() with the first key, as a number';

CREATE FUNCTION @extschema@.snowid_unscramble(number bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.snowid_sql_check_id(number, 'snowid_unscramble()');
	RETURN @extschema@.snowid_sql_permute((@extschema@.snowid_sql_first_key()).key, number, true);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_unscramble(bigint) IS
'the id of a public number made by snowid_scramble()';

CREATE FUNCTION @extschema@.snowid_public(id bigint)
RETURNS text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k record;
	symbols text := @extschema@.snowid_sql_symbols();
	number bigint;
	state integer := 0;
	body text := '';
	v integer;
BEGIN
	PERFORM @extschema@.snowid_sql_check_id(id, 'snowid_public()');
	k := @extschema@.snowid_sql_first_key();
	number := @extschema@.snowid_sql_permute(k.key, id, false);
	FOR i IN 1 .. length(k.key_id) LOOP
		state := @extschema@.snowid_sql_damm(state, strpos(symbols, substr(k.key_id, i, 1)) - 1);
	END LOOP;
	FOR i IN REVERSE 12 .. 0 LOOP
		v := ((number >> (5 * i)) & 31)::integer;
		state := @extschema@.snowid_sql_damm(state, v);
		body := body || substr(symbols, v + 1, 1);
	END LOOP;
	RETURN k.key_id || '-' || body
		|| substr(symbols, @extschema@.snowid_sql_damm(state, 0) + 1, 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public(bigint) IS
'the public id of an id: a keyed permutation of it, in base32 with a check character';

-- Reads a public id: the id, or NULL with what is wrong (NULL too for a
-- text too long to show)
CREATE FUNCTION @extschema@.snowid_sql_read_public(input text, OUT id bigint, OUT problem text)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	symbols text := @extschema@.snowid_sql_symbols();
	s integer[] := '{}';
	ch text;
	v integer;
	key_len integer;
	state integer := 0;
	number bigint := 0;
	kid text := '';
	key bytea;
BEGIN
	IF octet_length(input) > 64 THEN
		RETURN;
	END IF;
	FOREACH ch IN ARRAY regexp_split_to_array(input, '') LOOP
		CONTINUE WHEN ch = '-';
		v := CASE WHEN ch ~ '^[A-Za-z0-9]$'
			THEN strpos(symbols, translate(upper(ch), 'OIL', '011')) - 1 ELSE -1 END;
		IF v < 0 THEN
			problem := CASE
				WHEN ch = ' ' THEN 'It contains a space.'
				WHEN ascii(ch) < 32 OR ascii(ch) = 127
					THEN format('It contains the control character 0x%s.', lpad(to_hex(ascii(ch)), 2, '0'))
				ELSE format('It contains "%s", which public ids do not use.', ch) END;
			RETURN;
		END IF;
		IF cardinality(s) = 22 THEN
			problem := 'A public id is a key id of 1 to 8 characters followed by 14 characters; this one is longer.';
			RETURN;
		END IF;
		s := s || v;
	END LOOP;
	key_len := cardinality(s) - 14;
	IF key_len < 1 THEN
		problem := format('A public id is a key id of 1 to 8 characters followed by 14 characters; this one has %s besides hyphens.',
						  cardinality(s));
		RETURN;
	END IF;
	FOR i IN 1 .. cardinality(s) LOOP
		state := @extschema@.snowid_sql_damm(state, s[i]);
	END LOOP;
	IF state <> 0 THEN
		problem := 'Its check character does not match: a character is wrong, or two are swapped.';
		RETURN;
	END IF;
	IF s[key_len + 1] > 7 THEN
		problem := 'It lies outside the range of public ids.';
		RETURN;
	END IF;
	FOR i IN 1 .. 13 LOOP
		number := (number << 5) | s[key_len + i];
	END LOOP;
	FOR i IN 1 .. key_len LOOP
		kid := kid || substr(symbols, s[i] + 1, 1);
	END LOOP;
	SELECT k.key INTO key FROM @extschema@.snowid_public_keys k WHERE k.key_id = kid;
	IF NOT FOUND THEN
		PERFORM @extschema@.snowid_sql_first_key();
		problem := format('No key of snowid_public_keys has the id "%s".', kid);
		RETURN;
	END IF;
	id := @extschema@.snowid_sql_permute(key, number, true);
END
$$;

CREATE FUNCTION @extschema@.snowid_from_public(public_id text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record := @extschema@.snowid_sql_read_public(public_id);
BEGIN
	IF r.id IS NOT NULL THEN
		RETURN r.id;
	ELSIF r.problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid public id "%"', public_id
			USING ERRCODE = 'invalid_text_representation', DETAIL = r.problem;
	END IF;
	RAISE EXCEPTION 'invalid public id'
		USING ERRCODE = 'invalid_text_representation',
			  DETAIL = format('It has %s bytes; a public id has at most 22 characters besides hyphens.',
							  octet_length(public_id));
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_public(text) IS
'the id of a public id made by snowid_public() with any key of snowid_public_keys';

CREATE FUNCTION @extschema@.snowid_public_is_valid(public_id text)
RETURNS boolean
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN (@extschema@.snowid_sql_read_public(public_id)).id IS NOT NULL;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public_is_valid(text) IS
'whether snowid_from_public() takes a text, without an error for one it does not';

-- Checks a key: its id by the rules of the C edition's key file, 16 bytes,
-- and no two key ids that one character typed too many or dropped turns
-- into each other
CREATE FUNCTION @extschema@.snowid_sql_key_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_key_id_problem(NEW.key_id);
	symbols text := @extschema@.snowid_sql_symbols();
	other text;
	short text;
	long text;
	state integer;
BEGIN
	IF problem IS NULL AND octet_length(NEW.key) <> 16 THEN
		problem := format('A key has 16 bytes (128 bits), not %s.', octet_length(NEW.key));
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid key for snowid_public_keys'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	NEW.key_id := upper(NEW.key_id);
	FOR other IN SELECT k.key_id FROM @extschema@.snowid_public_keys k
		WHERE k.key_id <> NEW.key_id AND abs(length(k.key_id) - length(NEW.key_id)) = 1
	LOOP
		short := CASE WHEN length(other) < length(NEW.key_id) THEN other ELSE NEW.key_id END;
		long := CASE WHEN length(other) < length(NEW.key_id) THEN NEW.key_id ELSE other END;
		-- long is short with one symbol added at its end, or put in where
		-- the check does not see it (3 * state)
		IF left(long, length(short)) = short THEN
			problem := format('The key ids "%s" and "%s" differ by one character at the end.', short, long);
		ELSE
			state := 0;
			FOR i IN 1 .. length(short) LOOP
				IF left(long, i - 1) = left(short, i - 1)
					AND substr(long, i + 1) = substr(short, i)
					AND strpos(symbols, substr(long, i, 1)) - 1 =
						(@extschema@.snowid_sql_damm(state, 0) # state) THEN
					problem := format('The check of public ids does not tell "%s" from "%s".', short, long);
				END IF;
				state := @extschema@.snowid_sql_damm(state, strpos(symbols, substr(short, i, 1)) - 1);
			END LOOP;
		END IF;
		IF problem IS NOT NULL THEN
			RAISE EXCEPTION 'invalid key for snowid_public_keys'
				USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
					  HINT = 'Choose key ids of one length, as K1, K2 and so on.';
		END IF;
	END LOOP;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_public_keys_check BEFORE INSERT OR UPDATE
	ON @extschema@.snowid_public_keys
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_key_check();

-- The version of the SQL edition installed in this schema.  Every update
-- script makes it anew with its own version: a plain script (make
-- snowid_sql.sql) is no extension, and records its version nowhere else.
CREATE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.0'$$;

COMMENT ON FUNCTION @extschema@.snowid_sql_version() IS
'the version of the SQL edition of snowid installed in this schema';
