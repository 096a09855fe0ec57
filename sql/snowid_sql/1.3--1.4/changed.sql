-- -------------------------------------------------------------------------
-- What 1.4 changes of 1.3's objects but the functions' bodies
-- -------------------------------------------------------------------------
-- The type snowid_sql_fixed takes claim_worker_id as its first attribute,
-- where 1.2 had it and 1.4 keeps it (1.4/objects.sql), which ALTER TYPE
-- cannot put first: the type is made anew, of that and 1.3's attributes
-- (those of 1.4 after it), with snowid_sql_fixed(), which
-- returns it, and snowid_sql_fixed_id(), whose body calls that
-- (1.4/generator.sql makes it again).  snowid_sql_fixed() is made again
-- with the values it held, so that snowid_sql_refix() (the end of
-- 1.4/privileges.sql) finds the generation this server adopted, as it
-- does on every change of the row.
DO $$
DECLARE
	held pg_catalog.jsonb := pg_catalog.to_jsonb(snowid_sql_private.snowid_sql_fixed());
	attributes text;
BEGIN
	SELECT pg_catalog.string_agg(pg_catalog.format('%I %s', a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)),
								 ', ' ORDER BY a.attnum)
	INTO attributes
	FROM pg_catalog.pg_attribute a
	WHERE a.attrelid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_sql_fixed'::pg_catalog.regclass
	  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
	DROP FUNCTION snowid_sql_private.snowid_sql_fixed_id(integer, bigint);
	DROP FUNCTION snowid_sql_private.snowid_sql_fixed();
	-- (left in place, renamed, where another role's object uses it:
	-- retire.sql)
	PERFORM snowid_sql_private.snowid_sql_retire('TYPE', 'snowid_sql_private.snowid_sql_fixed');
	EXECUTE pg_catalog.format('CREATE TYPE snowid_sql_private.snowid_sql_fixed AS (claim_worker_id boolean, %s)',
							  attributes);
	EXECUTE pg_catalog.format($f$CREATE FUNCTION snowid_sql_private.snowid_sql_fixed()
RETURNS snowid_sql_private.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN %L::snowid_sql_private.snowid_sql_fixed$f$,
		pg_catalog.jsonb_populate_record(NULL::snowid_sql_private.snowid_sql_fixed,
			held OPERATOR(pg_catalog.||) '{"claim_worker_id": false}'::pg_catalog.jsonb)::text);
END
$$;

-- The guard reads no table since 1.4's fixes (1.4/config.sql,
-- snowid_sql_config_check()): 1.3's reading of the tables goes
DROP FUNCTION snowid_sql_private.snowid_sql_ids_held(snowid_sql_private.snowid_config, boolean);

DROP FUNCTION snowid_sql_private.snowid_sql_retire(text, text);
