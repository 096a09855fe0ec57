-- -------------------------------------------------------------------------
-- Dumps of 1.0 and 1.1
-- -------------------------------------------------------------------------
-- A dump of 1.0 or 1.1 names no version: restored where CREATE EXTENSION
-- makes 1.2, it copies the row of snowid_config and the keys into the
-- tables of their time, which are views here, and sets snowid_position,
-- which lies in snowid_sql_private.  Each failed (the attack on 1.2): the
-- restored database had neither configuration nor keys, and nothing
-- raised its generator.  So the views take the dump's rows (a COPY into a
-- view runs its INSTEAD OF INSERT trigger) into their tables, and a
-- sequence of the old name takes its setval(), whose position nothing
-- reads (a dump's position lies below what its source issued after it;
-- the raise below covers them).
--
-- Such a row has no stamp (worker_server, since 1.2): it is given one that
-- names no server, so that it restores as a dump of 1.2 does: its layout,
-- epoch and bounds kept, not its worker id (snowid_sql_config_restore()),
-- the first call saying so, and the worker id set later raising the
-- generator past the clock plus max_drift_ms (snowid_sql_config_stamp()),
-- above every id its source may have issued.  Run as the installing role,
-- which may insert into both tables (the restore's own grants).
CREATE FUNCTION snowid_sql_private.snowid_sql_config_insert()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	INSERT INTO snowid_sql_private.snowid_config (singleton, datacenter_id, worker_id, epoch,
		datacenter_bits, worker_bits, sequence_bits, max_drift_ms, max_wait_ms, claim_worker_id,
		worker_server)
	VALUES (NEW.singleton, NEW.datacenter_id, NEW.worker_id, NEW.epoch, NEW.datacenter_bits,
			NEW.worker_bits, NEW.sequence_bits, NEW.max_drift_ms, NEW.max_wait_ms, NEW.claim_worker_id,
			coalesce(NEW.worker_server, 'a dump of snowid_sql 1.0 or 1.1'));
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_insert INSTEAD OF INSERT
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_insert();

-- An INSERT into a view with such a trigger takes the view's defaults, not
-- the table's: the view's are the table's
DO $$
DECLARE
	d record;
BEGIN
	FOR d IN
		SELECT a.attname, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) AS expr
		FROM pg_catalog.pg_attrdef ad
		JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid
			AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
		WHERE ad.adrelid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass
	LOOP
		EXECUTE pg_catalog.format('ALTER VIEW @extschema@.snowid_config ALTER COLUMN %I SET DEFAULT %s',
								  d.attname, d.expr);
	END LOOP;
END
$$;

CREATE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	INSERT INTO snowid_sql_private.snowid_public_keys (key_id, key, rank)
	VALUES (NEW.key_id, NEW.key, NEW.rank);
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_public_keys_insert INSTEAD OF INSERT
	ON @extschema@.snowid_public_keys
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert();

-- Made after every body that named @extschema@.snowid_position was moved
-- to snowid_sql_private's (above): a body that names it here names this.
CREATE SEQUENCE @extschema@.snowid_position AS bigint MINVALUE 0 START WITH 0 NO CYCLE;

COMMENT ON SEQUENCE @extschema@.snowid_position IS
'not the generator''s position (snowid_sql_private.snowid_position): takes the setval() of a dump of 1.0 or 1.1, which nothing reads';

REVOKE ALL ON @extschema@.snowid_position FROM PUBLIC;
DO $$
DECLARE
	installer name := coalesce(
		(SELECT e.extowner::pg_catalog.regrole::name FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid OPERATOR(pg_catalog.=) 'snowid_sql_private.snowid_config'::pg_catalog.regclass AND d.deptype = 'e'),
		CURRENT_USER);
BEGIN
	EXECUTE pg_catalog.format('GRANT INSERT ON @extschema@.snowid_config TO %I', installer);
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON @extschema@.snowid_position TO %I', installer);
END
$$;

-- snowid_sql_fixed() made anew, with this server, from the row: a worker
-- id set before this update holds here (stamped: an installation cannot
-- tell whether it is a copy; the page says to set it again in one)
UPDATE snowid_sql_private.snowid_config SET worker_server = snowid_sql_private.snowid_sql_here()
WHERE worker_id IS NOT NULL;
SELECT snowid_sql_private.snowid_sql_refix();

