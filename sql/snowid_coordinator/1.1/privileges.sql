-- Only the owner calls anything until granted (see the top of this file)
REVOKE ALL ON FUNCTION
	snowid_coordinator.check_given(text, anyelement),
	snowid_coordinator.check_id(text, integer, integer),
	snowid_coordinator.check_ms(text, bigint, bigint, bigint, text),
	snowid_coordinator.check_ahead(text, bigint, bigint),
	snowid_coordinator.check_identity(text),
	snowid_coordinator.check_token(text),
	snowid_coordinator.durable_commit(),
	snowid_coordinator.lock_datacenter(integer, boolean),
	snowid_coordinator.holder_name(text, boolean),
	snowid_coordinator.retire(integer, integer, bigint),
	snowid_coordinator.pick(integer, integer, bigint, integer, text, bigint),
	snowid_coordinator.fence_of(integer, integer),
	snowid_coordinator.check_secret(text),
	snowid_coordinator.check_holder(integer, text, text, text),
	snowid_coordinator.register_holder(integer, text, text, bytea),
	snowid_coordinator.proof_parts(text),
	snowid_coordinator.proof_of(text, bigint, text),
	snowid_coordinator.call_text(text[]),
	snowid_coordinator.proofs_taken_until(),
	snowid_coordinator.last_proof_n(integer, text),
	snowid_coordinator.check_proof_time(bigint),
	snowid_coordinator.xor_hex(text, text),
	snowid_coordinator.check_proof(integer, text, text, text, integer),
	snowid_coordinator.check_called_by(text),
	snowid_coordinator.run_claim(integer, text, text, integer, integer, integer, bigint, bigint, boolean, bigint, bigint, bigint, bigint),
	snowid_coordinator.run_lease_claim(integer, text, text, integer, bigint, bigint, bigint, integer, bigint, text, bigint, bigint, bigint, bigint),
	snowid_coordinator.run_lease_renew(integer, text, text, integer, bigint, bigint, text, bigint, bigint, bigint, bigint, bigint),
	snowid_coordinator.run_lease_release(integer, text, text, integer, bigint, boolean, text),
	snowid_coordinator.free(integer, integer, bigint),
	snowid_coordinator.lower_fence(integer, integer, bigint),
	snowid_coordinator.check_layout(integer, text, integer, integer, bigint),
	snowid_coordinator.record_layout(integer, integer),
	snowid_coordinator.reset_secret(integer, text),
	snowid_coordinator.server_now(),
	snowid_coordinator.check_declared(bigint, bigint),
	snowid_coordinator.check_seen(bigint, bigint, bigint),
	snowid_coordinator.recall(integer, bigint, bigint, bigint, bigint, bigint),
	snowid_coordinator.stale(snowid_coordinator.datacenters, bigint, bigint, bigint),
	snowid_coordinator.new_datacenter(integer),
	snowid_coordinator.end_quiet(integer),
	snowid_coordinator.check_in_layout(text, integer, integer, integer),
	snowid_coordinator.check_range_call(integer, text, text, integer),
	snowid_coordinator.check_range_ms(bigint),
	snowid_coordinator.noticed(integer, bigint),
	snowid_coordinator.grant_range(integer, text, text, bytea, integer, boolean, bigint, bigint, bigint, integer),
	snowid_coordinator.check_range_layout(integer, text, integer, bigint),
	snowid_coordinator.check_range_clock(text),
	snowid_coordinator.choose_range(integer, text, integer, integer, bigint),
	snowid_coordinator.run_claim_4(integer, text, text, integer, bigint, boolean, integer),
	snowid_coordinator.run_extend_4(integer, text, text, integer, integer, bigint, bigint, boolean),
	snowid_coordinator.run_release_4(integer, text, text, integer, integer),
	snowid_coordinator.free_4(integer, integer)
FROM PUBLIC;
REVOKE ALL ON ALL PROCEDURES IN SCHEMA snowid_coordinator FROM PUBLIC;

-- The privileges as this file states them, whatever default privileges
-- (ALTER DEFAULT PRIVILEGES) of the installing role granted at creation,
-- or an empty schema of the name had: the owner's alone on the schema, the
-- tables, the view and the functions, and USAGE of the types to everyone
-- (as without default privileges).  The grants to the servers and to
-- administrators are made afterwards, by hand (see the top of this file).
DO $$
DECLARE
	o			record;
BEGIN
	FOR o IN
		SELECT 'SCHEMA' AS kind, pg_catalog.quote_ident(n.nspname) AS name,
			   a.grantee
		FROM pg_catalog.pg_namespace n,
			 pg_catalog.aclexplode(n.nspacl) a
		WHERE n.nspname = 'snowid_coordinator' AND a.grantee <> n.nspowner
		UNION
		SELECT 'TABLE', c.oid::pg_catalog.regclass::text, a.grantee
		FROM pg_catalog.pg_class c,
			 pg_catalog.aclexplode(c.relacl) a
		WHERE c.relnamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND c.relkind IN ('r', 'v', 'S', 'm', 'p', 'f')
		  AND a.grantee <> c.relowner
		UNION
		SELECT CASE WHEN p.prokind = 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
			   p.oid::pg_catalog.regprocedure::text, a.grantee
		FROM pg_catalog.pg_proc p,
			 pg_catalog.aclexplode(p.proacl) a
		WHERE p.pronamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND a.grantee <> p.proowner
		UNION
		SELECT 'TYPE', t.oid::pg_catalog.regtype::text, a.grantee
		FROM pg_catalog.pg_type t,
			 pg_catalog.aclexplode(t.typacl) a
		WHERE t.typnamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND a.grantee <> t.typowner
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s CASCADE',
								  o.kind, o.name,
								  CASE WHEN o.grantee = 0 THEN 'PUBLIC'
									   ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(o.grantee))
								  END);
	END LOOP;
	GRANT ALL ON SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT ALL ON ALL TABLES IN SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT ALL ON ALL ROUTINES IN SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT USAGE ON TYPE snowid_coordinator.outcome TO PUBLIC;
END
$$;
