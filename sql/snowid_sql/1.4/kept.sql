-- -------------------------------------------------------------------------
-- What 1.2's calls in flight through the update read
-- -------------------------------------------------------------------------
-- A call of 1.2 that claimed its worker id reads, in its first statement,
-- the claim (snowid_claimed) and the run it was noted under
-- (snowid_sql_claimed_run), then waits for the update's locks on the
-- tables: dropped by the update, the call failed once it committed
-- ("could not open relation with OID", XX000), or, holding them, deadlocked
-- with the update's DROP (test update_in_flight_batch_claim).  They stay,
-- read by nothing of 1.4, in every install (one catalog whatever the path:
-- the update from 1.2 keeps 1.2's); PUBLIC reads snowid_claimed, as in
-- 1.2, for snowid_sql_claimed() (generator.sql), and no role the other
-- (privileges.sql).
CREATE SEQUENCE IF NOT EXISTS snowid_sql_private.snowid_claimed
	AS bigint MINVALUE 0 MAXVALUE 9007199254740991 START WITH 0 NO CYCLE;
CREATE SEQUENCE IF NOT EXISTS snowid_sql_private.snowid_sql_claimed_run
	AS bigint MINVALUE -9223372036854775808 START WITH 0 NO CYCLE;
