-- The version this update installs (a plain script records it nowhere else)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.2'$$;

