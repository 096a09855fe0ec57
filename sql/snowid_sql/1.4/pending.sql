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
-- that writes one.  UNLOGGED: a note lives no longer than its
-- transaction, which a crash ends, and no publication carries it (a
-- logical subscription's FOR ALL TABLES, pg_createsubscriber's, leave
-- unlogged tables out): before 1.4's fixes a publisher's notes reached
-- the subscriber, whose own notes then clashed with their keys, and one
-- waiting for a transaction id of the subscriber's adopted another
-- server's sequences there (tests subscriber_pending_rows,
-- createsubscriber_pending_clash, subscriber_pending_adopts).
CREATE UNLOGGED TABLE snowid_sql_private.snowid_config_pending (
	xact pg_catalog.xid8 PRIMARY KEY,
	copy_drift_ms integer CHECK (copy_drift_ms BETWEEN 0 AND 3600000),
	worker_set boolean NOT NULL DEFAULT false
);
