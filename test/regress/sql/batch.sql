-- snowid_next_batch(n): n ascending ids in one call
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

CREATE TEMP TABLE b AS
	SELECT row_number() OVER () AS n, id
	FROM snowid_next_batch(5000) AS id;

SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM b;

-- ascending in the order returned
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM b) x
WHERE id <= prev;

SELECT bool_and(d.datacenter_id = 3 AND d.worker_id = 7) AS fields_ok
FROM b, snowid_decode(b.id) d;

-- ids taken afterwards, singly or in a batch, come after the batch
SELECT snowid_next() > (SELECT max(id) FROM b) AS next_after_batch;
SELECT min(id) > (SELECT max(id) FROM b) AS batch_after_batch
FROM snowid_next_batch(10) id;

-- the smallest and the largest batch
SELECT count(*) FROM snowid_next_batch(1);
SELECT count(*), count(DISTINCT id) FROM snowid_next_batch(100000) id;

-- the keys of a master row and its detail rows in one round trip
SELECT array_length(array_agg(id ORDER BY id), 1) AS keys
FROM snowid_next_batch(4) id;

-- NULL in, nothing out
SELECT count(*) FROM snowid_next_batch(NULL);

-- out of range: an error, and no id is taken
SELECT ids_issued AS before_bad FROM snowid_status() \gset
SELECT snowid_next_batch(0);
SELECT snowid_next_batch(-1);
SELECT snowid_next_batch(100001);
SELECT ids_issued = :before_bad AS nothing_taken FROM snowid_status();
