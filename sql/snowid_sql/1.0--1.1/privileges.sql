-- The new objects belong to the owner of the others (the role that
-- created the extension or ran the plain script), whoever runs this
-- update, as after a fresh install; only that owner reads the new table
REVOKE ALL ON @extschema@.snowid_coordinator_state FROM PUBLIC;
DO $$
DECLARE
	owner regrole := (SELECT c.relowner::pg_catalog.regrole FROM pg_catalog.pg_class c
					  WHERE c.oid OPERATOR(pg_catalog.=) '@extschema@.snowid_config'::pg_catalog.regclass);
BEGIN
	EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %s', '@extschema@.snowid_coordinator_state', owner);
	EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %s', '@extschema@.snowid_status()', owner);
	EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %s',
							  '@extschema@.snowid_coordinator_state', owner);
END
$$;
