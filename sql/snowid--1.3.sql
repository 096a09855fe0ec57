/* snowid--1.3.sql */

\echo Use "CREATE EXTENSION snowid" to load this file. \quit

-- Volatility and parallel markings:
-- * snowid_next() and snowid_next_batch() are VOLATILE: every call takes new
--   ids.  They are PARALLEL SAFE because the generator lives in shared memory
--   and parallel workers draw from it exactly as their leader would; no
--   backend-local state decides which id comes next.
-- * snowid_decode() and snowid_from_time() are STABLE, not IMMUTABLE: their
--   results depend on snowid.epoch (and the layout), which are fixed while the
--   server runs but may change across restarts.  An index or generated column
--   built on them could then silently disagree with the data.
-- * snowid_serial(prefix) takes a new id: VOLATILE, like snowid_next().
--   snowid_serial(prefix, id) and snowid_from_serial() are STABLE for the
--   same reason as snowid_decode().
-- * snowid_status() reads counters that change all the time: VOLATILE.
-- * snowid_convert_column() changes tables: VOLATILE, PARALLEL UNSAFE (more
--   below).

CREATE FUNCTION snowid_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_next'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_next() IS
'the next id of this server''s snowid generator';

CREATE FUNCTION snowid_next_batch(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowid_next_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
ROWS 10;

COMMENT ON FUNCTION snowid_next_batch(integer) IS
'n ids in ascending order, taken in one pass through the generator';

CREATE FUNCTION snowid_decode(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_decode(bigint) IS
'the time, datacenter id, worker id and sequence of a snowid';

CREATE FUNCTION snowid_from_time(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_time(timestamptz) IS
'the smallest snowid any server could issue at the given time';

-- Serial numbers: prefix, UTC time YYYYMMDDHHMMSSmmm, then datacenter id,
-- worker id and sequence as zero-padded decimals.  A NULL or malformed
-- prefix is an error, so these are not STRICT.
CREATE FUNCTION snowid_serial(prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_serial'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_serial(text) IS
'the serial number of a new id: prefix, UTC time, datacenter, worker, sequence';

CREATE FUNCTION snowid_serial(prefix text, id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_serial_of_id'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_serial(text, bigint) IS
'the serial number of an existing snowid';

CREATE FUNCTION snowid_from_serial(serial text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_serial'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_serial(text) IS
'the snowid a serial number was made from';

CREATE FUNCTION snowid_status(
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT worker_source text,
	OUT last_time timestamptz,
	OUT drift_ms bigint,
	OUT ids_issued bigint,
	OUT waits bigint,
	OUT clock_steps bigint,
	OUT clock_errors bigint,
	OUT high_water_time timestamptz,
	OUT layout text,
	OUT epoch timestamptz,
	OUT ceiling_ids_per_s bigint,
	OUT exhausted_at timestamptz,
	OUT time_left interval,
	OUT js_safe_until timestamptz,
	OUT lease_expires_at timestamptz,
	OUT fence_time timestamptz,
	OUT renewals bigint,
	OUT failed_renewals bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_status_1_2'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_status() IS
'the state of this server''s snowid generator';

CREATE FUNCTION snowid_release_worker()
RETURNS integer
AS 'MODULE_PATHNAME', 'snowid_release_worker'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowid_release_worker() FROM PUBLIC;

COMMENT ON FUNCTION snowid_release_worker() IS
'gives this server''s worker id on lease back to Redis; no ids until a restart';

-- snowid_convert_column(tbl, col): switches an existing key column from a
-- sequence (serial, bigserial, identity, a nextval() default) to
-- DEFAULT snowid_next().  PL/pgSQL, not C: it only reads the catalogs and
-- runs ALTER TABLE, and reads best as the statements it runs.
-- * SECURITY INVOKER: every ALTER and DROP runs as the caller, so
--   PostgreSQL's own ownership checks apply on top of the explicit one.
-- * SET search_path: nothing the caller puts in the path can stand in for a
--   catalog or function; the extension's own functions are called by their
--   schema, looked up in pg_extension (the extension is relocatable).
-- * Every name is quoted by format(%I) or a regclass; the lock is taken
--   before the catalogs are read, so what is checked is what is changed.
-- * SET row_security = off: max(col) must see every row, or fail; a policy
--   that would hide rows from the caller makes it an error instead.
-- * VOLATILE, PARALLEL UNSAFE: it changes tables.
CREATE FUNCTION snowid_convert_column(tbl regclass, col name)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE STRICT
SET search_path = pg_catalog, pg_temp
SET row_security = off
AS $convert$
DECLARE
	ext_schema name;
	snowid_next_fn regprocedure;
	new_default text;
	rel record;
	def record;
	seq record;
	rels oid[];
	tbl_name text;
	col_attnum int2;
	col_type text;
	refs text;
	max_value bigint;
	floor_value bigint;
	identity_kind "char" := '';
	to_convert int := 0;
	seqs oid[] := '{}';
	changes text[] := '{}';
	partitions text[] := '{}';
BEGIN
	SELECT n.nspname INTO ext_schema
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'snowid';
	snowid_next_fn := format('%I.snowid_next()', ext_schema)::regprocedure;
	new_default := format('%I.snowid_next()', ext_schema);

	-- what the caller named: a table or the root of a partitioned table
	SELECT c.relname, c.relkind, c.relispartition, c.relowner
	INTO rel FROM pg_class c WHERE c.oid = tbl;
	tbl_name := rel.relname;
	IF rel.relkind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION USING ERRCODE = 'wrong_object_type',
			MESSAGE = format('"%s" is not a table', tbl_name),
			HINT = 'snowid_convert_column() converts a column of a table or of a partitioned table.';
	END IF;
	IF rel.relispartition THEN
		RAISE EXCEPTION USING ERRCODE = 'wrong_object_type',
			MESSAGE = format('table "%s" is a partition', tbl_name),
			DETAIL = 'A partition takes its key from its partitioned table.',
			HINT = format('Convert the partitioned table instead: SELECT snowid_convert_column(%L, %L);',
						  pg_partition_root(tbl)::text, col);
	END IF;
	IF NOT pg_has_role(current_user, rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
			MESSAGE = format('must be owner of table %s', tbl_name),
			DETAIL = 'snowid_convert_column() changes the column''s default with ALTER TABLE, which only the owner may run.',
			HINT = 'Run it as the table''s owner or as a member of the owning role.';
	END IF;

	-- the lock ALTER TABLE takes, on the table and its partitions
	EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);

	SELECT a.attnum, format_type(a.atttypid, a.atttypmod) AS typ,
		a.attgenerated
	INTO def
	FROM pg_attribute a
	WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0
		AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'undefined_column',
			MESSAGE = format('column "%s" of relation "%s" does not exist',
							 col, tbl_name);
	END IF;
	col_attnum := def.attnum;
	col_type := def.typ;
	IF def.attgenerated <> '' THEN
		RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
			MESSAGE = format('column "%s" of table "%s" is a generated column',
							 col, tbl_name),
			DETAIL = 'Its value is computed from other columns; it has no default to replace.';
	END IF;
	IF col_type <> 'bigint' THEN
		-- the foreign keys that reference the column, by referencing column
		SELECT string_agg(format('%I.%I', fc.relname, fa.attname), ', '
						  ORDER BY fc.relname, fa.attname)
		INTO refs
		FROM pg_constraint k
		CROSS JOIN LATERAL unnest(k.conkey, k.confkey) AS u(fkey, pkey)
		JOIN pg_class fc ON fc.oid = k.conrelid
		JOIN pg_attribute fa ON fa.attrelid = k.conrelid AND fa.attnum = u.fkey
		WHERE k.contype = 'f' AND k.confrelid = tbl AND u.pkey = col_attnum
			AND k.conparentid = 0;
		RAISE EXCEPTION USING ERRCODE = 'datatype_mismatch',
			MESSAGE = format('column "%s" of table "%s" is of type %s, not bigint',
							 col, tbl_name, col_type),
			DETAIL = 'A snowid needs all 64 bits of a bigint.',
			HINT = CASE WHEN col_type IN ('integer', 'smallint') THEN
				format('Make it bigint first with ALTER TABLE %s ALTER COLUMN %I TYPE bigint.', tbl, col)
				|| CASE WHEN refs IS NULL
					THEN ' Foreign key columns that reference it must become bigint too.'
					ELSE format(' The foreign key columns that reference it must become bigint too: %s.', refs)
				END
				ELSE 'Only a bigint column can hold snowids.' END;
	END IF;

	-- the table and its partitions, the table first
	rels := ARRAY[tbl::oid] || ARRAY(
		SELECT t.relid FROM pg_partition_tree(tbl) t
		WHERE t.relid <> tbl ORDER BY t.level, t.relid::regclass::text);

	-- what each of them has now: an identity, a default of a sequence, ours
	FOR rel IN
		SELECT c.oid, c.relname, c.relowner, a.attnum, a.attidentity,
			d.oid AS attrdef, pg_get_expr(d.adbin, d.adrelid) AS expr
		FROM unnest(rels) WITH ORDINALITY r(relid, n)
		JOIN pg_class c ON c.oid = r.relid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = col
		LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		ORDER BY r.n
	LOOP
		IF NOT pg_has_role(current_user, rel.relowner, 'USAGE') THEN
			RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
				MESSAGE = format('must be owner of table %s', rel.relname),
				DETAIL = format('Table "%s" is a partition of "%s".', rel.relname, tbl_name),
				HINT = 'Run it as the owner of the table and its partitions or as a member of the owning role.';
		END IF;
		IF rel.oid <> tbl THEN
			partitions := partitions || quote_ident(rel.relname);
		END IF;

		IF rel.attidentity <> '' THEN
			identity_kind := rel.attidentity;
			to_convert := to_convert + 1;
			-- DROP IDENTITY drops the identity's sequence: it must be unused
			FOR seq IN
				SELECT s.oid, s.relname FROM pg_depend o
				JOIN pg_class s ON s.oid = o.objid
				WHERE o.classid = 'pg_class'::regclass AND o.deptype = 'i'
					AND o.refobjid = rel.oid AND o.refobjsubid = rel.attnum
					AND EXISTS (SELECT FROM pg_depend u
								WHERE u.refclassid = 'pg_class'::regclass
									AND u.refobjid = s.oid)
			LOOP
				RAISE EXCEPTION USING ERRCODE = 'dependent_objects_still_exist',
					MESSAGE = format('the sequence of identity column "%s" of table "%s" is used by other objects',
									 col, rel.relname),
					DETAIL = format('Dropping the identity drops sequence "%s", which other objects use.', seq.relname),
					HINT = 'Make those objects stop using the sequence first.';
			END LOOP;
		ELSIF rel.attrdef IS NOT NULL THEN
			IF EXISTS (SELECT FROM pg_depend u
					   WHERE u.classid = 'pg_attrdef'::regclass
						   AND u.objid = rel.attrdef
						   AND u.refclassid = 'pg_proc'::regclass
						   AND u.refobjid = snowid_next_fn)
				AND rel.expr ~ 'snowid_next\(\)$' THEN
				CONTINUE;		-- converted already
			END IF;
			IF rel.expr !~ '^nextval\(' OR NOT EXISTS (
				SELECT FROM pg_depend u JOIN pg_class s ON s.oid = u.refobjid
				WHERE u.classid = 'pg_attrdef'::regclass
					AND u.objid = rel.attrdef
					AND u.refclassid = 'pg_class'::regclass
					AND s.relkind = 'S') THEN
				RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
					MESSAGE = format('column "%s" of table "%s" has a default that is not a sequence',
									 col, rel.relname),
					DETAIL = format('Its default is %s.', rel.expr),
					HINT = 'snowid_convert_column() replaces an identity or a nextval() default. To replace another default, use ALTER TABLE ... ALTER COLUMN ... SET DEFAULT snowid_next().';
			END IF;
			seqs := seqs || ARRAY(
				SELECT u.refobjid FROM pg_depend u
				JOIN pg_class s ON s.oid = u.refobjid
				WHERE u.classid = 'pg_attrdef'::regclass
					AND u.objid = rel.attrdef
					AND u.refclassid = 'pg_class'::regclass
					AND s.relkind = 'S'
					AND u.refobjid <> ALL (seqs));
			IF rel.oid = tbl THEN
				changes := changes || format('Dropped default %s.', rel.expr);
			END IF;
			to_convert := to_convert + 1;
		ELSE
			to_convert := to_convert + 1;		-- no default yet
		END IF;
	END LOOP;

	IF to_convert = 0 THEN
		RAISE NOTICE USING
			MESSAGE = format('column "%s" of table "%s" already defaults to snowid_next()',
							 col, tbl_name),
			DETAIL = 'Nothing was changed.';
		RETURN;
	END IF;

	-- new ids must lie above every existing value, or they could collide
	EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO max_value;
	EXECUTE format('SELECT %I.snowid_from_time(now())', ext_schema)
		INTO floor_value;
	IF max_value >= floor_value THEN
		RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = format('column "%s" of table "%s" holds values that new snowids could collide with',
							 col, tbl_name),
			DETAIL = format('Its largest value is %s; snowid_from_time(now()) is %s, and existing values must all lie below it.',
							max_value, floor_value),
			HINT = 'Check snowid.epoch and the bit layout: new ids start at snowid_from_time(now()). Values that are snowids already need no conversion: set the default with ALTER TABLE ... SET DEFAULT snowid_next().';
	END IF;

	-- the identity (on 17 and later also the partitions'), then the default
	-- on the table and every partition
	IF identity_kind <> '' THEN
		FOR rel IN
			SELECT c.oid FROM unnest(rels) WITH ORDINALITY r(relid, n)
			JOIN pg_class c ON c.oid = r.relid ORDER BY r.n
		LOOP
			IF EXISTS (SELECT FROM pg_attribute a
					   WHERE a.attrelid = rel.oid AND a.attname = col
						   AND a.attidentity <> '') THEN
				EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY',
							   rel.oid::regclass, col);
			END IF;
		END LOOP;
		changes := changes || format('Dropped identity GENERATED %s AS IDENTITY and its sequence.',
			CASE identity_kind WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END);
	END IF;
	FOR rel IN
		SELECT c.oid FROM unnest(rels) WITH ORDINALITY r(relid, n)
		JOIN pg_class c ON c.oid = r.relid ORDER BY r.n
	LOOP
		EXECUTE format('ALTER TABLE ONLY %s ALTER COLUMN %I SET DEFAULT %s',
					   rel.oid::regclass, col, new_default);
	END LOOP;

	-- a sequence goes with the default only if the column owned it and
	-- nothing else uses it any more
	FOR seq IN
		SELECT s.oid, s.relname,
			EXISTS (SELECT FROM pg_depend o
					JOIN pg_attribute a ON a.attrelid = o.refobjid
						AND a.attnum = o.refobjsubid
					WHERE o.classid = 'pg_class'::regclass AND o.objid = s.oid
						AND o.deptype = 'a' AND a.attname = col
						AND o.refobjid = ANY (rels)) AS owned,
			EXISTS (SELECT FROM pg_depend u
					WHERE u.refclassid = 'pg_class'::regclass
						AND u.refobjid = s.oid) AS used
		FROM unnest(seqs) q(oid) JOIN pg_class s ON s.oid = q.oid
		ORDER BY s.relname
	LOOP
		IF seq.owned AND NOT seq.used THEN
			EXECUTE format('DROP SEQUENCE %s', seq.oid::regclass);
			changes := changes || format('Dropped sequence %I.', seq.relname);
		ELSIF seq.owned THEN
			changes := changes || format('Kept sequence %I: other objects use it.', seq.relname);
		ELSE
			changes := changes || format('Kept sequence %I: the column does not own it.', seq.relname);
		END IF;
	END LOOP;
	IF cardinality(partitions) > 0 THEN
		changes := changes || format('Converted its partitions too: %s.',
									 array_to_string(partitions, ', '));
	END IF;

	RAISE NOTICE USING
		MESSAGE = format('column "%s" of table "%s" now defaults to snowid_next()',
						 col, tbl_name),
		DETAIL = coalesce(nullif(array_to_string(changes, ' '), ''),
						  'It had no default before.');
END
$convert$;

COMMENT ON FUNCTION snowid_convert_column(regclass, name) IS
'switches a serial, bigserial, identity or nextval() key column to DEFAULT snowid_next()';

-- Public ids (doc/public-ids.md).  STABLE, not IMMUTABLE: the result depends
-- on the keys of snowid.public_key_file, which a reload can change.  Within
-- a statement the keys stay the same, so WHERE id = snowid_from_public($1)
-- is computed once and looks the row up by the primary key.
CREATE FUNCTION snowid_public(id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_public(bigint) IS
'the public id of an id: a keyed permutation of it, in base32 with a check character';

CREATE FUNCTION snowid_from_public(public_id text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_public(text) IS
'the id of a public id made by snowid_public() with any key of the key file';

CREATE FUNCTION snowid_public_is_valid(public_id text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'snowid_public_is_valid'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_public_is_valid(text) IS
'whether snowid_from_public() takes a text, without an error for one it does not';

CREATE FUNCTION snowid_scramble(id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_scramble'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_scramble(bigint) IS
'the public number of an id: the permutation of snowid_public() with the first key, as a number';

CREATE FUNCTION snowid_unscramble(number bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_unscramble'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_unscramble(bigint) IS
'the id of a public number made by snowid_scramble()';

-- time ranges (1.3)
-- snowid_span() and snowid_time() depend on the layout and snowid.epoch,
-- fixed while the server runs: STABLE, like snowid_from_time().

CREATE FUNCTION snowid_span(span interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_span'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_span(interval) IS
'how many ids wide a span of time is: snowid_from_time(t + d) - snowid_from_time(t)';

CREATE FUNCTION snowid_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowid_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_time(bigint) IS
'the time a snowid was made: the ts of snowid_decode()';

-- end of time ranges (1.3)
