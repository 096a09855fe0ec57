-- snowid_from_time(ts): the smallest id any server could issue at ts
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

SELECT snowid_from_time('2010-11-04 01:42:54.657+00') AS at_epoch;
SELECT snowid_from_time('2010-11-04 01:42:54.658+00') AS one_ms_later;
-- sub-millisecond parts are dropped
SELECT snowid_from_time('2010-11-04 01:42:54.6589+00') AS rounded_down;

-- decodes back to the millisecond, with every other field zero
SELECT * FROM snowid_decode(snowid_from_time('2024-02-29 12:34:56.789+00'));

-- ids issued now lie between the bounds of a time range
SELECT snowid_from_time(now() - interval '1 minute') < snowid_next() AS lower_ok,
	snowid_next() < snowid_from_time(clock_timestamp() + interval '2 seconds') AS upper_ok;

-- a range on the primary key uses its index
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowid_next(), what text);
INSERT INTO events (what) SELECT 'e' || g FROM generate_series(1, 1000) g;
ANALYZE events;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events WHERE id >= snowid_from_time(now() - interval '1 day');
RESET enable_seqscan;
SELECT count(*) FROM events WHERE id >= snowid_from_time(now() - interval '1 day');
DROP TABLE events;

-- NULL in, NULL out
SELECT snowid_from_time(NULL) IS NULL AS null_ok;

-- times the layout cannot hold
SELECT snowid_from_time('2010-11-04 01:42:54.656+00');
SELECT snowid_from_time('2080-07-10 17:30:30.209+00');
SELECT snowid_from_time('infinity');
SELECT snowid_from_time('-infinity');
-- the last millisecond the layout can hold
SELECT * FROM snowid_decode(snowid_from_time('2080-07-10 17:30:30.208+00'));
