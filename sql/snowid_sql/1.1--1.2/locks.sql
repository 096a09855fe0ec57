-- -------------------------------------------------------------------------
-- The locks
-- -------------------------------------------------------------------------
-- One row per lock: 'generator', held by a writer (snowid_sql_move()) for
-- a few statements, in a subtransaction that it rolls back to let the
-- lock go (the sequences keep what it set); 'claim', held by a claim to
-- the end of its transaction.  Only the owner may lock a row (UPDATE), and
-- the installing role, whose claim functions take the second.
CREATE TABLE @extschema@.snowid_locks (
	name text PRIMARY KEY CHECK (name IN ('generator', 'claim'))
);

COMMENT ON TABLE @extschema@.snowid_locks IS
'the locks of the snowid generator and of its claim: row locks no other role can take';

INSERT INTO @extschema@.snowid_locks VALUES ('generator'), ('claim');
REVOKE ALL ON @extschema@.snowid_locks FROM PUBLIC;

