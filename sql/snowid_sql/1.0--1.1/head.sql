/* snowid_sql--1.0--1.1.sql: the SQL edition keeps the forgetting rule */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.1'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
