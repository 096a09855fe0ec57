-- -------------------------------------------------------------------------
-- Dumps of 1.0 and 1.1
-- -------------------------------------------------------------------------
-- A dump of 1.0 or 1.1 names no version: restored where CREATE EXTENSION
-- makes this one, it copies the row of snowid_config and the keys into
-- the tables of their time, which are views here, and sets snowid_position
-- in the extension's schema.  So the views take the dump's rows (a COPY
-- into a view runs its INSTEAD OF INSERT trigger) into their tables, and a
-- sequence of the old name takes its setval(), whose position nothing
-- reads (a dump's position lies below what its source issued after it;
-- the raise of snowid_sql_config_floor() covers them).  Before 1.2's fix
-- each failed: the restored database had neither configuration nor keys,
-- and nothing raised its generator.
--
-- Such a row has no stamp (worker_server, since 1.2): it is given one that
-- names no server, so that it restores as a dump of 1.2 does: its layout,
-- epoch and bounds kept, not its worker id (snowid_sql_config_restore()),
-- the first call saying so, and the worker id set later raising the
-- generator past the clock plus max_drift_ms (snowid_sql_config_stamp()),
-- above every id its source may have issued.  Run as the installing role,
-- which may insert into both tables (the restore's own grants).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_insert()
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

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert()
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
