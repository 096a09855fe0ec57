-- -------------------------------------------------------------------------
-- The private schema
-- -------------------------------------------------------------------------
-- The functions that run as the superuser name what they read, write and
-- call with a schema, at every call (PL/pgSQL plans them per session):
-- the owner of the extension's schema (public: the owner of the database)
-- could put an overload that the call matches better there, or rename the
-- schema and make another of its name.  So the tables, the sequences, the
-- type and the internal functions (snowid_sql_*) move to a schema that
-- this script makes, as the bootstrap superuser where it runs as one, and
-- every body names them there; only the functions of the API (snowid_*,
-- and snowid_sql_version()) stay, and the tables keep a view of their
-- name.  Its name is fixed: the extension is not relocatable, and a schema
-- of that name made before fails this script.  Run as the owner (pg_tle,
-- the plain script), the schema is the owner's, as every object is.
CREATE SCHEMA snowid_sql_private;

COMMENT ON SCHEMA snowid_sql_private IS
'the tables, sequences and internal functions of snowid_sql: not to be changed';

GRANT USAGE ON SCHEMA snowid_sql_private TO PUBLIC;

-- The claim reads the time of the high-water mark from snowid_status(),
-- a function of the API: through this, which names it by oid
CREATE FUNCTION snowid_sql_private.snowid_sql_high_water_time()
RETURNS timestamptz
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT (@extschema@.snowid_status()).high_water_time;
END;

DO $$
DECLARE
	ext oid := (SELECT d.refobjid FROM pg_catalog.pg_depend d
				WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				  AND d.objid OPERATOR(pg_catalog.=) '@extschema@.snowid_config'::pg_catalog.regclass
				  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e');
	-- the schema as the scripts name it, and the names that move
	old text := pg_catalog.regexp_replace('@extschema@', '([^[:alnum:]_])', '\\\1', 'g');
	moved text := '(snowid_sql_[[:alnum:]_]*|snowid_(config|public_keys|coordination|coordinator_state|holder|locks|position|generation|waits|clock_steps|clock_errors|claimed)(?![[:alnum:]_]))';
	o record;
	def text;
	stmts text[];
	stmt text;
BEGIN
	-- another function of a name of the extension's (an overload made
	-- before the install, which a body could have found) fails it
	SELECT p.oid::pg_catalog.regprocedure AS f INTO o FROM pg_catalog.pg_proc p
	WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND p.proname LIKE 'snowid%'
	  AND ext IS NOT NULL
	  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
					  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) p.oid
						AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e')
	  AND p.proname IN (SELECT q.proname FROM pg_catalog.pg_proc q JOIN pg_catalog.pg_depend d
						ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) q.oid
						   AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e')
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'the function % is not snowid_sql''s', o.f
			USING ERRCODE = 'duplicate_function',
				  DETAIL = 'It has the name of a function of the extension, in its schema.',
				  HINT = 'Drop or rename it, then install the extension again.';
	END IF;
	-- every statement made before the first runs (none depends on what
	-- another moved, whatever order the rows come in), then run
	SELECT pg_catalog.array_agg(m.stmt ORDER BY m.stmt) INTO stmts FROM (
		SELECT pg_catalog.format('ALTER %s %s SET SCHEMA snowid_sql_private',
				CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass) AS stmt
		FROM pg_catalog.pg_class c
		WHERE c.relnamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND c.relkind IN ('r', 'S')
		  AND c.relname ~ ('^' || moved || '$')
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) c.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
		UNION ALL
		SELECT pg_catalog.format('ALTER TYPE %s SET SCHEMA snowid_sql_private',
								 '@extschema@.snowid_sql_fixed')
		UNION ALL
		SELECT pg_catalog.format('ALTER FUNCTION %s SET SCHEMA snowid_sql_private', p.oid::pg_catalog.regprocedure)
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace AND p.proname ~ ('^' || moved || '$')
		  AND p.proname <> 'snowid_sql_version'
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
	) m;
	FOREACH stmt IN ARRAY stmts LOOP
		EXECUTE stmt;
	END LOOP;
	-- every body that names them by name (an SQL-standard body names them
	-- by oid), named in the private schema
	FOR o IN
		SELECT p.oid FROM pg_catalog.pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@'::pg_catalog.regnamespace::pg_catalog.oid,
															   'snowid_sql_private'::pg_catalog.regnamespace::pg_catalog.oid])
		  AND p.proname LIKE 'snowid%' AND p.prosqlbody IS NULL AND p.proname <> 'snowid_sql_version'
		  AND (ext IS NULL OR EXISTS (SELECT FROM pg_catalog.pg_depend d
									  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
										AND d.objid OPERATOR(pg_catalog.=) p.oid AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype = 'e'))
	LOOP
		def := pg_catalog.pg_get_functiondef(o.oid);
		IF def ~ ('(^|[^[:alnum:]_$"])' || old || '\.snowid_') THEN
			def := pg_catalog.replace(def, '(@extschema@.snowid_status()).high_water_time',
									  'snowid_sql_private.snowid_sql_high_water_time()');
			def := pg_catalog.regexp_replace(def, '(^|[^[:alnum:]_$"])' || old || '\.' || moved,
											 '\1snowid_sql_private.\2', 'g');
			-- (but in the first line, CREATE FUNCTION of an API function)
			IF pg_catalog.substr(def, pg_catalog.strpos(def, E'\n'))
				~ ('(^|[^[:alnum:]_$"])' || old || '\.snowid_') THEN
				RAISE EXCEPTION 'snowid_sql 1.2: % still names the extension''s schema', o.oid::pg_catalog.regprocedure;
			END IF;
			EXECUTE def;
		END IF;
	END LOOP;
END
$$;

-- The tables under their names, for the owner's UPDATE snowid_config and
-- the like: views of the superuser's, with the tables' privileges
CREATE VIEW @extschema@.snowid_config AS SELECT * FROM snowid_sql_private.snowid_config;
CREATE VIEW @extschema@.snowid_public_keys AS SELECT * FROM snowid_sql_private.snowid_public_keys;
CREATE VIEW @extschema@.snowid_coordination AS SELECT * FROM snowid_sql_private.snowid_coordination;
CREATE VIEW @extschema@.snowid_coordinator_state AS SELECT * FROM snowid_sql_private.snowid_coordinator_state;
CREATE VIEW @extschema@.snowid_holder AS SELECT * FROM snowid_sql_private.snowid_holder;
CREATE VIEW @extschema@.snowid_locks AS SELECT * FROM snowid_sql_private.snowid_locks;

COMMENT ON VIEW @extschema@.snowid_config IS
'snowid''s configuration (the table snowid_sql_private.snowid_config): the owner sets the worker id here';
COMMENT ON VIEW @extschema@.snowid_public_keys IS
'the keys of public ids (the table snowid_sql_private.snowid_public_keys)';
COMMENT ON VIEW @extschema@.snowid_coordination IS
'the coordination database of the claim (the table snowid_sql_private.snowid_coordination)';
COMMENT ON VIEW @extschema@.snowid_coordinator_state IS
'the claim''s state record (the table snowid_sql_private.snowid_coordinator_state)';
COMMENT ON VIEW @extschema@.snowid_holder IS
'this database as a holder of claims (the table snowid_sql_private.snowid_holder)';
COMMENT ON VIEW @extschema@.snowid_locks IS
'the locks of the generator and of the claim (the table snowid_sql_private.snowid_locks)';

-- What the role that installed the edition may do, granted anew (the
-- owner of the extension, whoever runs this update; the role that runs the
-- plain script), on the tables and on their views: the claim, which runs
-- as that role, writes the state record, locks its row of snowid_locks and
-- makes snowid_sql_fixed() anew; snowid_sql_holder_renew() is one of its
-- functions.
REVOKE ALL ON @extschema@.snowid_config, @extschema@.snowid_public_keys, @extschema@.snowid_coordination,
	@extschema@.snowid_coordinator_state, @extschema@.snowid_holder, @extschema@.snowid_locks FROM PUBLIC;
GRANT SELECT ON @extschema@.snowid_config TO PUBLIC;
DO $$
DECLARE
	installer name := coalesce(
		(SELECT e.extowner::pg_catalog.regrole::name FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass AND d.deptype = 'e'),
		CURRENT_USER);
	s text;
BEGIN
	FOREACH s IN ARRAY ARRAY['snowid_sql_private', '@extschema@'] LOOP
		EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %s.snowid_config TO %I', s, installer);
		EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %1$s.snowid_public_keys, %1$s.snowid_coordination, %1$s.snowid_coordinator_state TO %2$I',
								  s, installer);
		EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %1$s.snowid_holder, %1$s.snowid_locks TO %2$I',
								  s, installer);
	END LOOP;
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON snowid_sql_private.snowid_claimed TO %I', installer);
	-- the restore of a dump (below) inserts the row of snowid_config
	EXECUTE pg_catalog.format('GRANT INSERT ON snowid_sql_private.snowid_config TO %I', installer);
	EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION snowid_sql_private.snowid_sql_raise_floor(bigint), snowid_sql_private.snowid_sql_refix() TO %I',
							  installer);
	EXECUTE pg_catalog.format('ALTER FUNCTION snowid_sql_private.snowid_sql_holder_renew() OWNER TO %I', installer);
END
$$;

-- Dumped and restored by the owner of the database, as pgcrypto's or
-- pg_cron's (finding C): pg_dump reads the tables whose rows it dumps,
-- and a restore writes them, as the role that runs it.  The row of
-- snowid_config is restored by an INSERT, which the restore's trigger
-- makes an update of the layout, the epoch and the bounds (not the worker
-- id): the installing role may insert (granted above).  The position is no longer dumped:
-- only a superuser may set it (a position moved back repeats ids), and a
-- restored database, which is another server, issues no id until it is
-- given a worker id and then starts from its clock; a dump's position,
-- older than the ids its source issued since, never kept it from
-- repeating them.  (ALTER EXTENSION ... DROP takes a sequence out of what
-- pg_dump dumps; ADD makes it a member again.)
DO $$
DECLARE
	ext name := (SELECT e.extname FROM pg_catalog.pg_depend d
				 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
				 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_position'::pg_catalog.regclass
				   AND d.deptype = 'e'
				   AND d.objid OPERATOR(pg_catalog.=) ANY (e.extconfig));
BEGIN
	IF ext IS NOT NULL THEN
		EXECUTE pg_catalog.format('ALTER EXTENSION %I DROP SEQUENCE snowid_sql_private.snowid_position', ext);
		EXECUTE pg_catalog.format('ALTER EXTENSION %I ADD SEQUENCE snowid_sql_private.snowid_position', ext);
	END IF;
END
$$;

