/* snowid_sql--1.1--1.2.sql: the SQL edition, read from outside (issue 56) */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.2'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- What this version changes, each for a way the ids repeated or the
-- generator stopped (doc/managed.md, doc/security.md):
--
-- - Every call that takes a position makes its transaction write WAL of
--   its own, so that its commit flushes the WAL that logged the position
--   (which another transaction may have written and not yet flushed) and
--   waits for a synchronous standby like any other commit.
-- - The worker id holds only on the server, and with the sequences, it was
--   set with: snowid_config gains worker_server, stamped by the
--   configuration's trigger whenever the worker id is set.  A restored
--   dump, a pg_createsubscriber copy (another system identifier) or a
--   sequence made anew has no worker id until it is set there again; the
--   holder of a claim likewise (snowid_holder.server: a copy becomes
--   another holder at its next claim).  A replica's apply
--   (session_replication_role = replica) changes no row of snowid_config.
-- - The sequences of the generator keep INCREMENT 1, CACHE 1 and NO CYCLE:
--   checked when the worker id is set, and any ALTER SEQUENCE makes a
--   sequence anew (another filenode), which drops the worker id.
-- - The locks of the generator and of the claim are row locks of
--   snowid_locks, which no role but the owner may lock, not advisory
--   locks, which any role may take.
-- - Public ids are read with ASCII folding, not upper() of the database's
--   collation (Turkish folds i to a dotted capital I; key ids, which have
--   no i, fold alike either way).
-- - Installed as an extension by a role that is no superuser, the objects
--   belong to the superuser the scripts run as (snowid_sql.control and
--   the control files of 1.0 and 1.1: superuser = true, trusted = true);
--   the installing role keeps what the page says it gets.  An earlier
--   install that such a role owns is not updated (see below).
-- - Everything that the functions running as the superuser read, write or
--   call lies in the schema snowid_sql_private, which this script makes
--   (as the superuser: the owner of the database cannot create, replace or
--   rename in it), named with that schema alone: the owner of the
--   extension's schema can neither shadow nor overload it.  The tables
--   keep views of their names in the extension's schema.
-- - The first call claims the worker id only as a role whose privileges
--   the owner of the extension has (the claim runs the owner's functions,
--   which the owner may alter).
-- - The functions that hold the row of the generator or of the claim send
--   no message to the client meanwhile (client_min_messages = error): a
--   client that stops reading would hold the lock.
-- - A logical replica changes no row of snowid_holder, snowid_locks,
--   snowid_coordination or snowid_coordinator_state either, and a writer
--   refuses to move sequences that a subscription synchronises
--   (PostgreSQL 19: FOR ALL SEQUENCES).

-- -------------------------------------------------------------------------
-- An install whose objects a role that is no superuser owned
-- -------------------------------------------------------------------------
-- Installed as an extension, 1.0 and 1.1 ran as the role that created
-- them (since 1.2, snowid_sql--1.0.control and snowid_sql--1.1.control
-- say otherwise): that role owned every function, table and sequence, and
-- could have changed any of them, added a trigger, a rule, a policy, a
-- default or an index expression to the tables, or functions and
-- operators that the bodies would find.  This update runs as the
-- bootstrap superuser, and nothing it does could be shown to run none of
-- that code: it refuses, before it runs or fires anything, and the page
-- says how to drop the extension and create it again.  Run as the owner
-- (pg_tle, the plain script), the owner updates its own objects.
DO $$
DECLARE
	ext oid := (SELECT d.refobjid FROM pg_catalog.pg_depend d
				WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				  AND d.objid OPERATOR(pg_catalog.=) '@extschema@.snowid_config'::pg_catalog.regclass
				  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e');
	o record;
BEGIN
	IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
		RETURN;
	END IF;
	-- the claim's functions are the owner's by design (they run as it)
	SELECT x.what, x.owner INTO o
	FROM (SELECT c.oid::pg_catalog.regclass::text AS what, c.relowner AS owner FROM pg_catalog.pg_class c
		  WHERE c.oid OPERATOR(pg_catalog.=) '@extschema@.snowid_config'::pg_catalog.regclass
		  UNION ALL
		  SELECT pg_catalog.pg_describe_object(d.classid, d.objid, 0),
				 coalesce(c.relowner, p.proowner, t.typowner)
		  FROM pg_catalog.pg_depend d
		  LEFT JOIN pg_catalog.pg_class c ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid OPERATOR(pg_catalog.=) d.objid
		  LEFT JOIN pg_catalog.pg_proc p ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid OPERATOR(pg_catalog.=) d.objid
		  LEFT JOIN pg_catalog.pg_type t ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass AND t.oid OPERATOR(pg_catalog.=) d.objid
		  WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid OPERATOR(pg_catalog.=) ext
			AND d.deptype = 'e'
			AND (p.proname IS NULL
				 OR p.proname NOT IN ('snowid_new_holder', 'snowid_sql_connstr', 'snowid_sql_claim_now',
									  'snowid_claim', 'snowid_sql_claim_once'))) x
	JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) x.owner
	WHERE NOT r.rolsuper
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'snowid_sql cannot be updated to 1.2 where a role that is no superuser owns it'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('%s belongs to %s: the extension was created before 1.2 by that role, which may have changed its functions and tables, and the update runs as a superuser.',
											 o.what, o.owner::pg_catalog.regrole),
				  HINT = 'Note its configuration, drop the extension and create it again, as doc/managed.md says ("Updating from 1.0 or 1.1").';
	END IF;
END
$$;

-- -------------------------------------------------------------------------
-- The locks
-- -------------------------------------------------------------------------
-- One row per lock: 'generator', held by a writer (snowid_sql_move()) for
-- a few statements, in a subtransaction that it rolls back to let the
-- lock go (the sequences keep what it set); 'claim', held by a claim to
-- the end of its transaction.  Only the owner may lock a row (UPDATE), and
-- the installing role, whose claim functions take the second.
CREATE TABLE @extschema@.snowid_locks (
	name text PRIMARY KEY CHECK (name IN ('generator', 'claim'))
);

COMMENT ON TABLE @extschema@.snowid_locks IS
'the locks of the snowid generator and of its claim: row locks no other role can take';

INSERT INTO @extschema@.snowid_locks VALUES ('generator'), ('claim');
REVOKE ALL ON @extschema@.snowid_locks FROM PUBLIC;

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

-- This start of the server as the microseconds that to_timestamp() reads
-- back as the start (the nearest, or one either side where the floating
-- point rounds otherwise), or NULL, which should not happen: what
-- snowid_sql_started holds under this start
CREATE FUNCTION @extschema@.snowid_sql_start_us()
RETURNS bigint
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT u.us
	FROM (SELECT (EXTRACT(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint + d.d AS us, d.n
		  FROM (VALUES (0, 1), (-1, 2), (1, 3)) d(d, n)) u
	WHERE to_timestamp(u.us::double precision / 1000000) = pg_postmaster_start_time()
	ORDER BY u.n
	LIMIT 1;
END;

-- Stamps this start in snowid_sql_started, for a writer that has checked
-- the server (none, which should not happen, stamps nothing, and every
-- call stays a writer)
CREATE FUNCTION @extschema@.snowid_sql_stamp_start()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	us bigint := @extschema@.snowid_sql_start_us();
	done bigint;
BEGIN
	IF us IS NOT NULL THEN
		done := setval('@extschema@.snowid_sql_started', us);
	END IF;
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

-- -------------------------------------------------------------------------
-- snowid_sql_fixed(), with the server it was made on
-- -------------------------------------------------------------------------
-- server is snowid_sql_here() where it was made, and position_path the
-- file of snowid_position then, which names the database: the common path
-- compares the latter (cheap) at every call, every writer the former.  A
-- restored dump has another file, a copy made by CREATE DATABASE ...
-- TEMPLATE the same one in another database (its readers took the
-- source's window, and issued ids the source issued).  Its worker id is the
-- row's only where the row's was set on this server.
--
-- token is this server's mark in snowid_generation (see
-- snowid_sql_move()): 1 to 4194304, from the server and sequences.
--
-- adopted is a value of snowid_generation carrying another token that the
-- generator takes as this server's (snowid_sql_move()), or NULL: the value
-- it held when the worker id was set again, or when snowid_sql_fixed() was
-- made on another server or with other sequences (a copy whose worker id
-- is set, or claimed, anew).
ALTER TYPE @extschema@.snowid_sql_fixed ADD ATTRIBUTE position_path text, ADD ATTRIBUTE server text,
	ADD ATTRIBUTE token bigint, ADD ATTRIBUTE adopted bigint;

-- A worker id set (an INSERT or UPDATE that names it) says so to
-- snowid_sql_refix() for the rest of the transaction: the generation then
-- held is adopted
CREATE FUNCTION @extschema@.snowid_sql_config_worker_set()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM set_config('snowid_sql.worker_set', 'on', true);
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_worker_set BEFORE INSERT OR UPDATE OF worker_id
	ON @extschema@.snowid_config
	FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL)
	EXECUTE FUNCTION @extschema@.snowid_sql_config_worker_set();

CREATE FUNCTION @extschema@.snowid_sql_refix()
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
	here text := @extschema@.snowid_sql_here();
	problem text := @extschema@.snowid_sql_sequences_problem();
	before @extschema@.snowid_sql_fixed;
	adopted bigint;
	done bigint;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'the sequences or tables of the snowid generator were altered'
			USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = problem,
				  HINT = 'Put them back as the detail says (a superuser, where the extension''s objects are the superuser''s), then set the worker id again.';
	END IF;
	-- a claim kept by a holder made elsewhere is not this database's: a
	-- CREATE DATABASE ... TEMPLATE copy keeps its source's snowid_claimed
	-- (and snowid_sql_claimed_run, the same server's start), and the
	-- common path, which reads snowid_claimed alone, takes positions as
	-- soon as snowid_sql_fixed() names this snowid_position, as made
	-- below: any change of the copy's snowid_config made it issue with the
	-- worker id its source held beside it (the attack on 1.2: 774 ids of
	-- 8,660 twice; test 141).  Dropped, the next call claims, as a new
	-- holder (snowid_sql_holder_renew()).
	IF NOT @extschema@.snowid_sql_holder_here() THEN
		done := setval('@extschema@.snowid_claimed', 0, true);
	END IF;
	SELECT * INTO c FROM @extschema@.snowid_config;
	-- the one made before (none, or one of fewer attributes, before the
	-- update to 1.2 ends)
	BEGIN
		before := @extschema@.snowid_sql_fixed();
	EXCEPTION WHEN OTHERS THEN
		before := NULL;
	END;
	-- the generation as it is now is this server's where the worker id was
	-- set in this transaction, or this is another server (or other
	-- sequences): a copy's, which sets its worker id (or claims) anew;
	-- otherwise the one adopted before stays
	adopted := CASE WHEN current_setting('snowid_sql.worker_set', true) = 'on'
						 OR before.server IS DISTINCT FROM here
					THEN pg_sequence_last_value('@extschema@.snowid_generation')
					ELSE before.adopted END;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %s, %L, %L, %s, %s)::@extschema@.snowid_sql_fixed$f$,
		CASE WHEN c.claim_worker_id THEN 'true' ELSE 'false' END, coalesce(c.datacenter_id, 0),
		coalesce(CASE WHEN c.claim_worker_id OR c.worker_server = here THEN c.worker_id END::text, 'NULL'),
		coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(@extschema@.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(@extschema@.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0),
		pg_relation_filepath('@extschema@.snowid_position'), here,
		1 + (hashtext(here)::bigint & 4194303), coalesce(adopted::text, 'NULL'));
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_refix() FROM PUBLIC;

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.snowid_sql_refix();
	RETURN NULL;
END
$$;

-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- A writer (see 1.0): the lock is the row 'generator' of snowid_locks,
-- locked in the block's subtransaction, which the block ends with an error
-- of its own: the lock goes with it, on success, error or cancel alike,
-- and the sequences keep what was set (they do not roll back).  A
-- generator made on another server, or with other sequences, moves
-- nothing.
-- It sends no message to the client meanwhile (client_min_messages:
-- xact.c's DEBUG lines at the end of the subtransaction, sent to a client
-- that stops reading, would hold the lock until it disconnects).  A
-- generator whose sequences a subscription synchronises (PostgreSQL 19:
-- FOR ALL SEQUENCES, REFRESH SEQUENCES, which set them to the publisher's
-- values in place) moves nothing either.  It sets its search_path:
-- snowid_sql_next(), which calls it, runs in the caller's.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
	OUT first bigint, OUT got bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET client_min_messages = error
AS $$
DECLARE
	locked boolean;
	g bigint;
	-- what a call returns that is not used (an assignment is cheaper than
	-- PERFORM, which runs a query)
	done bigint;
BEGIN
	BEGIN
		IF wait THEN
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE;
		ELSE
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE SKIP LOCKED;
		END IF;
		IF locked THEN
			IF (@extschema@.snowid_sql_fixed()).server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
				PERFORM @extschema@.snowid_sql_elsewhere((@extschema@.snowid_sql_fixed()).worker_id);
			END IF;
			-- a claim granted under another start of the server is
			-- re-asserted before the generator moves with it (see
			-- snowid_sql_claim_stale()); a floor raised (n = 0, a claim's
			-- own) takes no position
			IF n > 0 AND (@extschema@.snowid_sql_fixed()).claim_worker_id
				AND @extschema@.snowid_sql_claim_stale() THEN
				IF wait THEN
					RAISE EXCEPTION 'snowid_sql has not re-asserted its worker id since its server started'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'Its coordination database may have given the worker id to another server while this server was down.',
							  HINT = 'Have the owner of the extension run SELECT snowid_claim() (schedule it at the server''s start too); no id was issued.';
				END IF;
				-- no position: the caller finds the claim stale, and
				-- re-asserts it
				RAISE SQLSTATE 'SN000';
			END IF;
			-- (before 19, no subscription synchronises a sequence)
			IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 >= 190000 THEN
				PERFORM @extschema@.snowid_sql_subscribed();
			END IF;
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further).  Its high bits
			-- are this server's token, which the readers check: a
			-- generation set elsewhere (the publisher's, synchronised)
			-- sends them here, to the check above.
			g := pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation');
			-- another server's token (none before 1.2): the sequences hold
			-- that server's values, synchronised (PostgreSQL 19: FOR ALL
			-- SEQUENCES) or copied, and the position may lie below ids
			-- this server issued.  Unless adopted (the worker id set, or
			-- claimed, anew since), the worker id does not hold: a claim
			-- is dropped (the next call claims anew, the generation taken
			-- as this server's), a worker id set must be set again.
			IF g >> 40 <> 0 AND g >> 40 <> (@extschema@.snowid_sql_fixed()).token
				AND g IS DISTINCT FROM (@extschema@.snowid_sql_fixed()).adopted THEN
				IF NOT (@extschema@.snowid_sql_fixed()).claim_worker_id THEN
					RAISE EXCEPTION 'the sequences of the snowid generator hold another server''s values'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'snowid_generation carries another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy set the generator''s sequences to that server''s values, with which ids could come again.',
							  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter and not used by this server before (its ids may lie above the position the sequences hold now).';
				END IF;
				done := pg_catalog.setval('@extschema@.snowid_claimed', 0, true);
				done := pg_catalog.setval('@extschema@.snowid_generation',
										  (@extschema@.snowid_sql_fixed()).token << 40);
				IF wait THEN
					RAISE EXCEPTION 'snowid_sql dropped the worker id it had claimed'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'snowid_generation carried another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy had set the generator''s sequences, and the claim, to that server''s values.',
							  HINT = 'The next call claims another worker id; no id was issued.';
				END IF;
				-- no position: the caller finds no claim, and claims
				RAISE SQLSTATE 'SN000';
			END IF;
			IF g IS NULL OR g >> 40 <> (@extschema@.snowid_sql_fixed()).token THEN
				g := (@extschema@.snowid_sql_fixed()).token << 40;
			END IF;
			-- the start this writer checked the server under, for the
			-- common path (see snowid_sql_started)
			IF pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started')::double precision / 1000000)
				IS DISTINCT FROM pg_catalog.pg_postmaster_start_time() THEN
				PERFORM @extschema@.snowid_sql_stamp_start();
			END IF;
			g := pg_catalog.setval('@extschema@.snowid_generation', g + 1 + g % 2);
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
			done := pg_catalog.setval('@extschema@.snowid_generation', g + 1);
		END IF;
		RAISE SQLSTATE 'SN000';
	EXCEPTION WHEN SQLSTATE 'SN000' THEN
		NULL;
	WHEN lock_not_available THEN
		RAISE EXCEPTION 'the snowid generator''s lock was not free within lock_timeout'
			USING ERRCODE = 'lock_not_available',
				  DETAIL = 'Another session held the row ''generator'' of snowid_locks for 10 s.',
				  HINT = 'Look for that session in pg_locks; snowid_sql holds the lock only while it moves the generator, and only its owner can take it otherwise.';
	END;
END
$$;

-- The id at a position (see 1.0), its node's bits grouped, so that the
-- planner folds them into one constant where the datacenter and worker
-- ids are constants (the common path of snowid_sql_next()): the same value
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| ((datacenter_id::bigint << (worker_bits + sequence_bits)) | (worker_id::bigint << sequence_bits))
	| (pos & ((1::bigint << sequence_bits) - 1));

-- One id (see 1.0).  The common path also checks that snowid_sql_fixed()
-- was made with this snowid_position, in this database (a restored dump
-- has another, a copy made from it as a template is in another), that a
-- writer checked the server since it started (snowid_sql_started: a
-- pg_createsubscriber copy's first call becomes a writer, which finds
-- another system identifier), and
-- makes its transaction write WAL of its own once (a transactional
-- logical message, which also gives it an xid): its commit then flushes
-- the WAL that logged the position (written maybe by another transaction,
-- not yet flushed) and waits for a synchronous standby.  An xid alone
-- would not do: a transaction that wrote no WAL of its own commits
-- asynchronously, also one that has an xid (pg_current_xact_id(), or
-- writes to temporary or unlogged tables only).  SQL cannot tell whether
-- a transaction wrote WAL, so the message's own: the setting
-- snowid_sql.message_written, on once the transaction wrote it, is local
-- to it (gone at its end, or with a subtransaction rolled back, where the
-- next call writes another).  A constant is cheaper to compare at every
-- call than the xid; a session that sets it on itself skips the message,
-- as one that sets synchronous_commit = off skips the flush.
--
-- What the common path costs (doc/managed.md, "What 1.2 costs"):
-- - STABLE: PL/pgSQL then takes no snapshot and makes no command counter
--   increment at each of its expressions.  It reads no table (only the
--   sequences, which no snapshot sees, and snowid_sql_fixed()'s
--   constants); what reads the tables is snowid_sql_next_table(), and the
--   writer snowid_sql_move(), both VOLATILE.  Its argument recovery is
--   pg_is_in_recovery(), read by the caller: VOLATILE, it makes every call
--   of snowid_next() volatile to the planner whatever the other functions
--   are labelled (a call is never evaluated once for several rows, nor
--   memoized), and any value a caller gives is safe (true takes the table
--   path, which checks again; false on a standby fails at nextval()).
-- - No SET search_path (which the call would set and reset each time):
--   the body runs as the superuser with the caller's search_path, so every
--   operator, function and type in it is named with its schema
--   (OPERATOR(pg_catalog.=), pg_catalog.nextval(), and the extension's
--   snowid_sql_private), and it uses no construct that looks an operator
--   up by name (IS DISTINCT FROM, BETWEEN, IN, CASE x WHEN).  The functions
--   it calls that need a search_path set their own.
CREATE FUNCTION @extschema@.snowid_sql_next(claimed boolean, recovery boolean)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
AS $$
DECLARE
	w integer;
	-- the clock's millisecond as a position: its first
	now_pos bigint;
	g bigint;
	v bigint;
BEGIN
	w := CASE WHEN (pg_catalog.pg_relation_filepath('@extschema@.snowid_position'::pg_catalog.regclass)
				   OPERATOR(pg_catalog.=) (@extschema@.snowid_sql_fixed()).position_path) IS NOT TRUE
		THEN NULL
		-- a claim only where it was noted under this run of the server
		-- (snowid_sql_claim_run()): a crash restart keeps the start and
		-- snowid_sql_started, which the test below compares with it, but
		-- not the run, and the claim is stale (the attack on 1.2: 77 ids
		-- of 77 with the worker id another server had taken meanwhile,
		-- the clock stepped back to a position it had left ahead; test
		-- 144).  Not on a standby, which issues no id.
		WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id
		THEN CASE WHEN NOT recovery
					   AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_claimed_run'::pg_catalog.regclass)
						   OPERATOR(pg_catalog.=) @extschema@.snowid_sql_claim_run()
			THEN @extschema@.snowid_sql_claimed_of(
				pg_catalog.pg_sequence_last_value('@extschema@.snowid_claimed'::pg_catalog.regclass),
				(@extschema@.snowid_sql_fixed()).datacenter_id, (@extschema@.snowid_sql_fixed()).worker_bits,
				(@extschema@.snowid_sql_fixed()).worker_id) END
		ELSE (@extschema@.snowid_sql_fixed()).worker_id END;
	g := pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass);
	v := CASE WHEN w IS NOT NULL AND NOT recovery
		THEN CASE WHEN pg_catalog.current_setting('snowid_sql.message_written', true) OPERATOR(pg_catalog.=) 'on'
					   OR (pg_catalog.pg_logical_emit_message(true, 'snowid_sql', '') IS NOT NULL
						   AND pg_catalog.set_config('snowid_sql.message_written', 'on', true) IS NOT NULL)
			THEN pg_catalog.nextval('@extschema@.snowid_position'::pg_catalog.regclass) END END;
	-- the generation even and this server's (its bits from 40 up the
	-- token): (g % 2 = 0 AND g >> 40 = token); a writer has checked the
	-- server since it started (snowid_sql_started); the position in the
	-- clock's millisecond or up to near_ms ahead, the clock read once
	-- here, after the position (a later reading only narrows what is
	-- kept): v - now_pos from 0 to ((near_ms + 1) << sequence_bits) - 1,
	-- compared unsigned (the sign bit flipped on both sides), one
	-- expression where a variable now_pos would cost a statement; and in
	-- the layout's time: (v >> sequence_bits) <= max_ms
	IF (g OPERATOR(pg_catalog.&) -1099511627775) OPERATOR(pg_catalog.=) ((@extschema@.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
		AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass) OPERATOR(pg_catalog.=) g
		AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started'::pg_catalog.regclass)::double precision
								OPERATOR(pg_catalog./) 1000000)
			OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
		AND ((v OPERATOR(pg_catalog.-) ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (@extschema@.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits))
			 OPERATOR(pg_catalog.#) -9223372036854775808)
			OPERATOR(pg_catalog.<) ((((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
									 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
									OPERATOR(pg_catalog.#) -9223372036854775808)
		AND v OPERATOR(pg_catalog.<=) (((@extschema@.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
									   OPERATOR(pg_catalog.|) ((1::bigint OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
															   OPERATOR(pg_catalog.-) 1)) THEN
		RETURN @extschema@.snowid_sql_fixed_id(CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id THEN w
													 ELSE (@extschema@.snowid_sql_fixed()).worker_id END, v);
	END IF;
	now_pos := CASE WHEN w IS NOT NULL AND NOT recovery THEN ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (@extschema@.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) END;
	-- (past the layout's time, the path below says so)
	IF v IS NOT NULL AND now_pos OPERATOR(pg_catalog.<=) ((@extschema@.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer, which
		-- moves the sequence ahead_ms (9, or near_ms if less) past the
		-- clock's millisecond: the calls of the next ahead_ms
		-- milliseconds find it ahead, within near_ms, and need no writer
		-- (one writer every ahead_ms + 1 milliseconds, not every one)
		IF NOT coalesce((g OPERATOR(pg_catalog.&) -1099511627775)
							OPERATOR(pg_catalog.=) ((@extschema@.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
						AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass)
							OPERATOR(pg_catalog.=) g
						AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started'::pg_catalog.regclass)::double precision
												OPERATOR(pg_catalog./) 1000000)
							OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
						AND v OPERATOR(pg_catalog.>=) now_pos
						AND (v OPERATOR(pg_catalog.-) now_pos)
							OPERATOR(pg_catalog.>=) (((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
													 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits),
						false) THEN
			v := (@extschema@.snowid_sql_move(
				now_pos OPERATOR(pg_catalog.+)
					((CASE WHEN (@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.<) 9
						   THEN (@extschema@.snowid_sql_fixed()).near_ms ELSE 9 END)::bigint
					 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits),
				1, NULL, false)).first;
		END IF;
		IF v OPERATOR(pg_catalog.>=) now_pos
			AND (v OPERATOR(pg_catalog.-) now_pos)
				OPERATOR(pg_catalog.<) (((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
										OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) THEN
			RETURN @extschema@.snowid_sql_fixed_id(CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id THEN w
													 ELSE (@extschema@.snowid_sql_fixed()).worker_id END, v);
		END IF;
	END IF;
	RETURN @extschema@.snowid_sql_next_table(claimed, v);
END
$$;

-- The rest of a call that the common path did not end (see 1.0): reads the
-- table, as the caller's snowid_sql_next() (the superuser)
CREATE FUNCTION @extschema@.snowid_sql_next_table(claimed boolean, v bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
BEGIN
	c := @extschema@.snowid_sql_config(false);
	-- a stale claim whatever the caller says (anyone may call
	-- snowid_sql_next() with claimed true)
	IF c.claim_worker_id AND ((c.worker_id IS NULL AND NOT claimed)
							  OR @extschema@.snowid_sql_claim_stale()) THEN
		RETURN NULL;
	END IF;
	c := @extschema@.snowid_sql_config(true);
	RETURN @extschema@.snowid_sql_compose(c, (@extschema@.snowid_sql_take(1, c, v)).first);
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_next_table(boolean, bigint) FROM PUBLIC;

-- Issuing (see 1.0), with pg_is_in_recovery() read here (see above)
CREATE OR REPLACE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN coalesce(@extschema@.snowid_sql_next(false, pg_catalog.pg_is_in_recovery()),
				@extschema@.snowid_sql_next(@extschema@.snowid_sql_claim_first(), pg_catalog.pg_is_in_recovery()));

DROP FUNCTION @extschema@.snowid_sql_next(boolean);

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

-- -------------------------------------------------------------------------
-- Public ids: ASCII folding, whatever the collation
-- -------------------------------------------------------------------------

-- A text's ASCII letters in upper case, and nothing else changed (upper()
-- follows the collation: in Turkish, i becomes a dotted capital I)
CREATE FUNCTION @extschema@.snowid_sql_ascii_upper(s text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.translate(s, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_conninfo_keywords(conninfo text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE WHEN conninfo ~ $re$^\s*([A-Za-z_]+\s*=\s*('([^'\\]|\\.)*'|([^\s'\\]|\\.)([^\s\\]|\\.)*)\s*)*$$re$
		THEN ARRAY(SELECT pg_catalog.translate(m[1], 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
				   FROM pg_catalog.regexp_matches(conninfo,
				$re$([A-Za-z_]+)\s*=\s*(?:'(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)(?:[^\s\\]|\\.)*)$re$, 'g') m)
		END;
END;

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_read_public(input text, OUT id bigint, OUT problem text)
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
			THEN strpos(symbols, translate(@extschema@.snowid_sql_ascii_upper(ch), 'OIL', '011')) - 1
			ELSE -1 END;
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

-- The version this update installs (a plain script records it nowhere else)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.2'$$;

-- -------------------------------------------------------------------------
-- The private schema
-- -------------------------------------------------------------------------
-- The functions that run as the superuser name what they read, write and
-- call with a schema, at every call (PL/pgSQL plans them per session):
-- the owner of the extension's schema (public: the owner of the database)
-- could put an overload that the call matches better there, or rename the
-- schema and make another of its name.  So the tables, the sequences, the
-- type and the internal functions (snowid_sql_*) move to a schema that
-- this script makes, as the bootstrap superuser where it runs as one, and
-- every body names them there; only the functions of the API (snowid_*,
-- and snowid_sql_version()) stay, and the tables keep a view of their
-- name.  Its name is fixed: the extension is not relocatable, and a schema
-- of that name made before fails this script.  Run as the owner (pg_tle,
-- the plain script), the schema is the owner's, as every object is.
CREATE SCHEMA snowid_sql_private;

COMMENT ON SCHEMA snowid_sql_private IS
'the tables, sequences and internal functions of snowid_sql: not to be changed';

GRANT USAGE ON SCHEMA snowid_sql_private TO PUBLIC;

-- The claim reads the time of the high-water mark from snowid_status(),
-- a function of the API: through this, which names it by oid
CREATE FUNCTION snowid_sql_private.snowid_sql_high_water_time()
RETURNS timestamptz
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT (@extschema@.snowid_status()).high_water_time;
END;

DO $$
DECLARE
	ext oid := (SELECT d.refobjid FROM pg_catalog.pg_depend d
				WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				  AND d.objid OPERATOR(pg_catalog.=) '@extschema@.snowid_config'::pg_catalog.regclass
				  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e');
	-- the schema as the scripts name it, and the names that move
	old text := pg_catalog.regexp_replace('@extschema@', '([^[:alnum:]_])', '\\\1', 'g');
	moved text := '(snowid_sql_[[:alnum:]_]*|snowid_(config|public_keys|coordination|coordinator_state|holder|locks|position|generation|waits|clock_steps|clock_errors|claimed)(?![[:alnum:]_]))';
	o record;
	def text;
	stmts text[];
	stmt text;
BEGIN
	-- another function of a name of the extension's (an overload made
	-- before the install, which a body could have found) fails it
	SELECT p.oid::pg_catalog.regprocedure AS f INTO o FROM pg_catalog.pg_proc p
	WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND p.proname LIKE 'snowid%'
	  AND ext IS NOT NULL
	  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
					  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) p.oid
						AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e')
	  AND p.proname IN (SELECT q.proname FROM pg_catalog.pg_proc q JOIN pg_catalog.pg_depend d
						ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) q.oid
						   AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e')
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'the function % is not snowid_sql''s', o.f
			USING ERRCODE = 'duplicate_function',
				  DETAIL = 'It has the name of a function of the extension, in its schema.',
				  HINT = 'Drop or rename it, then install the extension again.';
	END IF;
	-- every statement made before the first runs (none depends on what
	-- another moved, whatever order the rows come in), then run
	SELECT pg_catalog.array_agg(m.stmt ORDER BY m.stmt) INTO stmts FROM (
		SELECT pg_catalog.format('ALTER %s %s SET SCHEMA snowid_sql_private',
				CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass) AS stmt
		FROM pg_catalog.pg_class c
		WHERE c.relnamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND c.relkind IN ('r', 'S')
		  AND c.relname ~ ('^' || moved || '$')
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
		UNION ALL
		SELECT pg_catalog.format('ALTER TYPE %s SET SCHEMA snowid_sql_private',
								 '@extschema@.snowid_sql_fixed')
		UNION ALL
		SELECT pg_catalog.format('ALTER FUNCTION %s SET SCHEMA snowid_sql_private', p.oid::pg_catalog.regprocedure)
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND p.proname ~ ('^' || moved || '$')
		  AND p.proname <> 'snowid_sql_version'
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
	) m;
	FOREACH stmt IN ARRAY stmts LOOP
		EXECUTE stmt;
	END LOOP;
	-- every body that names them by name (an SQL-standard body names them
	-- by oid), named in the private schema
	FOR o IN
		SELECT p.oid FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@'::pg_catalog.regnamespace::pg_catalog.oid,
															   'snowid_sql_private'::pg_catalog.regnamespace::pg_catalog.oid])
		  AND p.proname LIKE 'snowid%' AND p.prosqlbody IS NULL AND p.proname <> 'snowid_sql_version'
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
	LOOP
		def := pg_catalog.pg_get_functiondef(o.oid);
		IF def ~ ('(^|[^[:alnum:]_$"])' || old || '\.snowid_') THEN
			def := pg_catalog.replace(def, '(@extschema@.snowid_status()).high_water_time',
									  'snowid_sql_private.snowid_sql_high_water_time()');
			def := pg_catalog.regexp_replace(def, '(^|[^[:alnum:]_$"])' || old || '\.' || moved,
											 '\1snowid_sql_private.\2', 'g');
			-- (but in the first line, CREATE FUNCTION of an API function)
			IF pg_catalog.substr(def, pg_catalog.strpos(def, E'\n'))
				~ ('(^|[^[:alnum:]_$"])' || old || '\.snowid_') THEN
				RAISE EXCEPTION 'snowid_sql 1.2: % still names the extension''s schema', o.oid::pg_catalog.regprocedure;
			END IF;
			EXECUTE def;
		END IF;
	END LOOP;
END
$$;

-- The tables under their names, for the owner's UPDATE snowid_config and
-- the like: views of the superuser's, with the tables' privileges
CREATE VIEW @extschema@.snowid_config AS SELECT * FROM snowid_sql_private.snowid_config;
CREATE VIEW @extschema@.snowid_public_keys AS SELECT * FROM snowid_sql_private.snowid_public_keys;
CREATE VIEW @extschema@.snowid_coordination AS SELECT * FROM snowid_sql_private.snowid_coordination;
CREATE VIEW @extschema@.snowid_coordinator_state AS SELECT * FROM snowid_sql_private.snowid_coordinator_state;
CREATE VIEW @extschema@.snowid_holder AS SELECT * FROM snowid_sql_private.snowid_holder;
CREATE VIEW @extschema@.snowid_locks AS SELECT * FROM snowid_sql_private.snowid_locks;

COMMENT ON VIEW @extschema@.snowid_config IS
'snowid''s configuration (the table snowid_sql_private.snowid_config): the owner sets the worker id here';
COMMENT ON VIEW @extschema@.snowid_public_keys IS
'the keys of public ids (the table snowid_sql_private.snowid_public_keys)';
COMMENT ON VIEW @extschema@.snowid_coordination IS
'the coordination database of the claim (the table snowid_sql_private.snowid_coordination)';
COMMENT ON VIEW @extschema@.snowid_coordinator_state IS
'the claim''s state record (the table snowid_sql_private.snowid_coordinator_state)';
COMMENT ON VIEW @extschema@.snowid_holder IS
'this database as a holder of claims (the table snowid_sql_private.snowid_holder)';
COMMENT ON VIEW @extschema@.snowid_locks IS
'the locks of the generator and of the claim (the table snowid_sql_private.snowid_locks)';

-- What the role that installed the edition may do, granted anew (the
-- owner of the extension, whoever runs this update; the role that runs the
-- plain script), on the tables and on their views: the claim, which runs
-- as that role, writes the state record, locks its row of snowid_locks and
-- makes snowid_sql_fixed() anew; snowid_sql_holder_renew() is one of its
-- functions.
REVOKE ALL ON @extschema@.snowid_config, @extschema@.snowid_public_keys, @extschema@.snowid_coordination,
	@extschema@.snowid_coordinator_state, @extschema@.snowid_holder, @extschema@.snowid_locks FROM PUBLIC;
GRANT SELECT ON @extschema@.snowid_config TO PUBLIC;
DO $$
DECLARE
	installer name := coalesce(
		(SELECT e.extowner::pg_catalog.regrole::name FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass AND d.deptype = 'e'),
		CURRENT_USER);
	s text;
BEGIN
	FOREACH s IN ARRAY ARRAY['snowid_sql_private', '@extschema@'] LOOP
		EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %s.snowid_config TO %I', s, installer);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %1$s.snowid_public_keys, %1$s.snowid_coordination, %1$s.snowid_coordinator_state TO %2$I',
								  s, installer);
		EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %1$s.snowid_holder, %1$s.snowid_locks TO %2$I',
								  s, installer);
	END LOOP;
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON snowid_sql_private.snowid_claimed TO %I', installer);
	-- the restore of a dump (below) inserts the row of snowid_config
	EXECUTE pg_catalog.format('GRANT INSERT ON snowid_sql_private.snowid_config TO %I', installer);
	EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION snowid_sql_private.snowid_sql_raise_floor(bigint), snowid_sql_private.snowid_sql_refix() TO %I',
							  installer);
	EXECUTE pg_catalog.format('ALTER FUNCTION snowid_sql_private.snowid_sql_holder_renew() OWNER TO %I', installer);
END
$$;

-- Dumped and restored by the owner of the database, as pgcrypto's or
-- pg_cron's (finding C): pg_dump reads the tables whose rows it dumps,
-- and a restore writes them, as the role that runs it.  The row of
-- snowid_config is restored by an INSERT, which the restore's trigger
-- makes an update of the layout, the epoch and the bounds (not the worker
-- id): the installing role may insert (granted above).  The position is no longer dumped:
-- only a superuser may set it (a position moved back repeats ids), and a
-- restored database, which is another server, issues no id until it is
-- given a worker id and then starts from its clock; a dump's position,
-- older than the ids its source issued since, never kept it from
-- repeating them.  (ALTER EXTENSION ... DROP takes a sequence out of what
-- pg_dump dumps; ADD makes it a member again.)
DO $$
DECLARE
	ext name := (SELECT e.extname FROM pg_catalog.pg_depend d
				 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
				 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_position'::pg_catalog.regclass
				   AND d.deptype = 'e'
				   AND d.objid OPERATOR(pg_catalog.=) ANY (e.extconfig));
BEGIN
	IF ext IS NOT NULL THEN
		EXECUTE pg_catalog.format('ALTER EXTENSION %I DROP SEQUENCE snowid_sql_private.snowid_position', ext);
		EXECUTE pg_catalog.format('ALTER EXTENSION %I ADD SEQUENCE snowid_sql_private.snowid_position', ext);
	END IF;
END
$$;

-- -------------------------------------------------------------------------
-- Dumps of 1.0 and 1.1
-- -------------------------------------------------------------------------
-- A dump of 1.0 or 1.1 names no version: restored where CREATE EXTENSION
-- makes 1.2, it copies the row of snowid_config and the keys into the
-- tables of their time, which are views here, and sets snowid_position,
-- which lies in snowid_sql_private.  Each failed (the attack on 1.2): the
-- restored database had neither configuration nor keys, and nothing
-- raised its generator.  So the views take the dump's rows (a COPY into a
-- view runs its INSTEAD OF INSERT trigger) into their tables, and a
-- sequence of the old name takes its setval(), whose position nothing
-- reads (a dump's position lies below what its source issued after it;
-- the raise below covers them).
--
-- Such a row has no stamp (worker_server, since 1.2): it is given one that
-- names no server, so that it restores as a dump of 1.2 does: its layout,
-- epoch and bounds kept, not its worker id (snowid_sql_config_restore()),
-- the first call saying so, and the worker id set later raising the
-- generator past the clock plus max_drift_ms (snowid_sql_config_stamp()),
-- above every id its source may have issued.  Run as the installing role,
-- which may insert into both tables (the restore's own grants).
CREATE FUNCTION snowid_sql_private.snowid_sql_config_insert()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	INSERT INTO snowid_sql_private.snowid_config (singleton, datacenter_id, worker_id, epoch,
		datacenter_bits, worker_bits, sequence_bits, max_drift_ms, max_wait_ms, claim_worker_id,
		worker_server)
	VALUES (NEW.singleton, NEW.datacenter_id, NEW.worker_id, NEW.epoch, NEW.datacenter_bits,
			NEW.worker_bits, NEW.sequence_bits, NEW.max_drift_ms, NEW.max_wait_ms, NEW.claim_worker_id,
			coalesce(NEW.worker_server, 'a dump of snowid_sql 1.0 or 1.1'));
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_insert INSTEAD OF INSERT
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_insert();

-- An INSERT into a view with such a trigger takes the view's defaults, not
-- the table's: the view's are the table's
DO $$
DECLARE
	d record;
BEGIN
	FOR d IN
		SELECT a.attname, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) AS expr
		FROM pg_catalog.pg_attrdef ad
		JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid
			AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
		WHERE ad.adrelid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass
	LOOP
		EXECUTE pg_catalog.format('ALTER VIEW @extschema@.snowid_config ALTER COLUMN %I SET DEFAULT %s',
								  d.attname, d.expr);
	END LOOP;
END
$$;

CREATE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	INSERT INTO snowid_sql_private.snowid_public_keys (key_id, key, rank)
	VALUES (NEW.key_id, NEW.key, NEW.rank);
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_public_keys_insert INSTEAD OF INSERT
	ON @extschema@.snowid_public_keys
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert();

-- Made after every body that named @extschema@.snowid_position was moved
-- to snowid_sql_private's (above): a body that names it here names this.
CREATE SEQUENCE @extschema@.snowid_position AS bigint MINVALUE 0 START WITH 0 NO CYCLE;

COMMENT ON SEQUENCE @extschema@.snowid_position IS
'not the generator''s position (snowid_sql_private.snowid_position): takes the setval() of a dump of 1.0 or 1.1, which nothing reads';

REVOKE ALL ON @extschema@.snowid_position FROM PUBLIC;
DO $$
DECLARE
	installer name := coalesce(
		(SELECT e.extowner::pg_catalog.regrole::name FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass AND d.deptype = 'e'),
		CURRENT_USER);
BEGIN
	EXECUTE pg_catalog.format('GRANT INSERT ON @extschema@.snowid_config TO %I', installer);
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON @extschema@.snowid_position TO %I', installer);
END
$$;

-- snowid_sql_fixed() made anew, with this server, from the row: a worker
-- id set before this update holds here (stamped: an installation cannot
-- tell whether it is a copy; the page says to set it again in one)
UPDATE snowid_sql_private.snowid_config SET worker_server = snowid_sql_private.snowid_sql_here()
WHERE worker_id IS NOT NULL;
SELECT snowid_sql_private.snowid_sql_refix();

-- -------------------------------------------------------------------------
-- Who may call the private schema's functions
-- -------------------------------------------------------------------------
-- A function of snowid_sql_private is for the functions of the API alone:
-- one that runs as the superuser (snowid_sql_take(), say) would do with
-- the arguments of any role what its callers check first.  So PUBLIC may
-- call only those that a function of the API calls as its caller (not
-- SECURITY DEFINER), and the installing role those that its own functions
-- (the claim's) and the triggers of its writes call as it, followed
-- through the functions they call in turn: taken from the bodies (the names they call in the private schema,
-- and an SQL-standard body's dependencies), whatever order they come in.
DO $$
DECLARE
	installer oid := coalesce(
		(SELECT e.extowner FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass
		   AND d.deptype OPERATOR(pg_catalog.=) 'e'),
		(SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER));
	private oid := 'snowid_sql_private'::pg_catalog.regnamespace::pg_catalog.oid;
	-- (function, role its body calls as: 0 for PUBLIC), to follow and done
	todo text[];
	done text[] := '{}';
	item text;
	f oid;
	ctx oid;
	body_ctx oid;
	callee oid;
	grants text[] := '{}';
	g text;
BEGIN
	-- PUBLIC: the API it may call (not snowid_claim(), say)
	SELECT pg_catalog.array_agg(p.oid::text OPERATOR(pg_catalog.||) ':0') INTO todo
	FROM pg_catalog.pg_proc p
	WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
	  AND p.proname OPERATOR(pg_catalog.~~) 'snowid%'
	  AND (p.proacl IS NULL
		   OR EXISTS (SELECT FROM pg_catalog.aclexplode(p.proacl) a
					  WHERE a.grantee OPERATOR(pg_catalog.=) 0 AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'));
	-- the installing role: the API, its own functions, and the triggers
	-- that its writes to the tables fire (as it)
	todo := todo OPERATOR(pg_catalog.||) ARRAY(
		SELECT p.oid::text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) installer::text
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@'::pg_catalog.regnamespace::pg_catalog.oid, private])
		  AND p.proname OPERATOR(pg_catalog.~~) 'snowid%'
		  AND (p.pronamespace OPERATOR(pg_catalog.<>) private OR p.proowner OPERATOR(pg_catalog.=) installer
			   OR p.prorettype OPERATOR(pg_catalog.=) 'pg_catalog.trigger'::pg_catalog.regtype));
	WHILE pg_catalog.cardinality(todo) OPERATOR(pg_catalog.>) 0 LOOP
		item := todo[1];
		todo := todo[2:];
		CONTINUE WHEN item OPERATOR(pg_catalog.=) ANY (done);
		done := done OPERATOR(pg_catalog.||) item;
		f := pg_catalog.split_part(item, ':', 1)::oid;
		ctx := pg_catalog.split_part(item, ':', 2)::oid;
		SELECT CASE WHEN p.prosecdef THEN p.proowner ELSE ctx END INTO body_ctx
		FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) f;
		-- a superuser needs no grant, nor what it calls
		CONTINUE WHEN body_ctx OPERATOR(pg_catalog.<>) 0
			AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) body_ctx);
		FOR callee IN
			SELECT c.oid FROM pg_catalog.pg_proc c, pg_catalog.pg_proc p
			WHERE p.oid OPERATOR(pg_catalog.=) f AND c.pronamespace OPERATOR(pg_catalog.=) private
			  AND (pg_catalog.strpos(p.prosrc, 'snowid_sql_private.' OPERATOR(pg_catalog.||) c.proname OPERATOR(pg_catalog.||) '(')
				   OPERATOR(pg_catalog.>) 0
				   OR EXISTS (SELECT FROM pg_catalog.pg_depend d
							  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
								AND d.objid OPERATOR(pg_catalog.=) f
								AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
								AND d.refobjid OPERATOR(pg_catalog.=) c.oid))
		LOOP
			todo := todo OPERATOR(pg_catalog.||) (callee::text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) body_ctx::text);
			grants := grants OPERATOR(pg_catalog.||) (callee::text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) body_ctx::text);
		END LOOP;
	END LOOP;
	EXECUTE 'REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA snowid_sql_private FROM PUBLIC';
	FOREACH g IN ARRAY grants LOOP
		f := pg_catalog.split_part(g, ':', 1)::oid;
		ctx := pg_catalog.split_part(g, ':', 2)::oid;
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', f::pg_catalog.regprocedure,
								  CASE WHEN ctx OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
									   ELSE ctx::pg_catalog.regrole::text END);
	END LOOP;
END
$$;
