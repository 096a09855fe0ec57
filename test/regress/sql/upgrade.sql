-- CREATE EXTENSION snowid VERSION '1.0' followed by ALTER EXTENSION snowid
-- UPDATE, 1.0 to 1.1 to 1.2 to 1.3, one at a time with a table in use,
-- gives the same objects as a fresh install of the default version (which
-- runs the same scripts, sql/snowid--1.0.sql and its updates, at once); the
-- list of what each function is pins them for every later version.
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
	l.lanname AS language,
	p.prosrc AS symbol,
	obj_description(d.objid, d.classid::regclass::text) AS comment,
	pg_get_functiondef(p.oid) AS definition,
	p.proacl::text AS acl
FROM pg_extension e
JOIN pg_depend d ON d.refclassid = 'pg_extension'::regclass
	AND d.refobjid = e.oid AND d.deptype = 'e'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_language l ON l.oid = p.prolang
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

-- the update to 1.1
ALTER EXTENSION snowid UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
-- snowid_status() has the fifteen columns of 1.1 until the next update
SELECT count(*) AS columns
FROM pg_proc p, unnest(p.proargmodes) m
WHERE p.proname = 'snowid_status' AND m = 'o';
SELECT layout, ceiling_ids_per_s, time_left > interval '0' AS time_left_ok
FROM snowid_status();
SELECT count(*) AS convert_functions FROM pg_proc WHERE proname = 'snowid_convert_column';

-- the update to 1.2
ALTER EXTENSION snowid UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
SELECT count(*) AS public_functions FROM pg_proc
WHERE proname IN ('snowid_public', 'snowid_from_public', 'snowid_public_is_valid',
				  'snowid_scramble', 'snowid_unscramble');
SELECT count(*) AS time_range_functions FROM pg_proc
WHERE proname IN ('snowid_span', 'snowid_time');

-- the update to 1.3, the default version
ALTER EXTENSION snowid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowid';
CREATE TEMP TABLE upgraded AS SELECT * FROM snowid_members;

-- the same objects, defined the same way, as a fresh install
SELECT (SELECT count(*) FROM fresh) AS fresh_objects,
	(SELECT count(*) FROM upgraded) AS upgraded_objects;
SELECT 'only fresh' AS missing, * FROM (TABLE fresh EXCEPT TABLE upgraded) a
UNION ALL
SELECT 'only upgraded', * FROM (TABLE upgraded EXCEPT TABLE fresh) b;
-- (the C symbol of each C function; the body of the PL/pgSQL one is
-- compared above)
SELECT object, volatility, parallel, strict, language,
	CASE language WHEN 'c' THEN symbol END AS symbol, comment
FROM upgraded ORDER BY object;

-- the table made under 1.0 goes on taking ids, and the new functions work
INSERT INTO upgrade_orders (n) SELECT generate_series(11, 20);
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids,
	bool_and(snowid_from_serial(snowid_serial('ORD', id)) = id) AS serials_ok,
	bool_and(snowid_from_public(snowid_public(id)) = id) AS public_ids_ok,
	bool_and(snowid_time(id) = (snowid_decode(id)).ts) AS times_ok
FROM upgrade_orders;
SELECT layout, ceiling_ids_per_s, js_safe_until FROM snowid_status();
-- a table made under 1.0 with a bigserial key converts
CREATE TABLE upgrade_legacy (id bigserial PRIMARY KEY, n int);
INSERT INTO upgrade_legacy (n) VALUES (1);
SELECT snowid_convert_column('upgrade_legacy', 'id');
INSERT INTO upgrade_legacy (n) VALUES (2);
SELECT bool_and((id > 1) = (n > 1)) AS new_key_is_snowid FROM upgrade_legacy;
DROP TABLE upgrade_orders, upgrade_legacy;

-- left at the default version for the tests that follow
SELECT e.extversion = a.default_version AS at_default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'snowid';
