-- sql/snowid_sql/1.2--1.3/head.sql
/* snowid_sql--1.2--1.3.sql: the SQL edition without its claim mode (issue 68) */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.3'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- What this version changes (doc/managed.md, CHANGELOG.md):
--
-- - The claim mode is gone: the edition takes its worker id from
--   snowid_config alone, as the owner sets it (a provisioning script may
--   take it from a coordination database first, doc/managed.md).  It was
--   the edition's largest part, a fifth copy of the worker-id protocol
--   resting on what PL/pgSQL can see of a restart, and it left a dblink
--   connection holding the holder secret in a session whose first call
--   was cancelled, and held a row lock that an application's open or
--   prepared transaction kept from every other session.  Its functions,
--   tables, views, sequences and the row 'claim' of snowid_locks go; the
--   column claim_worker_id of snowid_config stays, false, so that dumps of
--   earlier versions restore.
-- - A database that held a claimed worker id keeps it as its configured
--   one (below).
-- - The check of the configuration refuses a change of the layout or the
--   epoch once ids may exist that the new one could collide with: where
--   the row comes from another server, or a column whose default takes ids
--   holds some, not only where the generator moved (snowid_sql_ids_held()).
-- - The functions are made anew from 1.3's parts, as a fresh install of
--   1.3 makes them, and the privileges set whole.

-- A prepared transaction that holds a lock on the edition's tables (the
-- claim's row lock, say: 1.2 took it in a first call, which a prepared
-- transaction keeps across restarts) would keep this update waiting for
-- good: it refuses instead, naming it
DO $$
DECLARE
	gid text;
BEGIN
	SELECT x.gid INTO gid
	FROM pg_catalog.pg_prepared_xacts x
	JOIN pg_catalog.pg_locks l
		ON l.virtualtransaction OPERATOR(pg_catalog.=) ('-1/' OPERATOR(pg_catalog.||) x.transaction::text)
	JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) l.relation
	WHERE c.relnamespace OPERATOR(pg_catalog.=) 'snowid_sql_private'::pg_catalog.regnamespace
	  AND x.database OPERATOR(pg_catalog.=) pg_catalog.current_database()
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'a prepared transaction holds a lock on the tables of snowid_sql'
			USING ERRCODE = 'object_in_use',
				  DETAIL = pg_catalog.format('The prepared transaction %L took ids; the update would wait for it for good.', gid),
				  HINT = pg_catalog.format('End it first (COMMIT PREPARED %L, or ROLLBACK PREPARED %L), then update.', gid, gid);
	END IF;
END
$$;

-- The worker id a database holds by its claim becomes its configured one,
-- as if its owner had set it: the update from a claiming 1.2 keeps issuing
-- with it, and the coordination database keeps its claim, which nothing
-- re-asserts any more (doc/managed.md, "Updating to 1.3", says what that
-- means for the fleet and how the owner ends it).  Only a claim this
-- database holds now: one its holder made on this server, for its
-- configuration, re-asserted (noted) under this run of the server, and
-- answered by the coordination database since the server started (the
-- update from 1.1 notes a claim it finds under the run it runs in, without
-- asking: 1.0 and 1.1 re-asserted at no start).  A claim made before the
-- server last started, crashed or was copied may have been given to
-- another server while this one was down (1.2 re-asserted it at the next
-- call): kept, both could issue the same ids.
-- So the update refuses then, and where nothing is claimed, changing
-- nothing, and says how to go on: re-assert with 1.2's snowid_claim() and
-- update at once, or set a worker id yourself.  It does not leave the
-- worker id unset instead: the application would stop at once, and the
-- claim would stay in the coordination database with nobody knowing it.
DO $$
DECLARE
	c snowid_sql_private.snowid_config;
	claimed integer;
	stale boolean;
	answered timestamptz;
	holder text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	IF NOT FOUND OR NOT c.claim_worker_id THEN
		RETURN;
	END IF;
	-- (changed in place with 1.4's fixes: the check below kept a claim the
	-- coordination database had given to another server, test
	-- update_to_1_3_pinned; the update to 1.4 checks it)
	RAISE EXCEPTION 'snowid_sql that claims its worker id cannot be updated to 1.3'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'The update to 1.3 may keep a claimed worker id that the coordination database has given to another server; the update to 1.4 keeps one only where the coordination database confirmed it in the update''s own transaction.',
			  HINT = 'Update to 1.4 instead (ALTER EXTENSION snowid_sql UPDATE): doc/managed.md, "Updating to 1.3".';
	claimed := snowid_sql_private.snowid_sql_claimed(c);
	stale := snowid_sql_private.snowid_sql_claim_stale();
	SELECT s.answered_at INTO answered FROM snowid_sql_private.snowid_coordinator_state s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id;
	IF claimed IS NULL OR stale OR answered IS NULL
		OR answered OPERATOR(pg_catalog.<) pg_catalog.pg_postmaster_start_time() THEN
		RAISE EXCEPTION 'snowid_sql cannot be updated to 1.3 while its claimed worker id is not confirmed'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = CASE WHEN claimed IS NULL
						THEN 'claim_worker_id of snowid_config is on, and this database holds no worker id claimed for its configuration on this server.'
						ELSE pg_catalog.format('Worker id %s was claimed before the server last started, crashed or was copied: the coordination database may have given it to another server meanwhile.', claimed) END
					|| '  1.3 claims no worker id; it keeps the one a database holds now as its configured one.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script), re-assert the claim and update at once (SELECT snowid_claim(), then the update as it was installed: ALTER EXTENSION snowid_sql UPDATE, UPDATE TO ''1.3'' through pg_tle, or the update script), or set the worker id yourself first (UPDATE snowid_config SET claim_worker_id = false, worker_id = N); doc/managed.md, "Updating to 1.3".';
	END IF;
	-- the identity its claims were made under
	SELECT pg_catalog.format('dc=%s %s', c.datacenter_id, h.name) INTO holder FROM snowid_sql_private.snowid_holder h;
	UPDATE snowid_sql_private.snowid_config SET worker_id = claimed, claim_worker_id = false;
	-- a warning: CREATE and ALTER EXTENSION send the client no notice
	RAISE WARNING 'snowid_sql keeps worker id % of datacenter % as its configured worker id', claimed, c.datacenter_id
		USING DETAIL = pg_catalog.format('It was claimed from the coordination database as %L, which keeps the claim; snowid_sql 1.3 re-asserts it no more.', holder),
			  HINT = 'See doc/managed.md, "Updating to 1.3": keep the claim in the coordination database, and free it there once this database issues no more ids.';
END
$$;
-- sql/snowid_sql/1.3/config.sql
-- -------------------------------------------------------------------------
-- The configuration
-- -------------------------------------------------------------------------

-- A timestamptz as Unix milliseconds, rounded down; NULL if infinite or
-- NULL.  The seconds of an interval from 2000 (PostgreSQL's own epoch, so
-- the subtraction never overflows), not of the timestamptz itself: that
-- EXTRACT is immutable, and the function not STRICT (the CASE is not), so
-- the planner inlines it where it is called with anything but a volatile
-- argument (which it would use twice), and a call runs no query of its own.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_unix_ms(ts timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.isfinite(ts)
	THEN pg_catalog.floor(EXTRACT(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000)::bigint
		+ 946684800000 END;

-- Unix milliseconds as a timestamptz, exactly (no floating point)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_timestamptz(unix_ms bigint)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((timestamp '1970-01-01'
		 + pg_catalog.make_interval(days => (unix_ms / 86400000)::integer))
		+ (unix_ms % 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';

-- What is wrong with a configuration row: 0 for nothing, else the number
-- of the first check it fails (snowid_sql_config_problem() says which).
-- The same checks as the table's constraints, one by one, for the
-- trigger's message.  The epoch lies from 1970 to before the year 10000
-- (Unix milliseconds from 0 to 253402300799999), infinities excluded, and
-- on a whole millisecond.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_fault(c snowid_sql_private.snowid_config)
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
	WHEN c.claim_worker_id THEN 11
	ELSE 0 END;

-- The problem with a configuration row, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_problem(c snowid_sql_private.snowid_config)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE snowid_sql_private.snowid_sql_config_fault(c)
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
	WHEN 11 THEN
		'claim_worker_id is on: snowid_sql claims no worker id since 1.3; set worker_id, which a provisioning script may take from the coordination database (doc/managed.md, "A worker id from a coordination database").'
	END;

-- The configuration, checked: a bad one is an error naming what is wrong,
-- and a worker id needed is one set on this server.  No search_path of
-- its own: it names every object with its schema, and its callers set
-- pg_catalog's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config(need_worker boolean)
RETURNS snowid_sql_private.snowid_config
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	problem text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no configuration'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The table snowid_config holds no row.',
				  HINT = 'Drop the extension and create it again, then set the worker id.';
	END IF;
	problem := snowid_sql_private.snowid_sql_config_problem(c);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'Correct the row of snowid_config as the owner of the extension (doc/managed.md).';
	END IF;
	IF need_worker AND c.worker_id IS NOT NULL
		AND (c.worker_server IS NULL
			 OR c.worker_server OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_here()) THEN
		PERFORM snowid_sql_private.snowid_sql_elsewhere(c.worker_id);
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		-- a row stamped elsewhere (a restored dump, which keeps no worker
		-- id): says it is a copy
		IF c.worker_server OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_here() THEN
			RAISE EXCEPTION 'snowid has no worker id on this server'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row of snowid_config was last stamped on another server, or with other sequences: a restored dump carries its source''s stamp but not its worker id, and this database issues no id until it has a worker id of its own.',
					  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter; setting it raises the generator past every id the other server may have issued.';
		END IF;
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- What says that ids made under the layout and epoch of the row c may
-- exist, as a sentence, or NULL; restoring leaves out the tables (see
-- snowid_sql_config_check(), which states the rule).  A column takes ids
-- where its default, or its domain's, depends on a function that issues
-- them (pg_depend: snowid_next(), snowid_serial(prefix), and an
-- SQL-standard function of the application's that calls one of them),
-- in a table that is neither temporary (its ids are this database's
-- generator's, which the position counts) nor a view or a foreign table
-- (whose reading would run other code).  Each is read with ONLY (no child
-- of it, which may be a foreign table; a partition has its own default)
-- and row_security off, so that a policy makes the reading fail rather
-- than hide rows; a column that cannot be read counts as holding ids.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ids_held(c snowid_sql_private.snowid_config,
	restoring boolean)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET lock_timeout = '10s'
AS $$
DECLARE
	col record;
	held boolean;
	msg text;
BEGIN
	IF (SELECT s.is_called FROM snowid_sql_private.snowid_position s) THEN
		RETURN 'This database issued ids: its generator (snowid_sql_private.snowid_position) has moved.';
	END IF;
	IF c.worker_server <> snowid_sql_private.snowid_sql_here() THEN
		RETURN format('The row comes from another server, which issued ids with it (it was stamped there: %s): a restored dump or a copy, whose tables hold those ids.',
					  c.worker_server);
	END IF;
	IF restoring THEN
		RETURN NULL;
	END IF;
	FOR col IN
		WITH RECURSIVE issuing(f) AS (
			SELECT 'snowid_sql_private.snowid_sql_next(boolean)'::regprocedure::oid
			UNION
			SELECT d.objid FROM pg_depend d JOIN issuing i ON d.refobjid = i.f
			WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_proc'::regclass
		), defaults(rel, num, typ) AS (
			SELECT ad.adrelid, ad.adnum, NULL::oid
			FROM pg_depend d JOIN pg_attrdef ad ON ad.oid = d.objid
			WHERE d.classid = 'pg_attrdef'::regclass AND d.refclassid = 'pg_proc'::regclass
			  AND d.refobjid IN (SELECT f FROM issuing)
			UNION
			SELECT NULL, NULL, d.objid
			FROM pg_depend d
			WHERE d.classid = 'pg_type'::regclass AND d.refclassid = 'pg_proc'::regclass
			  AND d.refobjid IN (SELECT f FROM issuing)
		)
		SELECT DISTINCT a.attrelid::regclass AS tab, a.attname AS name
		FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid
		WHERE r.relkind = 'r' AND r.relpersistence <> 't' AND a.attnum > 0 AND NOT a.attisdropped
		  AND r.relnamespace <> 'snowid_sql_private'::regnamespace
		  AND ((a.attrelid, a.attnum) IN (SELECT rel, num FROM defaults WHERE rel IS NOT NULL)
			   OR a.atttypid IN (SELECT typ FROM defaults WHERE typ IS NOT NULL))
		ORDER BY 1, 2
	LOOP
		BEGIN
			-- by its size, not by a query: planning one runs the
			-- expressions of the table's indexes, statistics and
			-- constraints, and a read by name may read another relation
			-- than the one looked up, as the superuser (changed in place
			-- with 1.4's fixes: tests guard_index_superuser,
			-- guard_renamed_while_waiting); a table with pages counts as
			-- holding ids, whatever they hold
			held := pg_relation_size(col.tab) > 0;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
			RETURN format('The column %I of %s takes ids by its default, and could not be read (%s).',
						  col.name, col.tab, msg);
		END;
		IF held THEN
			RETURN format('The column %I of %s takes ids by its default, and its table is not empty.', col.name, col.tab);
		END IF;
	END LOOP;
	RETURN NULL;
END
$$;

-- Checks a new configuration row (a trigger, as the owner of the
-- extension, who reads what it counts): its values, a lowered
-- max_drift_ms, and a change of the layout or the epoch.
--
-- The rule it serves: the layout and the epoch make an id of a time and a
-- node, and under another layout or epoch the same number stands for
-- another time and node, so an id made after a change can equal one made
-- before.  They change only while no id made under them may exist where
-- this database's ids may meet it.  What the edition can know of such
-- ids, the change is refused on (snowid_sql_ids_held()):
-- - its generator moved (snowid_position called): this database issued;
--   a copy of its files (a standby, a CREATE DATABASE ... TEMPLATE copy, a
--   snapshot) brings its position along with its tables;
-- - the row carries the stamp of another server (worker_server): a worker
--   id was set with it there, and the ids that server issued travel with
--   its tables (a restored dump, whose position is not dumped; a
--   pg_createsubscriber copy; pg_upgrade), as do those of a dump of 1.0
--   or 1.1, or of a database that claimed its worker id, whose restore
--   gives it a stamp that names no server.  Before 1.3 the check read the
--   position alone: the owner of a restored copy moved its epoch 30 s
--   later, then set its gone source's worker id, and 200 of 5,000 new ids
--   equalled ids in the restored table (test 149);
-- - a column of this database's tables whose default takes ids holds a
--   value: ids restored with tables whose edition did not come along (a
--   dump of the tables alone), or loaded into them.
-- What it cannot see stays the owner's (doc/managed.md): ids kept in a
-- column without such a default, or outside the database.  The restore
-- of a dump's row (snowid_sql_config_restore(), an INSERT where the row
-- is) brings the layout and epoch its tables' ids were made under: it
-- may set them where this database issued nothing and its row came from
-- nowhere else, whatever the tables hold (the tables of a dump come back
-- before the row).  An INSERT where the row is becomes such an update, and
-- is checked as one.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := snowid_sql_private.snowid_sql_config_problem(NEW);
	restoring boolean := coalesce(current_setting('snowid_sql.restoring', true) = 'on', false);
	used boolean;
	held text;
	high timestamptz;
BEGIN
	-- the restore's insert: its update is checked
	IF TG_OP = 'INSERT' AND EXISTS (SELECT FROM snowid_sql_private.snowid_config) THEN
		RETURN NEW;
	END IF;
	PERFORM set_config('snowid_sql.restoring', '', true);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM snowid_sql_private.snowid_position;
	-- max_drift_ms says how far ids may lie ahead of the clock, which a
	-- copy's floor counts: lowered below how far they lie ahead now, it
	-- counted short, and ids came again (the attack on 1.2: 1,000 of 1,000
	-- from a restored dump).  And a copy's row keeps its source's until
	-- its worker id is set (snowid_sql_config_stamp() counts it).
	IF TG_OP = 'UPDATE' AND NEW.max_drift_ms < OLD.max_drift_ms THEN
		IF OLD.worker_server IS NOT NULL AND NEW.worker_id IS NOT DISTINCT FROM OLD.worker_id
			AND NEW.worker_server IS NOT DISTINCT FROM OLD.worker_server
			AND OLD.worker_server IS DISTINCT FROM snowid_sql_private.snowid_sql_here() THEN
			RAISE EXCEPTION 'max_drift_ms of a copy cannot be lowered before its worker id is set'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row comes from another server (a restored dump, a copy), which issued ids up to max_drift_ms ahead of its clock: setting the worker id raises the generator past them.',
					  HINT = 'Set the worker id first (UPDATE snowid_config SET worker_id = N), then lower max_drift_ms.';
		END IF;
		high := snowid_sql_private.snowid_sql_high_water_time();
		IF used AND snowid_sql_private.snowid_sql_unix_ms(high)
			> snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + NEW.max_drift_ms THEN
			RAISE EXCEPTION 'max_drift_ms cannot be lowered below how far the snowid generator runs ahead of the clock'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('Ids were issued up to %s, %s ms ahead of the clock: a copy''s floor counts max_drift_ms, and would count short.',
												 high, snowid_sql_private.snowid_sql_unix_ms(high) - snowid_sql_private.snowid_sql_unix_ms(clock_timestamp())),
					  HINT = pg_catalog.format('Lower it once the clock has passed %s.', high);
		END IF;
	END IF;
	IF (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		held := snowid_sql_private.snowid_sql_ids_held(OLD, restoring OR TG_OP = 'INSERT');
		IF held IS NOT NULL THEN
			RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = held || '  An id of one layout or epoch can equal an id of another, so new ids could collide with those.',
					  HINT = 'Set the layout and the epoch before the first id.  To switch deliberately, follow doc/layouts.md ("Changing the layout of a running system").';
		END IF;
	END IF;
	RETURN NEW;
END
$$;

-- An insert of the row where one is (a restore: CREATE EXTENSION made the
-- row before the dump's COPY of it) updates that row instead, all but its
-- worker id: a restored database is another server, which issues no id
-- until it is given a worker id of its own.  It carries the source's
-- stamp into a row without a worker id, so that the worker id set there
-- later raises the generator (snowid_sql_config_stamp()); a dump of a
-- database that claimed its worker id (claim_worker_id, up to 1.2) has no
-- stamp, and is given one that names no server.  The update says it is
-- the restore's to snowid_sql_config_check() (the setting
-- snowid_sql.restoring, for that update alone).  Fires after the check
-- (triggers fire in the order of their names), on the row inserted.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_restore()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	stamp text := coalesce(NEW.worker_server,
						   CASE WHEN NEW.claim_worker_id THEN 'a dump of snowid_sql that claimed its worker id' END);
	updated boolean;
BEGIN
	PERFORM set_config('snowid_sql.restoring', 'on', true);
	UPDATE snowid_sql_private.snowid_config x
	SET datacenter_id = NEW.datacenter_id, epoch = NEW.epoch,
		datacenter_bits = NEW.datacenter_bits, worker_bits = NEW.worker_bits,
		sequence_bits = NEW.sequence_bits, max_drift_ms = NEW.max_drift_ms,
		max_wait_ms = NEW.max_wait_ms
	WHERE x.singleton;
	updated := FOUND;
	PERFORM set_config('snowid_sql.restoring', '', true);
	IF updated THEN
		UPDATE snowid_sql_private.snowid_config x SET worker_server = stamp
		WHERE x.singleton AND x.worker_id IS NULL AND stamp IS NOT NULL;
		RETURN NULL;
	END IF;
	NEW.claim_worker_id := false;
	NEW.worker_server := stamp;
	RETURN NEW;
END
$$;

-- A worker id set (an INSERT or UPDATE that names it) says so to
-- snowid_sql_refix() for the rest of the transaction: the generation then
-- held is adopted
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_worker_set()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM set_config('snowid_sql.worker_set', 'on', true);
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
-- install) sets nothing: no server issued ids with it, and a worker id set
-- there for the first time is the operator's to make unique
-- (doc/managed.md).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_stamp()
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
	here := snowid_sql_private.snowid_sql_here();
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_floor()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	drift_ms integer := nullif(current_setting('snowid_sql.copy_drift_ms', true), '')::integer;
BEGIN
	IF drift_ms IS NOT NULL THEN
		PERFORM set_config('snowid_sql.copy_drift_ms', '', true);
		PERFORM snowid_sql_private.snowid_sql_raise_floor(snowid_sql_private.snowid_sql_unix_ms(clock_timestamp())
														  + drift_ms + 2);
	END IF;
	RETURN NULL;
END
$$;

-- A replica's apply (and any session with session_replication_role =
-- replica) changes no row of snowid_config or snowid_locks: a publication
-- carries the publisher's rows, whose worker id and layout are not this
-- server's (also in the initial copy, whose rows the trigger drops, so
-- that it does not fail on the subscriber's keys)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_replica()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN NULL;
END
$$;
-- sql/snowid_sql/1.3/server.sql
-- -------------------------------------------------------------------------
-- The server a worker id holds on
-- -------------------------------------------------------------------------

-- Stamps this start in snowid_sql_started, for a writer that has checked
-- the server: the microseconds that to_timestamp() reads back as the start
-- (the nearest, or one either side where the floating point rounds
-- otherwise; none of them, which should not happen, stamps nothing, and
-- every call stays a writer)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_stamp_start()
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
			done := setval('snowid_sql_private.snowid_sql_started', us + d);
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_here()
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE
RETURN pg_catalog.format('sysid=%s position=%s generation=%s',
						 (pg_catalog.pg_control_system()).system_identifier,
						 pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass),
						 pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_generation'::pg_catalog.regclass));

-- What is wrong with the options of the generator's sequences, as a
-- sentence, or NULL: its reasoning holds for INCREMENT 1, CACHE 1 and NO
-- CYCLE alone (a cache hides a writer's window from readers); and with
-- what is logged: a crash empties an UNLOGGED sequence (the generator
-- would start again below the ids it issued) or table, which their owner
-- (the plain script's, pg_tle's) may make so
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_sequences_problem()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT p.problem FROM (
		SELECT 1 AS kind, c.relname AS name,
			   pg_catalog.format('The sequence %s has INCREMENT %s, CACHE %s and %s; the generator needs INCREMENT 1, CACHE 1 and NO CYCLE.',
								 c.relname, s.seqincrement, s.seqcache,
								 CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END) AS problem
		FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.seqrelid
		WHERE s.seqrelid OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_sql_private.snowid_position'::pg_catalog.regclass,
														   'snowid_sql_private.snowid_generation'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND (s.seqincrement OPERATOR(pg_catalog.<>) 1 OR s.seqcache OPERATOR(pg_catalog.<>) 1 OR s.seqcycle)
		UNION ALL
		SELECT 2, c.relname,
			   pg_catalog.format('The %s %s is UNLOGGED; the generator needs it logged (ALTER %s %s SET LOGGED), as a crash empties it.',
								 CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'table' END, c.relname,
								 CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname)
		FROM pg_catalog.pg_class c
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_sql_private.snowid_position'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_generation'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_config'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_locks'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND c.relpersistence OPERATOR(pg_catalog.<>) 'p'
	) p
	ORDER BY p.kind, p.name
	LIMIT 1;
END;

-- The error of a worker id set on another server
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_elsewhere(worker_id integer)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'snowid has no worker id on this server'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = format('The worker id%s of snowid_config was set on another server, or with other sequences: this database is a copy (a restored dump, a logical subscriber, a pg_createsubscriber copy, a pg_upgrade), or snowid_position or snowid_generation was altered.',
							  ' ' || worker_id),
			  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
END
$$;

-- The error of a generator whose sequences a subscription synchronises
-- (PostgreSQL 19 lists sequences in pg_subscription_rel; earlier ones
-- never list these)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_subscribed()
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	seq text;
BEGIN
	SELECT c.relname INTO seq
	FROM pg_subscription_rel r JOIN pg_class c ON c.oid = r.srrelid
	WHERE r.srrelid IN ('snowid_sql_private.snowid_position'::regclass, 'snowid_sql_private.snowid_generation'::regclass)
	ORDER BY c.relname
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'a subscription synchronises the sequences of the snowid generator'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('pg_subscription_rel lists the sequence %s: each synchronisation sets it to the publisher''s value, whose ids would come again.', seq),
				  HINT = 'Publish no sequence of the extension (not FOR ALL SEQUENCES), then ALTER SUBSCRIPTION ... REFRESH PUBLICATION on this server.';
	END IF;
END
$$;
-- sql/snowid_sql/1.3/generator.sql
-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- The id at a position, for a node and a layout: one expression, which
-- the planner inlines where it is called, its node's bits grouped, so
-- that it folds them into one constant where the datacenter and worker ids
-- are constants (the common path of snowid_sql_next())
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| ((datacenter_id::bigint << (worker_bits + sequence_bits)) | (worker_id::bigint << sequence_bits))
	| (pos & ((1::bigint << sequence_bits) - 1));

-- The id at a position, for the node of snowid_sql_fixed() and a worker id
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fixed_id(worker_id integer, pos bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN snowid_sql_private.snowid_sql_id(pos, (snowid_sql_private.snowid_sql_fixed()).datacenter_id, worker_id,
	(snowid_sql_private.snowid_sql_fixed()).datacenter_bits, (snowid_sql_private.snowid_sql_fixed()).worker_bits,
	(snowid_sql_private.snowid_sql_fixed()).sequence_bits);

-- Makes snowid_sql_fixed() anew from the row of snowid_config (see
-- objects.sql), with this server, its sequences and its mark, once they
-- are as the generator needs them.  Its body holds only numbers and
-- booleans of the row, which the table's constraint holds in their
-- ranges, and texts of this server's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_refix()
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	here text := snowid_sql_private.snowid_sql_here();
	problem text := snowid_sql_private.snowid_sql_sequences_problem();
	before snowid_sql_private.snowid_sql_fixed;
	adopted bigint;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'the sequences or tables of the snowid generator were altered'
			USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = problem,
				  HINT = 'Put them back as the detail says (a superuser, where the extension''s objects are the superuser''s), then set the worker id again.';
	END IF;
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	-- the one made before (none, or one of other attributes, before an
	-- update ends)
	BEGIN
		before := snowid_sql_private.snowid_sql_fixed();
	EXCEPTION WHEN OTHERS THEN
		before := NULL;
	END;
	-- the generation as it is now is this server's where the worker id was
	-- set in this transaction, or this is another server (or other
	-- sequences): a copy's, which sets its worker id anew;
	-- otherwise the one adopted before stays
	adopted := CASE WHEN current_setting('snowid_sql.worker_set', true) = 'on'
						 OR before.server IS DISTINCT FROM here
					THEN pg_sequence_last_value('snowid_sql_private.snowid_generation')
					ELSE before.adopted END;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fixed()
RETURNS snowid_sql_private.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %L, %L, %s, %s)::snowid_sql_private.snowid_sql_fixed$f$,
		coalesce(c.datacenter_id, 0),
		coalesce(CASE WHEN c.worker_server = here THEN c.worker_id END::text, 'NULL'),
		coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(snowid_sql_private.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(snowid_sql_private.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0),
		pg_relation_filepath('snowid_sql_private.snowid_position'), here,
		1 + (hashtext(here)::bigint & 4194303), coalesce(adopted::text, 'NULL'));
END
$$;

-- The trigger that makes snowid_sql_fixed() anew whenever the row changes
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_refix();
	RETURN NULL;
END
$$;


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
-- The lock is the row 'generator' of snowid_locks, locked in the block's
-- subtransaction, which the block ends with an error of its own: the lock
-- goes with it, on success, error or cancel alike, and the sequences keep
-- what was set (they do not roll back).  A window left open by a writer
-- that failed (the generation odd) sends the calls that see it here, to
-- wait for the lock; the next writer closes it.  A generator made on
-- another server, or with other sequences, moves nothing.
-- It sends no message to the client meanwhile (client_min_messages:
-- xact.c's DEBUG lines at the end of the subtransaction, sent to a client
-- that stops reading, would hold the lock until it disconnects).  A
-- generator whose sequences a subscription synchronises (PostgreSQL 19:
-- FOR ALL SEQUENCES, REFRESH SEQUENCES, which set them to the publisher's
-- values in place) moves nothing either.  It sets its search_path:
-- snowid_sql_next(), which calls it, runs in the caller's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
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
			SELECT true INTO locked FROM snowid_sql_private.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE;
		ELSE
			SELECT true INTO locked FROM snowid_sql_private.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE SKIP LOCKED;
		END IF;
		IF locked THEN
			IF (snowid_sql_private.snowid_sql_fixed()).server IS DISTINCT FROM snowid_sql_private.snowid_sql_here() THEN
				PERFORM snowid_sql_private.snowid_sql_elsewhere((snowid_sql_private.snowid_sql_fixed()).worker_id);
			END IF;
			-- (before 19, no subscription synchronises a sequence)
			IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 >= 190000 THEN
				PERFORM snowid_sql_private.snowid_sql_subscribed();
			END IF;
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further).  Its high bits
			-- are this server's token, which the readers check: a
			-- generation set elsewhere (the publisher's, synchronised)
			-- sends them here, to the check above.
			g := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation');
			-- another server's token (none before 1.2): the sequences hold
			-- that server's values, synchronised (PostgreSQL 19: FOR ALL
			-- SEQUENCES) or copied, and the position may lie below ids
			-- this server issued.  Unless adopted (the worker id set anew
			-- since), the worker id does not hold: it must be set again.
			IF g >> 40 <> 0 AND g >> 40 <> (snowid_sql_private.snowid_sql_fixed()).token
				AND g IS DISTINCT FROM (snowid_sql_private.snowid_sql_fixed()).adopted THEN
				RAISE EXCEPTION 'the sequences of the snowid generator hold another server''s values'
					USING ERRCODE = 'object_not_in_prerequisite_state',
						  DETAIL = 'snowid_generation carries another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy set the generator''s sequences to that server''s values, with which ids could come again.',
						  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter and not used by this server before (its ids may lie above the position the sequences hold now).';
			END IF;
			IF g IS NULL OR g >> 40 <> (snowid_sql_private.snowid_sql_fixed()).token THEN
				g := (snowid_sql_private.snowid_sql_fixed()).token << 40;
			END IF;
			-- the start this writer checked the server under, for the
			-- common path (see snowid_sql_started)
			IF pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started')::double precision / 1000000)
				IS DISTINCT FROM pg_catalog.pg_postmaster_start_time() THEN
				PERFORM snowid_sql_private.snowid_sql_stamp_start();
			END IF;
			g := pg_catalog.setval('snowid_sql_private.snowid_generation', g + 1 + g % 2);
			-- the last position, read under the sequence's buffer lock (a
			-- nextval() may run meanwhile); before the first, the one below
			last := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_position');
			IF last IS NULL THEN
				SELECT s.last_value - 1 INTO last FROM snowid_sql_private.snowid_position s;
			END IF;
			first := greatest(last + 1, low);
			got := greatest(least(n, high - first + 1), 0);
			IF first + got - 1 > last THEN
				done := pg_catalog.setval('snowid_sql_private.snowid_position', first + got - 1);
			END IF;
			-- and closes: even again
			done := pg_catalog.setval('snowid_sql_private.snowid_generation', g + 1);
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

-- Moves the generator up so that its next position lies at or above
-- floor_ms (Unix ms), as a writer (snowid_sql_move()), waiting for the
-- lock at most 10 s: a copy's worker id set (snowid_sql_config_floor())
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_raise_floor(floor_ms bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	floor_rel bigint := floor_ms - snowid_sql_private.snowid_sql_unix_ms(c.epoch);
BEGIN
	IF floor_rel <= 0 THEN
		RETURN;
	END IF;
	IF floor_rel > snowid_sql_private.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'the floor % lies past the last time of the layout %', floor_ms, snowid_sql_private.snowid_sql_layout(c)
			USING ERRCODE = 'numeric_value_out_of_range';
	END IF;
	PERFORM snowid_sql_private.snowid_sql_move(floor_rel << c.sequence_bits, 0, NULL, true);
END
$$;


-- Takes up to n consecutive positions (at least one), all at or after the
-- clock's millisecond and at most max_drift_ms ahead of it; first is the
-- first of them, got how many.  Waits at most max_wait_ms in all for the
-- clock when the positions run that far ahead.  given is a position that
-- snowid_sql_next() took and could not use at once, or NULL: it is kept if
-- the clock allows it, as a position taken here would be.  Otherwise takes
-- them as a writer, waiting for the lock at most 10 s.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_take(n integer, c snowid_sql_private.snowid_config,
	given bigint, OUT first bigint, OUT got integer)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	s integer := c.sequence_bits;
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
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
		now_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
		IF now_ms > snowid_sql_private.snowid_sql_max_ms(c) THEN
			RAISE EXCEPTION 'snowid has run out of timestamps'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The layout %s holds no time after %s.', snowid_sql_private.snowid_sql_layout(c),
									  snowid_sql_private.snowid_sql_timestamptz(snowid_sql_private.snowid_sql_max_ms(c) + epoch_ms));
		END IF;
		-- the last position the drift bound allows
		allowed := ((now_ms + c.max_drift_ms + 1) << s) - 1;
		v := given;
		given := NULL;
		IF v IS NULL THEN
			-- at or after the clock, and up to the drift bound
			m := snowid_sql_private.snowid_sql_move(now_ms << s, n, allowed, true);
			first := m.first;
			got := m.got;
			IF now_ms < (m.last >> s) - 100 AND waited_ms = 0 THEN
				PERFORM nextval('snowid_sql_private.snowid_clock_steps');
			END IF;
		ELSE
			first := v;
			got := CASE WHEN v <= allowed THEN 1 ELSE 0 END;
			IF (v >> s) > now_ms + 100 AND waited_ms = 0 THEN
				PERFORM nextval('snowid_sql_private.snowid_clock_steps');
			END IF;
		END IF;
		IF got >= 1 THEN
			RETURN;
		END IF;
		-- the positions run too far ahead of the clock: wait for it
		IF waited_ms >= c.max_wait_ms THEN
			PERFORM nextval('snowid_sql_private.snowid_clock_errors');
			RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
				(first >> s) - now_ms
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
									  c.max_drift_ms, c.max_wait_ms),
					  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
		END IF;
		IF waited_ms = 0 THEN
			PERFORM nextval('snowid_sql_private.snowid_waits');
		END IF;
		nap_ms := least(10, c.max_wait_ms - waited_ms);
		PERFORM pg_sleep(nap_ms / 1000.0);
		waited_ms := waited_ms + nap_ms;
		IF v IS NOT NULL THEN
			-- the position taken is ours: wait until the clock allows it
			LOOP
				now_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
				IF v <= ((now_ms + c.max_drift_ms + 1) << s) - 1 THEN
					first := v;
					got := 1;
					RETURN;
				END IF;
				IF waited_ms >= c.max_wait_ms THEN
					PERFORM nextval('snowid_sql_private.snowid_clock_errors');
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

-- The id at a position, for the node of the configuration
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_compose(c snowid_sql_private.snowid_config, pos bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN snowid_sql_private.snowid_sql_id(pos, c.datacenter_id, c.worker_id, c.datacenter_bits,
	c.worker_bits, c.sequence_bits);

-- One id, as snowid_next().
--
-- The common path takes no lock, opens no subtransaction, reads no table
-- and runs few statements (PL/pgSQL's cost is mostly per statement): the
-- worker id (snowid_sql_fixed()'s), then the generation is read, one
-- position taken with nextval(), the generation read again, and the clock.
-- The position is used if both readings are the same even value (no
-- writer's window can have enclosed the nextval(), see snowid_sql_move())
-- and it lies in the clock's millisecond or up to near_ms (100 ms, and no
-- more than max_drift_ms) ahead.
--
-- Why no position is used twice: nextval() gives each position at most
-- once, and only a setval() moves the sequence back, which only a writer
-- does, within a window; a position that a window may have enclosed is
-- never used, and every position taken outside the windows lies below
-- each later setting (a writer reads the sequence after its window
-- opens).  Writers take turns on the lock, and each uses only positions it
-- set itself under it.
--
-- A position behind the clock or one a window may have enclosed is
-- skipped: the call becomes a writer, which moves the sequence 9 ms past
-- the clock's millisecond and takes the first position there (so that the
-- calls of the next 9 ms need none).  Anything else takes the path of
-- snowid_sql_config() and snowid_sql_take(), which read the table, with
-- the position taken here if it is this call's: a configuration with
-- something missing (said there), a standby, the end of the layout's time,
-- or a position far ahead of the clock (counted, and waited for).
--
-- The common path also checks that snowid_sql_fixed() was made with this
-- snowid_position, in this database (a restored dump has another, a copy
-- made from it as a template is in another), that a writer checked the
-- server since it started (snowid_sql_started: a pg_createsubscriber
-- copy's first call becomes a writer, which finds another system
-- identifier), and makes its transaction write WAL of its own once (a transactional
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
-- What the common path costs (doc/managed.md, "Measuring"):
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next(recovery boolean)
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
	w := CASE WHEN (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				   OPERATOR(pg_catalog.=) (snowid_sql_private.snowid_sql_fixed()).position_path) IS TRUE
		THEN (snowid_sql_private.snowid_sql_fixed()).worker_id END;
	g := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass);
	v := CASE WHEN w IS NOT NULL AND NOT recovery
		THEN CASE WHEN pg_catalog.current_setting('snowid_sql.message_written', true) OPERATOR(pg_catalog.=) 'on'
					   OR (pg_catalog.pg_logical_emit_message(true, 'snowid_sql', '') IS NOT NULL
						   AND pg_catalog.set_config('snowid_sql.message_written', 'on', true) IS NOT NULL)
			THEN pg_catalog.nextval('snowid_sql_private.snowid_position'::pg_catalog.regclass) END END;
	-- the generation even and this server's (its bits from 40 up the
	-- token): (g % 2 = 0 AND g >> 40 = token); a writer has checked the
	-- server since it started (snowid_sql_started); the position in the
	-- clock's millisecond or up to near_ms ahead, the clock read once
	-- here, after the position (a later reading only narrows what is
	-- kept): v - now_pos from 0 to ((near_ms + 1) << sequence_bits) - 1,
	-- compared unsigned (the sign bit flipped on both sides), one
	-- expression where a variable now_pos would cost a statement; and in
	-- the layout's time: (v >> sequence_bits) <= max_ms
	IF (g OPERATOR(pg_catalog.&) -1099511627775) OPERATOR(pg_catalog.=) ((snowid_sql_private.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
		AND pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass) OPERATOR(pg_catalog.=) g
		AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started'::pg_catalog.regclass)::double precision
								OPERATOR(pg_catalog./) 1000000)
			OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
		AND ((v OPERATOR(pg_catalog.-) ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (snowid_sql_private.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits))
			 OPERATOR(pg_catalog.#) -9223372036854775808)
			OPERATOR(pg_catalog.<) ((((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
									 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
									OPERATOR(pg_catalog.#) -9223372036854775808)
		AND v OPERATOR(pg_catalog.<=) (((snowid_sql_private.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
									   OPERATOR(pg_catalog.|) ((1::bigint OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
															   OPERATOR(pg_catalog.-) 1)) THEN
		RETURN snowid_sql_private.snowid_sql_fixed_id((snowid_sql_private.snowid_sql_fixed()).worker_id, v);
	END IF;
	now_pos := CASE WHEN w IS NOT NULL AND NOT recovery THEN ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (snowid_sql_private.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) END;
	-- (past the layout's time, the path below says so)
	IF v IS NOT NULL AND now_pos OPERATOR(pg_catalog.<=) ((snowid_sql_private.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer, which
		-- moves the sequence ahead_ms (9, or near_ms if less) past the
		-- clock's millisecond: the calls of the next ahead_ms
		-- milliseconds find it ahead, within near_ms, and need no writer
		-- (one writer every ahead_ms + 1 milliseconds, not every one)
		IF NOT coalesce((g OPERATOR(pg_catalog.&) -1099511627775)
							OPERATOR(pg_catalog.=) ((snowid_sql_private.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
						AND pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass)
							OPERATOR(pg_catalog.=) g
						AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started'::pg_catalog.regclass)::double precision
												OPERATOR(pg_catalog./) 1000000)
							OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
						AND v OPERATOR(pg_catalog.>=) now_pos
						AND (v OPERATOR(pg_catalog.-) now_pos)
							OPERATOR(pg_catalog.>=) (((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
													 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits),
						false) THEN
			v := (snowid_sql_private.snowid_sql_move(
				now_pos OPERATOR(pg_catalog.+)
					((CASE WHEN (snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.<) 9
						   THEN (snowid_sql_private.snowid_sql_fixed()).near_ms ELSE 9 END)::bigint
					 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits),
				1, NULL, false)).first;
		END IF;
		IF v OPERATOR(pg_catalog.>=) now_pos
			AND (v OPERATOR(pg_catalog.-) now_pos)
				OPERATOR(pg_catalog.<) (((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
										OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) THEN
			RETURN snowid_sql_private.snowid_sql_fixed_id((snowid_sql_private.snowid_sql_fixed()).worker_id, v);
		END IF;
	END IF;
	RETURN snowid_sql_private.snowid_sql_next_table(v);
END
$$;

-- The rest of a call that the common path did not end: reads the table,
-- as the caller's snowid_sql_next() (the superuser), and takes the
-- position v that call took, or another
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_table(v bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(true);
BEGIN
	RETURN snowid_sql_private.snowid_sql_compose(c, (snowid_sql_private.snowid_sql_take(1, c, v)).first);
END
$$;

-- Issuing, with pg_is_in_recovery() read here (see above)
CREATE OR REPLACE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN snowid_sql_private.snowid_sql_next(pg_catalog.pg_is_in_recovery());

COMMENT ON FUNCTION @extschema@.snowid_next() IS
'the next id of this server''s generator';

-- n ids in one pass: as many positions as the clock and max_drift_ms allow
-- at a time, taken by a writer
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE STRICT
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 10
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	t record;
	taken integer := 0;
BEGIN
	IF n < 1 OR n > 100000 THEN
		RAISE EXCEPTION 'batch size % is out of range', n
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'snowid_next_batch() hands out from 1 to 100000 ids in one call.';
	END IF;
	c := snowid_sql_private.snowid_sql_config(true);
	WHILE taken < n LOOP
		t := snowid_sql_private.snowid_sql_take(n - taken, c, NULL);
		RETURN QUERY SELECT snowid_sql_private.snowid_sql_compose(c, t.first + g)
			FROM generate_series(0::bigint, t.got - 1) g;
		taken := taken + t.got;
	END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
ROWS 10
BEGIN ATOMIC
	SELECT snowid_sql_private.snowid_sql_next_batch(n);
END;

COMMENT ON FUNCTION @extschema@.snowid_next_batch(integer) IS
'n ids (1 to 100,000) in ascending order';

-- sql/snowid_sql/1.3/decode.sql
-- -------------------------------------------------------------------------
-- Decoding and time ranges
-- -------------------------------------------------------------------------

-- The last millisecond since the epoch that ids can hold
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_max_ms(c snowid_sql_private.snowid_config)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least((1::bigint << (63 - c.datacenter_bits - c.worker_bits - c.sequence_bits)) - 1,
			 253402300800000 - 1 - snowid_sql_private.snowid_sql_unix_ms(c.epoch));

-- The milliseconds field of an id a user gave, checked (no search_path
-- of its own: its operators are pg_catalog's by name)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ms(c snowid_sql_private.snowid_config, id bigint)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
	ms bigint := id OPERATOR(pg_catalog.>>)
		(c.datacenter_bits OPERATOR(pg_catalog.+) c.worker_bits OPERATOR(pg_catalog.+) c.sequence_bits);
BEGIN
	IF id OPERATOR(pg_catalog.<) 0 THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A snowid is never negative: its sign bit is always 0.';
	END IF;
	IF ms OPERATOR(pg_catalog.>) snowid_sql_private.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Its timestamp field lies after 9999-12-31 23:59:59.999 UTC, the last time snowids can hold.';
	END IF;
	RETURN ms;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_decode(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	ms bigint := snowid_sql_private.snowid_sql_ms(c, id);
BEGIN
	ts := snowid_sql_private.snowid_sql_timestamptz(ms + snowid_sql_private.snowid_sql_unix_ms(c.epoch));
	datacenter_id := (id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1);
	worker_id := (id >> c.sequence_bits) & ((1 << c.worker_bits) - 1);
	sequence := id & ((1 << c.sequence_bits) - 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_decode(bigint) IS
'takes an id apart: its time, datacenter id, worker id and sequence';

CREATE OR REPLACE FUNCTION @extschema@.snowid_time(id bigint)
RETURNS timestamptz
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
BEGIN
	RETURN snowid_sql_private.snowid_sql_timestamptz(snowid_sql_private.snowid_sql_ms(c, id)
											  + snowid_sql_private.snowid_sql_unix_ms(c.epoch));
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_time(bigint) IS
'the time a snowid was made: the ts of snowid_decode()';

CREATE OR REPLACE FUNCTION @extschema@.snowid_from_time(ts timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
	max_ms bigint := snowid_sql_private.snowid_sql_max_ms(c);
	unix_ms bigint;
BEGIN
	-- past the year 294000 or so, Unix microseconds do not fit 64 bits
	IF isfinite(ts) THEN
		unix_ms := snowid_sql_private.snowid_sql_unix_ms(ts);
	END IF;
	IF unix_ms IS NULL OR unix_ms < epoch_ms OR unix_ms - epoch_ms > max_ms THEN
		RAISE EXCEPTION 'timestamp out of range for snowid: "%"', ts
			USING ERRCODE = 'datetime_field_overflow',
				  DETAIL = format('Ids can hold times from %s to %s.',
								  snowid_sql_private.snowid_sql_timestamptz(epoch_ms),
								  snowid_sql_private.snowid_sql_timestamptz(epoch_ms + max_ms));
	END IF;
	RETURN (unix_ms - epoch_ms) << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_time(timestamptz) IS
'the smallest id any server could issue at a given time';

CREATE OR REPLACE FUNCTION @extschema@.snowid_span(span interval)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	max_ms bigint := snowid_sql_private.snowid_sql_max_ms(c);
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
								  snowid_sql_private.snowid_sql_layout(c));
	END IF;
	RETURN ms << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_span(interval) IS
'how many ids wide a span of time is: snowid_from_time(t + d) - snowid_from_time(t)';

-- sql/snowid_sql/1.3/serial.sql
-- -------------------------------------------------------------------------
-- Serial numbers
-- -------------------------------------------------------------------------

-- What is wrong with a serial prefix, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_prefix_problem(prefix text)
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

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_check_prefix(prefix text)
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
	problem := snowid_sql_private.snowid_sql_prefix_problem(prefix);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid serial prefix "%"', prefix
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, "_" and "-".';
	END IF;
END
$$;

-- The decimal digits of the largest value of a field of the given width
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_width(bits integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN length(((1::bigint << bits) - 1)::text);

-- The serial of an id under a checked configuration, the prefix checked
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_format_serial(c snowid_sql_private.snowid_config,
													prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	unix_ms bigint := snowid_sql_private.snowid_sql_ms(c, id) + snowid_sql_private.snowid_sql_unix_ms(c.epoch);
BEGIN
	RETURN prefix
		|| to_char((timestamp '1970-01-01'
					+ make_interval(days => (unix_ms / 86400000)::integer))
				   + (unix_ms % 86400000) * interval '1 millisecond',
				   'YYYYMMDDHH24MISSMS')
		|| lpad(((id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.datacenter_bits), '0')
		|| lpad(((id >> c.sequence_bits) & ((1 << c.worker_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.worker_bits), '0')
		|| lpad((id & ((1 << c.sequence_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.sequence_bits), '0');
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_serial(prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF prefix IS NOT NULL OR id IS NOT NULL THEN
		PERFORM snowid_sql_private.snowid_sql_check_prefix(prefix);
	END IF;
	IF id IS NULL THEN
		RETURN NULL;
	END IF;
	RETURN snowid_sql_private.snowid_sql_format_serial(snowid_sql_private.snowid_sql_config(false), prefix, id);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_serial(text, bigint) IS
'the serial number of an existing id';

CREATE OR REPLACE FUNCTION @extschema@.snowid_serial(prefix text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN @extschema@.snowid_serial(prefix, @extschema@.snowid_next());

COMMENT ON FUNCTION @extschema@.snowid_serial(text) IS
'the serial number of a new id: the prefix, the UTC time, then the datacenter id, worker id and sequence';

CREATE OR REPLACE FUNCTION @extschema@.snowid_from_serial(serial text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	wd integer := snowid_sql_private.snowid_sql_width(c.datacenter_bits);
	ww integer := snowid_sql_private.snowid_sql_width(c.worker_bits);
	ws integer := snowid_sql_private.snowid_sql_width(c.sequence_bits);
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
			problem := snowid_sql_private.snowid_sql_prefix_problem(substr(serial, 1, prefix_len));
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
			unix_ms := snowid_sql_private.snowid_sql_days(y, mo, dd) * 86400000
				+ ((h * 60 + mi) * 60 + sec) * 1000::bigint + milli;
			ms := unix_ms - snowid_sql_private.snowid_sql_unix_ms(c.epoch);
			dc := substr(d, 18, wd)::bigint;
			w := substr(d, 18 + wd, ww)::bigint;
			sq := substr(d, 18 + wd + ww, ws)::bigint;
			IF ms < 0 OR ms > snowid_sql_private.snowid_sql_max_ms(c) THEN
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_days(y integer, m integer, d integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (make_date(2000, 1, 1) - date '1970-01-01')::bigint
	+ ((y - 2000) / 400) * 146097::bigint
	+ (make_date(2000 + (y - 2000) % 400 + CASE WHEN (y - 2000) % 400 < 0 THEN 400 ELSE 0 END, m, d)
	   - make_date(2000, 1, 1))
	- CASE WHEN (y - 2000) % 400 < 0 THEN 146097 ELSE 0 END;

-- sql/snowid_sql/1.3/status.sql
-- -------------------------------------------------------------------------
-- snowid_status()
-- -------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_layout(c snowid_sql_private.snowid_config)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN format('%s/%s/%s/%s', 63 - c.datacenter_bits - c.worker_bits - c.sequence_bits,
			  c.datacenter_bits, c.worker_bits, c.sequence_bits);

-- The C edition's columns; those of a lease and of a coordinator stay NULL
-- (coordinator_reassertions 0): the worker id is the row's
CREATE OR REPLACE FUNCTION @extschema@.snowid_status(
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
	OUT failed_renewals bigint,
	OUT coordinator_generation bigint,
	OUT coordinator_counter bigint,
	OUT coordinator_answered_at timestamptz,
	OUT coordinator_forgot_at timestamptz,
	OUT coordinator_reassertions bigint,
	OUT coordinator_quiet_until timestamptz)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
	node_seq_bits integer := c.datacenter_bits + c.worker_bits + c.sequence_bits;
	clock_ms bigint := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
	end_ms bigint := snowid_sql_private.snowid_sql_max_ms(c) + 1;
	safe_end_ms bigint := 1::bigint << (53 - node_seq_bits);
	left_ms bigint;
	last bigint;
	called boolean;
BEGIN
	SELECT s.last_value, s.is_called INTO last, called FROM snowid_sql_private.snowid_position s;
	datacenter_id := c.datacenter_id;
	worker_id := c.worker_id;
	worker_source := CASE WHEN c.worker_id IS NULL THEN 'none' ELSE 'config' END;
	IF called THEN
		last_time := snowid_sql_private.snowid_sql_timestamptz((last >> c.sequence_bits) + epoch_ms);
		drift_ms := greatest((last >> c.sequence_bits) - clock_ms, 0);
		high_water_time := snowid_sql_private.snowid_sql_timestamptz((last >> c.sequence_bits) + 1 + epoch_ms);
	ELSE
		drift_ms := 0;
		high_water_time := snowid_sql_private.snowid_sql_timestamptz(epoch_ms);
	END IF;
	SELECT s.last_value + s.is_called::integer INTO waits FROM snowid_sql_private.snowid_waits s;
	SELECT s.last_value + s.is_called::integer INTO clock_steps FROM snowid_sql_private.snowid_clock_steps s;
	SELECT s.last_value + s.is_called::integer INTO clock_errors FROM snowid_sql_private.snowid_clock_errors s;
	layout := snowid_sql_private.snowid_sql_layout(c);
	epoch := c.epoch;
	ceiling_ids_per_s := (1::bigint << c.sequence_bits) * 1000;
	exhausted_at := snowid_sql_private.snowid_sql_timestamptz(end_ms + epoch_ms);
	left_ms := greatest(end_ms - clock_ms, 0);
	time_left := make_interval(days => (left_ms / 86400000)::integer)
		+ (left_ms % 86400000) * interval '1 millisecond';
	IF safe_end_ms > end_ms - 1 THEN
		js_safe_until := 'infinity';
	ELSIF clock_ms < safe_end_ms THEN
		js_safe_until := snowid_sql_private.snowid_sql_timestamptz(safe_end_ms + epoch_ms);
	END IF;
	coordinator_reassertions := 0;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_status() IS
'the state of this database''s snowid generator (SQL edition)';

-- The time of the high-water mark, for the configuration's check, which
-- runs as the superuser: through this, which names snowid_status() by oid
-- (the owner of the extension's schema could overload it there)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_high_water_time()
RETURNS timestamptz
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT (@extschema@.snowid_status()).high_water_time;
END;
-- sql/snowid_sql/1.3/public_ids.sql
-- -------------------------------------------------------------------------
-- Public ids (doc/public-ids.md, "Specification")
-- -------------------------------------------------------------------------
-- Words of 64 bits are bigints holding the same bits; additions wrap, as
-- SipHash needs, by adding the halves apart.

-- SipHash-2-4 under the key (k0, k1) of the 8-byte message m
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_siphash(k0 bigint, k1 bigint, m bigint)
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_word(key bytea, start integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (get_byte(key, start)::bigint) | (get_byte(key, start + 1)::bigint << 8)
	| (get_byte(key, start + 2)::bigint << 16) | (get_byte(key, start + 3)::bigint << 24)
	| (get_byte(key, start + 4)::bigint << 32) | (get_byte(key, start + 5)::bigint << 40)
	| (get_byte(key, start + 6)::bigint << 48) | (get_byte(key, start + 7)::bigint << 56);

-- The ten-round Feistel permutation of a number of 63 bits, forwards or
-- backwards
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_permute(key bytea, x bigint, backwards boolean)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k0 bigint := snowid_sql_private.snowid_sql_key_word(key, 0);
	k1 bigint := snowid_sql_private.snowid_sql_key_word(key, 8);
	h bigint := x >> 32;
	l bigint := x & 4294967295;
	r integer;
BEGIN
	FOR i IN 0 .. 9 LOOP
		r := CASE WHEN backwards THEN 9 - i ELSE i END;
		IF r % 2 = 0 THEN
			h := h # (snowid_sql_private.snowid_sql_siphash(k0, k1, (r::bigint << 32) | l) & 2147483647);
		ELSE
			l := l # (snowid_sql_private.snowid_sql_siphash(k0, k1, (r::bigint << 32) | h) & 4294967295);
		END IF;
	END LOOP;
	RETURN (h << 32) | l;
END
$$;

-- One step of the check: 2 * state + symbol in GF(32)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_damm(state integer, symbol integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (((state << 1) & 31) # CASE WHEN state & 16 <> 0 THEN 5 ELSE 0 END) # symbol;

-- The symbols of public ids, Crockford's base32
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_symbols()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

-- What is wrong with a key id, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_id_problem(key_id text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE
	WHEN key_id !~ '^[A-Za-z0-9]{1,8}$'
		THEN 'A key id has 1 to 8 ASCII letters and digits.'
	WHEN key_id ~ '[IiLlOoUu]'
		THEN 'A key id has none of I, L, O and U.'
	END;

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_check_id(id bigint, function_name text)
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
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_first_key(OUT key_id text, OUT key bytea)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	SELECT k.key_id, k.key INTO key_id, key
	FROM snowid_sql_private.snowid_public_keys k ORDER BY k.rank LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_public_keys holds no key'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Public ids are made with the keys of that table.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script), insert a key of 16 random bytes, with core functions only: INSERT INTO snowid_public_keys VALUES (''K1'', substr(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())), 1, 16), 1) (doc/managed.md).';
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_scramble(id bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(id, 'snowid_scramble()');
	RETURN snowid_sql_private.snowid_sql_permute((snowid_sql_private.snowid_sql_first_key()).key, id, false);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_scramble(bigint) IS
'the public number of an id: the permutation of snowid_public() with the first key, as a number';

CREATE OR REPLACE FUNCTION @extschema@.snowid_unscramble(number bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(number, 'snowid_unscramble()');
	RETURN snowid_sql_private.snowid_sql_permute((snowid_sql_private.snowid_sql_first_key()).key, number, true);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_unscramble(bigint) IS
'the id of a public number made by snowid_scramble()';

CREATE OR REPLACE FUNCTION @extschema@.snowid_public(id bigint)
RETURNS text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k record;
	symbols text := snowid_sql_private.snowid_sql_symbols();
	number bigint;
	state integer := 0;
	body text := '';
	v integer;
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(id, 'snowid_public()');
	k := snowid_sql_private.snowid_sql_first_key();
	number := snowid_sql_private.snowid_sql_permute(k.key, id, false);
	FOR i IN 1 .. length(k.key_id) LOOP
		state := snowid_sql_private.snowid_sql_damm(state, strpos(symbols, substr(k.key_id, i, 1)) - 1);
	END LOOP;
	FOR i IN REVERSE 12 .. 0 LOOP
		v := ((number >> (5 * i)) & 31)::integer;
		state := snowid_sql_private.snowid_sql_damm(state, v);
		body := body || substr(symbols, v + 1, 1);
	END LOOP;
	RETURN k.key_id || '-' || body
		|| substr(symbols, snowid_sql_private.snowid_sql_damm(state, 0) + 1, 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public(bigint) IS
'the public id of an id: a keyed permutation of it, in base32 with a check character';

-- A text's ASCII letters in upper case, and nothing else changed (upper()
-- follows the collation: in Turkish, i becomes a dotted capital I)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ascii_upper(s text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.translate(s, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');

-- Reads a public id: the id, or NULL with what is wrong (NULL too for a
-- text too long to show)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_read_public(input text, OUT id bigint, OUT problem text)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	symbols text := snowid_sql_private.snowid_sql_symbols();
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
			THEN strpos(symbols, translate(snowid_sql_private.snowid_sql_ascii_upper(ch), 'OIL', '011')) - 1
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
		state := snowid_sql_private.snowid_sql_damm(state, s[i]);
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
	SELECT k.key INTO key FROM snowid_sql_private.snowid_public_keys k WHERE k.key_id = kid;
	IF NOT FOUND THEN
		PERFORM snowid_sql_private.snowid_sql_first_key();
		problem := format('No key of snowid_public_keys has the id "%s".', kid);
		RETURN;
	END IF;
	id := snowid_sql_private.snowid_sql_permute(key, number, true);
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_from_public(public_id text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record := snowid_sql_private.snowid_sql_read_public(public_id);
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

CREATE OR REPLACE FUNCTION @extschema@.snowid_public_is_valid(public_id text)
RETURNS boolean
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN (snowid_sql_private.snowid_sql_read_public(public_id)).id IS NOT NULL;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public_is_valid(text) IS
'whether snowid_from_public() takes a text, without an error for one it does not';

-- Checks a key: its id by the rules of the C edition's key file, 16 bytes,
-- and no two key ids that one character typed too many or dropped turns
-- into each other
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := snowid_sql_private.snowid_sql_key_id_problem(NEW.key_id);
	symbols text := snowid_sql_private.snowid_sql_symbols();
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
	FOR other IN SELECT k.key_id FROM snowid_sql_private.snowid_public_keys k
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
						(snowid_sql_private.snowid_sql_damm(state, 0) # state) THEN
					problem := format('The check of public ids does not tell "%s" from "%s".', short, long);
				END IF;
				state := snowid_sql_private.snowid_sql_damm(state, strpos(symbols, substr(short, i, 1)) - 1);
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
-- sql/snowid_sql/1.3/dumps.sql
-- -------------------------------------------------------------------------
-- Dumps of 1.0 and 1.1
-- -------------------------------------------------------------------------
-- A dump of 1.0 or 1.1 names no version: restored where CREATE EXTENSION
-- makes this one, it copies the row of snowid_config and the keys into
-- the tables of their time, which are views here, and sets snowid_position
-- in the extension's schema.  So the views take the dump's rows (a COPY
-- into a view runs its INSTEAD OF INSERT trigger) into their tables, and a
-- sequence of the old name takes its setval(), whose position nothing
-- reads (a dump's position lies below what its source issued after it;
-- the raise of snowid_sql_config_floor() covers them).  Before 1.2's fix
-- each failed: the restored database had neither configuration nor keys,
-- and nothing raised its generator.
--
-- Such a row has no stamp (worker_server, since 1.2): it is given one that
-- names no server, so that it restores as a dump of 1.2 does: its layout,
-- epoch and bounds kept, not its worker id (snowid_sql_config_restore()),
-- the first call saying so, and the worker id set later raising the
-- generator past the clock plus max_drift_ms (snowid_sql_config_stamp()),
-- above every id its source may have issued.  Run as the installing role,
-- which may insert into both tables (the restore's own grants).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_insert()
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

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert()
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
-- sql/snowid_sql/1.3/version.sql
-- The version of the SQL edition installed in this schema.  Every update
-- script makes it anew with its own version: a plain script (make
-- snowid_sql.sql) is no extension, and records its version nowhere else.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.3'$$;

COMMENT ON FUNCTION @extschema@.snowid_sql_version() IS
'the version of the SQL edition of snowid installed in this schema';
-- sql/snowid_sql/1.2--1.3/drop.sql
-- -------------------------------------------------------------------------
-- What the claim was made of, and what 1.3 calls otherwise
-- -------------------------------------------------------------------------
-- After the functions of 1.3 (above), which call none of it: the claim's
-- functions, the signatures that carried its flag, its tables (the
-- coordination database's connection and password, the holder's name and
-- secret, the state record), their views, its sequences and its lock;
-- then the table, the type and the lock as 1.3 makes them.

DROP FUNCTION @extschema@.snowid_claim();
DROP FUNCTION @extschema@.snowid_new_holder();
DROP FUNCTION snowid_sql_private.snowid_sql_next(boolean, boolean);
DROP FUNCTION snowid_sql_private.snowid_sql_next_table(boolean, bigint);
DROP FUNCTION snowid_sql_private.snowid_sql_next_batch(integer, boolean);
DROP FUNCTION snowid_sql_private.snowid_sql_claim_first();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_once();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_owned();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_caller(text);
DROP FUNCTION snowid_sql_private.snowid_sql_holder_renew();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_noted();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_now();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_stale();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_run();
DROP FUNCTION snowid_sql_private.snowid_sql_not_owner();
DROP FUNCTION snowid_sql_private.snowid_sql_claimed(snowid_sql_private.snowid_config);
DROP FUNCTION snowid_sql_private.snowid_sql_claimed_of(bigint, integer, integer, integer);
DROP FUNCTION snowid_sql_private.snowid_sql_holder_here();
DROP FUNCTION snowid_sql_private.snowid_sql_new_holder();
DROP FUNCTION snowid_sql_private.snowid_sql_connstr();
DROP FUNCTION snowid_sql_private.snowid_sql_conninfo_quote(text);
DROP FUNCTION snowid_sql_private.snowid_sql_coordination_problem(snowid_sql_private.snowid_coordination);
DROP FUNCTION snowid_sql_private.snowid_sql_conninfo_keywords(text);

DROP VIEW @extschema@.snowid_coordination, @extschema@.snowid_coordinator_state,
	@extschema@.snowid_holder, @extschema@.snowid_locks;
DROP TABLE snowid_sql_private.snowid_coordination, snowid_sql_private.snowid_coordinator_state,
	snowid_sql_private.snowid_holder;
DROP FUNCTION snowid_sql_private.snowid_sql_coordination_check();
DROP SEQUENCE snowid_sql_private.snowid_claimed, snowid_sql_private.snowid_sql_claimed_run;

DELETE FROM snowid_sql_private.snowid_locks WHERE name = 'claim';
ALTER TABLE snowid_sql_private.snowid_locks DROP CONSTRAINT snowid_locks_name_check,
	ADD CONSTRAINT snowid_locks_name_check CHECK (name = 'generator');
ALTER TABLE snowid_sql_private.snowid_config
	ADD CONSTRAINT snowid_config_claim_worker_id_check CHECK (NOT claim_worker_id);
ALTER TYPE snowid_sql_private.snowid_sql_fixed DROP ATTRIBUTE claim_worker_id;
-- sql/snowid_sql/1.3/comments.sql
-- -------------------------------------------------------------------------
-- What the tables, views and sequences are, as \d+ shows it
-- -------------------------------------------------------------------------

COMMENT ON TABLE snowid_sql_private.snowid_config IS
'the settings of the snowid SQL edition: one row, as snowid.* of the C edition; worker_id NULL until its owner sets it';
COMMENT ON COLUMN snowid_sql_private.snowid_config.worker_server IS
'the server and sequences the worker id was set with (snowid_sql_here()), set by the table''s trigger: elsewhere, the worker id does not hold';
COMMENT ON COLUMN snowid_sql_private.snowid_config.claim_worker_id IS
'false: kept so that a dump of snowid_sql 1.2 or earlier restores; the edition claims no worker id since 1.3';
COMMENT ON TABLE snowid_sql_private.snowid_public_keys IS
'the keys of public ids: the key of the smallest rank makes new ones, every key reads them';
COMMENT ON TABLE snowid_sql_private.snowid_locks IS
'the lock of the snowid generator''s writers: a row lock no other role can take';
COMMENT ON VIEW @extschema@.snowid_config IS
'snowid''s configuration (the table snowid_sql_private.snowid_config): the owner sets the worker id here';
COMMENT ON VIEW @extschema@.snowid_public_keys IS
'the keys of public ids (the table snowid_sql_private.snowid_public_keys)';
COMMENT ON SEQUENCE @extschema@.snowid_position IS
'not the generator''s position (snowid_sql_private.snowid_position): takes the setval() of a dump of 1.0 or 1.1, which nothing reads';
-- sql/snowid_sql/1.3/privileges.sql
-- -------------------------------------------------------------------------
-- Who may do what
-- -------------------------------------------------------------------------
-- Every privilege of the edition's objects, set whole (an install and an
-- update end with the same): PUBLIC reads the configuration and calls the
-- functions of the API; the role that installed it (the owner of the
-- extension, whoever runs an update; the role that runs the plain script,
-- who owns everything there) configures it, writes the keys of public ids
-- and, for a restore, inserts the row of snowid_config and sets the
-- sequence a dump of 1.0 or 1.1 names.  It reads snowid_locks, as its
-- pg_dump locks every table of the extension (LOCK TABLE ... IN ACCESS
-- SHARE MODE needs SELECT), but locks none of its rows (FOR UPDATE needs
-- UPDATE too).  No other role may read the keys or touch a sequence, and
-- no role but the superuser (or the owner of everything, through pg_tle or
-- the plain script) lock a row of snowid_locks.
--
-- A function of snowid_sql_private is for the functions of the API alone:
-- one that runs as the superuser (snowid_sql_take(), say) would do with
-- the arguments of any role what its callers check first.  So PUBLIC may
-- call only those that a function of the API calls as its caller (not
-- SECURITY DEFINER), and the installing role those that the triggers of
-- its writes call as it, followed through the functions they call in
-- turn: taken from the bodies (the names they call in the private schema,
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
	o record;
BEGIN
	-- the tables, views and sequences: whatever was granted goes, then
	-- what is said above (the owner keeps its own)
	FOR o IN
		SELECT c.oid::pg_catalog.regclass AS rel, c.relowner OPERATOR(pg_catalog.=) installer AS owns,
			   CASE WHEN c.relname OPERATOR(pg_catalog.=) 'snowid_config' THEN 'SELECT, INSERT, UPDATE'
					WHEN c.relname OPERATOR(pg_catalog.=) 'snowid_public_keys' THEN 'SELECT, INSERT, UPDATE, DELETE'
					WHEN c.oid OPERATOR(pg_catalog.=) '@extschema@.snowid_position'::pg_catalog.regclass
					THEN 'SELECT, UPDATE'
					WHEN c.relname OPERATOR(pg_catalog.=) 'snowid_locks' THEN 'SELECT' END AS installer_may,
			   c.relname OPERATOR(pg_catalog.=) 'snowid_config' AS public_reads
		FROM pg_catalog.pg_class c
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY[
			'snowid_sql_private.snowid_config', 'snowid_sql_private.snowid_public_keys',
			'snowid_sql_private.snowid_locks', 'snowid_sql_private.snowid_position',
			'snowid_sql_private.snowid_generation', 'snowid_sql_private.snowid_waits',
			'snowid_sql_private.snowid_clock_steps', 'snowid_sql_private.snowid_clock_errors',
			'snowid_sql_private.snowid_sql_started', '@extschema@.snowid_config',
			'@extschema@.snowid_public_keys', '@extschema@.snowid_position']::pg_catalog.regclass[]::pg_catalog.oid[])
		ORDER BY 1
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM PUBLIC', o.rel);
		IF NOT o.owns THEN
			EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM %s', o.rel, installer::pg_catalog.regrole);
		END IF;
		IF o.public_reads THEN
			EXECUTE pg_catalog.format('GRANT SELECT ON %s TO PUBLIC', o.rel);
		END IF;
		IF o.installer_may IS NOT NULL THEN
			EXECUTE pg_catalog.format('GRANT %s ON %s TO %s', o.installer_may, o.rel, installer::pg_catalog.regrole);
		END IF;
	END LOOP;
	-- PUBLIC: the API it may call
	SELECT pg_catalog.array_agg(p.oid::text OPERATOR(pg_catalog.||) ':0') INTO todo
	FROM pg_catalog.pg_proc p
	WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
	  AND p.proname OPERATOR(pg_catalog.~~) 'snowid%'
	  AND (p.proacl IS NULL
		   OR EXISTS (SELECT FROM pg_catalog.aclexplode(p.proacl) a
					  WHERE a.grantee OPERATOR(pg_catalog.=) 0 AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'));
	-- the installing role: the API, and the triggers that its writes to
	-- the tables fire (as it)
	todo := todo OPERATOR(pg_catalog.||) ARRAY(
		SELECT p.oid::text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) installer::text
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@'::pg_catalog.regnamespace::pg_catalog.oid, private])
		  AND p.proname OPERATOR(pg_catalog.~~) 'snowid%'
		  AND (p.pronamespace OPERATOR(pg_catalog.<>) private
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
	FOR o IN
		SELECT p.oid::pg_catalog.regprocedure AS fn, p.proowner OPERATOR(pg_catalog.=) installer AS owns
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) private
		ORDER BY 1
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', o.fn);
		IF NOT o.owns THEN
			EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM %s', o.fn, installer::pg_catalog.regrole);
		END IF;
	END LOOP;
	-- in one order, so that every install lists the same privileges
	FOR o IN
		SELECT DISTINCT pg_catalog.split_part(g, ':', 1)::oid::pg_catalog.regprocedure AS fn,
			   pg_catalog.split_part(g, ':', 2)::oid AS grantee
		FROM pg_catalog.unnest(grants) g
		ORDER BY 2, 1
	LOOP
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', o.fn,
								  CASE WHEN o.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
									   ELSE o.grantee::pg_catalog.regrole::text END);
	END LOOP;
END
$$;

-- snowid_sql_fixed() made from the row, with this server
SELECT snowid_sql_private.snowid_sql_refix();
