-- the bit layout, as settings and in snowid_status() (version 1.1)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- the default layout: 41/5/5/12
SHOW snowid.datacenter_bits;
SHOW snowid.worker_bits;
SHOW snowid.sequence_bits;
SELECT name, setting, min_val, max_val, context
FROM pg_settings
WHERE name IN ('snowid.datacenter_bits', 'snowid.worker_bits',
			   'snowid.sequence_bits', 'snowid.datacenter_id',
			   'snowid.worker_id')
ORDER BY name;

-- fixed at server start
SET snowid.datacenter_bits = 4;
SET snowid.worker_bits = 6;
SET snowid.sequence_bits = 10;

-- the layout, the epoch, the ceiling and how long ids last
SELECT layout, epoch, ceiling_ids_per_s, exhausted_at,
	time_left BETWEEN exhausted_at - clock_timestamp() - interval '1 second'
		AND exhausted_at - now() + interval '1 second' AS time_left_ok,
	time_left > interval '50 years' AS decades_left
FROM snowid_status();

-- exhausted_at is the first time ids cannot hold; the millisecond before
-- is the last
SELECT snowid_from_time(exhausted_at - interval '1 millisecond') = 9223372036854775807 - 4194303 AS last_ms_ok
FROM snowid_status();
SELECT snowid_from_time(exhausted_at) FROM snowid_status();
SELECT (snowid_decode(9223372036854775807)).ts + interval '1 millisecond' = exhausted_at AS max_id_ok
FROM snowid_status();

-- the counters of the time-safety work are still there; on this server's
-- steady clock, with no burst past the drift budget, they stay at 0
SELECT waits = 0 AS no_waits, clock_steps = 0 AS no_steps,
	clock_errors = 0 AS no_errors, ids_issued > 0 AS issued_ok
FROM snowid_status();

-- until when ids stay below 2^53 (version 1.2): the default layout left
-- that range in 2010, 24.9 days after the epoch, so NULL
SELECT js_safe_until IS NULL AS not_js_safe FROM snowid_status();
