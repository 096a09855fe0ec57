-- -------------------------------------------------------------------------
-- The tables, the sequences and the type
-- -------------------------------------------------------------------------

-- The configuration: one row, as snowid.* of the C edition.  worker_server
-- is the server and sequences the worker id was set with
-- (snowid_sql_here()), stamped by the table's trigger: elsewhere, the
-- worker id does not hold.  claim_worker_id is kept so that a dump of 1.2
-- or earlier, which names it, restores; it is false since 1.3.
CREATE TABLE snowid_sql_private.snowid_config (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	datacenter_id integer NOT NULL DEFAULT 0,
	worker_id integer,
	epoch timestamptz NOT NULL DEFAULT '2010-11-04 01:42:54.657+00',
	datacenter_bits integer NOT NULL DEFAULT 5,
	worker_bits integer NOT NULL DEFAULT 5,
	sequence_bits integer NOT NULL DEFAULT 12,
	max_drift_ms integer NOT NULL DEFAULT 1000,
	max_wait_ms integer NOT NULL DEFAULT 2000,
	claim_worker_id boolean NOT NULL DEFAULT false
		CONSTRAINT snowid_config_claim_worker_id_check CHECK (NOT claim_worker_id),
	worker_server text,
	-- what snowid_sql_config_fault() checks, held by the table itself: the
	-- trigger refuses a bad row first, naming what is wrong, and this
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

INSERT INTO snowid_sql_private.snowid_config DEFAULT VALUES;

CREATE TABLE snowid_sql_private.snowid_public_keys (
	key_id text PRIMARY KEY,
	key bytea NOT NULL,
	rank integer NOT NULL UNIQUE
);

-- The writers' lock (see snowid_sql_move()): a row lock, which no role but
-- the owner of the table may take (an advisory lock, any role)
CREATE TABLE snowid_sql_private.snowid_locks (
	name text PRIMARY KEY CONSTRAINT snowid_locks_name_check CHECK (name = 'generator')
);

INSERT INTO snowid_sql_private.snowid_locks VALUES ('generator');

CREATE SEQUENCE snowid_sql_private.snowid_position
	AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
-- The writers' generation (snowid_sql_move()): odd while a call moves the
-- position, even otherwise, with this server's mark in its bits from 40 up
CREATE SEQUENCE snowid_sql_private.snowid_generation AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
-- The counters of snowid_status()
CREATE SEQUENCE snowid_sql_private.snowid_waits AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE snowid_sql_private.snowid_clock_steps AS bigint MINVALUE 0 START WITH 0;
CREATE SEQUENCE snowid_sql_private.snowid_clock_errors AS bigint MINVALUE 0 START WITH 0;

-- The start of the server (pg_postmaster_start_time(), in microseconds
-- since 1970, read back with to_timestamp(), which costs the common path
-- less than date_part() or EXTRACT) under which a writer last checked
-- the whole stamp (snowid_sql_here(), the system identifier too) and
-- moved the generator.  The common path (snowid_sql_next()) takes a
-- position only where it names this start: the first call after the
-- server starts is a writer.  A pg_createsubscriber copy keeps its
-- source's filenodes, which the common path compares, and its source's
-- sequences, whose position may lie ahead of its clock (up to the
-- writers' 9 ms past the source's clock, more where its own clock lags):
-- its calls took positions there under its source's worker id (issue 56).
-- It always starts a server of its own, so its first call is a writer,
-- which finds another system identifier and says the copy has no worker
-- id, whatever its clock.  A crash restart keeps the start, and the
-- server: nothing to check.  Logged, not unlogged (which a crash restart
-- and a promotion reset, one read in place of another at every call): a
-- standby promoted soon after replaying the creation of an unlogged
-- sequence reads a page of zeros from it (test 111 on 17beta2).
CREATE SEQUENCE snowid_sql_private.snowid_sql_started AS bigint MINVALUE 0 START WITH 0 NO CYCLE;

-- The configuration as the common path of the generator reads it: the row
-- of snowid_config made constants in the body of snowid_sql_fixed(), which
-- the planner inlines and folds into the expressions that use it, so that
-- a call reads no table.  The triggers on snowid_config make it anew from
-- the row whenever the row changes, in the transaction that changes it,
-- however it changes (ENABLE ALWAYS: also under session_replication_role =
-- replica and in a replica's apply; TRUNCATE too).  Plans that inlined it
-- are planned again once a session sees the change: a transaction that
-- begins after the change commits reads the new row; one open before may
-- read the old one until it ends, as one in REPEATABLE READ reads the old
-- row of the table.  STABLE, not IMMUTABLE: the planner folds a call of
-- an immutable function to its value without noting that the plan depends
-- on the function, and such a plan would keep the old row for good.
--
-- position_path is the file of snowid_position where it was made, which
-- names the database, and server snowid_sql_here() there: the common path
-- compares the former (cheap) at every call, every writer the latter.  A
-- restored dump has another file, a copy made by CREATE DATABASE ...
-- TEMPLATE the same one in another database.  Its worker id is the row's
-- only where the row's was set on this server.  token is this server's
-- mark in snowid_generation (snowid_sql_move()): 1 to 4194304, from the
-- server and sequences.  adopted is a value of snowid_generation carrying
-- another token that the generator takes as this server's, or NULL: the
-- value it held when the worker id was set again, or when
-- snowid_sql_fixed() was made on another server or with other sequences
-- (a copy whose worker id is set anew).
CREATE TYPE snowid_sql_private.snowid_sql_fixed AS (
	-- always false: 1.2's first attribute, kept in its place so that a call
	-- of 1.2 in flight through the update (its writer waits for the
	-- update's locks, then goes on in 1.2's body, which reads it) finds the
	-- type it began with (before 1.4 the update dropped it, and
	-- such calls failed with PostgreSQL's 42703: test 184)
	claim_worker_id boolean,
	datacenter_id integer,
	worker_id integer,
	datacenter_bits integer,
	worker_bits integer,
	sequence_bits integer,
	-- the epoch in Unix milliseconds, and the last millisecond of the
	-- layout since it
	epoch_ms bigint,
	max_ms bigint,
	-- how far ahead of the clock a position the common path takes may lie
	near_ms integer,
	position_path text,
	server text,
	token bigint,
	adopted bigint
);

-- As made for no row: no worker id (snowid_sql_refix() makes it from the
-- row at the end of this script)
CREATE FUNCTION snowid_sql_private.snowid_sql_fixed()
RETURNS snowid_sql_private.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(false, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL)::snowid_sql_private.snowid_sql_fixed;

-- The configuration and the keys go into pg_dump's output; the position
-- does not: only a superuser may set it (a position moved back repeats
-- ids), and a restored database, which is another server, issues no id
-- until it is given a worker id, which raises it past every id its
-- source may have issued (snowid_sql_config_floor())
SELECT pg_catalog.pg_extension_config_dump('snowid_sql_private.snowid_config', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_sql_private.snowid_public_keys', '');

-- The tables under their names, for the owner's UPDATE snowid_config and
-- the like: views of the superuser's, with the tables' privileges
-- (privileges.sql).  An INSERT into a view with an INSTEAD OF trigger
-- (dumps.sql) takes the view's defaults, not the table's: the view's are
-- the table's.
CREATE VIEW @extschema@.snowid_config AS SELECT * FROM snowid_sql_private.snowid_config;
CREATE VIEW @extschema@.snowid_public_keys AS SELECT * FROM snowid_sql_private.snowid_public_keys;

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
		ORDER BY a.attnum
	LOOP
		EXECUTE pg_catalog.format('ALTER VIEW @extschema@.snowid_config ALTER COLUMN %I SET DEFAULT %s',
								  d.attname, d.expr);
	END LOOP;
END
$$;

-- Not the generator's position (snowid_sql_private.snowid_position): a dump
-- of 1.0 or 1.1 sets a sequence of this name, which nothing reads (see
-- dumps.sql)
CREATE SEQUENCE @extschema@.snowid_position AS bigint MINVALUE 0 START WITH 0 NO CYCLE;
