-- -------------------------------------------------------------------------
-- The triggers
-- -------------------------------------------------------------------------
-- On snowid_config they fire in the order of their names: before a write,
-- the check, then (an INSERT) the restore, the stamp and the note that
-- the worker id was set; after it, the function that makes
-- snowid_sql_fixed() anew, then the floor, which needs it made.

CREATE TRIGGER snowid_config_check BEFORE INSERT OR UPDATE
	ON snowid_sql_private.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_check();

CREATE TRIGGER snowid_config_restore BEFORE INSERT
	ON snowid_sql_private.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_restore();

CREATE TRIGGER snowid_config_stamp BEFORE INSERT OR UPDATE OF worker_id, worker_server
	ON snowid_sql_private.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_stamp();

CREATE TRIGGER snowid_config_worker_set BEFORE INSERT OR UPDATE OF worker_id
	ON snowid_sql_private.snowid_config
	FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL)
	EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_worker_set();

-- also under session_replication_role = replica and in a replica's apply
-- (see snowid_sql_fixed()), and for a TRUNCATE
CREATE TRIGGER snowid_config_fix AFTER INSERT OR UPDATE OR DELETE
	ON snowid_sql_private.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_fix();
CREATE TRIGGER snowid_config_fix_truncate AFTER TRUNCATE
	ON snowid_sql_private.snowid_config
	FOR EACH STATEMENT EXECUTE FUNCTION snowid_sql_private.snowid_sql_fix();
ALTER TABLE snowid_sql_private.snowid_config ENABLE ALWAYS TRIGGER snowid_config_fix,
	ENABLE ALWAYS TRIGGER snowid_config_fix_truncate;

CREATE TRIGGER snowid_config_floor AFTER INSERT OR UPDATE
	ON snowid_sql_private.snowid_config
	FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL)
	EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_floor();

-- only as a replica (see snowid_sql_config_replica())
CREATE TRIGGER snowid_config_replica BEFORE INSERT OR UPDATE OR DELETE
	ON snowid_sql_private.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_replica();
ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica;
CREATE TRIGGER snowid_locks_replica BEFORE INSERT OR UPDATE OR DELETE
	ON snowid_sql_private.snowid_locks
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_replica();
ALTER TABLE snowid_sql_private.snowid_locks ENABLE REPLICA TRIGGER snowid_locks_replica;

CREATE TRIGGER snowid_public_keys_check BEFORE INSERT OR UPDATE
	ON snowid_sql_private.snowid_public_keys
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_key_check();

-- a dump of 1.0 or 1.1 (dumps.sql)
CREATE TRIGGER snowid_config_insert INSTEAD OF INSERT
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_config_insert();
CREATE TRIGGER snowid_public_keys_insert INSTEAD OF INSERT
	ON @extschema@.snowid_public_keys
	FOR EACH ROW EXECUTE FUNCTION snowid_sql_private.snowid_sql_public_keys_insert();
