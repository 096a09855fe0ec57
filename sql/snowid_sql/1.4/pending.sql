-- -------------------------------------------------------------------------
-- What one trigger of snowid_config leaves for a later one
-- -------------------------------------------------------------------------
-- The floor a stamp over another server's asks for (copy_drift_ms, which
-- snowid_sql_config_floor() reads after snowid_sql_fixed() is made) and
-- that the worker id was set in this transaction (worker_set, which
-- snowid_sql_refix() reads): one row per transaction (xact, its top-level
-- id), which a rolled-back subtransaction takes back with it, and which no
-- role but the owner of the table may write.  Before 1.4's fixes they were
-- settings local to the transaction, which any session may set: an
-- UPDATE's RETURNING set_config('snowid_sql.copy_drift_ms', '', true), run
-- between the triggers, left the floor nothing to raise (test
-- copy_drift_returning), and the owner's SET snowid_sql.worker_set = on,
-- then any change of the row, adopted another server's generation (test
-- worker_set_forged).  Rows of ended transactions are deleted by the next
-- that writes one.
CREATE TABLE snowid_sql_private.snowid_config_pending (
	xact pg_catalog.xid8 PRIMARY KEY,
	copy_drift_ms integer CHECK (copy_drift_ms BETWEEN 0 AND 3600000),
	worker_set boolean NOT NULL DEFAULT false
);
-- -------------------------------------------------------------------------
-- What says a restore came
-- -------------------------------------------------------------------------
-- A number of this database's (snowid_sql_nonce(), chosen at random by
-- snowid_sql_refix() once), which goes into pg_dump's output, whole or
-- data-only: a restore sets it to its source's by setval(), which no
-- trigger, --disable-triggers nor session_replication_role skips.  Where
-- it is not this database's, the first call raises the generator past
-- every id the tables hold (snowid_sql_raise_restored()), as the restore
-- of the row of snowid_config does, and sets it back.  Before 1.4's
-- fixes only the row's restore said so, and a superuser's restore that
-- skipped the row (data-only with --disable-triggers, or with
-- session_replication_role = replica) left the generator below the
-- restored ids (test restore_row_skipped_superuser).  The installing role
-- sets it in a restore; another value only makes the first call raise.
CREATE SEQUENCE snowid_sql_private.snowid_sql_dumped AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
SELECT pg_catalog.pg_extension_config_dump('snowid_sql_private.snowid_sql_dumped', '');
