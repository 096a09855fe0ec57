-- The version of the SQL edition installed in this schema.  Every update
-- script makes it anew with its own version: a plain script (make
-- snowid_sql.sql) is no extension, and records its version nowhere else.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.4'$$;

COMMENT ON FUNCTION @extschema@.snowid_sql_version() IS
'the version of the SQL edition of snowid installed in this schema';
