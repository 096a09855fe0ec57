-- test/demo.sql: a tour of snowid, run by test/demo with psql -e against a
-- server with snowid.datacenter_id = 1 and snowid.worker_id = 5.

\set ON_ERROR_STOP on

\echo
\echo '== Install the extension and make ids the primary keys'
CREATE EXTENSION snowid;

CREATE TABLE orders (
    id       bigint PRIMARY KEY DEFAULT snowid_next(),
    customer text,
    created  timestamptz
);

CREATE TABLE order_lines (
    id       bigint PRIMARY KEY DEFAULT snowid_next(),
    order_id bigint REFERENCES orders,
    product  text,
    qty      int
);

\echo
\echo '== The application takes its keys first: one order and three lines'
SELECT k[1] AS order_id, k[2] AS line1, k[3] AS line2, k[4] AS line3
FROM (SELECT array_agg(id ORDER BY id) AS k
      FROM snowid_next_batch(4) AS id) AS keys
\gset
\echo 'order' :order_id 'lines' :line1 :line2 :line3

\echo
\echo '== ... then writes master and details in one transaction with them'
BEGIN;
INSERT INTO orders (id, customer, created)
VALUES (:order_id, 'Acme', now());
INSERT INTO order_lines (id, order_id, product, qty)
VALUES (:line1, :order_id, 'bolt', 100),
       (:line2, :order_id, 'nut', 100),
       (:line3, :order_id, 'washer', 200);
COMMIT;

\echo
\echo '== An ordinary insert takes its key from the column DEFAULT'
INSERT INTO orders (customer, created)
VALUES ('Globex', now())
RETURNING id;

\echo
\echo '== Every id says when and where it was made'
SELECT o.id, d.ts, d.datacenter_id, d.worker_id, d.sequence, o.customer
FROM orders AS o, snowid_decode(o.id) AS d
ORDER BY o.id;

SELECT l.id, d.ts, d.datacenter_id, d.worker_id, d.sequence,
       o.customer, l.product, l.qty
FROM order_lines AS l
JOIN orders AS o ON o.id = l.order_id,
     snowid_decode(l.id) AS d
ORDER BY l.id;

\echo
\echo '== Ids grow with time: "made in the last minute" is a range on the key'
SET enable_seqscan = off;   -- the demo tables are tiny
EXPLAIN (COSTS OFF)
SELECT id, customer FROM orders
WHERE id >= snowid_from_time(now() - interval '1 minute');
RESET enable_seqscan;

SELECT id, customer FROM orders
WHERE id >= snowid_from_time(now() - interval '1 minute')
ORDER BY id;

\echo
\echo '== The same ids, printed as order numbers (and read back)'
SELECT o.customer, snowid_serial('ORD', o.id) AS order_no,
       snowid_from_serial(snowid_serial('ORD', o.id)) = o.id AS reads_back
FROM orders AS o
ORDER BY o.id;

\echo
\echo '== The generator of this server'
SELECT * FROM snowid_status() \gx
