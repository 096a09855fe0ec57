-- the use snowid is made for: keys first, then master and details in one
-- transaction
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

CREATE TABLE orders (
	id bigint PRIMARY KEY DEFAULT snowid_next(),
	customer text NOT NULL
);
CREATE TABLE order_lines (
	id bigint PRIMARY KEY DEFAULT snowid_next(),
	order_id bigint NOT NULL REFERENCES orders,
	product text NOT NULL
);

-- the application takes the keys of an order and its three lines at once
SELECT array_agg(id ORDER BY id) AS keys FROM snowid_next_batch(4) id \gset
BEGIN;
INSERT INTO orders (id, customer) VALUES ((:'keys'::bigint[])[1], 'alice');
INSERT INTO order_lines (id, order_id, product)
SELECT (:'keys'::bigint[])[i + 1], (:'keys'::bigint[])[1], p
FROM unnest(ARRAY['apple', 'pear', 'plum']) WITH ORDINALITY AS t(p, i);
COMMIT;

-- and plain inserts take theirs from the column default
BEGIN;
WITH o AS (INSERT INTO orders (customer) VALUES ('bob') RETURNING id)
INSERT INTO order_lines (order_id, product)
SELECT o.id, p FROM o, unnest(ARRAY['fig', 'kiwi']) p;
COMMIT;

SELECT o.customer, count(l.id) AS lines,
	bool_and(l.id > o.id) AS lines_after_order,
	bool_and((snowid_decode(l.id)).worker_id = 7) AS worker_ok
FROM orders o JOIN order_lines l ON l.order_id = o.id
GROUP BY o.customer ORDER BY o.customer;

-- the second order's keys all come after the first's
SELECT min(id) FILTER (WHERE customer = 'bob') >
	max(id) FILTER (WHERE customer = 'alice') AS orders_in_order
FROM orders;

-- a rolled back transaction does not give its ids back
BEGIN;
INSERT INTO orders (customer) VALUES ('carol') RETURNING id > 0 AS taken;
ROLLBACK;
INSERT INTO orders (customer) VALUES ('dave');
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids FROM orders;

DROP TABLE order_lines, orders;
