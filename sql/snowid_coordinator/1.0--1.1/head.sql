/*
 * snowid_coordinator--1.0--1.1.sql
 *	  The update of a coordination database from snowid_coordinator 1.0
 *	  (snowid 1.3.0) to 1.1: this head changes the tables and drops what 1.1
 *	  has no more; the functions, their settings and the revokes from PUBLIC
 *	  that follow are 1.1's own parts (sql/snowid_coordinator/1.1/), as a
 *	  fresh install makes them; the grants an administrator made stay, and
 *	  what 1.1 adds is the owner's alone until the administrator grants it
 *	  (doc/install.md, "From 1.3"), as after an install.
 *
 * What 1.1 changes (doc/coordinator.md, CHANGELOG.md):
 *
 * - No test switch: fixed() is gone, each rule it switched simply there.
 * - The bounds of every number a caller sends are those of the servers
 *	 (written in by the build from snowid's C headers), a counter is never
 *	 kept past what a caller may send back.
 * - One layout a datacenter: datacenters.max_worker_id, the highest worker
 *	 id of its grants (check_layout(), record_layout()); empty at first, so
 *	 that the next grant records it from the ids the live holders hold.
 * - lower_fence(), an administrator's (grant it as free()).
 * - Every function a role may be granted runs with the planner's own
 *	 settings (settings.sql).
 * - The record of the server the claims were written under holds its
 *	 postmaster's start: every datacenter's record names another server
 *	 after the update, as after a restart of this server, so the first
 *	 call of each starts a quiet period (holders that run re-assert their
 *	 ids through it; new claims wait), and a restart after a loss is a new
 *	 claim.
 * - The holder proves its secret instead of sending it: the tables
 *	 proofs_taken and pads, the procedure prove() that the servers' procedures
 *	 call first (the servers' role needs a grant of it: the update warns
 *	 until it has one).  Servers of 1.3.0 still send the secret, which 1.1
 *	 takes.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowid_coordinator UPDATE TO '1.1'" to load this file. \quit

-- Everything below names the extension's objects with their schema and
-- resolves the rest in pg_catalog; local to the update's transaction.
SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

-- Run by the role that owns the extension, as 1.0 was installed: what the
-- update creates it owns (the functions run as their owner, SECURITY
-- DEFINER), never a superuser who runs the update for it.
DO $$
DECLARE
	owner		name;
BEGIN
	SELECT pg_catalog.pg_get_userbyid(e.extowner) INTO owner
	FROM pg_catalog.pg_extension e
	WHERE e.extname OPERATOR(pg_catalog.=) 'snowid_coordinator';
	IF owner IS DISTINCT FROM current_user THEN
		RAISE EXCEPTION 'snowid_coordinator is updated by its owner %, not by %',
				owner, current_user
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'What the update creates runs as the role that creates it, which must be the owner of the claims.',
				  HINT = pg_catalog.format('Connect as %s (or SET ROLE %s), then run ALTER EXTENSION snowid_coordinator UPDATE again.',
										   pg_catalog.quote_ident(owner),
										   pg_catalog.quote_ident(owner));
	END IF;
END
$$;

-- The tables are changed under their strongest lock, which the calls on
-- them (short: one datacenter's work each) give up within seconds: the
-- update waits for them at most 10 s, so that the calls behind it do not
-- wait for longer.
SELECT pg_catalog.set_config('lock_timeout', '10s', true);

-- No test switch: the rules fixed() switched are simply there
DROP FUNCTION snowid_coordinator.fixed(text);

-- The layout of each datacenter (see check_layout()): unknown until the
-- next grant records it
ALTER TABLE snowid_coordinator.datacenters
	ADD COLUMN max_worker_id integer
		CHECK (max_worker_id BETWEEN 0 AND @SNOWID_MAX_ID@);

-- The holder's proof: the n each holder's calls sent (see prove()), none
-- yet; not dumped
CREATE TABLE snowid_coordinator.proofs_taken (
	datacenter integer NOT NULL
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	n bigint NOT NULL
		CHECK (n > 0),
	PRIMARY KEY (datacenter, identity, n)
);

-- The pads of identities without a key registered (see check_proof()): not
-- dumped
CREATE TABLE snowid_coordinator.pads (
	datacenter integer NOT NULL
		CHECK (datacenter BETWEEN 0 AND @SNOWID_MAX_ID@),
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND @SNOWID_IDENTITY_MAX@),
	pad text NOT NULL
		CHECK (pad ~ '^[0-9a-f]{64}$'),
	made_ms bigint NOT NULL,
	PRIMARY KEY (datacenter, identity)
);

-- When this install was made: the update's time, before which the servers
-- sent no proof (see proofs_taken_until())
ALTER TABLE snowid_coordinator.install
	ADD COLUMN installed_us bigint NOT NULL
		DEFAULT (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000000)::bigint;

-- The holder's key and proof are checked for the call they are made for
-- (see call_text())
DROP FUNCTION snowid_coordinator.check_holder(integer, text, text);
DROP FUNCTION snowid_coordinator.register_holder(integer, text, text);

COMMENT ON TABLE snowid_coordinator.proofs_taken IS
'The n of each holder proof taken: a proof makes its call once';

COMMENT ON TABLE snowid_coordinator.pads IS
'A one-time pad for each identity that has no holder key registered yet';
