-- The privileges of what 1.1 added, as a fresh install of 1.1 states them
-- (its privileges.sql): the owner's alone, whatever default privileges
-- (ALTER DEFAULT PRIVILEGES) of the owner granted at their creation.  What
-- 1.1 added is what has no initial privileges recorded: 1.0's install
-- recorded them for each of its tables, routines and types (a GRANT or
-- REVOKE of an extension's script records them, pg_init_privs).  Nothing
-- else is granted or revoked here: the privileges of what 1.0 had stay as
-- they are, the grants an administrator made among them, and a grant made
-- here would be recorded as initial, which pg_dump then leaves out of a
-- dump (a restore would lose it).
DO $$
DECLARE
	o			record;
	r			record;
BEGIN
	FOR o IN
		SELECT 'TABLE' AS kind, c.oid::pg_catalog.regclass::text AS name,
			   c.relacl AS acl, c.relowner AS owner
		FROM pg_catalog.pg_class c
		WHERE c.relnamespace OPERATOR(pg_catalog.=) 'snowid_coordinator'::pg_catalog.regnamespace
		  AND c.relkind IN ('r', 'v', 'S', 'm', 'p', 'f')
		  AND NOT EXISTS (SELECT FROM pg_catalog.pg_init_privs i
						  WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
							AND i.objoid OPERATOR(pg_catalog.=) c.oid AND i.objsubid OPERATOR(pg_catalog.=) 0)
		UNION ALL
		SELECT CASE WHEN p.prokind OPERATOR(pg_catalog.=) 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
			   p.oid::pg_catalog.regprocedure::text, p.proacl, p.proowner
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) 'snowid_coordinator'::pg_catalog.regnamespace
		  AND NOT EXISTS (SELECT FROM pg_catalog.pg_init_privs i
						  WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
							AND i.objoid OPERATOR(pg_catalog.=) p.oid)
	LOOP
		-- PUBLIC's EXECUTE that a new routine has without an ACL, and
		-- whatever default privileges granted
		EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM PUBLIC', o.kind, o.name);
		FOR r IN
			SELECT DISTINCT a.grantee
			FROM pg_catalog.aclexplode(o.acl) a
			WHERE a.grantee OPERATOR(pg_catalog.<>) o.owner
			  AND a.grantee OPERATOR(pg_catalog.<>) 0
		LOOP
			EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s CASCADE',
									  o.kind, o.name,
									  pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(r.grantee)));
		END LOOP;
		EXECUTE pg_catalog.format('GRANT ALL ON %s %s TO CURRENT_USER', o.kind, o.name);
	END LOOP;
END
$$;

-- The servers' procedures of 1.1 call prove() first, which a role that may
-- call them needs too: a grant the administrator makes after the update,
-- in its transaction (doc/install.md, "From 1.3"), as after the install,
-- so that a dump keeps it.  Until then their calls fail: named here.
DO $$
DECLARE
	roles		text;
BEGIN
	SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)), ', ')
	INTO roles
	FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
	WHERE p.pronamespace OPERATOR(pg_catalog.=) 'snowid_coordinator'::pg_catalog.regnamespace
	  AND p.prokind OPERATOR(pg_catalog.=) 'p'
	  AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['claim', 'lease_claim', 'lease_renew',
											  'lease_release'])
	  AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
	  AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
	  AND NOT pg_catalog.has_function_privilege(a.grantee,
			'snowid_coordinator.prove(integer, text, text, text[])', 'EXECUTE');
	IF roles IS NOT NULL THEN
		RAISE WARNING 'the servers'' role may not call prove(), which 1.1''s procedures call first'
			USING DETAIL = pg_catalog.format('The roles %s may call the servers'' procedures; their calls fail until they may call snowid_coordinator.prove() too.', roles),
				  HINT = pg_catalog.format('In the transaction of the update: GRANT EXECUTE ON PROCEDURE snowid_coordinator.prove(integer, text, text, text[]) TO %s; (or GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA snowid_coordinator TO them, as after an install).', roles);
	END IF;
END
$$;
