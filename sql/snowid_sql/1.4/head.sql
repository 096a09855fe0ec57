/* snowid_sql--1.4.sql: the SQL edition of snowid (doc/managed.md) */

\echo Use "CREATE EXTENSION snowid_sql" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- The same ids, decodes, serials, time bounds and public ids as the C
-- edition (doc/reference.md), in SQL and PL/pgSQL only, for servers that
-- load no C extension.  The worker id is the one the owner sets in
-- snowid_config (a provisioning script may take it from a coordination
-- database first, doc/managed.md); the edition claims none itself, and
-- connects nowhere.
--
-- The generator's state is one sequence, snowid_position, whose value is
-- the position of the last id issued: (milliseconds since the epoch <<
-- sequence_bits) | sequence.  A sequence is shared by every session,
-- never rolls back and is WAL-logged, so a crash or a promoted standby
-- skips positions but repeats none that a flushed transaction used.
--
-- Every session takes positions with nextval(), holding no lock.  When the
-- clock has moved past the sequence, one call at a time moves it forward
-- with setval(), under the row lock 'generator' of snowid_locks (the
-- writers' lock, which only calls that move it take, in a subtransaction
-- they end before they return), and within a window marked by a second
-- sequence, snowid_generation: odd from before the writer reads the
-- position until after it sets it.  A call reads the generation before and
-- after its nextval() and uses the position only if it read the same even
-- value twice: a nextval() that a writer's reading and setting may enclose
-- (a setval() that could move the sequence back below it) is never used.
-- So the sequence never goes back below a position in use, whatever the
-- clock does.
--
-- Everything but the functions of the API (snowid_*, and
-- snowid_sql_version()) lies in the schema snowid_sql_private, which this
-- script makes, as the bootstrap superuser where it runs as one: the owner
-- of the extension's schema (public: the owner of the database) can
-- neither create, replace nor rename there, so it can neither overload nor
-- shadow what the functions running as the superuser call.  Every body
-- names what it reads, writes and calls there (an SQL-standard body binds
-- it when it is made).  The tables keep views of their names in the
-- extension's schema, through which the owner configures it.  Its name is
-- fixed: the extension is not relocatable, and a schema of that name made
-- before fails this script.  Run as the owner (pg_tle, the plain script),
-- the schema is the owner's, as every object is.
CREATE SCHEMA snowid_sql_private;

COMMENT ON SCHEMA snowid_sql_private IS
'the tables, sequences and internal functions of snowid_sql: not to be changed';

GRANT USAGE ON SCHEMA snowid_sql_private TO PUBLIC;
