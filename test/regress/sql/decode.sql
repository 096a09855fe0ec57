-- snowid_decode(id): the parts of an id; needs no shared memory
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- ids are pure arithmetic, so known ids decode to known parts
SELECT * FROM snowid_decode(0);
SELECT * FROM snowid_decode(1);
SELECT * FROM snowid_decode((1::bigint << 22) | (3 << 17) | (7 << 12) | 42);
SELECT * FROM snowid_decode(9223372036854775807);
-- a Twitter id (Twitter's epoch is the default)
SELECT * FROM snowid_decode(1212161215458385920);

-- a fresh id decodes to this server and about now
SELECT datacenter_id, worker_id,
	ts BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '1 second' AS ts_ok,
	sequence BETWEEN 0 AND 4095 AS sequence_ok
FROM snowid_decode(snowid_next());

-- NULL in, NULL out
SELECT * FROM snowid_decode(NULL);

-- negative ids do not exist
SELECT * FROM snowid_decode(-1);
SELECT * FROM snowid_decode(-9223372036854775808);
