-- snowid_next(): unique, strictly increasing, carrying this server's fields
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

CREATE TEMP TABLE taken AS
	SELECT g AS n, snowid_next() AS id FROM generate_series(1, 20000) g;

SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
	bool_and(id > 0) AS all_positive
FROM taken;

-- strictly increasing in the order taken
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM taken) x
WHERE id <= prev;

-- every id carries datacenter 3 and worker 7 (test/snowid.conf) and a time
-- close to now (at most snowid.max_drift_ms ahead)
SELECT bool_and(d.datacenter_id = 3) AS datacenter_ok,
	bool_and(d.worker_id = 7) AS worker_ok,
	bool_and(d.ts > now() - interval '1 minute'
			 AND d.ts <= clock_timestamp() + interval '1 second') AS time_ok
FROM taken, snowid_decode(taken.id) d;

-- at low rates the low bits still spread: one id per millisecond must not
-- all end in the same bits (id % N is usable for sharding)
CREATE TEMP TABLE slow (n int, id bigint);
DO $$
BEGIN
	FOR i IN 1..64 LOOP
		INSERT INTO slow VALUES (i, snowid_next());
		PERFORM pg_sleep(0.002);
	END LOOP;
END
$$;
SELECT count(DISTINCT id % 2) AS mod2_values,
	count(DISTINCT id % 4) AS mod4_values,
	count(DISTINCT id % 64) >= 32 AS mod64_spread,
	count(DISTINCT (snowid_decode(id)).ts) >= 32 AS distinct_ms
FROM slow;

-- a read-only transaction takes no id: taking one writes the mark into WAL,
-- so snowid refuses as nextval() does (25006), in every function that takes
-- ids, and the generator does not move
SELECT ids_issued AS issued_before FROM snowid_status() \gset
\set VERBOSITY sqlstate
BEGIN READ ONLY;
SELECT snowid_next();
ROLLBACK;
BEGIN READ ONLY;
SELECT snowid_next_batch(3);
ROLLBACK;
BEGIN READ ONLY;
SELECT snowid_serial('INV');
ROLLBACK;
\set VERBOSITY default
SET default_transaction_read_only = on;
SELECT snowid_next();
RESET default_transaction_read_only;
-- nothing was taken, and reading is still fine there
BEGIN READ ONLY;
SELECT ids_issued = :issued_before AS generator_unmoved FROM snowid_status();
SELECT (snowid_decode(123456789)).sequence >= 0 AS decode_ok;
COMMIT;
SELECT snowid_next() > 0 AS read_write_ok;

-- parallel workers draw from the same generator: the ids of the workers
-- (the leader takes none) are all distinct
CREATE TABLE par (g int);
INSERT INTO par SELECT generate_series(1, 200000);
ANALYZE par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
-- the plan of the statement that takes the ids: snowid_next() runs below
-- Gather, in the workers
EXPLAIN (VERBOSE, COSTS OFF)
	CREATE TEMP TABLE par_ids AS SELECT snowid_next() AS id FROM par;
-- that statement, run under EXPLAIN ANALYZE: how many workers ran it (none
-- if no worker could be had, and then the leader takes every id)
CREATE FUNCTION pg_temp.workers_launched(stmt text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	launched int := 0;
BEGIN
	FOR line IN EXECUTE
		'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || stmt
	LOOP
		launched := launched +
			coalesce(substring(line FROM 'Workers Launched: (\d+)')::int, 0);
	END LOOP;
	RETURN launched;
END
$$;
SELECT pg_temp.workers_launched(
	'CREATE TEMP TABLE par_ids AS SELECT snowid_next() AS id FROM par') > 0
	AS workers_ran;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM par_ids;
RESET ALL;
DROP TABLE par;

-- An id carries the millisecond the wall clock read when it was taken
-- (read from the TSC while that millisecond lasts, doc/internals.md), once
-- the generator is no longer ahead of the clock from the ids before: never
-- an earlier one, which a stale quick reading would give, and the next one
-- only when the sequence it kept from the millisecond before runs out there
-- and it borrows that one, starting its sequence over
DO $$
BEGIN
	FOR i IN 1 .. 100 LOOP
		EXIT WHEN (SELECT drift_ms FROM snowid_status()) <= 0;
		PERFORM pg_sleep(0.05);
	END LOOP;
END
$$;
CREATE FUNCTION pg_temp.id_times_exact(n int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	before timestamptz;
	after timestamptz;
	id bigint;
	wrong bigint := 0;
BEGIN
	FOR i IN 1 .. n LOOP
		before := date_trunc('milliseconds', clock_timestamp());
		id := snowid_next();
		after := date_trunc('milliseconds', clock_timestamp());
		IF snowid_time(id) < before OR
			snowid_time(id) > after + interval '1 ms' OR
			(snowid_time(id) > after AND (id & 4095) >= 1024) THEN
			wrong := wrong + 1;
		END IF;
		IF i % 100 = 0 THEN
			PERFORM pg_sleep(0.0003);
		END IF;
	END LOOP;
	RETURN wrong;
END
$$;
SELECT pg_temp.id_times_exact(2000) AS ids_off_the_clock;
