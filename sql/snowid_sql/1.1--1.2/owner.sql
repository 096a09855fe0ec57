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

