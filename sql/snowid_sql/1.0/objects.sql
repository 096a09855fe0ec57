/* snowid_sql--1.0.sql: the SQL edition of snowid (doc/managed.md) */

\echo Use "CREATE EXTENSION snowid_sql" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- The same ids, decodes, serials, time bounds and public ids as the C
-- edition (doc/reference.md), in SQL and PL/pgSQL only, for servers that
-- load no C extension.  The generator's state is one sequence,
-- snowid_position, whose value is the position of the last id issued:
-- (milliseconds since the epoch << sequence_bits) | sequence.  A sequence
-- is shared by every session, never rolls back and is WAL-logged, so a
-- crash or a promoted standby skips positions but repeats none that a
-- flushed transaction used.
--
-- Every session takes positions with nextval(), holding no lock.  When the
-- clock has moved past the sequence, one call at a time moves it forward
-- with setval() under an advisory lock taken exclusively (the writers'
-- lock, which only calls that move it take), and within a window marked by
-- a second sequence, snowid_generation: odd from before the writer reads
-- the position until after it sets it.  A call reads the generation before
-- and after its nextval() and uses the position only if it read the same
-- even value twice: a nextval() that a writer's reading and setting may
-- enclose (a setval() that could move the sequence back below it) is
-- never used.  So the sequence never goes back below a position in use,
-- whatever the clock does.  The writers' lock is held for a few statements
-- and let go before the function returns (never to the end of the
-- transaction).
--
-- Objects beside the functions: snowid_config (one row: worker id, layout,
-- epoch, drift and wait bounds), snowid_public_keys (keys of public ids,
-- readable only by the extension's owner), snowid_position and the
-- counters of snowid_status(); for a worker id claimed from a coordination
-- database, snowid_coordination and snowid_holder (the owner's alone) and
-- snowid_claimed.  The functions that use them are SECURITY
-- DEFINER with a fixed search_path and name every object with its schema.

CREATE TABLE @extschema@.snowid_config (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	datacenter_id integer NOT NULL DEFAULT 0,
	worker_id integer,
	epoch timestamptz NOT NULL DEFAULT '2010-11-04 01:42:54.657+00',
	datacenter_bits integer NOT NULL DEFAULT 5,
	worker_bits integer NOT NULL DEFAULT 5,
	sequence_bits integer NOT NULL DEFAULT 12,
	max_drift_ms integer NOT NULL DEFAULT 1000,
	max_wait_ms integer NOT NULL DEFAULT 2000,
	claim_worker_id boolean NOT NULL DEFAULT false,
	-- what snowid_sql_config_fault() checks, held by the table itself: the
	-- trigger below refuses a bad row first, naming what is wrong, and this
	-- refuses one that a path past the trigger writes (a replica's apply,
	-- session_replication_role), so the generator need not check the row
	CONSTRAINT snowid_config_valid CHECK (
		datacenter_bits BETWEEN 0 AND 24 AND worker_bits BETWEEN 0 AND 24
		AND sequence_bits BETWEEN 0 AND 24
		AND datacenter_bits + worker_bits + sequence_bits <= 24
		AND datacenter_id BETWEEN 0 AND (1 << datacenter_bits) - 1
		AND worker_id BETWEEN 0 AND (1 << worker_bits) - 1
		AND epoch >= pg_catalog.to_timestamp(0) AND epoch < pg_catalog.to_timestamp(253402300800)
		AND pg_catalog.date_trunc('milliseconds', epoch AT TIME ZONE 'UTC') = epoch AT TIME ZONE 'UTC'
		AND max_drift_ms BETWEEN 0 AND 3600000 AND max_wait_ms BETWEEN 0 AND 3600000)
);

COMMENT ON TABLE @extschema@.snowid_config IS
'the settings of the snowid SQL edition: one row, as snowid.* of the C edition; worker_id NULL until set, or claimed from the coordination database of snowid_coordination if claim_worker_id';

INSERT INTO @extschema@.snowid_config DEFAULT VALUES;

CREATE SEQUENCE @extschema@.snowid_position
	AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
-- The writers' generation (snowid_sql_move()): odd while a call moves the
-- position, even otherwise; not dumped (a restored database starts it over)
CREATE SEQUENCE @extschema@.snowid_generation AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
CREATE SEQUENCE @extschema@.snowid_waits AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE @extschema@.snowid_clock_steps AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE @extschema@.snowid_clock_errors AS bigint MINVALUE 0 START WITH 0;

CREATE TABLE @extschema@.snowid_public_keys (
	key_id text PRIMARY KEY,
	key bytea NOT NULL,
	rank integer NOT NULL UNIQUE
);

COMMENT ON TABLE @extschema@.snowid_public_keys IS
'the keys of public ids: the key of the smallest rank makes new ones, every key reads them';

-- the configuration and the position go into pg_dump's output
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_config', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_public_keys', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowid_position', '');

REVOKE ALL ON @extschema@.snowid_config, @extschema@.snowid_public_keys,
	@extschema@.snowid_position, @extschema@.snowid_generation, @extschema@.snowid_waits,
	@extschema@.snowid_clock_steps, @extschema@.snowid_clock_errors FROM PUBLIC;
GRANT SELECT ON @extschema@.snowid_config TO PUBLIC;
GRANT SELECT, UPDATE ON @extschema@.snowid_config TO @extowner@;
GRANT SELECT, INSERT, UPDATE, DELETE ON @extschema@.snowid_public_keys TO @extowner@;

