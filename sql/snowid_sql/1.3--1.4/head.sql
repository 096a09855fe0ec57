/* snowid_sql--1.3--1.4.sql: the fixes of 1.3's parts since 1.3.0 */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.4'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- What this version changes (doc/managed.md, CHANGELOG.md): what two
-- attacks on 1.3.0 found, in 1.3's functions, which 1.3.0 installed and
-- an update must replace (the tests named in the parts' comments):
--
-- - The guard of the layout and the epoch reads no table: it refuses
--   where the generator moved or the row carries another server's stamp,
--   and checks a restore's update as the owner's (1.3's
--   snowid_sql_ids_held() goes); SET snowid_sql.restoring is read no
--   more.
-- - The restore of the row clears a worker id the database had, and
--   setting the worker id raises the generator past the clock plus
--   max_drift_ms, wherever the row was stamped (the rule restores and
--   copies rest on, with one assumption on the clocks:
--   1.4/config.sql); the owner's UPDATE of worker_server neither clears
--   nor forges a stamp.
-- - snowid_sql_config_floor() runs as the owner of the extension, and
--   raises the generator no further than the row allows.
-- - Serial prefixes and serials in error messages are cut to 40
--   characters.
-- - snowid_sql_fixed keeps 1.2's first attribute claim_worker_id (always
--   false), for 1.2's calls in flight through the update from 1.2, and
--   1.2's signatures of the generator stay for them: a 1.3 database gets
--   them too, so that every 1.4 is alike.
-- - The functions are made anew from 1.4's parts, as a fresh install of
--   1.4 makes them, and the privileges set whole.
