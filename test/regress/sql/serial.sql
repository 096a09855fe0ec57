-- snowid_serial(prefix [, id]) and snowid_from_serial(serial): ids as
-- business serial numbers, prefix || YYYYMMDDHHMMSSmmm (UTC) || datacenter
-- || worker || sequence; with the default layout 2 + 2 + 4 digits
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- known ids print as known serials, and read back as the same ids
SELECT id, snowid_serial('ORD', id) AS serial,
	snowid_from_serial(snowid_serial('ORD', id)) = id AS round_trip
FROM (VALUES (0::bigint),
			 (1),
			 ((1::bigint << 22) | (3 << 17) | (7 << 12) | 42),
			 (1212161215458385920),	-- a Twitter id
			 (9223372036854775807)) v(id);

-- the time is UTC whatever the session's time zone
SET timezone = 'America/New_York';
SELECT snowid_serial('ORD', 1212161215458385920) AS serial;
SET timezone = 'UTC';

-- prefixes: 1 to 16 characters of A-Z a-z 0-9 _ -
SELECT snowid_serial('X', 0) AS one_char,
	snowid_serial('Inv_2024-eu', 0) AS mixed,
	snowid_serial('ABCDEFGHIJKLMNOP', 0) AS sixteen;

-- a fresh serial: this server's fields, the time of about now, fixed width
SELECT snowid_serial('ORD') AS s \gset
SELECT length(:'s') = 3 + 17 + 2 + 2 + 4 AS width_ok,
	left(:'s', 3) = 'ORD' AS prefix_ok,
	substr(:'s', 21, 4) = '0307' AS node_ok,
	d.ts BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '1 second' AS ts_ok,
	substr(:'s', 4, 17) = to_char(d.ts, 'YYYYMMDDHH24MISSMS') AS time_ok
FROM snowid_decode(snowid_from_serial(:'s')) d;

-- fresh serials are unique and, for one prefix, sort in the order taken
CREATE TEMP TABLE serials (n int, s text);
INSERT INTO serials SELECT g, snowid_serial('INV') FROM generate_series(1, 5000) g;
SELECT count(*) AS serials, count(DISTINCT s) AS distinct_serials,
	count(DISTINCT length(s)) AS lengths
FROM serials;
SELECT count(*) AS out_of_order
FROM (SELECT s, lag(s) OVER (ORDER BY n) AS prev FROM serials) x
WHERE s <= prev;
-- ... and also in the database's collation, sorted as their ids
SELECT bool_and(a.s = b.s) AS same_order
FROM (SELECT s, row_number() OVER (ORDER BY s) r FROM serials) a
JOIN (SELECT s, row_number() OVER (ORDER BY snowid_from_serial(s)) r FROM serials) b
USING (r);

-- an order's bigint key and its printed serial are the same id
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), item text);
INSERT INTO orders (item) SELECT 'item ' || g FROM generate_series(1, 100) g;
SELECT bool_and(snowid_from_serial(snowid_serial('ORD', id)) = id) AS same_id,
	count(DISTINCT snowid_serial('ORD', id)) AS distinct_serials
FROM orders;
-- a serial from a customer finds its order by the primary key
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT item FROM orders WHERE id = snowid_from_serial('ORD2024022912345678903070042');
RESET enable_seqscan;
SELECT snowid_serial('ORD', max(id)) AS wanted FROM orders \gset
SELECT item = 'item 100' AS found
FROM orders WHERE id = snowid_from_serial(:'wanted');
DROP TABLE orders;

-- NULLs: a NULL id gives NULL, a NULL prefix with an id is an error
SELECT snowid_serial('ORD', NULL) IS NULL AS null_id;
SELECT snowid_serial(NULL, NULL) IS NULL AS both_null;
SELECT snowid_from_serial(NULL) IS NULL AS null_serial;
SELECT snowid_serial(NULL, 0);
SELECT snowid_serial(NULL);

-- bad prefixes are errors, even with a NULL id, and cost no id
SELECT ids_issued AS before FROM snowid_status() \gset
SELECT snowid_serial('');
SELECT snowid_serial('ABCDEFGHIJKLMNOPQ');
SELECT snowid_serial('OR D');
SELECT snowid_serial('ORD!', 0);
SELECT snowid_serial('ÄRD', 0);
SELECT snowid_serial(E'OR\tD', NULL);
SELECT ids_issued = :before AS no_id_taken FROM snowid_status();

-- ids no server can issue have no serial
SELECT snowid_serial('ORD', -1);

-- serials that snowid_serial() cannot have printed are errors
SELECT snowid_from_serial('');
SELECT snowid_from_serial('20240229123456789' || '03070042');	-- no prefix
SELECT snowid_from_serial('ORD' || '2024022912345678' || '03070042');	-- a digit short
SELECT snowid_from_serial('ORD' || '2024022912345678x' || '03070042');
SELECT snowid_from_serial('OR D' || '20240229123456789' || '03070042');
SELECT snowid_from_serial('ABCDEFGHIJKLMNOPQ' || '20240229123456789' || '03070042');
SELECT snowid_from_serial('ORD' || '20241301123456789' || '03070042');	-- month 13
SELECT snowid_from_serial('ORD' || '20230229123456789' || '03070042');	-- not a leap year
SELECT snowid_from_serial('ORD' || '20240229243456789' || '03070042');	-- hour 24
SELECT snowid_from_serial('ORD' || '20240229126056789' || '03070042');	-- minute 60
SELECT snowid_from_serial('ORD' || '20101104014254656' || '00000000');	-- before the epoch
SELECT snowid_from_serial('ORD' || '20800710173030209' || '00000000');	-- after the last ms
SELECT snowid_from_serial('ORD' || '20240229123456789' || '32070042');	-- datacenter 32
SELECT snowid_from_serial('ORD' || '20240229123456789' || '03320042');	-- worker 32
SELECT snowid_from_serial('ORD' || '20240229123456789' || '03074096');	-- sequence 4096
-- the edges themselves are fine
SELECT snowid_from_serial('ORD' || '20101104014254657' || '00000000') AS first_id,
	snowid_from_serial('ORD' || '20800710173030208' || '31314095') AS last_id;
SELECT snowid_serial('ORD', snowid_from_serial('ORD' || '20240229235959999' || '31314095')) AS leap_day_last_ms;
