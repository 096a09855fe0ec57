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
