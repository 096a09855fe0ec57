-- The far ends of every function that takes or gives a time: the largest
-- and smallest values of its argument's type, just past the layout's
-- range, and 0.  Each is a value or a clear error, never a wrong value
-- (no arithmetic may wrap, whatever the compiler's flags).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';
\set VERBOSITY terse

-- snowid_from_time(timestamptz): the ends of timestamptz
SELECT snowid_from_time('294276-12-31 23:59:59.999999+00');
SELECT snowid_from_time('294276-12-31 23:59:59.999999+00'::timestamptz - interval '1000 years');
SELECT snowid_from_time('9999-12-31 23:59:59.999+00');
SELECT snowid_from_time('4714-11-24 00:00:00+00 BC');
SELECT snowid_from_time('1970-01-01 00:00:00+00');
SELECT snowid_from_time('1969-12-31 23:59:59.999+00');
SELECT snowid_from_time('infinity'), 'unreached';
SELECT snowid_from_time('-infinity'), 'unreached';

-- snowid_decode(bigint) and snowid_time(bigint): the ends of bigint
SELECT ts, datacenter_id, worker_id, sequence FROM snowid_decode(0);
SELECT ts FROM snowid_decode(9223372036854775807);
SELECT snowid_time(0);
SELECT snowid_time(9223372036854775807);
SELECT ts FROM snowid_decode(-1);
SELECT snowid_time(-9223372036854775808);

-- snowid_span(interval): the ends of interval, and the layout's range
SELECT snowid_span('0');
SELECT snowid_span('1 millisecond');
SELECT snowid_span('106751991 days 4 hours') > 0 AS whole_range;
SELECT snowid_span('2147483647 days');
SELECT snowid_span('-2147483648 days');
SELECT snowid_span('-1 millisecond');
SELECT snowid_span('178000000 years');
SELECT snowid_span(interval '2147483647 days 2562047788 hours 54.775807 seconds');
SELECT snowid_span(interval '2147483647 days 2562047788 hours 54.775 seconds');

-- snowid_serial(prefix, bigint) and snowid_from_serial(text) at the ends
SELECT snowid_serial('X', 0);
SELECT snowid_from_serial(snowid_serial('X', 0)) = 0 AS round_trip_0;
SELECT snowid_serial('X', 9223372036854775807);
SELECT snowid_from_serial('X99999999999999999' || repeat('9', 10));
SELECT snowid_from_serial('X29401231235959999' || repeat('0', 10));
