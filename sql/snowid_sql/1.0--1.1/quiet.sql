-- A coordination database may forget claims: restored from an older
-- backup, failed over to a standby that missed the last commits, emptied
-- (doc/internals.md, "A coordinator that forgets").  It then grants no
-- worker id for a quiet period long enough for every holder to re-assert
-- its own.  The SQL edition's holder has no background check-in: its
-- re-assertion is the owner's scheduled snowid_claim(), whose interval
-- (checkin_interval_ms of snowid_coordination) its claims declare, as the
-- C edition's servers declare snowid.checkin_interval.  Its claim says
-- how long a quiet period must last for it and how far apart the clocks
-- may lie (clock_margin_ms, as snowid.clock_margin), re-asserts the worker id it
-- holds, and sends the generation and counter of the datacenter's state
-- record it saw last, which it keeps in snowid_coordinator_state: a
-- coordination database gone back to an older state of itself is noticed.
-- A claim refused in a quiet period fails with 55006 saying until when; a
-- re-assertion refused (the id given to another server meanwhile) drops
-- the worker id, which is used no more.  snowid_status() gains the C
-- edition's six columns on the coordinator's forgetting.

-- How often the owner's snowid_claim() runs: the schedule it is given
-- (doc/managed.md), which a quiet period must outlast
ALTER TABLE @extschema@.snowid_coordination
	ADD COLUMN checkin_interval_ms integer NOT NULL DEFAULT 5000;

COMMENT ON COLUMN @extschema@.snowid_coordination.checkin_interval_ms IS
'how often snowid_claim() runs (its schedule), in ms: a coordination database that forgot its claims grants no worker id until then, plus timeout_ms, max_drift_ms and 1 s';

-- How far apart the clocks of the servers sharing the coordination
-- database may lie, as snowid.clock_margin of the C edition: a worker id
-- held back by a quiet period is granted only that far past its end
ALTER TABLE @extschema@.snowid_coordination
	ADD COLUMN clock_margin_ms integer NOT NULL DEFAULT 60000;

COMMENT ON COLUMN @extschema@.snowid_coordination.clock_margin_ms IS
'how far apart the clocks of the servers sharing the coordination database may lie, in ms (snowid.clock_margin of the C edition): after a quiet period, a worker id is granted only that far past its end';

-- The datacenter's state record as the coordination database answered it
-- last: only the owner reads it.  Not dumped: a database restored from a
-- dump is another holder, which has seen nothing.
CREATE TABLE @extschema@.snowid_coordinator_state (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	datacenter_id integer NOT NULL,
	generation bigint NOT NULL CHECK (generation BETWEEN 1 AND 9007199254740991),
	counter bigint NOT NULL CHECK (counter BETWEEN 0 AND 9007199254740991),
	answered_at timestamptz NOT NULL,
	forgot_at timestamptz,
	reassertions bigint NOT NULL DEFAULT 0 CHECK (reassertions >= 0)
);

COMMENT ON TABLE @extschema@.snowid_coordinator_state IS
'the state record of the datacenter that the coordination database answered last (the forgetting rule); only the owner reads it';

-- The problem with a coordination row, as a sentence, or NULL
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_coordination_problem(r @extschema@.snowid_coordination)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	words text[] := @extschema@.snowid_sql_conninfo_keywords(r.conninfo);
BEGIN
	IF r.conninfo ~* '^\s*postgres(ql)?://' THEN
		RETURN 'conninfo is a URI; write it as libpq''s keywords and values, as host=db1.example.com port=5432 dbname=snowid_coord user=snowid_fleet sslmode=verify-full, and the password in the column password.';
	ELSIF words IS NULL THEN
		RETURN 'conninfo is not a list of libpq''s keywords and values, as host=db1.example.com dbname=snowid_coord user=snowid_fleet; a value with a space or a quote is quoted, as password=''a b\''c''.';
	ELSIF 'password' = ANY (words) THEN
		RETURN 'conninfo names a password; give it in the column password, which libpq never quotes in a message.';
	ELSIF 'options' = ANY (words) THEN
		RETURN 'conninfo names options, which snowid_sql sets itself (its holder secret and the time limits of the claim).';
	ELSIF r.password ~ '[\x01-\x1f]' THEN
		RETURN 'password holds a control character.';
	ELSIF r.timeout_ms NOT BETWEEN 100 AND 60000 THEN
		RETURN format('timeout_ms is %s; it runs from 100 to 60000.', r.timeout_ms);
	ELSIF r.checkin_interval_ms NOT BETWEEN 1000 AND 3600000 THEN
		RETURN format('checkin_interval_ms is %s; it runs from 1000 to 3600000.', r.checkin_interval_ms);
	ELSIF r.clock_margin_ms NOT BETWEEN 0 AND 3600000 THEN
		RETURN format('clock_margin_ms is %s; it runs from 0 to 3600000.', r.clock_margin_ms);
	END IF;
	RETURN NULL;
END
$$;

