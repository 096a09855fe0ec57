/* snowid_sql--1.1--1.2.sql: the SQL edition, read from outside (issue 56) */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.2'" to load this file. \quit

-- Everything below resolves its operators, functions and types in
-- pg_catalog alone (and names the extension's objects with their schema):
-- a role that may create in the extension's schema (the owner of the
-- database, in public) could otherwise plant an operator or an overload
-- that matches a call better than pg_catalog's, which this script, run as
-- a superuser, would call, and which a body would keep.  Local: it ends
-- with the script (CREATE EXTENSION, ALTER EXTENSION) or its transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- What this version changes, each for a way the ids repeated or the
-- generator stopped (doc/managed.md, doc/security.md):
--
-- - Every call that takes a position makes its transaction write WAL of
--   its own, so that its commit flushes the WAL that logged the position
--   (which another transaction may have written and not yet flushed) and
--   waits for a synchronous standby like any other commit.
-- - The worker id holds only on the server, and with the sequences, it was
--   set with: snowid_config gains worker_server, stamped by the
--   configuration's trigger whenever the worker id is set.  A restored
--   dump, a pg_createsubscriber copy (another system identifier) or a
--   sequence made anew has no worker id until it is set there again; the
--   holder of a claim likewise (snowid_holder.server: a copy becomes
--   another holder at its next claim).  A replica's apply
--   (session_replication_role = replica) changes no row of snowid_config.
-- - The sequences of the generator keep INCREMENT 1, CACHE 1 and NO CYCLE:
--   checked when the worker id is set, and any ALTER SEQUENCE makes a
--   sequence anew (another filenode), which drops the worker id.
-- - The locks of the generator and of the claim are row locks of
--   snowid_locks, which no role but the owner may lock, not advisory
--   locks, which any role may take.
-- - Public ids are read with ASCII folding, not upper() of the database's
--   collation (Turkish folds i to a dotted capital I; key ids, which have
--   no i, fold alike either way).
-- - Installed as an extension by a role that is no superuser, the objects
--   belong to the superuser the scripts run as (snowid_sql.control and
--   the control files of 1.0 and 1.1: superuser = true, trusted = true);
--   the installing role keeps what the page says it gets.  An earlier
--   install that such a role owns is not updated (see below).
-- - Everything that the functions running as the superuser read, write or
--   call lies in the schema snowid_sql_private, which this script makes
--   (as the superuser: the owner of the database cannot create, replace or
--   rename in it), named with that schema alone: the owner of the
--   extension's schema can neither shadow nor overload it.  The tables
--   keep views of their names in the extension's schema.
-- - The first call claims the worker id only as a role whose privileges
--   the owner of the extension has (the claim runs the owner's functions,
--   which the owner may alter).
-- - The functions that hold the row of the generator or of the claim send
--   no message to the client meanwhile (client_min_messages = error): a
--   client that stops reading would hold the lock.
-- - A logical replica changes no row of snowid_holder, snowid_locks,
--   snowid_coordination or snowid_coordinator_state either, and a writer
--   refuses to move sequences that a subscription synchronises
--   (PostgreSQL 19: FOR ALL SEQUENCES).

