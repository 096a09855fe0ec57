-- CREATE EXTENSION snowid VERSION '1.0' followed by ALTER EXTENSION snowid
-- UPDATE gives the same objects as a fresh install of the default version.
-- Leaves snowid installed at the default version, as the other tests expect.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS snowid;
RESET client_min_messages;

SELECT default_version FROM pg_available_extensions WHERE name = 'snowid';
SELECT source, target, path FROM pg_extension_update_paths('snowid')
WHERE path IS NOT NULL ORDER BY source, target;

-- the members of the installed extension, with what defines each one
CREATE TEMP VIEW snowid_members AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
	p.provolatile AS volatility,
	p.proparallel AS parallel,
	p.proisstrict AS strict,
	p.prosrc AS symbol,
	obj_description(d.objid, d.classid::regclass::text) AS comment,
	pg_get_functiondef(p.oid) AS definition,
	p.proacl::text AS acl
FROM pg_extension e
JOIN pg_depend d ON d.refclassid = 'pg_extension'::regclass
	AND d.refobjid = e.oid AND d.deptype = 'e'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE e.extname = 'snowid';

-- a fresh install of the default version
CREATE EXTENSION snowid;
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
CREATE TEMP TABLE fresh AS SELECT * FROM snowid_members;
DROP EXTENSION snowid;

-- version 1.0, in use, with the new library
CREATE EXTENSION snowid VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
CREATE TABLE upgrade_orders (id bigint PRIMARY KEY DEFAULT snowid_next(), n int);
INSERT INTO upgrade_orders (n) SELECT generate_series(1, 10);
-- snowid_status() keeps the ten columns of 1.0 until the update
SELECT count(*) AS columns
FROM pg_proc p, unnest(p.proargmodes) m
WHERE p.proname = 'snowid_status' AND m = 'o';
SELECT datacenter_id, worker_id, ids_issued > 0 AS issued_ok,
	high_water_time > last_time AS mark_ahead
FROM snowid_status();
SELECT count(*) AS serial_functions FROM pg_proc WHERE proname LIKE 'snowid%serial%';

-- the update
ALTER EXTENSION snowid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
CREATE TEMP TABLE upgraded AS SELECT * FROM snowid_members;

-- the same objects, defined the same way, as a fresh install
SELECT (SELECT count(*) FROM fresh) AS fresh_objects,
	(SELECT count(*) FROM upgraded) AS upgraded_objects;
SELECT 'only fresh' AS missing, * FROM (TABLE fresh EXCEPT TABLE upgraded) a
UNION ALL
SELECT 'only upgraded', * FROM (TABLE upgraded EXCEPT TABLE fresh) b;
SELECT object, volatility, parallel, strict, symbol, comment
FROM upgraded ORDER BY object;

-- the table made under 1.0 goes on taking ids, and the new functions work
INSERT INTO upgrade_orders (n) SELECT generate_series(11, 20);
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids,
	bool_and(snowid_from_serial(snowid_serial('ORD', id)) = id) AS serials_ok
FROM upgrade_orders;
SELECT layout, ceiling_ids_per_s FROM snowid_status();
DROP TABLE upgrade_orders;

-- left at the default version for the tests that follow
SELECT e.extversion = a.default_version AS at_default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'snowid';
