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

-- Notes for this transaction in snowid_config_pending (pending.sql): the
-- floor's max_drift_ms (NULL: none), or that the worker id was set.
-- Called by the triggers of snowid_config, which run as the owner of the
-- table (SECURITY DEFINER), never granted.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_note(drift_ms integer, set_worker boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	DELETE FROM snowid_sql_private.snowid_config_pending p WHERE p.xact <> pg_current_xact_id();
	INSERT INTO snowid_sql_private.snowid_config_pending AS p (xact, copy_drift_ms, worker_set)
	VALUES (pg_current_xact_id(), drift_ms, coalesce(set_worker, false))
	ON CONFLICT (xact) DO UPDATE
	SET copy_drift_ms = CASE WHEN set_worker IS NULL THEN excluded.copy_drift_ms ELSE p.copy_drift_ms END,
		worker_set = p.worker_set OR excluded.worker_set;
END
$$;

-- The note of this transaction, or none
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_noted()
RETURNS snowid_sql_private.snowid_config_pending
LANGUAGE sql VOLATILE
RETURN (SELECT p FROM snowid_sql_private.snowid_config_pending p
		WHERE p.xact OPERATOR(pg_catalog.=) pg_catalog.pg_current_xact_id_if_assigned());

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
	-- a write (the trigger's check): a row read with it on is one of a
	-- snapshot from before the update from a claiming 1.2 (the table's
	-- constraint refuses it since), which kept its worker id, and which
	-- 1.2's snowid_sql_config() in flight through the update reads (before
	-- 1.4's fixes such calls failed with 22023: test
	-- update_in_flight_batch_claim)
	WHEN c.claim_worker_id AND pg_catalog.pg_trigger_depth() > 0 THEN 11
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
	f snowid_sql_private.snowid_sql_fixed;
	problem text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	-- on only in a row read in a snapshot taken before the update from a
	-- claiming 1.2 committed (the table's constraint refuses it since):
	-- that update kept the claimed worker id as the configured one, and a
	-- call of 1.2 in flight goes on with it (before 1.4's fixes it failed
	-- with 22023: test update_in_flight_batch_claim).  That row's worker id
	-- is NULL: the one in force is snowid_sql_fixed()'s, which the update's
	-- change of the row made anew, and which is read from the catalog as it
	-- is now, whatever the caller's snapshot (a REPEATABLE READ transaction
	-- begun before the update failed with 55000: test
	-- update_claim_old_snapshot); taken only where it was made in this
	-- database, for the row's datacenter, layout and epoch, and its server
	-- with it (otherwise none: the call says there is no worker id)
	IF c.claim_worker_id AND need_worker THEN
		f := snowid_sql_private.snowid_sql_fixed();
		IF (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				OPERATOR(pg_catalog.=) f.position_path) IS TRUE
			AND f.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
			AND f.datacenter_bits OPERATOR(pg_catalog.=) c.datacenter_bits
			AND f.worker_bits OPERATOR(pg_catalog.=) c.worker_bits
			AND f.sequence_bits OPERATOR(pg_catalog.=) c.sequence_bits
			AND f.epoch_ms OPERATOR(pg_catalog.=) snowid_sql_private.snowid_sql_unix_ms(c.epoch) THEN
			c.worker_id := f.worker_id;
			c.worker_server := f.server;
		ELSE
			c.worker_id := NULL;
		END IF;
	END IF;
	c.claim_worker_id := false;
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
	-- a row changed where the edition's triggers did not fire (see
	-- snowid_sql_config_check()) holds another node, layout or epoch than
	-- the generator runs under: the calls that read it refuse, as its
	-- owner's next change does (before 1.4's fixes they composed ids of
	-- the publisher's node a subscription's apply wrote there, where its
	-- stamp named this server: a copy of this server's files subscribed to
	-- it, test restore_disable_triggers_apply).  So does the row of a
	-- snapshot taken before the row's last change (a REPEATABLE READ
	-- transaction begun before a restore: test
	-- restore_raise_old_snapshot_epoch), which the message names first
	IF need_worker THEN
		f := snowid_sql_private.snowid_sql_fixed();
		IF f.max_ms OPERATOR(pg_catalog.>) 0
			AND (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				 OPERATOR(pg_catalog.=) f.position_path) IS TRUE
			AND (f.datacenter_id OPERATOR(pg_catalog.<>) c.datacenter_id
				 OR f.datacenter_bits OPERATOR(pg_catalog.<>) c.datacenter_bits
				 OR f.worker_bits OPERATOR(pg_catalog.<>) c.worker_bits
				 OR f.sequence_bits OPERATOR(pg_catalog.<>) c.sequence_bits
				 OR f.epoch_ms OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_unix_ms(c.epoch)) THEN
			RAISE EXCEPTION 'snowid_config as this transaction reads it is not what the generator runs under'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row this transaction reads holds another datacenter id, layout or epoch than the generator runs under: the row changed after the transaction''s snapshot was taken (a REPEATABLE READ or SERIALIZABLE transaction), or a write where the edition''s triggers did not fire put it there (a logical subscription''s apply, once pg_restore --disable-triggers had ended with ALTER TABLE ... ENABLE TRIGGER ALL).',
					  HINT = 'Retry in a new transaction.  If the error stays, as a superuser: ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica, ENABLE ALWAYS TRIGGER snowid_config_fix, ENABLE ALWAYS TRIGGER snowid_config_fix_truncate; then, as the owner, UPDATE snowid_config as its error says (doc/managed.md, "Dumps and restores").';
		END IF;
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		-- a row stamped elsewhere (a restored dump, which keeps no worker
		-- id): says it is a copy
		IF c.worker_server OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_here() THEN
			RAISE EXCEPTION 'snowid has no worker id on this server'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row of snowid_config was last stamped on another server, or with other sequences: a restored dump carries its source''s stamp but not its worker id, and this database issues no id until it has a worker id of its own.',
					  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET datacenter_id = D, worker_id = N, with D this server''s datacenter (a restored row carries its source''s) and N unique among the servers of that datacenter; setting it raises the generator past every id the other server may have issued.';
		END IF;
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- The functions roots and those that call one of them, directly or
-- through others: by what pg_depend records (an SQL-standard body), or by
-- their source text (PL/pgSQL, a string-bodied SQL function, any language
-- but C and internal, whose text is a symbol's name) naming one as a word,
-- case aside: the application's (the edition's own, and those of
-- pg_catalog and of extensions, are followed by pg_depend alone: a name in
-- an error's hint is no call).  Fail-safe: a name in a comment or a string
-- counts too; a name built at run time (EXECUTE) is not seen.  Before 1.4's fixes
-- pg_depend alone was followed, and a column DEFAULT app_id(), a PL/pgSQL
-- function returning snowid_next(), was not read: a restored copy given
-- its source's worker id issued its ids again (test
-- restore_clock_step_plpgsql_default)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_callers(roots oid[])
RETURNS oid[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	found oid[] := roots;
	fresh oid[] := roots;
	words text;
	-- the functions read by their text
	texts oid[] := ARRAY(
		SELECT p.oid FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE l.lanname NOT IN ('c', 'internal')
		  AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace,
									 'snowid_sql_private'::regnamespace)
		  AND NOT EXISTS (SELECT FROM pg_depend e
						  WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'));
BEGIN
	LOOP
		SELECT string_agg(DISTINCT regexp_replace(p.proname, '([^[:alnum:]_])', '\\\1', 'g'), '|') INTO words
		FROM pg_proc p WHERE p.oid = ANY (fresh);
		SELECT array_agg(DISTINCT x.f) INTO fresh
		FROM (SELECT d.objid AS f FROM pg_depend d
			  WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_proc'::regclass
				AND d.refobjid = ANY (fresh)
			  UNION
			  SELECT p.oid FROM pg_proc p
			  WHERE p.oid = ANY (texts)
				AND p.prosrc ~* ('(^|[^[:alnum:]_$])(' || words || ')($|[^[:alnum:]_$])')) x
		WHERE x.f <> ALL (found);
		EXIT WHEN fresh IS NULL;
		found := found || fresh;
	END LOOP;
	RETURN found;
END
$$;

-- The columns of this database's tables whose default, or their domain's,
-- depends on a function of the edition (see snowid_sql_ids_held(), which
-- says which): tab, name, whether the table is partitioned, and the type
-- the column's type comes down to (a domain's base type, through domains
-- over domains: before 1.4's fixes only one level was followed, and a
-- bigint of a domain over a domain was not read as ids: test
-- restore_clock_step_other_types)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_id_columns(
	OUT tab regclass, OUT name name, OUT parted boolean, OUT base regtype)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	WITH RECURSIVE issuing(f) AS (
		SELECT unnest(snowid_sql_private.snowid_sql_callers(ARRAY(
			SELECT p.oid FROM pg_proc p
			WHERE p.pronamespace IN ('snowid_sql_private'::regnamespace, '@extschema@'::regnamespace)
			  AND p.proname LIKE 'snowid%')))
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
	), cols AS (
		SELECT DISTINCT a.attrelid, a.attname, r.relkind = 'p' AS parted, a.atttypid
		FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid
		WHERE r.relkind IN ('r', 'p', 'f', 'v') AND r.relpersistence <> 't' AND a.attnum > 0 AND NOT a.attisdropped
		  AND r.relnamespace <> 'snowid_sql_private'::regnamespace
		  AND ((a.attrelid, a.attnum) IN (SELECT rel, num FROM defaults WHERE rel IS NOT NULL)
			   OR a.atttypid IN (SELECT typ FROM defaults WHERE typ IS NOT NULL))
	), down(typ, cur, depth) AS (
		SELECT DISTINCT c.atttypid, c.atttypid, 0 FROM cols c
		UNION ALL
		SELECT d.typ, t.typbasetype, d.depth + 1
		FROM down d JOIN pg_type t ON t.oid = d.cur
		WHERE t.typtype = 'd' AND d.depth < 100
	)
	SELECT c.attrelid::regclass AS tab, c.attname AS name, c.parted,
		   (SELECT d.cur FROM down d WHERE d.typ = c.atttypid ORDER BY d.depth DESC LIMIT 1)::regtype AS base
	FROM cols c;
END;

-- How the default of the column col of tab (its own, or else its type's:
-- a domain's, which a domain over it takes) makes the values the raise
-- reads (snowid_sql_largest_held()): 'id' where it is snowid_next() itself
-- (or a cast of it), 'serial' snowid_serial(prefix), 'public'
-- snowid_public(snowid_next()), 'scramble' snowid_scramble(snowid_next()),
-- each as pg_get_expr() shows it (with no relation: it locks none, and a
-- default names no column); 'none' where it calls no function that
-- issues (snowid_next(), snowid_next_batch(), snowid_serial(prefix), the
-- generator's own; directly or through a function pg_depend records): its
-- values are no ids of the generator; 'other' where it issues and makes
-- of the id what the edition cannot read back ('ORD-' || snowid_next(),
-- lpad(), a function of the application's: before 1.4's fixes such a
-- column was read as ids, its values counted for nothing, and a source's
-- ids came again, test restore_clock_step_prefixed_ids)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_id_form(tab regclass, col name)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	WITH RECURSIVE issuing(f) AS (
		SELECT unnest(snowid_sql_private.snowid_sql_callers(ARRAY(
			SELECT p.oid FROM pg_proc p
			WHERE (p.pronamespace = '@extschema@'::regnamespace
				   AND (p.proname IN ('snowid_next', 'snowid_next_batch') OR (p.proname = 'snowid_serial' AND p.pronargs = 1)))
			   OR (p.pronamespace = 'snowid_sql_private'::regnamespace AND p.proname ~ '^snowid_sql_(next|take|move)'))))
	), def(rank, classid, objid, expr) AS (
		SELECT 1, 'pg_attrdef'::regclass::oid, ad.oid, pg_get_expr(ad.adbin, 0)
		FROM pg_attribute a JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
		WHERE a.attrelid = tab AND a.attname = col
		UNION ALL
		SELECT 2, 'pg_type'::regclass::oid, t.oid, pg_get_expr(t.typdefaultbin, 0)
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = tab AND a.attname = col AND t.typdefaultbin IS NOT NULL
	), used AS (
		SELECT d.classid, d.objid,
			   coalesce(substring(d.expr FROM '^\((.*)\)::[^()]+(?:\([0-9, ]*\))?$'), d.expr) AS e,
			   '@extschema@'::regnamespace::text AS s
		FROM def d ORDER BY d.rank LIMIT 1
	)
	SELECT CASE
		WHEN u.e = u.s || '.snowid_next()' THEN 'id'
		WHEN u.e = format('%1$s.snowid_public(%1$s.snowid_next())', u.s) THEN 'public'
		WHEN u.e = format('%1$s.snowid_scramble(%1$s.snowid_next())', u.s) THEN 'scramble'
		WHEN left(u.e, length(u.s) + 1) = u.s || '.'
			AND substr(u.e, length(u.s) + 2) ~ '^snowid_serial\(''([^'']|'''')*''::text\)$' THEN 'serial'
		WHEN EXISTS (SELECT FROM pg_depend d
					 WHERE d.classid = u.classid AND d.objid = u.objid AND d.refclassid = 'pg_proc'::regclass
					   AND d.refobjid IN (SELECT i.f FROM issuing i)) THEN 'other'
		ELSE 'none' END
	FROM used u;
END;

-- What of the table rel could run code of a role that is no superuser
-- where the guard reads it (as the superuser), as a phrase, or NULL.
-- Planning a read opens the table's indexes, extended statistics and
-- check constraints, and the partition keys of it and its ancestors, and
-- folds their expressions (an immutable function of constant arguments
-- runs then, as the current user); a virtual generated column is computed
-- when read.  Those are the expressions looked at: any function or
-- operator in them (pg_depend) owned by a role that is no superuser, or
-- whose operator's function is, or a type of such a role (of any kind: a
-- composite's columns or an array's elements may be of its domain, whose
-- CHECK a function of the superuser's runs as it reads the value, as
-- hstore's populate_record() does; before 1.4's fixes only its domains
-- and ranges counted: test guard_trusted_extension_superuser).
-- Before 1.4's fixes the guard ran them, and the table's owner made
-- itself a superuser with one UPDATE of snowid_config (test
-- guard_index_superuser).  Row security, rules and triggers run nothing
-- at a superuser's read.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_runs_code(rel regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	WITH rels(r) AS (
		SELECT rel::oid
		UNION
		SELECT a.relid::oid FROM pg_partition_ancestors(rel) a
	), objs(classid, objid) AS (
		SELECT 'pg_class'::regclass::oid, r FROM rels
		UNION ALL
		SELECT 'pg_class'::regclass::oid, i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT r FROM rels)
		UNION ALL
		SELECT 'pg_statistic_ext'::regclass::oid, s.oid FROM pg_statistic_ext s WHERE s.stxrelid IN (SELECT r FROM rels)
		UNION ALL
		SELECT 'pg_constraint'::regclass::oid, k.oid FROM pg_constraint k WHERE k.conrelid IN (SELECT r FROM rels)
		UNION ALL
		SELECT 'pg_attrdef'::regclass::oid, d.oid
		FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid IN (SELECT r FROM rels) AND a.attgenerated <> ''
	)
	SELECT format('%s uses %s', pg_describe_object(o.classid, o.objid, 0),
				  pg_describe_object(d.refclassid, d.refobjid, 0))
	FROM objs o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
	WHERE (d.classid <> 'pg_class'::regclass OR d.objid NOT IN (SELECT r FROM rels) OR d.objsubid = 0)
	  AND CASE d.refclassid
		WHEN 'pg_proc'::regclass THEN EXISTS (
			SELECT FROM pg_proc p JOIN pg_roles w ON w.oid = p.proowner
			WHERE p.oid = d.refobjid AND NOT w.rolsuper)
		WHEN 'pg_operator'::regclass THEN EXISTS (
			SELECT FROM pg_operator op JOIN pg_roles w ON w.oid = op.oprowner
			WHERE op.oid = d.refobjid
			  AND (NOT w.rolsuper OR EXISTS (
					SELECT FROM pg_proc p JOIN pg_roles pw ON pw.oid = p.proowner
					WHERE p.oid IN (op.oprcode, op.oprrest, op.oprjoin) AND NOT pw.rolsuper)))
		WHEN 'pg_type'::regclass THEN EXISTS (
			SELECT FROM pg_type t JOIN pg_roles w ON w.oid = t.typowner
			WHERE t.oid = d.refobjid AND NOT w.rolsuper)
		ELSE false END
	ORDER BY 1
	LIMIT 1;
END;

-- The name by which the guard reads the table rel (with ONLY), once it
-- is locked and checked, or NULL where it is gone.  The guard reads as the
-- superuser, and by name (SQL reads no table by its OID), so:
-- - the schema's row is locked (FOR KEY SHARE: its rename waits), then the
--   table by that name (SHARE UPDATE EXCLUSIVE: writers go on; an index,
--   statistics, a partition attached or detached, a rename wait), and the
--   name checked to be rel's still: a lock waited for takes the table the
--   name names once granted (before 1.4's fixes the guard's read, waiting
--   for the table, read the view its owner renamed to that name meanwhile,
--   as the superuser: test guard_renamed_while_waiting); where it names
--   another, rel is locked again by its new name;
-- - rel must be a plain table whose expressions run no code of a role
--   that is no superuser (snowid_sql_runs_code()), or the read is refused,
--   fail-safe: snowid_sql cannot tell what it holds.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_lock_read(rel regclass)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	name text;
	code text;
	holders text;
	prepared text;
BEGIN
	FOR attempt IN 1..3 LOOP
		IF NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = rel) THEN
			RETURN NULL;
		END IF;
		name := rel::text;
		-- (a lock another session holds, any role's on its own table or on
		-- the row of its schema, which a rename left open holds, refuses
		-- the step after lock_timeout, naming that session: the table
		-- cannot be read meanwhile; test restore_raise_other_role_locks;
		-- or a prepared transaction, which no process holds and
		-- pg_terminate_backend() does not end: named by its gid, before
		-- 1.4's fixes "process )", and the schema's lock ended in
		-- PostgreSQL's bare lock timeout, test worker_set_lock_holder_named)
		BEGIN
			-- (the plain script's reader, its owner, may not: it reads as
			-- itself, doc/security.md)
			IF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
				PERFORM FROM pg_namespace n WHERE n.oid = (SELECT c.relnamespace FROM pg_class c WHERE c.oid = rel) FOR KEY SHARE;
			END IF;
			-- (by its name once the schema's row is locked)
			name := rel::text;
			EXECUTE format('LOCK TABLE ONLY %s IN SHARE UPDATE EXCLUSIVE MODE', name);
		EXCEPTION WHEN lock_not_available THEN
			SELECT string_agg(DISTINCT l.pid::text, ', '),
				   string_agg(DISTINCT quote_literal(g.gid), ', ')
			INTO holders, prepared
			FROM pg_locks l
			LEFT JOIN pg_locks x ON l.pid IS NULL AND x.pid IS NULL AND x.locktype = 'transactionid'
				AND x.virtualtransaction = l.virtualtransaction
			LEFT JOIN pg_prepared_xacts g ON g.transaction = x.transactionid
			WHERE l.granted AND l.pid IS DISTINCT FROM pg_backend_pid()
			  AND ((l.locktype = 'relation' AND l.relation = rel)
				   OR (l.locktype = 'transactionid' AND l.transactionid = (
						SELECT n.xmax FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = rel)));
			RAISE EXCEPTION 'snowid_sql cannot read % for the ids it holds', name
				USING ERRCODE = 'lock_not_available',
					  DETAIL = format('Another session holds a lock on it%s, or on its schema, and did not let it go within lock_timeout.',
									  ' (' || nullif(concat_ws('; ', 'process ' || holders, 'prepared transaction ' || prepared), '') || ')'),
					  HINT = concat_ws('  ',
						  CASE WHEN holders IS NOT NULL THEN 'End that session''s transaction (pg_terminate_backend(), as a role that may signal it).' END,
						  CASE WHEN prepared IS NOT NULL THEN 'End that prepared transaction (ROLLBACK PREPARED or COMMIT PREPARED, as its owner or a superuser).' END,
						  'Then repeat the step.');
		END;
		IF to_regclass(name) = rel THEN
			IF NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = rel AND c.relkind = 'r') THEN
				RAISE EXCEPTION 'snowid_sql cannot read % for the ids it holds', name
					USING ERRCODE = 'object_not_in_prerequisite_state',
						  DETAIL = 'It is no table any more.';
			END IF;
			code := snowid_sql_private.snowid_sql_runs_code(rel);
			IF code IS NOT NULL THEN
				RAISE EXCEPTION 'snowid_sql cannot read % for the ids it holds', name
					USING ERRCODE = 'insufficient_privilege',
						  DETAIL = format('It reads the tables as the superuser, and reading this one could run code of a role that is no superuser: %s.', code),
						  HINT = 'Drop what the detail names (or have a superuser own its function), or give the column a default that calls no function of snowid_sql while the step runs, then repeat the step.';
			END IF;
			RETURN name;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'snowid_sql cannot read % for the ids it holds', rel
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'Its name changed while snowid_sql waited for its lock, three times.',
			  HINT = 'Repeat the step once the table is renamed no more.';
END
$$;

-- What the guard reads of a column of snowid_sql_id_columns(): the table,
-- or each leaf of a partitioned one (by its own lock and name, with ONLY:
-- a partition's columns are its parent's, by name), and whether it is a
-- foreign table (which is not read: its data lies elsewhere, and reading
-- it runs its wrapper), a partition or a table of its own (one that
-- inherits a table of ids takes its default: before 1.4's fixes it was
-- not listed, and its ids came again: test restore_foreign_child_raise)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_id_reads(tab regclass, parted boolean,
	OUT rel regclass, OUT remote boolean)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT tab, c.relkind = 'f' FROM pg_class c WHERE c.oid = tab AND NOT parted
	UNION ALL
	SELECT t.relid, c.relkind = 'f'
	FROM pg_partition_tree(tab) t JOIN pg_class c ON c.oid = t.relid
	WHERE parted AND t.isleaf;
END;

-- The largest id that the column col_name of the table tab (locked and
-- checked: snowid_sql_lock_read(), with ONLY) holds, under the layout and
-- epoch of the row c, of its node (datacenter id and worker id) or of any
-- (any_node): read as the default of the column of col_tab, col_form
-- (snowid_sql_id_form()), made it, through its base type col_base.  See
-- snowid_sql_largest_held(), which says what counts; a column it cannot
-- read back fails the caller.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_largest_read(c snowid_sql_private.snowid_config,
	any_node boolean, col_tab regclass, col_name name, col_base regtype, col_form text, tab text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $$
DECLARE
	v bigint;
	serial_max text;
	bad bigint := 0;
	digits integer := 17 + snowid_sql_private.snowid_sql_width(c.datacenter_bits)
		+ snowid_sql_private.snowid_sql_width(c.worker_bits) + snowid_sql_private.snowid_sql_width(c.sequence_bits);
	-- an id's node (datacenter id and worker id) as the bits above its
	-- sequence, and as a serial's digits after its time (any node: no bit,
	-- no digit compared)
	node bigint := CASE WHEN any_node THEN 0 ELSE (c.datacenter_id::bigint << c.worker_bits) | c.worker_id END;
	node_mask bigint := CASE WHEN any_node THEN 0 ELSE (1::bigint << (c.datacenter_bits + c.worker_bits)) - 1 END;
	node_digits text := CASE WHEN any_node THEN '' ELSE
		lpad(c.datacenter_id::text, snowid_sql_private.snowid_sql_width(c.datacenter_bits), '0')
		|| lpad(c.worker_id::text, snowid_sql_private.snowid_sql_width(c.worker_bits), '0') END;
	-- why the values cannot be read back, or NULL
	unread text;
	keys integer := (SELECT count(*) FROM snowid_sql_private.snowid_public_keys);
	first_key bytea := (SELECT k.key FROM snowid_sql_private.snowid_public_keys k ORDER BY k.rank LIMIT 1);
BEGIN
	IF col_form NOT IN ('id', 'serial', 'public', 'scramble')
		OR (col_form = 'public' AND keys = 0) OR (col_form = 'scramble' AND keys <> 1) THEN
		EXECUTE format('SELECT pg_catalog.count(*) FROM (SELECT FROM %s WHERE %I IS NOT NULL LIMIT 1) s', tab, col_name)
			INTO bad;
		unread := CASE WHEN col_form IN ('public', 'scramble') AND keys = 0
			THEN 'they are public ids or numbers, and snowid_public_keys holds no key to read them with.'
			WHEN col_form = 'scramble' THEN format('they are public numbers, read with the first key of snowid_public_keys, which holds %s keys: a number made with an earlier first key reads as another id.', keys)
			ELSE 'its default makes of the id what snowid_sql cannot read back (or calls a function of the application''s that takes ids): it reads the ids of a default snowid_next() (or a cast of it), snowid_serial(prefix), snowid_public(snowid_next()) and snowid_scramble(snowid_next()).' END;
	ELSIF col_form = 'public' AND col_base IN ('pg_catalog.text'::regtype, 'pg_catalog.varchar'::regtype, 'pg_catalog.bpchar'::regtype) THEN
		-- each read back with the key it names; a text that is no
		-- public id is no id
		EXECUTE format($q$SELECT pg_catalog.max(p.id) FILTER (WHERE p.id OPERATOR(pg_catalog.>=) 0
				AND ((p.id OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.=) $3),
			pg_catalog.count(*) FILTER (WHERE p.id IS NULL AND p.problem OPERATOR(pg_catalog.~~) 'No key %%')
			FROM (SELECT %I::pg_catalog.text AS x FROM %s) s,
				LATERAL snowid_sql_private.snowid_sql_read_public(s.x) p
			WHERE s.x IS NOT NULL$q$, col_name, tab)
			INTO v, bad USING c.sequence_bits, node_mask, node;
		IF bad > 0 THEN
			unread := format('%s of them are public ids of a key that snowid_public_keys does not hold.', bad);
		END IF;
	ELSIF col_form = 'scramble' AND col_base IN ('pg_catalog.int8'::regtype, 'pg_catalog.int4'::regtype, 'pg_catalog.int2'::regtype) THEN
		EXECUTE format($q$SELECT x FROM (SELECT snowid_sql_private.snowid_sql_permute($4, %I::pg_catalog.int8, true) AS x
				FROM %s WHERE %I OPERATOR(pg_catalog.>=) 0) s
			WHERE ((x OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.=) $3
			ORDER BY x USING OPERATOR(pg_catalog.>) LIMIT 1$q$, col_name, tab, col_name)
			INTO v USING c.sequence_bits, node_mask, node, first_key;
	ELSIF col_form IN ('public', 'scramble') THEN
		EXECUTE format('SELECT pg_catalog.count(*) FROM (SELECT FROM %s WHERE %I IS NOT NULL LIMIT 1) s', tab, col_name)
			INTO bad;
		-- (the generator's own, kept in a type it does not read them back
		-- from: before 1.4's fixes called values that are no ids, and the
		-- hint said to remove them, test worker_set_public_numbers_cast_hint)
		unread := format('they are public %s of this generator kept as %s, which snowid_sql reads back from %s alone.',
						 CASE col_form WHEN 'public' THEN 'ids' ELSE 'numbers' END, col_base,
						 CASE col_form WHEN 'public' THEN 'text, varchar and char' ELSE 'bigint, integer and smallint' END);
	ELSIF col_base IN ('pg_catalog.int8'::regtype, 'pg_catalog.int4'::regtype, 'pg_catalog.int2'::regtype) THEN
		EXECUTE format($q$SELECT x FROM (SELECT %I::pg_catalog.int8 AS x FROM %s) s
			WHERE x OPERATOR(pg_catalog.>=) 0
			  AND ((x OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.=) $3
			ORDER BY x USING OPERATOR(pg_catalog.>) LIMIT 1$q$, col_name, tab)
			INTO v USING c.sequence_bits, node_mask, node;
	ELSIF col_base = 'pg_catalog.numeric'::regtype THEN
		-- (NaN and infinities, fractions and numbers beyond bigint are no
		-- ids)
		EXECUTE format($q$SELECT pg_catalog.max(CASE WHEN x OPERATOR(pg_catalog.>=) 0::pg_catalog.numeric
				AND x OPERATOR(pg_catalog.<=) 9223372036854775807::pg_catalog.numeric
				AND x OPERATOR(pg_catalog.=) pg_catalog.trunc(x)
			THEN CASE WHEN ((x::pg_catalog.int8 OPERATOR(pg_catalog.>>) $1) OPERATOR(pg_catalog.&) $2) OPERATOR(pg_catalog.=) $3
				THEN x::pg_catalog.int8 END END)
			FROM (SELECT %I::pg_catalog.numeric AS x FROM %s) s$q$, col_name, tab)
			INTO v USING c.sequence_bits, node_mask, node;
	ELSIF col_base IN ('pg_catalog.text'::regtype, 'pg_catalog.varchar'::regtype, 'pg_catalog.bpchar'::regtype) THEN
		-- the decimal digits of an id are read as one; the digits of the
		-- serials compare as the ids do (time, then datacenter id,
		-- worker id and sequence, each of fixed width), and the largest
		-- that reads back as a serial counts (a text shaped as a serial
		-- of this node that is none, its month 13, is no id: before,
		-- it refused the worker id, test
		-- restore_raise_other_roles_serial).  Read under the collation
		-- "C", whatever the column's: a nondeterministic one refuses
		-- regular expressions (0A000: test
		-- restore_raise_other_roles_collation).
		EXECUTE format($q$SELECT pg_catalog.max(pg_catalog.right(x, $1)) FILTER (
					WHERE pg_catalog.length(x) OPERATOR(pg_catalog.>) $1
					  AND pg_catalog.right(x, $1) OPERATOR(pg_catalog.~) '^[0-9]+$'
					  AND pg_catalog.substr(pg_catalog.right(x, $1), 18, pg_catalog.length($2)) OPERATOR(pg_catalog.=) $2),
				pg_catalog.max(CASE WHEN x OPERATOR(pg_catalog.~) '^[0-9]{1,19}$'
					THEN CASE WHEN x::pg_catalog.numeric OPERATOR(pg_catalog.<=) 9223372036854775807::pg_catalog.numeric
					THEN CASE WHEN ((x::pg_catalog.numeric::pg_catalog.int8 OPERATOR(pg_catalog.>>) $3) OPERATOR(pg_catalog.&) $4) OPERATOR(pg_catalog.=) $5
					THEN x::pg_catalog.numeric::pg_catalog.int8 END END END)
			FROM (SELECT %I::pg_catalog.text COLLATE pg_catalog."C" AS x FROM %s) s WHERE x IS NOT NULL$q$, col_name, tab)
			INTO serial_max, v USING digits, node_digits, c.sequence_bits, node_mask, node;
		IF serial_max IS NOT NULL THEN
			BEGIN
				v := greatest(v, snowid_sql_private.snowid_sql_from_serial(c, 'S' OPERATOR(pg_catalog.||) serial_max));
			EXCEPTION WHEN invalid_text_representation THEN
				-- the largest below it that reads back as a serial
				FOR serial_max IN EXECUTE format($q$SELECT DISTINCT pg_catalog.right(x, $1) AS r
					FROM (SELECT %I::pg_catalog.text COLLATE pg_catalog."C" AS x FROM %s) s
					WHERE pg_catalog.length(x) OPERATOR(pg_catalog.>) $1
					  AND pg_catalog.right(x, $1) OPERATOR(pg_catalog.~) '^[0-9]+$'
					  AND pg_catalog.substr(pg_catalog.right(x, $1), 18, pg_catalog.length($2)) OPERATOR(pg_catalog.=) $2
					  AND pg_catalog.right(x, $1) OPERATOR(pg_catalog.<) $3
					ORDER BY 1 DESC$q$, col_name, tab) USING digits, node_digits, serial_max LOOP
					BEGIN
						v := greatest(v, snowid_sql_private.snowid_sql_from_serial(c, 'S' OPERATOR(pg_catalog.||) serial_max));
						EXIT;
					EXCEPTION WHEN invalid_text_representation THEN
						NULL;
					END;
				END LOOP;
			END;
		END IF;
	ELSE
		EXECUTE format('SELECT pg_catalog.count(*) FROM (SELECT FROM %s WHERE %I IS NOT NULL LIMIT 1) s', tab, col_name)
			INTO bad;
	END IF;
	IF bad > 0 AND unread IS NOT NULL THEN
		RAISE EXCEPTION 'a column whose default takes ids holds values snowid_sql cannot read back as ids'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('The column %I of %s takes ids by its default and holds values, and %s  The generator must be raised past the largest id the tables hold.',
								  col_name, col_tab, unread),
				  HINT = CASE WHEN col_form IN ('public', 'scramble') AND (keys = 0 OR (col_form = 'public' AND col_base IN ('pg_catalog.text'::regtype, 'pg_catalog.varchar'::regtype, 'pg_catalog.bpchar'::regtype))) THEN 'Insert the keys the ids were made with (a restore of the whole dump brings them), then set the worker id again.  Or, once' ELSE 'Once' END
					  || ' this server''s clock has passed the time of the last id the source issued (later by as much as its clock may have run ahead of this one''s, or stepped back), set the worker id in one transaction with the column''s default dropped (ALTER TABLE ... ALTER COLUMN ... DROP DEFAULT), and set the default again after.';
	ELSIF bad > 0 THEN
		RAISE EXCEPTION 'a column whose default takes ids holds values snowid_sql cannot read as ids'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('The column %I of %s (of type %s) takes ids by its default, and holds values that are not ids of this layout (nor serials of them): the generator must be raised past the largest id the tables hold, and cannot tell how far those lie ahead.',
								  col_name, col_tab, col_base),
				  HINT = 'If the column holds no ids of this database''s generator, give it a default that calls no function of snowid_sql.  If it does, once this server''s clock has passed the time of the last id the source issued (later by as much as its clock may have run ahead of this one''s, or stepped back), set the worker id in one transaction with the column''s default dropped (ALTER TABLE ... ALTER COLUMN ... DROP DEFAULT), and set the default again after.';
	END IF;
	RETURN v;
END
$$;

-- The largest id that the columns snowid_sql_id_columns() names hold
-- (NULL: none), under the layout and epoch of the row c, read as the
-- owner of the extension with row_security off (a column that cannot be
-- read fails the caller: it cannot tell how far those ids lie ahead).
-- A value counts as the id its default made of it, by the form of that
-- default (snowid_sql_id_form()): the id itself, a serial, a public id
-- (read back with the key it names, snowid_from_public()) or a public
-- number (with the first key, snowid_unscramble(), while there is one key
-- alone); a default that issues no id counts for nothing, and a column
-- whose default makes of the id anything else, or a public id or number
-- whose key is missing, refuses the caller where it holds a value (before
-- 1.4's fixes public ids and ids with a prefix counted for nothing, and
-- public numbers as ids decades ahead: tests restore_clock_step_public_ids,
-- restore_clock_step_prefixed_ids, worker_set_beside_public_numbers).
-- Every such column, whatever its type (before 1.4's fixes bigint columns
-- alone, and the ids of a numeric column DEFAULT snowid_next() or the
-- serials of a text column DEFAULT snowid_serial('INV-') came again: test
-- restore_clock_step_other_types): a bigint (or a smaller integer) as it
-- is, a numeric whole and within bigint's range, a text as a serial (a
-- prefix, then the digits of the layout: the largest is the largest of
-- those digits, fixed in width, read back as snowid_from_serial() does) or
-- as the decimal digits of an id.
-- Each is read by pg_catalog's functions and operators on its base type,
-- so no cast or operator of another role's runs here.  Only what this
-- generator could issue again counts: an id (or serial) of the row's
-- datacenter id and worker id; a value of another node, or one that is no
-- id of the layout (a text that is neither a serial nor digits, a numeric
-- that is not whole or lies beyond bigint), can equal none of its ids
-- (before 1.4's fixes such a value in a table of a role granted nothing
-- refused every call after a restore, and an id of another node far ahead
-- kept them waiting: test restore_raise_other_roles_table).  A column of
-- another type holding any value refuses the caller, rather than count
-- for nothing.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_largest_held(c snowid_sql_private.snowid_config)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET lock_timeout = '10s'
AS $$
DECLARE
	col record;
	v bigint;
	largest bigint;
	tab text;
	r record;
	upper text;
BEGIN
	FOR col IN SELECT x.*, coalesce(snowid_sql_private.snowid_sql_id_form(x.tab, x.name), 'other') AS form
		FROM snowid_sql_private.snowid_sql_id_columns() x ORDER BY 1, 2 LOOP
	CONTINUE WHEN col.form = 'none';
	FOR r IN SELECT * FROM snowid_sql_private.snowid_sql_id_reads(col.tab, col.parted) x ORDER BY 1 LOOP
		-- a foreign partition's ids lie elsewhere: it counts by the upper
		-- bound its owner gave it on a range of the column itself (its ids
		-- lie below), or refuses (before 1.4's fixes its partitioned table
		-- was skipped whole, and the ids of its local partitions came
		-- again: test restore_foreign_partition_raise)
		IF r.remote THEN
			SELECT substring(pg_get_expr(f.relpartbound, f.oid) FROM '\) TO \(''?(-?[0-9]+)''?\)$') INTO upper
			FROM pg_class f JOIN pg_inherits i ON i.inhrelid = f.oid
			JOIN pg_partitioned_table pt ON pt.partrelid = i.inhparent
			JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
			WHERE f.oid = r.rel AND pt.partstrat = 'r' AND pt.partnatts = 1 AND a.attname = col.name
			  AND col.base = 'pg_catalog.int8'::regtype AND col.form = 'id';
			IF upper IS NULL THEN
				RAISE EXCEPTION 'a column whose default takes ids is in a foreign table snowid_sql cannot read'
					USING ERRCODE = 'object_not_in_prerequisite_state',
						  DETAIL = format('The column %I of %s takes ids by its default, and %s is a foreign table, whose ids lie elsewhere: the generator must be raised past the largest id the tables hold, and cannot tell how far those lie ahead.',
										  col.name, col.tab, r.rel),
						  HINT = 'Give a foreign partition a range on that column whose upper bound its ids lie below (FOR VALUES FROM (...) TO (N)), or detach it (a foreign table that inherits: NO INHERIT, or drop its default) while the step runs and attach it again after (where it holds no id newer than the local tables), then repeat the step.';
			END IF;
			largest := greatest(largest, CASE WHEN upper::numeric > -9223372036854775808 THEN upper::int8 - 1 END);
			CONTINUE;
		END IF;
		-- a view's default puts its ids in a column of the table under it,
		-- which has no default of its own: not read (reading a view runs
		-- other code), it refuses (before 1.4's fixes the view was skipped,
		-- and a restored copy issued its source's ids again: test
		-- restore_clock_step_view_default)
		IF EXISTS (SELECT FROM pg_class v WHERE v.oid = r.rel AND v.relkind = 'v') THEN
			RAISE EXCEPTION 'a column whose default takes ids is in a view snowid_sql cannot read'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The column %I of the view %s takes ids by its default, which land in a table under it that snowid_sql does not read: the generator must be raised past the largest id the tables hold, and cannot tell how far those lie ahead.',
									  col.name, col.tab),
					  HINT = 'Give the table''s column that default instead (ALTER TABLE ... ALTER COLUMN ... SET DEFAULT), which is read, and drop the view''s; or, once this server''s clock has passed the time of the last id the source issued (later by as much as its clock may have run ahead of this one''s, or stepped back), set the worker id in one transaction with the view''s default dropped (ALTER VIEW ... ALTER COLUMN ... DROP DEFAULT), and set it again after.';
		END IF;
		tab := snowid_sql_private.snowid_sql_lock_read(r.rel);
		CONTINUE WHEN tab IS NULL;
		tab := 'ONLY ' || tab;
		v := snowid_sql_private.snowid_sql_largest_read(c, false, col.tab, col.name, col.base, col.form, tab);
		largest := greatest(largest, v);
		v := NULL;
	END LOOP;
	END LOOP;
	RETURN largest;
END
$$;

-- What says that ids made under the layout and epoch of the row c may
-- exist, as a sentence, or NULL (see snowid_sql_config_check(), which
-- states the rule).  Where bound is given (a restore's change, c its new
-- row), a column counts only where it holds an id of bound or above, read
-- as the raise reads it: one that lies, under the restored layout and
-- epoch, past the clock plus its max_drift_ms (snowid_sql_restore_bound()).  A column takes ids
-- where its default, or its domain's, depends on any function of the
-- edition (its schema's and snowid_sql_private's whose names begin with
-- snowid, also in a plain script's install; pg_depend: snowid_next(),
-- snowid_next_batch(),
-- snowid_serial(prefix), ..., and an SQL-standard function of the
-- application's that calls one of them): fail-safe, it counts a default
-- that only decodes an id too, rather than chase which functions issue.
-- In a table that is neither temporary (its ids are this database's
-- generator's, which the position counts) nor a view or a foreign table
-- (whose reading would run other code).  A plain table is read with ONLY
-- (no child of it, which may be a foreign table); a partitioned table
-- leaf by leaf, whose own columns have no default where they were made
-- apart and attached (before 1.4 the guard read plain tables alone, and a
-- partitioned table's ids were missed: test 168), unless a partition is a
-- foreign table, which counts as holding ids.  Each locked and checked
-- first (snowid_sql_lock_read()).  Read with row_security off, so that a policy makes the reading
-- fail rather than hide rows; a column that cannot be read counts as
-- holding ids.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ids_held(c snowid_sql_private.snowid_config,
	bound bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET row_security = off
SET lock_timeout = '10s'
AS $$
DECLARE
	col record;
	r record;
	tab text;
	held boolean;
	msg text;
	detail text;
BEGIN
	IF (SELECT s.is_called FROM snowid_sql_private.snowid_position s) THEN
		RETURN 'This database issued ids, or its worker id was set (which raises it): its generator (snowid_sql_private.snowid_position) has moved.';
	END IF;
	IF c.worker_server <> snowid_sql_private.snowid_sql_here() THEN
		RETURN format('The row comes from another server, which issued ids with it (it was stamped there: %s): a restored dump or a copy, whose tables hold those ids.',
					  c.worker_server);
	END IF;
	FOR col IN
		SELECT x.*, coalesce(snowid_sql_private.snowid_sql_id_form(x.tab, x.name), 'other') AS form
		FROM snowid_sql_private.snowid_sql_id_columns() x ORDER BY 1, 2
	LOOP
		-- (a restore's: its values are no ids of a generator; or public ids
		-- or numbers before their keys, which pg_restore brings after the
		-- row: the raise reads them when the worker id is set, under the
		-- layout restored, and ids of another node cannot equal its own)
		CONTINUE WHEN bound IS NOT NULL AND (col.form = 'none'
			OR (col.form IN ('public', 'scramble') AND NOT EXISTS (SELECT FROM snowid_sql_private.snowid_public_keys)));
		-- (a view holds nothing: its default's ids lie in a table under it,
		-- which setting the worker id refuses on, snowid_sql_largest_held())
		CONTINUE WHEN EXISTS (SELECT FROM pg_class v WHERE v.oid = col.tab AND v.relkind = 'v');
		IF col.parted AND EXISTS (SELECT FROM pg_partition_tree(col.tab) t JOIN pg_class p ON p.oid = t.relid
								  WHERE p.relkind = 'f') THEN
			RETURN format('The column %I of %s takes ids by its default, and a partition of it is a foreign table, which is not read.',
						  col.name, col.tab);
		END IF;
		-- a bound is compared with the largest id the column holds, of any
		-- node, as the raise reads it (snowid_sql_largest_read(), by
		-- pg_catalog's functions on its base type: a column of a type of
		-- the owner's would compare through an implicit cast of its own,
		-- run here as the superuser, before 1.4's fixes the owner became a
		-- superuser so, test guard_cast_superuser); one it cannot read
		-- counts as holding ids (before 1.4's fixes only a bigint was
		-- compared, and a column of serials refused the restore of a
		-- dump's layout, test restore_layout_beside_serials)
		-- each table or leaf by itself, locked and checked
		-- (snowid_sql_lock_read())
		held := false;
		FOR r IN SELECT * FROM snowid_sql_private.snowid_sql_id_reads(col.tab, col.parted) x ORDER BY 1 LOOP
			IF r.remote THEN
				RETURN format('The column %I of %s takes ids by its default, and %s is a foreign table, which is not read.',
							  col.name, col.tab, r.rel);
			END IF;
			BEGIN
				tab := snowid_sql_private.snowid_sql_lock_read(r.rel);
				CONTINUE WHEN tab IS NULL;
				IF bound IS NOT NULL THEN
					held := coalesce(snowid_sql_private.snowid_sql_largest_read(c, true, col.tab, col.name, col.base, col.form,
																			   'ONLY ' || tab) >= bound, false);
				ELSE
					EXECUTE format('SELECT EXISTS (SELECT FROM ONLY %s WHERE %I IS NOT NULL)', tab, col.name)
						INTO held;
				END IF;
			EXCEPTION WHEN OTHERS THEN
				GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
				RETURN format('The column %I of %s takes ids by its default, and could not be read (%s%s).',
							  col.name, col.tab, msg, ': ' || nullif(detail, ''));
			END;
			EXIT WHEN held;
		END LOOP;
		IF held AND bound IS NOT NULL THEN
			RETURN format('The column %I of %s takes ids by its default, and holds some that lie, under the restored layout and epoch, more than max_drift_ms ahead of the clock.',
						  col.name, col.tab);
		ELSIF held THEN
			RETURN format('The column %I of %s takes ids by its default, and holds some.', col.name, col.tab);
		END IF;
	END LOOP;
	RETURN NULL;
END
$$;

-- The smallest id whose time lies, under the layout and epoch of the row
-- c, past the clock plus its max_drift_ms: every id below it is passed by
-- a generator raised to the clock plus max_drift_ms (0 where the clock
-- lies before the epoch, the largest id where the layout's time has run
-- out).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_restore_bound(c snowid_sql_private.snowid_config)
RETURNS bigint
LANGUAGE sql VOLATILE
RETURN least(greatest(
		(snowid_sql_private.snowid_sql_unix_ms(pg_catalog.clock_timestamp()) + c.max_drift_ms + 1
		 - snowid_sql_private.snowid_sql_unix_ms(c.epoch))::numeric
		* pg_catalog.power(2::numeric, c.datacenter_bits + c.worker_bits + c.sequence_bits), 0),
	9223372036854775807)::bigint;

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
-- is) brings the layout and epoch its tables' ids were made under (the
-- tables of a dump come back before the row), and its update is read
-- too, by one rule that holds whoever says it is a restore: it may set
-- them where this database issued nothing and its row came from nowhere
-- else, and every id its tables hold lies, under the restored layout and
-- epoch, at most the restored max_drift_ms ahead of the clock; the
-- generator is then raised past the clock plus that max_drift_ms, so
-- that every new id lies above every id held (when the worker id is set,
-- which the restore clears: the row is given a stamp of elsewhere).  Before 1.4
-- a restore's update read no table, and the restore of another
-- dump into a used database, the owner's INSERT of the row, or the
-- owner's own trigger that set snowid_sql.restoring moved the epoch
-- beside ids that new ones then equalled (tests 176, 177).  An INSERT
-- where the row is becomes such an update, and is checked as one.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := snowid_sql_private.snowid_sql_config_problem(NEW);
	-- the restore's update (snowid_sql_config_restore()), in a trigger: the
	-- owner's SET snowid_sql.restoring = on of a statement of its own
	-- (trigger depth 1) counts for nothing (test 168); set in a trigger of
	-- the owner's, it gets what a restore gets, which the rule above makes
	-- safe whoever asks (test 177)
	restoring boolean := coalesce(current_setting('snowid_sql.restoring', true) = 'on', false)
		AND pg_trigger_depth() > 1;
	used boolean;
	held text;
	high timestamptz;
	f snowid_sql_private.snowid_sql_fixed;
	behind boolean;
	restored snowid_sql_private.snowid_config;
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
	-- the node, the layout and the epoch the generator runs under are
	-- those of snowid_sql_fixed(), made from the row at its every change in
	-- this database, also in a replica's apply, which changes nothing
	-- (snowid_sql_config_replica()).  Where the row holds others, it was
	-- changed where the edition's triggers did not fire: pg_restore
	-- --disable-triggers ends with ALTER TABLE ... ENABLE TRIGGER ALL, which
	-- leaves the triggers of a replica (ENABLE REPLICA, ENABLE ALWAYS) firing
	-- only outside one, and a logical subscription's apply then wrote its
	-- publisher's row unchecked.  Before 1.4's fixes the owner's next
	-- UPDATE compared with that row alone: its worker id set again, the
	-- subscriber issued with the publisher's datacenter id, as the
	-- publisher did (test restore_disable_triggers_apply), and the
	-- publisher's layout and epoch passed the guard.  A change is refused
	-- unless it puts back those of the generator.
	f := snowid_sql_private.snowid_sql_fixed();
	behind := coalesce(TG_OP = 'UPDATE' AND f.max_ms > 0
		AND f.position_path = pg_relation_filepath('snowid_sql_private.snowid_position')
		AND (f.datacenter_id, f.epoch_ms, f.datacenter_bits, f.worker_bits, f.sequence_bits)
			IS DISTINCT FROM (OLD.datacenter_id, snowid_sql_private.snowid_sql_unix_ms(OLD.epoch),
							  OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits),
		false);
	IF behind AND (f.datacenter_id, f.epoch_ms, f.datacenter_bits, f.worker_bits, f.sequence_bits)
			IS DISTINCT FROM (NEW.datacenter_id, snowid_sql_private.snowid_sql_unix_ms(NEW.epoch),
							  NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		RAISE EXCEPTION 'snowid_config was changed without its triggers'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('The generator runs under datacenter id %s, the epoch %s and the layout %s, %s and %s bits; the row holds others, which a write where the edition''s triggers did not fire put there (a logical subscription''s apply, once pg_restore --disable-triggers had ended with ALTER TABLE ... ENABLE TRIGGER ALL).',
								  f.datacenter_id, snowid_sql_private.snowid_sql_timestamptz(f.epoch_ms),
								  f.datacenter_bits, f.worker_bits, f.sequence_bits),
				  HINT = format('As a superuser: ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica, ENABLE ALWAYS TRIGGER snowid_config_fix, ENABLE ALWAYS TRIGGER snowid_config_fix_truncate.  Then, as the owner, put them back in the UPDATE: SET datacenter_id = %s, epoch = %L, datacenter_bits = %s, worker_bits = %s, sequence_bits = %s (doc/managed.md, "Dumps and restores").',
								f.datacenter_id, snowid_sql_private.snowid_sql_timestamptz(f.epoch_ms),
								f.datacenter_bits, f.worker_bits, f.sequence_bits);
	END IF;
	IF NOT behind AND (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		restoring := restoring OR TG_OP = 'INSERT';
		-- (a restore's ids read under its layout and epoch; the stamp the
		-- row had)
		restored := NEW;
		restored.worker_server := OLD.worker_server;
		held := snowid_sql_private.snowid_sql_ids_held(CASE WHEN restoring THEN restored ELSE OLD END,
			CASE WHEN restoring THEN snowid_sql_private.snowid_sql_restore_bound(NEW) END);
		IF held IS NOT NULL THEN
			RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = held || '  An id of one layout or epoch can equal an id of another, so new ids could collide with those.',
					  HINT = 'Set the layout and the epoch before the first worker id, or with it in one UPDATE (a restore: set them to the dump''s before restoring its tables).  To switch deliberately, follow doc/layouts.md ("Changing the layout of a running system").';
		END IF;
		-- an epoch ahead of the clock is taken (the owner may mean it), but
		-- every call refuses until the clock passes it (snowid_sql_take())
		IF NEW.epoch > clock_timestamp() THEN
			RAISE WARNING 'the epoch of snowid_config lies ahead of the clock'
				USING DETAIL = format('The epoch is %s: every call refuses (22008) until the clock passes it.', NEW.epoch),
					  HINT = 'Set an epoch in the past, unless the system clock is wrong.';
		END IF;
		-- the generator past every id held when the worker id is set (the
		-- restore cleared it): the row stamped elsewhere
		IF restoring AND NEW.worker_id IS NULL AND NEW.worker_server IS NOT DISTINCT FROM snowid_sql_private.snowid_sql_here() THEN
			NEW.worker_server := 'a restore beside ids this database held';
		ELSIF restoring AND NEW.worker_id IS NULL AND NEW.worker_server IS NULL AND TG_OP = 'UPDATE' THEN
			NEW.worker_server := 'a restore beside ids this database held';
		END IF;
	END IF;
	-- a change of node by the datacenter id alone (an UPDATE that names
	-- neither worker_id nor worker_server, which snowid_sql_config_stamp()
	-- does not see) raises as setting the worker id does, and so does a
	-- change of the layout or the epoch that the guard took with a worker
	-- id set (an epoch set ahead of the clock with it moved nothing, and
	-- its correction raises)
	IF TG_OP = 'UPDATE' AND NEW.worker_id IS NOT NULL
		AND (NEW.datacenter_id, NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits)
			IS DISTINCT FROM (OLD.datacenter_id, OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits) THEN
		PERFORM snowid_sql_private.snowid_sql_note(greatest(NEW.max_drift_ms, OLD.max_drift_ms), NULL);
	END IF;
	RETURN NEW;
END
$$;

-- An insert of the row where one is (a restore: CREATE EXTENSION made the
-- row before the dump's COPY of it) updates that row instead, all of it
-- but its worker id, which it sets NULL: a restored database issues no id
-- until its owner sets a worker id, and setting it raises the generator
-- past the ids the tables then hold (snowid_sql_config_stamp(),
-- snowid_sql_config_floor()), the restore over.  That is the one way a
-- database's own ids come back into it that the edition covers (doc/managed.md,
-- "Dumps and restores"): restore, then set the worker id.  A database
-- that had a worker id loses it here too (before, it kept it, and 1.4
-- raised its generator at the first call after a restore, told by a
-- dumped number: attacks found restores that call did not see, or saw
-- too early, and the number was gone).  It carries the source's stamp
-- (a dump of a database that claimed its worker id, up to 1.2, has none,
-- and is given one that names no server).  The update says it is the
-- restore's to snowid_sql_config_check() (the setting
-- snowid_sql.restoring, for that update alone).  Fires after the check
-- (triggers fire in the order of their names), on the row inserted.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_restore()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	stamp text := coalesce(NEW.worker_server,
						   CASE WHEN NEW.claim_worker_id THEN 'a dump of snowid_sql that claimed its worker id' END);
	updated boolean;
BEGIN
	UPDATE snowid_sql_private.snowid_config x SET worker_id = NULL WHERE x.singleton AND x.worker_id IS NOT NULL;
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
		WHERE x.singleton AND stamp IS NOT NULL;
		RETURN NULL;
	END IF;
	NEW.claim_worker_id := false;
	NEW.worker_server := stamp;
	RETURN NEW;
END
$$;

-- A worker id set (an INSERT or UPDATE that names it) says so to
-- snowid_sql_refix() for the rest of the transaction: the generation then
-- held is adopted.  The note is a row of snowid_config_pending, which
-- only the owner of the table writes: this trigger, the stamp and the
-- restore run as it (SECURITY DEFINER), whoever writes the row
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_worker_set()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_note(NULL, true);
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
-- The rule the edition's restores, copies and changes of node rest on,
-- in one place: setting a worker id (an INSERT or UPDATE that names
-- worker_id or worker_server, with a worker id; a change of the
-- datacenter id alone, snowid_sql_config_check()) raises the generator,
-- whatever the row held before and wherever it was stamped, past the
-- largest id of the new node its tables hold, and past this server's
-- clock plus max_drift_ms (the larger of the row's before and after;
-- snowid_sql_config_floor(), through a note in snowid_config_pending for
-- the transaction), a first install's first worker id too: a restore that
-- leaves the row out (pg_restore -n, a superuser's --disable-triggers or
-- replica restore) leaves it as never stamped, and before 1.4's fixes such
-- a worker id raised past the tables alone, and a batch its source handed
-- out came again (tests restore_schema_into_fresh_install,
-- restore_row_skipped_fresh_install).  The generator moved, the layout
-- and the epoch are set before or with the first worker id
-- (snowid_sql_config_check()).  So a
-- restored dump (which never carries a worker id:
-- snowid_sql_config_restore()), a pg_createsubscriber copy, pg_upgrade, a
-- CREATE DATABASE ... TEMPLATE copy, a sequence made anew, and a
-- subscriber given its gone publisher's worker id each start past the ids
-- they hold.  Before, only a stamp over another server's raised by
-- max_drift_ms, and a row stamped here not at all: a subscriber with
-- a worker id of its own given its gone publisher's issued the
-- replicated ids again (test subscriber_changes_worker_id).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_stamp()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	here text;
BEGIN
	here := snowid_sql_private.snowid_sql_here();
	IF NEW.worker_id IS NULL THEN
		-- the owner's UPDATE of worker_server neither clears a stamp nor
		-- writes this server's: either would make a copy's row look never
		-- stamped, or stamped here, and its worker id set next would raise
		-- nothing (before 1.4, SET worker_server = NULL: test 172)
		IF TG_OP = 'UPDATE' AND (NEW.worker_server IS NULL OR NEW.worker_server = here) THEN
			NEW.worker_server := OLD.worker_server;
		END IF;
		RETURN NEW;
	END IF;
	PERFORM snowid_sql_private.snowid_sql_note(
		greatest(NEW.max_drift_ms, CASE WHEN TG_OP = 'UPDATE' THEN OLD.max_drift_ms END), NULL);
	NEW.worker_server := here;
	RETURN NEW;
END
$$;

-- After the worker id is set (snowid_sql_config_stamp(), the rule): the
-- generator raised, so that this server's next id lies past its clock
-- plus that max_drift_ms, and past the largest id of its node the tables
-- hold.  A server that issued with the node before (gone, or it keeps
-- another worker id now) issued ids up to its clock plus max_drift_ms: a
-- batch, or a clock stepped back, runs ahead of the clock, and a copy that
-- started at its clock issued them again (a restored dump given its gone
-- source's worker id at once: 1,000 of 1,000).  One millisecond more than
-- that: the common path reads the clock in floating point, which may lie
-- one millisecond ahead at a boundary.  And past the largest id of the
-- node its tables hold, by that id's own time, however far ahead of the
-- clock it lies (the source's clock stepped back after it issued: before
-- 1.4's fixes the raise counted max_drift_ms alone, test
-- restore_after_clock_step), waiting for the clock where that lies beyond
-- max_drift_ms (snowid_sql_raise_floor(); refused beyond an hour).  The
-- position is only raised, never lowered, by a writer
-- (snowid_sql_raise_floor(), snowid_sql_move()), after snowid_config_fix
-- (triggers fire in the order of their names) made snowid_sql_fixed() with
-- this server and adopted the generation as it is, as a writer needs.
-- Only the setting pays: the common path is as it was, and its calls take
-- the path of a clock stepped back (snowid_sql_take()) until the clock has
-- caught up, at most max_drift_ms.  SECURITY DEFINER, so that the
-- installing role, whose writes fire it, needs no EXECUTE on
-- snowid_sql_raise_floor() (before 1.4 it had it, and moved the
-- generator to 2070 with one call: test 175).  What it does not cover
-- stays the operator's: the clocks of the two servers may differ, and the
-- other server must have stopped issuing ids with the node before.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_floor()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	drift_ms integer := (snowid_sql_private.snowid_sql_noted()).copy_drift_ms;
	held bigint;
	floor_ms bigint;
BEGIN
	IF drift_ms IS NOT NULL THEN
		UPDATE snowid_sql_private.snowid_config_pending p SET copy_drift_ms = NULL
		WHERE p.xact = pg_current_xact_id();
		-- never more than the row allows
		drift_ms := least(drift_ms, greatest(NEW.max_drift_ms,
											 CASE WHEN TG_OP = 'UPDATE' THEN OLD.max_drift_ms END));
		floor_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + drift_ms + 2;
		held := snowid_sql_private.snowid_sql_largest_held(NEW);
		IF held >= 0 THEN
			floor_ms := greatest(floor_ms, (held >> (NEW.datacenter_bits + NEW.worker_bits + NEW.sequence_bits))
										   + snowid_sql_private.snowid_sql_unix_ms(NEW.epoch) + 1);
		END IF;
		IF floor_ms > snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + 3600000 THEN
			RAISE EXCEPTION 'the ids this database holds lie more than an hour ahead of the clock'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('The largest id its tables hold (by the default of their columns) was made at %s; new ids must lie above it.',
												 snowid_sql_private.snowid_sql_timestamptz(floor_ms - 1)),
					  HINT = 'Correct the system clock, or set the worker id once the clock has passed that time.';
		END IF;
		PERFORM snowid_sql_private.snowid_sql_raise_floor(floor_ms);
	END IF;
	RETURN NULL;
END
$$;

-- A replica's apply (and any session with session_replication_role =
-- replica) changes no row of snowid_config or snowid_locks: a publication
-- carries the publisher's rows, whose worker id and layout are not this
-- server's (also in the initial copy, whose rows the trigger drops, so
-- that it does not fail on the subscriber's keys).  Enabled anew for
-- every session (ALTER TABLE ... ENABLE TRIGGER ALL, which pg_restore
-- --disable-triggers runs after a superuser's data-only restore), it
-- would drop every change of the row, the owner's setting of the worker
-- id with it, which then raised nothing: it drops them only as a replica
-- (test restore_row_skipped_superuser)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_replica()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF current_setting('session_replication_role') = 'replica' THEN
		RETURN NULL;
	ELSIF TG_OP = 'DELETE' THEN
		RETURN OLD;
	END IF;
	RETURN NEW;
END
$$;
