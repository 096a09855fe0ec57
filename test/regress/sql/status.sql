-- snowid_status(): one row on the generator of this server
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

SELECT ids_issued AS before, waits AS waits_before FROM snowid_status() \gset
SELECT count(snowid_next()) FROM generate_series(1, 1000);

-- 1000 ids, far below the 4096 a millisecond holds, never run the
-- generator past its drift budget, nor make a call wait for the clock
SELECT datacenter_id, worker_id, worker_source,
	ids_issued - :before AS issued_since,
	last_time BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '1 second' AS last_time_ok,
	drift_ms <= (SELECT setting::bigint FROM pg_settings
				 WHERE name = 'snowid.max_drift_ms') AS drift_within_budget,
	waits = :waits_before AS no_waits,
	clock_steps = 0 AS no_clock_steps,
	clock_errors = 0 AS no_clock_errors,
	high_water_time > last_time AS mark_ahead
FROM snowid_status();

-- the last id issued is the one snowid_status() reports
SELECT snowid_next() AS last_id \gset
SELECT (snowid_decode(:last_id)).ts = last_time AS last_time_matches
FROM snowid_status();
