/* snowid_sql--1.2--1.4.sql: the SQL edition without its claim mode (issue 68) */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.4'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- What this version changes (doc/managed.md, CHANGELOG.md):
--
-- - The claim mode is gone: the edition takes its worker id from
--   snowid_config alone, as the owner sets it (a provisioning script may
--   take it from a coordination database first, doc/managed.md).  It was
--   the edition's largest part, a fifth copy of the worker-id protocol
--   resting on what PL/pgSQL can see of a restart, and it left a dblink
--   connection holding the holder secret in a session whose first call
--   was cancelled, and held a row lock that an application's open or
--   prepared transaction kept from every other session.  Its functions,
--   tables, views, sequences and the row 'claim' of snowid_locks go; the
--   column claim_worker_id of snowid_config stays, false, so that dumps of
--   earlier versions restore.
-- - A database that held a claimed worker id keeps it as its configured
--   one where the coordination database confirmed it lately (claim.sql):
--   the update connects nowhere and calls nothing the installing role
--   owns.  What 1.2's calls in flight through the update read stays
--   (1.4/kept.sql, and snowid_sql_claim_stale(), snowid_sql_claimed() in
--   1.4/generator.sql).
-- - The check of the configuration refuses a change of the layout or the
--   epoch once ids may exist that the new one could collide with: where
--   the row comes from another server, not only where the generator moved
--   (snowid_sql_config_check()).
-- - The functions are made anew from 1.4's parts, as a fresh install of
--   1.4 makes them, and the privileges set whole.
