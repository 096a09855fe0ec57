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
