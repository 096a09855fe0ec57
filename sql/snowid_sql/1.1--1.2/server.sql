-- -------------------------------------------------------------------------
-- The server a worker id holds on
-- -------------------------------------------------------------------------

-- The start of the server (pg_postmaster_start_time(), in microseconds
-- since 1970, read back with to_timestamp(), which costs the common path
-- less than date_part() or EXTRACT) under which a writer last checked
-- the whole stamp (snowid_sql_here(), the system identifier too) and
-- moved the generator.  The common path (snowid_sql_next()) takes a
-- position only where it names this start: the first call after the
-- server starts is a writer.  A pg_createsubscriber copy keeps its
-- source's filenodes, which the common path compares, and its source's
-- sequences, whose position may lie ahead of its clock (up to the
-- writers' 9 ms past the source's clock, more where its own clock lags):
-- its calls took positions there under its source's worker id (issue 56).
-- It always starts a server of its own, so its first call now becomes a
-- writer, which finds another system identifier and says the copy has no
-- worker id, whatever its clock.  A crash restart keeps the start, and
-- the server: nothing to check.  Logged, not unlogged (which a crash
-- restart and a promotion reset, one read in place of another at every
-- call): a standby promoted soon after replaying the creation of an
-- unlogged sequence reads a page of zeros from it (test 111 on 17beta2;
-- test 142 shows why, see snowid_sql_claimed_run).
CREATE SEQUENCE @extschema@.snowid_sql_started AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
REVOKE ALL ON @extschema@.snowid_sql_started FROM PUBLIC;

-- Stamps this start in snowid_sql_started, for a writer that has checked
-- the server: the microseconds that to_timestamp() reads back as the start
-- (the nearest, or one either side where the floating point rounds
-- otherwise; none of them, which should not happen, stamps nothing, and
-- every call stays a writer)
CREATE FUNCTION @extschema@.snowid_sql_stamp_start()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	us bigint := (EXTRACT(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint;
	d integer;
	done bigint;
BEGIN
	FOREACH d IN ARRAY ARRAY[0, -1, 1] LOOP
		IF to_timestamp((us + d)::double precision / 1000000) = pg_postmaster_start_time() THEN
			done := setval('@extschema@.snowid_sql_started', us + d);
			RETURN;
		END IF;
	END LOOP;
END
$$;

-- This server and the generator's sequences as they are: the system
-- identifier (another for every initdb, pg_upgrade and pg_createsubscriber
-- copy), and the files of snowid_position and snowid_generation, which
-- name the database (another for a restored dump, and after any ALTER
-- SEQUENCE); no table read.  One expression, which the planner inlines
-- where it is called (each writer compares it): VOLATILE, as
-- pg_control_system() is (a STABLE function is not inlined whose body is
-- volatile), which reads pg_control at each call.
CREATE FUNCTION @extschema@.snowid_sql_here()
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE
RETURN pg_catalog.format('sysid=%s position=%s generation=%s',
						 (pg_catalog.pg_control_system()).system_identifier,
						 pg_catalog.pg_relation_filepath('@extschema@.snowid_position'::pg_catalog.regclass),
						 pg_catalog.pg_relation_filepath('@extschema@.snowid_generation'::pg_catalog.regclass));

-- What is wrong with the options of the generator's sequences, as a
-- sentence, or NULL: its reasoning holds for INCREMENT 1, CACHE 1 and NO
-- CYCLE alone (a cache hides a writer's window from readers); and with
-- what is logged: a crash empties an UNLOGGED sequence (the generator
-- would start again below the ids it issued) or table, which their owner
-- (the plain script's, pg_tle's) may make so
CREATE FUNCTION @extschema@.snowid_sql_sequences_problem()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT p.problem FROM (
		SELECT 1 AS kind, c.relname AS name,
			   pg_catalog.format('The sequence %s has INCREMENT %s, CACHE %s and %s; the generator needs INCREMENT 1, CACHE 1 and NO CYCLE.',
								 c.relname, s.seqincrement, s.seqcache,
								 CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END) AS problem
		FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.seqrelid
		WHERE s.seqrelid OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@.snowid_position'::pg_catalog.regclass,
														   '@extschema@.snowid_generation'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND (s.seqincrement OPERATOR(pg_catalog.<>) 1 OR s.seqcache OPERATOR(pg_catalog.<>) 1 OR s.seqcycle)
		UNION ALL
		SELECT 2, c.relname,
			   pg_catalog.format('The %s %s is UNLOGGED; the generator needs it logged (ALTER %s %s SET LOGGED), as a crash empties it.',
								 CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'table' END, c.relname,
								 CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname)
		FROM pg_catalog.pg_class c
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@.snowid_position'::pg_catalog.regclass,
													  '@extschema@.snowid_generation'::pg_catalog.regclass,
													  '@extschema@.snowid_claimed'::pg_catalog.regclass,
													  '@extschema@.snowid_config'::pg_catalog.regclass,
													  '@extschema@.snowid_holder'::pg_catalog.regclass,
													  '@extschema@.snowid_coordinator_state'::pg_catalog.regclass,
													  '@extschema@.snowid_locks'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND c.relpersistence OPERATOR(pg_catalog.<>) 'p'
	) p
	ORDER BY p.kind, p.name
	LIMIT 1;
END;

-- The error of a worker id set on another server
CREATE FUNCTION @extschema@.snowid_sql_elsewhere(worker_id integer)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'snowid has no worker id on this server'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = format('The worker id%s of snowid_config was set on another server, or with other sequences: this database is a copy (a restored dump, a logical subscriber, a pg_createsubscriber copy, a pg_upgrade), or snowid_position or snowid_generation was altered.',
							  ' ' || worker_id),
			  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter; or, claiming, SELECT snowid_claim().';
END
$$;

-- The error of a generator whose sequences a subscription synchronises
-- (PostgreSQL 19 lists sequences in pg_subscription_rel; earlier ones
-- never list these)
CREATE FUNCTION @extschema@.snowid_sql_subscribed()
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	seq text;
BEGIN
	SELECT c.relname INTO seq
	FROM pg_subscription_rel r JOIN pg_class c ON c.oid = r.srrelid
	WHERE r.srrelid IN ('@extschema@.snowid_position'::regclass, '@extschema@.snowid_generation'::regclass,
						'@extschema@.snowid_claimed'::regclass)
	ORDER BY c.relname
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'a subscription synchronises the sequences of the snowid generator'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('pg_subscription_rel lists the sequence %s: each synchronisation sets it to the publisher''s value, whose ids (or worker id) would come again.', seq),
				  HINT = 'Publish no sequence of the extension (not FOR ALL SEQUENCES), then ALTER SUBSCRIPTION ... REFRESH PUBLICATION on this server.';
	END IF;
END
$$;

-- The error of a claim in the session of a role whose privileges the
-- owner of the extension does not have
CREATE FUNCTION @extschema@.snowid_sql_not_owner()
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'snowid_sql claims its worker id only as a role whose privileges the owner of the extension has'
		USING ERRCODE = 'insufficient_privilege',
			  DETAIL = 'The claim runs functions that the owner of the extension may alter: as another role, they would run with privileges the owner does not have.',
			  HINT = 'Have the owner of the extension run SELECT snowid_claim() (at start and on a schedule, doc/managed.md), or grant this role to the owner.';
END
$$;

ALTER TABLE @extschema@.snowid_config ADD COLUMN worker_server text;

COMMENT ON COLUMN @extschema@.snowid_config.worker_server IS
'the server and sequences the worker id was set with (snowid_sql_here()), set by the table''s trigger: elsewhere, the worker id does not hold';

ALTER TABLE @extschema@.snowid_holder ADD COLUMN server text;

COMMENT ON COLUMN @extschema@.snowid_holder.server IS
'the server and sequences the holder was made on (snowid_sql_here()): elsewhere, the next claim makes another holder';

-- A database updated to this version holds its worker id and holder where
-- it is (it cannot tell whether it is a copy)
UPDATE @extschema@.snowid_holder SET server = @extschema@.snowid_sql_here();

-- The configuration's check, as in 1.0, as the owner of the extension,
-- whose sequence it reads (the role that installed it owns it no more)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_config_problem(NEW);
	used boolean;
	high timestamptz;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM @extschema@.snowid_position;
	-- max_drift_ms says how far ids may lie ahead of the clock, which a
	-- claim's quiet period and a copy's floor count: lowered below how far
	-- they lie ahead now, both counted short, and ids came again (the
	-- attack on 1.2: 3,540 of 3,540, and 1,000 of 1,000 from a restored
	-- dump).  And a copy's row keeps its source's until its worker id is
	-- set (snowid_sql_config_stamp() counts it).
	IF TG_OP = 'UPDATE' AND NEW.max_drift_ms < OLD.max_drift_ms THEN
		IF OLD.worker_server IS NOT NULL AND NEW.worker_id IS NOT DISTINCT FROM OLD.worker_id
			AND NEW.worker_server IS NOT DISTINCT FROM OLD.worker_server
			AND OLD.worker_server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
			RAISE EXCEPTION 'max_drift_ms of a copy cannot be lowered before its worker id is set'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row comes from another server (a restored dump, a copy), which issued ids up to max_drift_ms ahead of its clock: setting the worker id raises the generator past them.',
					  HINT = 'Set the worker id first (UPDATE snowid_config SET worker_id = N), then lower max_drift_ms.';
		END IF;
		high := (@extschema@.snowid_status()).high_water_time;
		IF used AND @extschema@.snowid_sql_unix_ms(high)
			> @extschema@.snowid_sql_unix_ms(clock_timestamp()) + NEW.max_drift_ms THEN
			RAISE EXCEPTION 'max_drift_ms cannot be lowered below how far the snowid generator runs ahead of the clock'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('Ids were issued up to %s, %s ms ahead of the clock: a claim''s quiet period and a copy''s floor count max_drift_ms, and would count short.',
												 high, @extschema@.snowid_sql_unix_ms(high) - @extschema@.snowid_sql_unix_ms(clock_timestamp())),
					  HINT = pg_catalog.format('Lower it once the clock has passed %s.', high);
		END IF;
	END IF;
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

-- An UPDATE that names the worker id (or worker_server) stamps it with
-- this server, even where the value stays: so its owner sets the worker
-- id of a copy, or after an ALTER SEQUENCE, again.  An UPDATE that names
-- neither (the restore's of snowid_sql_config_restore(), a change of
-- max_drift_ms on a copy) leaves the stamp as it was.  Without a worker
-- id the row keeps the stamp it has, or is given: the server its worker id
-- was last set on (the restore of a dump carries its source's), which says
-- at the next stamp that it lay elsewhere.
--
-- A stamp over another server's (a restored dump, a pg_createsubscriber
-- copy, pg_upgrade, a CREATE DATABASE ... TEMPLATE copy, a sequence made
-- anew) says so to snowid_sql_config_floor() for the rest of the statement
-- (the setting snowid_sql.copy_drift_ms, local to the transaction): the
-- larger max_drift_ms of the row before and after, as far as that server
-- may have issued ids ahead of its clock.  A row never stamped (a first
-- install, or one updated to 1.2) sets nothing: no server issued ids with
-- it, and a worker id set there for the first time is the operator's to
-- make unique (doc/managed.md).
CREATE FUNCTION @extschema@.snowid_sql_config_stamp()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	here text;
	before text;
BEGIN
	IF NEW.worker_id IS NULL THEN
		RETURN NEW;
	END IF;
	here := @extschema@.snowid_sql_here();
	before := CASE WHEN TG_OP = 'UPDATE' THEN OLD.worker_server ELSE NEW.worker_server END;
	IF before <> here THEN
		PERFORM set_config('snowid_sql.copy_drift_ms',
						   greatest(NEW.max_drift_ms, CASE WHEN TG_OP = 'UPDATE' THEN OLD.max_drift_ms END)::text,
						   true);
	END IF;
	NEW.worker_server := here;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_stamp BEFORE INSERT OR UPDATE OF worker_id, worker_server
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_stamp();

-- After a stamp over another server's: the generator raised, so that this
-- server's next id lies past its clock plus that max_drift_ms.  That
-- server (stopped before, or it keeps another worker id) issued ids up to
-- its clock plus max_drift_ms: a batch, or a clock stepped back, runs
-- ahead of the clock, and a copy that started at its clock issued them
-- again (a restored dump given its gone source's worker id at once: 1,000
-- of 1,000).  One millisecond more than that: the common path reads the
-- clock in floating point, which may lie one millisecond ahead at a
-- boundary.  The position is only raised, never lowered, by a writer
-- (snowid_sql_raise_floor(), snowid_sql_move()), after snowid_config_fix
-- (triggers fire in the order of their names) made snowid_sql_fixed() with
-- this server and adopted the generation as it is, as a writer needs.  Only
-- the stamp pays: the common path is as it was, and its calls take the
-- path of a clock stepped back (snowid_sql_take()) until the clock has
-- caught up, at most max_drift_ms.  What it does not cover stays the
-- operator's: the clocks of the two servers may differ, and that server
-- must have stopped issuing ids with the worker id before the stamp.
CREATE FUNCTION @extschema@.snowid_sql_config_floor()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	drift_ms integer := nullif(current_setting('snowid_sql.copy_drift_ms', true), '')::integer;
BEGIN
	IF drift_ms IS NOT NULL THEN
		PERFORM set_config('snowid_sql.copy_drift_ms', '', true);
		PERFORM @extschema@.snowid_sql_raise_floor(@extschema@.snowid_sql_unix_ms(clock_timestamp())
												   + drift_ms + 2);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER snowid_config_floor AFTER INSERT OR UPDATE
	ON @extschema@.snowid_config
	FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL)
	EXECUTE FUNCTION @extschema@.snowid_sql_config_floor();

-- The restore of the row (see 1.0), which also carries the source's stamp
-- into a row without a worker id, so that the worker id set there later
-- raises the generator (above).  In an UPDATE of its own, of a row without
-- a worker id alone: naming worker_server stamps a worker id with this
-- server.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_config_restore()
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
		UPDATE @extschema@.snowid_config x SET worker_server = NEW.worker_server
		WHERE x.singleton AND x.worker_id IS NULL AND NEW.worker_server IS NOT NULL;
		RETURN NULL;
	END IF;
	RETURN NEW;
END
$$;

-- A replica's apply (and any session with session_replication_role =
-- replica) changes no row of snowid_config: a publication carries the
-- publisher's row, whose worker id and layout are not this server's
CREATE FUNCTION @extschema@.snowid_sql_config_replica()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN NULL;
END
$$;

CREATE TRIGGER snowid_config_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica;

-- Nor of the holder (its name, secret and server are this database's),
-- the locks, or the claim's connection and state record: a publication
-- carries the publisher's (also in the initial copy, whose rows the
-- trigger drops, so that it does not fail on the subscriber's keys)
CREATE TRIGGER snowid_holder_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_holder
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_holder ENABLE REPLICA TRIGGER snowid_holder_replica;
CREATE TRIGGER snowid_locks_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_locks
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_locks ENABLE REPLICA TRIGGER snowid_locks_replica;
CREATE TRIGGER snowid_coordination_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_coordination
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_coordination ENABLE REPLICA TRIGGER snowid_coordination_replica;
CREATE TRIGGER snowid_coordinator_state_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_coordinator_state
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_coordinator_state ENABLE REPLICA TRIGGER snowid_coordinator_state_replica;

-- The configuration, checked: as in 1.0, and a worker id needed is one set
-- on this server
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_config(need_worker boolean)
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
	ELSIF need_worker AND c.worker_id IS NOT NULL
		AND (c.worker_server IS NULL
			 OR c.worker_server OPERATOR(pg_catalog.<>) @extschema@.snowid_sql_here()) THEN
		PERFORM @extschema@.snowid_sql_elsewhere(c.worker_id);
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		-- a row stamped elsewhere (a restored dump, which keeps no worker
		-- id): says it is a copy
		IF NOT c.claim_worker_id
			AND c.worker_server OPERATOR(pg_catalog.<>) @extschema@.snowid_sql_here() THEN
			RAISE EXCEPTION 'snowid has no worker id on this server'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row of snowid_config was last stamped on another server, or with other sequences: a restored dump carries its source''s stamp but not its worker id, and this database issues no id until it has a worker id of its own.',
					  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter; setting it raises the generator past every id the other server may have issued.';
		END IF;
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- Whether this database's holder was made on this server
CREATE FUNCTION @extschema@.snowid_sql_holder_here()
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT coalesce(bool_or(h.server = @extschema@.snowid_sql_here()), false)
	FROM @extschema@.snowid_holder h;
END;

-- The worker id claimed for a configuration, or NULL: one claimed by a
-- holder of this server for its datacenter id and worker bits, and its
-- worker id if it names one
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claimed(c @extschema@.snowid_config)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT @extschema@.snowid_sql_claimed_of(CASE WHEN s.is_called THEN s.last_value END,
											 c.datacenter_id, c.worker_bits, c.worker_id)
	FROM @extschema@.snowid_claimed s
	WHERE @extschema@.snowid_sql_holder_here();
END;

