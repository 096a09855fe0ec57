-- -------------------------------------------------------------------------
-- Who may do what
-- -------------------------------------------------------------------------
-- Every privilege of the edition's objects, set whole (an install and an
-- update end with the same): PUBLIC reads the configuration (and 1.2's
-- claim record, snowid_claimed: kept.sql) and calls the
-- functions of the API; the role that installed it (the owner of the
-- extension, whoever runs an update; the role that runs the plain script,
-- who owns everything there) configures it, writes the keys of public ids
-- and, for a restore, inserts the row of snowid_config and sets the
-- sequence a dump of 1.0 or 1.1 names.  It reads snowid_locks and
-- snowid_config_pending, as its pg_dump locks every table of the extension (LOCK TABLE ... IN ACCESS
-- SHARE MODE needs SELECT), but locks none of its rows (FOR UPDATE needs
-- UPDATE too).  No other role may read the keys or touch a sequence, and
-- no role but the superuser (or the owner of everything, through pg_tle or
-- the plain script) lock a row of snowid_locks.
--
-- A function of snowid_sql_private is for the functions of the API alone:
-- one that runs as the superuser (snowid_sql_take(), say) would do with
-- the arguments of any role what its callers check first.  So PUBLIC may
-- call only those that a function of the API calls as its caller (not
-- SECURITY DEFINER), and the installing role those too and the ones that
-- the triggers of its writes call as it: named here, a list kept with the
-- bodies it follows (test privileges.sql of the deep tier compares it with
-- them).  Before 1.4's fixes the list was read from the bodies of every
-- function of the extension's schema named snowid*, also one the owner of
-- that schema had made there before CREATE EXTENSION, naming
-- snowid_sql_next_table(): PUBLIC was granted it and, through it,
-- snowid_sql_take(), and any role took the id of any position again
-- (test privileges_planted_body).
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
	-- what the API calls as its caller
	public_may pg_catalog.regprocedure[] := ARRAY[
		'snowid_sql_private.snowid_sql_unix_ms(timestamptz)',
		'snowid_sql_private.snowid_sql_timestamptz(bigint)',
		'snowid_sql_private.snowid_sql_config_fault(snowid_sql_private.snowid_config)',
		'snowid_sql_private.snowid_sql_config_problem(snowid_sql_private.snowid_config)',
		'snowid_sql_private.snowid_sql_config(boolean)',
		'snowid_sql_private.snowid_sql_here()',
		'snowid_sql_private.snowid_sql_elsewhere(integer)',
		'snowid_sql_private.snowid_sql_next(boolean)',
		'snowid_sql_private.snowid_sql_next_batch(integer)',
		'snowid_sql_private.snowid_sql_max_ms(snowid_sql_private.snowid_config)',
		'snowid_sql_private.snowid_sql_ms(snowid_sql_private.snowid_config, bigint)',
		'snowid_sql_private.snowid_sql_shown(text)',
		'snowid_sql_private.snowid_sql_prefix_problem(text)',
		'snowid_sql_private.snowid_sql_check_prefix(text)',
		'snowid_sql_private.snowid_sql_width(integer)',
		'snowid_sql_private.snowid_sql_format_serial(snowid_sql_private.snowid_config, text, bigint)',
		'snowid_sql_private.snowid_sql_days(integer, integer, integer)',
		'snowid_sql_private.snowid_sql_layout(snowid_sql_private.snowid_config)',
		-- for 1.2's snowid_sql_claim_first() in flight through the update,
		-- which calls it as the caller (generator.sql)
		'snowid_sql_private.snowid_sql_claim_stale()',
		'snowid_sql_private.snowid_sql_claimed(snowid_sql_private.snowid_config)'];
	-- and what the triggers of the installing role's writes call as it
	installer_may pg_catalog.regprocedure[] := ARRAY[
		'snowid_sql_private.snowid_sql_damm(integer, integer)',
		'snowid_sql_private.snowid_sql_symbols()',
		'snowid_sql_private.snowid_sql_key_id_problem(text)'];
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
					WHEN c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_locks', 'snowid_config_pending'])
					THEN 'SELECT' END AS installer_may,
			   c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_config', 'snowid_claimed']) AS public_reads
		FROM pg_catalog.pg_class c
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY[
			'snowid_sql_private.snowid_config', 'snowid_sql_private.snowid_public_keys',
			'snowid_sql_private.snowid_locks', 'snowid_sql_private.snowid_position',
			'snowid_sql_private.snowid_generation', 'snowid_sql_private.snowid_waits',
			'snowid_sql_private.snowid_clock_steps', 'snowid_sql_private.snowid_clock_errors',
			'snowid_sql_private.snowid_sql_started', 'snowid_sql_private.snowid_config_pending',
			'snowid_sql_private.snowid_claimed', 'snowid_sql_private.snowid_sql_claimed_run',
			'@extschema@.snowid_config',
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
	-- in one order, so that every install lists the same privileges; a
	-- superuser needs no grant
	FOR o IN
		SELECT f.fn, 'PUBLIC' AS grantee, 0 AS rank
		FROM pg_catalog.unnest(public_may) f(fn)
		UNION ALL
		SELECT f.fn, installer::pg_catalog.regrole::text, 1
		FROM pg_catalog.unnest(public_may OPERATOR(pg_catalog.||) installer_may) f(fn)
		WHERE NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) installer)
		ORDER BY 3, 1
	LOOP
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', o.fn, o.grantee);
	END LOOP;
END
$$;

-- The generator's type is no role's to use (PUBLIC has USAGE on every
-- type by PostgreSQL's default): a column of it in another role's table
-- would keep a later update from making it anew (1.3--1.4/retire.sql
-- leaves such a type in place; test update_type_used_elsewhere)
REVOKE USAGE ON TYPE snowid_sql_private.snowid_sql_fixed FROM PUBLIC;

-- snowid_sql_fixed() made from the row, with this server
SELECT snowid_sql_private.snowid_sql_refix();
