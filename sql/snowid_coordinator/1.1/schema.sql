/*
 * snowid_coordinator--1.1.sql
 *	  A coordination database for snowid servers: who holds which worker id
 *	  of a datacenter, for good or on lease, and each id's fence.  The same
 *	  functions, with the same rule, as snowid's Redis function library
 *	  (src/redis/snowid.lua), in plain SQL and PL/pgSQL.
 *
 * Installed in a database of its own by the role that is to own the claims
 * (no superuser needed: the database owner, or any role with CREATE on the
 * database):
 *
 *	 CREATE EXTENSION snowid_coordinator;
 *
 * That role owns the schema snowid_coordinator, its tables and its
 * functions.  No one else may read or write the tables: the functions run
 * as their owner (SECURITY DEFINER, with search_path = pg_catalog,
 * pg_temp), and no one but the owner may call them until granted.  The
 * script creates no roles (roles belong to the whole cluster).  For the
 * role the snowid servers log in as, and for administrators:
 *
 *	 GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_fleet;
 *	 GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA snowid_coordinator
 *		 TO snowid_fleet;
 *	 GRANT EXECUTE ON FUNCTION
 *		 snowid_coordinator.run_claim(integer, text, text, integer, integer, integer, bigint, bigint, boolean, bigint, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_claim(integer, text, text, integer, bigint, bigint, bigint, integer, bigint, text, bigint, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_renew(integer, text, text, integer, bigint, bigint, text, bigint, bigint, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_release(integer, text, text, integer, bigint, boolean, text),
 *		 snowid_coordinator.run_claim_4(integer, text, text, integer, bigint, boolean, integer),
 *		 snowid_coordinator.run_extend_4(integer, text, text, integer, integer, bigint, bigint, boolean),
 *		 snowid_coordinator.run_release_4(integer, text, text, integer, integer)
 *		 TO snowid_fleet;
 *
 *	 GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_admin;
 *	 GRANT EXECUTE ON FUNCTION snowid_coordinator.free(integer, integer, bigint),
 *		 snowid_coordinator.lower_fence(integer, integer, bigint),
 *		 snowid_coordinator.reset_secret(integer, text),
 *		 snowid_coordinator.new_datacenter(integer),
 *		 snowid_coordinator.end_quiet(integer),
 *		 snowid_coordinator.free_4(integer, integer)
 *		 TO snowid_admin;
 *	 GRANT SELECT ON snowid_coordinator.workers TO snowid_admin;
 *
 * free() and free_4() take a worker id from whoever holds it,
 * lower_fence() lowers a fence, reset_secret() lets the next caller of an
 * identity act as it: grant them to administrators only, never to the
 * servers' role.
 *
 * THE HOLDER'S SECRET.  A server sends, with every call, a secret of its
 * own (a random one it keeps in its data directory).  The hash of the
 * secret is registered for its identity at that identity's first granted
 * call (table holders); a later call of that identity with another secret
 * is refused (SQLSTATE 42501) and changes nothing.  So a member of the
 * servers' role, knowing another server's holder name, can neither take
 * its worker id, nor retire, move, renew nor give back its claims.
 *
 * Every function takes one datacenter's lock (its row of datacenters, FOR
 * UPDATE), then reads this server's clock once (clock_timestamp(), in Unix
 * ms: the store's clock, which says when a lease has run out), then reads
 * and writes that datacenter's worker ids.  Calls on one datacenter thus
 * run one at a time; a caller bounds its wait with lock_timeout or
 * statement_timeout.  The servers' calls are procedures (CALL, see "The
 * entry points" below) that commit right after the work, at the read
 * committed isolation level (another level is refused), so that each sees
 * what the call before it wrote and none keeps the lock past its CALL.
 *
 * Every function returns one row of snowid_coordinator.outcome (those of
 * the protocol in brief, which no server of this release calls yet, one
 * of snowid_coordinator.range_outcome: see ranges.sql).  Refusals
 * are such rows, not errors, and write nothing; errors are a caller's
 * mistakes (an argument out of range).  Times are Unix ms in bigint.
 *
 * THE FENCE RULE (doc/internals.md, "The fence rule").  For every worker
 * id, each new holder's first id lies above every id any earlier holder
 * could have issued.
 *
 *	 * The fence of a worker id (worker_ids.fence_ms) is a Unix ms below
 *	   which lie all ids any holder of it issued so far, and all that a
 *	   lease holder may issue before its lease runs out.  A fence only ever
 *	   rises, but when the holder of a lease gives it back or parks it,
 *	   having stopped issuing (never below the floor it took the id with).
 *	 * Every claim, of any kind, starts at or above the fence it finds
 *	   (its floor), or refuses: it takes an id only if its fence lies at or
 *	   below the caller's usable_ms.
 *	 * retire() is the only way a worker id leaves its holder: a release, a
 *	   lease claim that moves to another id, an expired lease taken over,
 *	   an id beyond the layout, an administrator's free().  It raises the
 *	   fence to what the holder may have issued, then removes the holder.
 *
 * A permanent holder has no fence while it holds: it may issue for as long
 * as it runs.  Only free(), which an administrator calls once that server
 * is gone for good, takes such an id away, fenced at this server's clock
 * plus a margin the administrator gives.
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowid_coordinator" to load this file. \quit

-- The schema is the installing role's alone.  CREATE EXTENSION makes it if
-- it does not exist; one of that name that exists already is taken only if
-- it is empty and this role owns it (or is a superuser: a restore of
-- pg_dump's output creates the schema, owned as before, and then the
-- extension), never one that another role owns, who could drop or replace
-- what is in it.  Its privileges are reset at the end of this file.
DO $$
DECLARE
	s			pg_catalog.pg_namespace;
BEGIN
	SELECT * INTO s FROM pg_catalog.pg_namespace n
	WHERE n.nspname = 'snowid_coordinator';
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
				   WHERE r.rolname = current_user AND
						 (r.oid = s.nspowner OR r.rolsuper)) OR
		EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.relnamespace = s.oid) OR
		EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.pronamespace = s.oid) OR
		EXISTS (SELECT FROM pg_catalog.pg_type t WHERE t.typnamespace = s.oid) THEN
		RAISE EXCEPTION 'schema "snowid_coordinator" exists already'
			USING ERRCODE = 'duplicate_schema',
				  DETAIL = format('It is owned by %s or holds objects; the extension keeps its claims only in a schema of its own, owned by the installing role %s.',
								  s.nspowner::pg_catalog.regrole, current_user),
				  HINT = 'Drop or rename that schema (or install as its owner, once it is empty), then create the extension again.';
	END IF;
END
$$;

