-- Time ranges on the key: snowid_time(), snowid_span(), range scans on the
-- primary key, and partitions by RANGE (id), pruned at plan time and at run
-- time.  The default layout (41/5/5/12) and epoch; the property over other
-- layouts and epochs is in test/t/core/time_ranges.pl.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- snowid_time(id) is the ts of snowid_decode(id); an id may lie ahead of the
-- clock by at most the drift budget (earlier tests' batches run it ahead)
SELECT bool_and(snowid_time(id) = (snowid_decode(id)).ts) AS time_is_ts,
	bool_and(snowid_time(id) <= clock_timestamp() +
			 current_setting('snowid.max_drift_ms')::interval) AS not_in_future
FROM snowid_next_batch(1000) id;
SELECT snowid_time(snowid_from_time('2024-02-29 12:34:56.789+00')) AS decoded;
SELECT snowid_time(0) AS at_epoch, snowid_time(4194303) AS last_of_ms_zero;
SELECT snowid_time(NULL) IS NULL AS null_ok;
SELECT snowid_time(-1);

-- snowid_span(d): the ids of a millisecond are 2^22 under 41/5/5/12
SELECT snowid_span('1 millisecond') AS one_ms, snowid_span('1 day') AS one_day,
	snowid_span('0') AS zero,
	snowid_span('1 day') = 86400000 * snowid_span('1 ms') AS day_is_24h;
SELECT snowid_span(NULL) IS NULL AS null_ok;
-- snowid_from_time(t) + n * snowid_span(d) = snowid_from_time(t + n * d)
SELECT count(*) AS cases,
	count(*) FILTER (WHERE snowid_from_time(t) + n * snowid_span(d)
					 <> snowid_from_time(t + n * d)) AS mismatches
FROM unnest(ARRAY['2010-11-04 01:42:54.657+00', '2024-02-29 12:34:56.789+00',
				  '2026-10-25 00:59:59.999+00', '2030-01-01 00:00:00+00']::timestamptz[]) t,
	unnest(ARRAY['1 ms', '999 ms', '1 second', '1 hour', '1 day',
				 '7 days', '30 days', '1 day 00:00:00.001']::interval[]) d,
	generate_series(0, 12) n;
-- a window of ids is a window of time: each id lies in the day it was made
SELECT bool_and(id >= snowid_from_time(date_trunc('day', snowid_time(id)))
				AND id < snowid_from_time(date_trunc('day', snowid_time(id)))
						 + snowid_span('1 day')) AS in_its_day
FROM snowid_next_batch(100) id;

-- spans the layout cannot hold
SELECT snowid_span('1 month');
SELECT snowid_span('1 year 1 day');
SELECT snowid_span('1.5 milliseconds');
SELECT snowid_span('-1 day');
SELECT snowid_span('1 day -25 hours');
SELECT snowid_span('25451 days 15:47:35.551');	-- the longest under 41 bits
SELECT snowid_span('25451 days 15:47:35.552');

-- a time window is an index range scan on the primary key
CREATE TABLE range_orders (id bigint PRIMARY KEY DEFAULT snowid_next(), n int);
INSERT INTO range_orders (n) SELECT generate_series(1, 1000);
ANALYZE range_orders;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM range_orders
WHERE id >= snowid_from_time('2026-01-01') AND id < snowid_from_time('2026-02-01');
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT count(*) AS last_minute FROM range_orders
WHERE id >= snowid_from_time(now() - interval '1 minute')
	AND id < snowid_from_time(now() + interval '1 minute');
DROP TABLE range_orders;

-- native partitions by month: bounds are snowid_from_time() of the first
-- of each month, and a default partition takes the rest
CREATE TABLE month_events (id bigint NOT NULL DEFAULT snowid_next(), what text)
	PARTITION BY RANGE (id);
DO $$
DECLARE
	m date;
BEGIN
	FOR m IN SELECT generate_series(date '2026-01-01', date '2026-04-01', interval '1 month')
	LOOP
		EXECUTE format('CREATE TABLE %I PARTITION OF month_events FOR VALUES FROM (%s) TO (%s)',
					   'month_events_' || to_char(m, 'YYYY_MM'),
					   snowid_from_time(m), snowid_from_time(m + interval '1 month'));
	END LOOP;
END
$$;
CREATE TABLE month_events_default PARTITION OF month_events DEFAULT;
ALTER TABLE month_events ADD PRIMARY KEY (id);

-- ids of the last millisecond of a month and the first of the next: the
-- smallest and largest id of each millisecond around every boundary
INSERT INTO month_events (id, what)
SELECT snowid_from_time(b + o * interval '1 ms') + e * (snowid_span('1 ms') - 1),
	format('%s %s ms, %s', b, o, CASE e WHEN 0 THEN 'first' ELSE 'last' END)
FROM generate_series(timestamptz '2026-01-01', '2026-05-01', interval '1 month') b,
	generate_series(-1, 0) o, generate_series(0, 1) e;
-- and ids made now (in the default partition, unless now is in 2026-01..04)
INSERT INTO month_events (what) SELECT 'now' FROM generate_series(1, 10);
SELECT count(*) AS rows,
	count(*) FILTER (WHERE tableoid::regclass::text =
		CASE WHEN snowid_time(id) >= '2026-01-01' AND snowid_time(id) < '2026-05-01'
			THEN 'month_events_' || to_char(snowid_time(id), 'YYYY_MM')
			ELSE 'month_events_default' END) AS in_their_month
FROM month_events;
SELECT tableoid::regclass AS partition, what FROM month_events
WHERE what <> 'now' ORDER BY id;

-- plan time: ids given as constants prune the other months away
ANALYZE month_events;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT snowid_from_time('2026-02-10') AS lo, snowid_from_time('2026-02-11') AS hi \gset
EXPLAIN (COSTS OFF)
SELECT * FROM month_events WHERE id >= :lo AND id < :hi;
-- executor start: snowid_from_time() of a constant is STABLE, so the plan
-- keeps every partition and the executor removes the others before running
EXPLAIN (COSTS OFF)
SELECT * FROM month_events
WHERE id >= snowid_from_time('2026-02-10') AND id < snowid_from_time('2026-03-10');
-- the same for a generic plan of a prepared statement
PREPARE month_window(timestamptz, timestamptz) AS
	SELECT * FROM month_events
	WHERE id >= snowid_from_time($1) AND id < snowid_from_time($2);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE month_window('2026-03-01', '2026-03-02');
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT count(*) AS february_to_april FROM month_events
WHERE id >= snowid_from_time('2026-02-01') AND id < snowid_from_time('2026-05-01');
RESET plan_cache_mode;
DEALLOCATE month_window;
DROP TABLE month_events;

-- run time: the last day, on partitions around now
CREATE TABLE recent_events (id bigint NOT NULL DEFAULT snowid_next(), what text)
	PARTITION BY RANGE (id);
DO $$
BEGIN
	EXECUTE format('CREATE TABLE recent_events_old PARTITION OF recent_events FOR VALUES FROM (%s) TO (%s)',
				   snowid_from_time(now() - interval '30 days'),
				   snowid_from_time(now() - interval '10 days'));
	EXECUTE format('CREATE TABLE recent_events_now PARTITION OF recent_events FOR VALUES FROM (%s) TO (%s)',
				   snowid_from_time(now() - interval '10 days'),
				   snowid_from_time(now() + interval '10 days'));
END
$$;
CREATE TABLE recent_events_default PARTITION OF recent_events DEFAULT;
INSERT INTO recent_events (what) SELECT 'e' FROM generate_series(1, 100);
INSERT INTO recent_events (id, what)
VALUES (snowid_from_time(now() - interval '20 days'), 'old');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM recent_events
WHERE id >= snowid_from_time(now() - interval '1 day');
SELECT count(*) AS last_day FROM recent_events
WHERE id >= snowid_from_time(now() - interval '1 day');

-- retention: the partitions wholly older than a date, from their bounds
SELECT c.relname AS older_than_5_days
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
CROSS JOIN LATERAL (SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid),
										 'TO \(''?(\d+)''?\)'))[1]::bigint AS upper_bound) b
WHERE i.inhparent = 'recent_events'::regclass
	AND b.upper_bound <= snowid_from_time(now() - interval '5 days')
ORDER BY c.relname;
-- DETACH ... CONCURRENTLY does not block queries on the table, but is
-- refused while the table has a default partition (and in a transaction)
ALTER TABLE recent_events DETACH PARTITION recent_events_old CONCURRENTLY;
DROP TABLE recent_events_default;
ALTER TABLE recent_events DETACH PARTITION recent_events_old CONCURRENTLY;
DROP TABLE recent_events_old;
SELECT count(*) AS left_after_retention FROM recent_events;
DROP TABLE recent_events;
