-- -------------------------------------------------------------------------
-- What an update drops that another role may use
-- -------------------------------------------------------------------------
-- The updates to 1.4 drop types (1.3's snowid_sql_fixed, made anew) and
-- relations (1.2's claim's tables and their views), each a type that
-- PUBLIC may use: USAGE on the schema, and on every type by PostgreSQL's
-- default.  A role granted nothing of the edition, with CREATE on a schema
-- of its own, may make a column of such a type, and the DROP then failed
-- with PostgreSQL's 2BP01: the database stayed on the old version for as
-- long as that role liked (test update_type_used_elsewhere).  So each is
-- dropped where nothing outside the edition uses it, as a fresh install
-- never has it; otherwise it is left in place, out of the way and out of
-- the extension: renamed with the suffix _retired, no longer a member of
-- the extension, with no privilege of any role but its owner's, a
-- relation emptied (the coordination database's password, the holder's
-- secret) and stripped of its triggers, defaults and checks (which call
-- the functions the update drops), a view made a constant empty one (no
-- longer reading the table); a warning says what is left and why.  Made
-- and dropped by the update (1.3--1.4/changed.sql, 1.2--1.4/drop.sql).
CREATE FUNCTION snowid_sql_private.snowid_sql_retire(kind text, target text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rel regclass;
	obj oid;
	catalog regclass;
	nsp oid;
	old_name name;
	r record;
	users text;
BEGIN
	IF kind = 'TYPE' THEN
		obj := target::regtype;
		catalog := 'pg_type'::regclass;
		SELECT t.typname, t.typnamespace INTO old_name, nsp FROM pg_type t WHERE t.oid = obj;
	ELSE
		rel := target::regclass;
		obj := rel;
		catalog := 'pg_class'::regclass;
		SELECT c.relname, c.relnamespace INTO old_name, nsp FROM pg_class c WHERE c.oid = obj;
	END IF;
	BEGIN
		EXECUTE format('DROP %s %s', kind, target);
		RETURN;
	EXCEPTION WHEN dependent_objects_still_exist THEN
		-- what uses it, for the warning
		SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), ', ') INTO users
		FROM pg_depend d
		WHERE d.refobjid IN (SELECT obj UNION SELECT t.oid FROM pg_type t
							 WHERE t.typrelid = rel OR t.typelem IN (obj, (SELECT x.oid FROM pg_type x WHERE x.typrelid = rel)))
		  AND d.deptype = 'n'
		  AND NOT (d.classid = 'pg_constraint'::regclass
				   AND d.objid IN (SELECT c.oid FROM pg_constraint c WHERE c.conrelid = rel));
	END;
	IF rel IS NOT NULL THEN
		FOR r IN SELECT t.tgname FROM pg_trigger t WHERE t.tgrelid = rel AND NOT t.tgisinternal LOOP
			EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, rel);
		END LOOP;
		IF kind = 'VIEW' THEN
			EXECUTE format('CREATE OR REPLACE VIEW %s AS SELECT %s WHERE false', rel,
				(SELECT string_agg(format('NULL::%s AS %I', format_type(a.atttypid, a.atttypmod), a.attname), ', ' ORDER BY a.attnum)
				 FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped));
		ELSE
			FOR r IN SELECT c.conname FROM pg_constraint c WHERE c.conrelid = rel AND c.contype = 'c' LOOP
				EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', rel, r.conname);
			END LOOP;
			FOR r IN SELECT a.attname FROM pg_attribute a WHERE a.attrelid = rel AND a.atthasdef LOOP
				EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', rel, r.attname);
			END LOOP;
			EXECUTE format('DELETE FROM ONLY %s', rel);
		END IF;
		FOR r IN SELECT DISTINCT x.grantee FROM pg_class c, aclexplode(c.relacl) x
				 WHERE c.oid = rel AND x.grantee <> c.relowner LOOP
			EXECUTE format('REVOKE ALL ON %s FROM %s', rel,
						   CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.grantee::regrole::text) END);
		END LOOP;
	ELSE
		EXECUTE format('REVOKE ALL ON TYPE %s FROM PUBLIC', target);
	END IF;
	FOR r IN SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
			 WHERE d.classid = catalog AND d.objid = obj AND d.deptype = 'e' LOOP
		EXECUTE format('ALTER EXTENSION %I DROP %s %s', r.extname, kind, target);
	END LOOP;
	EXECUTE format('ALTER %s %s RENAME TO %I', kind, target, old_name || '_retired');
	-- a warning: CREATE and ALTER EXTENSION send the client no notice
	RAISE WARNING 'snowid_sql leaves %.% in place, as %', nsp::regnamespace, old_name, old_name || '_retired'
		USING DETAIL = format('Objects outside snowid_sql use its type (%s), so the update does not drop it; it is no longer part of the extension, no role but its owner has a privilege on it, and it holds no row.', users),
			  HINT = format('Once nothing uses it, drop it: DROP %s %s.%I.', kind, nsp::regnamespace, old_name || '_retired');
END
$$;
