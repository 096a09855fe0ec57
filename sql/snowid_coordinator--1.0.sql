/*
 * snowid_coordinator--1.0.sql
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
 *		 snowid_coordinator.run_claim(integer, text, text, integer, integer, integer, bigint, bigint, boolean, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_claim(integer, text, text, integer, bigint, bigint, bigint, integer, bigint, text, bigint, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_renew(integer, text, text, integer, bigint, bigint, text, bigint, bigint, bigint, bigint, bigint),
 *		 snowid_coordinator.run_lease_release(integer, text, text, integer, bigint, boolean, text)
 *		 TO snowid_fleet;
 *
 *	 GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_admin;
 *	 GRANT EXECUTE ON FUNCTION snowid_coordinator.free(integer, integer, bigint),
 *		 snowid_coordinator.reset_secret(integer, text),
 *		 snowid_coordinator.new_datacenter(integer),
 *		 snowid_coordinator.end_quiet(integer)
 *		 TO snowid_admin;
 *	 GRANT SELECT ON snowid_coordinator.workers TO snowid_admin;
 *
 * free() takes a worker id from whoever holds it, reset_secret() lets the
 * next caller of an identity act as it: grant them to administrators
 * only, never to the servers' role.
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
 * Every function returns one row of snowid_coordinator.outcome.  Refusals
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

-- The lock of each datacenter: every call takes its row FOR UPDATE, having
-- inserted it if need be.
CREATE TABLE snowid_coordinator.datacenters (
	datacenter integer PRIMARY KEY
		CHECK (datacenter BETWEEN 0 AND 16777215)
);

COMMENT ON TABLE snowid_coordinator.datacenters IS
'One row per datacenter, locked by every call on its worker ids';

-- Every worker id ever held or fenced.  An id without a row is free, with
-- no fence.  holder is the identity of its server: for good, or on lease
-- (on_lease) until lease_expires_ms by this server's clock.  A lease names
-- the fence it was taken above (lease_floor_ms) and the token of the claim
-- that made it, which its renewals and its release name.
CREATE TABLE snowid_coordinator.worker_ids (
	datacenter integer NOT NULL
		REFERENCES snowid_coordinator.datacenters,
	worker_id integer NOT NULL
		CHECK (worker_id BETWEEN 0 AND 16777215),
	holder text
		CHECK (octet_length(holder) BETWEEN 1 AND 512),
	on_lease boolean NOT NULL DEFAULT false,
	lease_expires_ms bigint,
	lease_floor_ms bigint
		CHECK (lease_floor_ms >= 0),
	lease_token text
		CHECK (lease_token ~ '^[0-9a-f]{16}$'),
	fence_ms bigint NOT NULL DEFAULT 0
		CHECK (fence_ms >= 0),
	PRIMARY KEY (datacenter, worker_id),
	CHECK (NOT on_lease OR (holder IS NOT NULL AND
							lease_expires_ms IS NOT NULL AND
							lease_floor_ms IS NOT NULL AND
							lease_token IS NOT NULL))
);

COMMENT ON TABLE snowid_coordinator.worker_ids IS
'Who holds each worker id, for good or on lease, and its fence (Unix ms): never delete a row, nor lower a fence';

-- pg_dump dumps the claims and the fences with the database
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.datacenters', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.worker_ids', '');

-- The hash (SHA-256) of each holder's secret, per datacenter and identity:
-- set by the identity's first call that is granted, compared by every
-- later call, never the secret itself.  reset_secret() (an
-- administrator's) removes one, so that a server that lost its secret file
-- registers a new one.
CREATE TABLE snowid_coordinator.holders (
	datacenter integer NOT NULL
		REFERENCES snowid_coordinator.datacenters,
	identity text NOT NULL
		CHECK (octet_length(identity) BETWEEN 1 AND 512),
	secret_sha256 bytea NOT NULL
		CHECK (octet_length(secret_sha256) = 32),
	PRIMARY KEY (datacenter, identity)
);

COMMENT ON TABLE snowid_coordinator.holders IS
'The SHA-256 of each holder''s secret: only a caller with that secret acts as that holder';

SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.holders', '');

-- What every function returns: outcome is one of
--	 ok			   the call did what it was asked; worker_id, and for a claim
--				   floor_ms, the id's fence when taken (0 for none): every id
--				   issued with it must lie at or above floor_ms; for a lease
--				   fence_ms, below which its holder issues, and lease_ms
--	 all_held	   every worker id in 0..max is held
--	 fenced		   every free id (or the configured or kept one) is fenced
--				   past usable_ms: worker_id is the one fenced least far,
--				   fence_ms its fence
--	 conflict	   the configured id (worker_id) is held by holder
--	 holds_other   this identity holds worker_id, not the configured id
--	 lost		   a renewal or release of an id that is no longer this
--				   claim's lease: holder holds it now, or no one (NULL)
--	 quiet		   the database may have forgotten claims (see recall()):
--				   no id is granted but to a server re-asserting its own
--				   until fence_ms, when this claim can be granted: the
--				   end of the quiet period or, past it, the floor it left
-- holder names a lease holder as 'lease ' || identity, as Redis does.
-- generation and counter are the datacenter's state record after the call
-- of a holder (see recall()), which the holder remembers and sends with
-- its next call; NULL for a call that gives no quiet_ms.
CREATE TYPE snowid_coordinator.outcome AS (
	outcome text,
	worker_id integer,
	floor_ms bigint,
	fence_ms bigint,
	lease_ms bigint,
	holder text,
	generation bigint,
	counter bigint
);

-- Administrators' view: who holds what, until when, and each id's fence
CREATE VIEW snowid_coordinator.workers AS
SELECT w.datacenter,
	   w.worker_id,
	   w.holder,
	   w.on_lease,
	   CASE WHEN w.on_lease
		   THEN pg_catalog.to_timestamp(w.lease_expires_ms / 1000.0) END
		   AS lease_expires,
	   w.holder IS NOT NULL AND
	   (NOT w.on_lease OR
		w.lease_expires_ms >
		pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000))
		   AS live,
	   CASE WHEN w.fence_ms > 0
		   THEN pg_catalog.to_timestamp(w.fence_ms / 1000.0) END AS fence,
	   w.fence_ms
FROM snowid_coordinator.worker_ids w;

COMMENT ON VIEW snowid_coordinator.workers IS
'Who holds each worker id (live: for good, or on a lease that has not run out), and its fence';

-- -----------------------------------------------------------------------
-- Helpers: checks of the arguments, the lock, the choice of an id,
-- retiring an id.  Called only by the functions below, as their owner.
-- -----------------------------------------------------------------------

-- Refuses a null argument
CREATE FUNCTION snowid_coordinator.check_given(what text, value anyelement)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF value IS NULL THEN
		RAISE EXCEPTION '% must not be null', what
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
END
$$;

-- Refuses a datacenter or worker id (or -1 where lo is -1: none) outside
-- lo..16777215, the most a layout's 24 bits of datacenter, worker and
-- sequence allow
CREATE FUNCTION snowid_coordinator.check_id(what text, value integer,
											lo integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given(what, value);
	IF value < lo OR value > 16777215 THEN
		RAISE EXCEPTION '% is out of range: %', what, value
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s must lie between %s and 16777215%s.',
								  what, lo,
								  CASE WHEN lo < 0 THEN ', -1 meaning none'
									   ELSE '' END);
	END IF;
END
$$;

-- Refuses a time or a duration (Unix ms, or ms) outside lo up to hi,
-- which why explains (a phrase): by default 253402300800000, the year
-- 10000.  The tighter bounds of what a caller sends are fixed as the
-- servers' settings bound it: a lease of a day (snowid.worker_lease's
-- most), a wait of an hour (snowid.max_wait_ms'), a quiet period of
-- 90601000 ms (the longest a server declares: a lease of a day, a
-- coordinator timeout of ten minutes, a drift budget of an hour and a
-- second; SNOWID_QUIET_DECLARED_MAX_MS of snowid's src/coord/request.h),
-- and a time 176400000 ms past this server's clock (two days and an hour:
-- a drift budget and a lease at their most, and a day by which a server's
-- clock may run ahead; the servers refuse a later fence as one no snowid
-- server wrote).  The same bounds as snowid.lua's.
CREATE FUNCTION snowid_coordinator.check_ms(what text, value bigint,
											lo bigint,
											hi bigint DEFAULT 253402300800000,
											why text DEFAULT 'the year 10000')
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given(what, value);
	IF value < lo OR value > hi THEN
		RAISE EXCEPTION '% is out of range: %', what, value
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s must lie between %s and %s ms (%s).',
								  what, lo, hi, why);
	END IF;
END
$$;

-- Refuses a time (Unix ms, NULL: none) further past now_ms, this server's
-- clock, than any snowid server sends one (see check_ms())
CREATE FUNCTION snowid_coordinator.check_ahead(what text, value bigint,
											   now_ms bigint)
RETURNS void
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT snowid_coordinator.check_ms(what, coalesce(value, 0), 0,
		now_ms + 176400000,
		'two days and an hour past the clock of the coordination server: no snowid server sends a later time')
$$;

-- Refuses an identity that is empty, longer than 512 bytes, holds a
-- control character, or begins as the name of a lease holder does
CREATE FUNCTION snowid_coordinator.check_identity(identity text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('identity', identity);
	IF octet_length(identity) NOT BETWEEN 1 AND 512 THEN
		RAISE EXCEPTION 'invalid identity of % bytes', octet_length(identity)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity has 1 to 512 bytes.';
	END IF;
	IF identity ~ '[\x01-\x1f\x7f]' THEN
		RAISE EXCEPTION 'invalid identity'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity holds no control characters.';
	END IF;
	IF identity LIKE 'lease %' THEN
		RAISE EXCEPTION 'invalid identity %', quote_literal(identity)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity does not begin with "lease ", which names the holder of a lease.';
	END IF;
END
$$;

-- Refuses a lease token other than 16 lower-case hexadecimal digits
CREATE FUNCTION snowid_coordinator.check_token(token text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('token', token);
	IF token !~ '^[0-9a-f]{16}$' THEN
		RAISE EXCEPTION 'invalid lease token %', quote_literal(token)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A lease token is 16 lower-case hexadecimal digits.';
	END IF;
END
$$;

-- Refuses a holder secret other than 64 lower-case hexadecimal digits,
-- never quoting it
CREATE FUNCTION snowid_coordinator.check_secret(secret text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('secret', secret);
	IF secret !~ '^[0-9a-f]{64}$' THEN
		RAISE EXCEPTION 'invalid holder secret'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A holder secret is 64 lower-case hexadecimal digits.';
	END IF;
END
$$;

-- Refuses a call of identity with a secret other than the one its hash
-- was registered with (SQLSTATE 42501): another server using this
-- server's name.  Called with the datacenter's lock held.
CREATE FUNCTION snowid_coordinator.check_holder(dc integer, identity text,
												secret text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	known		bytea;
BEGIN
	SELECT h.secret_sha256 INTO known
	FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = check_holder.identity;
	IF known IS NOT NULL AND
		known <> sha256(convert_to(secret, 'UTF8')) THEN
		RAISE EXCEPTION 'wrong holder secret for identity %',
				quote_literal(identity)
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'Another secret was registered for this identity at its first claim: only that server, or an administrator, may change its claims.',
				  HINT = 'If the server that claims under this identity lost its secret file, an administrator who has checked that it is that server calls snowid_coordinator.reset_secret().';
	END IF;
END
$$;

-- Registers the hash of identity's secret, if it has none yet: after a
-- call of that identity was granted.
CREATE FUNCTION snowid_coordinator.register_holder(dc integer, identity text,
												   secret text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.holders AS h (datacenter, identity,
												 secret_sha256)
	VALUES (dc, identity, sha256(convert_to(secret, 'UTF8')))
	ON CONFLICT (datacenter, identity) DO NOTHING
$$;

-- Refuses a call of run_<name>() but from the procedure <name>(), which
-- commits right after it: so no caller keeps the datacenter's lock past
-- its CALL (a transaction left open, a DO block that sleeps on).  The
-- call stack, innermost first, is this function, the PERFORM of
-- run_<name>() that calls it, run_<name>(), and its caller, which must be
-- the procedure (its name qualified: no other schema can hold one of that
-- name).
CREATE FUNCTION snowid_coordinator.check_called_by(name text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	context		text;
	stack		text[];
BEGIN
	GET DIAGNOSTICS context = PG_CONTEXT;
	stack := string_to_array(context, E'\n');
	IF coalesce(stack[3] !~ ('^PL/pgSQL function snowid_coordinator\.run_' ||
							 name || '\(') OR
				stack[4] !~ ('^PL/pgSQL function snowid_coordinator\.' ||
							 name || '\([a-z, ]*\) line [0-9]+ at assignment$'),
				true) THEN
		RAISE EXCEPTION 'snowid_coordinator.run_% is called only by CALL snowid_coordinator.%',
				name, name
			USING ERRCODE = 'invalid_transaction_termination',
				  DETAIL = 'The procedure commits right after the call, so that no caller keeps the lock of the datacenter past it.',
				  HINT = format('Run CALL snowid_coordinator.%s(...) on its own, outside a transaction block, with a search_path that does not name snowid_coordinator.', name);
	END IF;
END
$$;

-- Takes the lock of a datacenter (its row, inserted first if make_row) and
-- then reads the clock: Unix ms, or NULL if the datacenter has no row.
-- Refuses an isolation level above read committed, where the statements
-- after the lock would not see what the call before wrote.
CREATE FUNCTION snowid_coordinator.lock_datacenter(dc integer, make_row boolean)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF current_setting('transaction_isolation') NOT IN ('read committed',
													 'read uncommitted') THEN
		RAISE EXCEPTION 'snowid_coordinator cannot run at the % isolation level',
				current_setting('transaction_isolation')
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = 'Its functions read the claims of other transactions once they hold the lock of the datacenter.',
				  HINT = 'Call each function in a transaction of its own, at the read committed isolation level.';
	END IF;
	IF make_row THEN
		INSERT INTO snowid_coordinator.datacenters AS d (datacenter)
		VALUES (dc)
		ON CONFLICT DO NOTHING;
	END IF;
	PERFORM FROM snowid_coordinator.datacenters d
	WHERE d.datacenter = dc
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	RETURN floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint;
END
$$;

-- The name of a holder as the outcome gives it: 'lease ' || identity for a
-- lease, as Redis keeps it
CREATE FUNCTION snowid_coordinator.holder_name(holder text, on_lease boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT CASE WHEN on_lease THEN 'lease ' || holder ELSE holder END
$$;

-- -----------------------------------------------------------------------
-- THE FENCE RULE in SQL, as the top of this script states it and, for
-- every claim store, snowid's src/coord/store.h in C: for every worker id,
-- each new holder's first id lies above every id any earlier holder could
-- have issued.  retire() is the only way a worker id leaves its holder,
-- its fence raised first; pick() takes no id fenced past what its caller
-- can start above; fence_of() reads the fence a claim starts at or above.
-- The lease functions below move only their own lease's fence: up as it
-- is renewed, down to just past its last id when given back, never below
-- the floor it was taken with.
-- -----------------------------------------------------------------------

-- Takes worker id id of datacenter dc from its holder: its fence raised to
-- at least v first (0: the fence as it is, which covers every lease), then
-- the holder and its lease removed.  The fence never falls.
CREATE FUNCTION snowid_coordinator.retire(dc integer, id integer, v bigint)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.worker_ids AS w (datacenter, worker_id, fence_ms)
	VALUES (dc, id, greatest(v, 0))
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET fence_ms = greatest(w.fence_ms, excluded.fence_ms),
		holder = NULL,
		on_lease = false,
		lease_expires_ms = NULL,
		lease_floor_ms = NULL,
		lease_token = NULL
	RETURNING w.fence_ms
$$;

-- The id a server without one takes, in 0..hi of datacenter dc at now_ms:
-- first if it is free, else the lowest free id, else the one fenced least
-- far of those not live, which the caller refuses as fenced; NULL when
-- every id is held.  Free is: open (no holder, a lease run out, or mine's
-- own lease) and fenced no later than usable.  mine is the identity of a
-- lease claim (whose own lease, run out or not, it may take), or NULL.
CREATE FUNCTION snowid_coordinator.pick(dc integer, hi integer,
										usable bigint, first integer,
										mine text, now_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	w			snowid_coordinator.worker_ids;
	gap			integer;
	found_id	integer;
BEGIN
	IF first BETWEEN 0 AND hi THEN
		SELECT * INTO w FROM snowid_coordinator.worker_ids x
		WHERE x.datacenter = dc AND x.worker_id = first;
		IF NOT FOUND OR
			((w.holder IS NULL OR
			  (w.on_lease AND (w.lease_expires_ms <= now_ms OR w.holder = mine)))
			 AND w.fence_ms <= usable) THEN
			RETURN first;
		END IF;
	END IF;

	-- the lowest id without a row (no holder, no fence), and the lowest
	-- free one with a row
	SELECT min(c.id) INTO gap
	FROM (SELECT 0 AS id
		  UNION ALL
		  SELECT x.worker_id + 1 FROM snowid_coordinator.worker_ids x
		  WHERE x.datacenter = dc AND x.worker_id < hi) c
	WHERE NOT EXISTS (SELECT FROM snowid_coordinator.worker_ids y
					  WHERE y.datacenter = dc AND y.worker_id = c.id);
	SELECT min(x.worker_id) INTO found_id
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id <= hi
	  AND (x.holder IS NULL OR
		   (x.on_lease AND (x.lease_expires_ms <= now_ms OR x.holder = mine)))
	  AND x.fence_ms <= usable;
	IF gap IS NOT NULL OR found_id IS NOT NULL THEN
		RETURN least(gap, found_id);
	END IF;

	-- none free: the open one fenced least far, if any
	SELECT x.worker_id INTO found_id
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id <= hi
	  AND (x.holder IS NULL OR
		   (x.on_lease AND (x.lease_expires_ms <= now_ms OR x.holder = mine)))
	ORDER BY x.fence_ms, x.worker_id
	LIMIT 1;
	RETURN found_id;
END
$$;

-- The fence of a worker id, or 0
CREATE FUNCTION snowid_coordinator.fence_of(dc integer, id integer)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT coalesce((SELECT w.fence_ms FROM snowid_coordinator.worker_ids w
					 WHERE w.datacenter = dc AND w.worker_id = id), 0)
$$;

-- -----------------------------------------------------------------------
-- THE FORGETTING RULE (doc/internals.md, "A coordinator that forgets").
-- A coordination database may go back in time: restored from a pg_dump,
-- recovered to a point in time, failed over to a standby that missed the
-- last transactions.  Each datacenter's row records the server it was
-- last written under (written_under: this install of the extension, made
-- by CREATE EXTENSION and never dumped, the cluster's system identifier
-- and its timeline), a generation (the time it was made, in ms, later than
-- every generation before it) and a counter that every call of a holder
-- moves up.  Each holder remembers the generation and counter it saw last
-- and sends them with every call.  recall() finds that the database may
-- have forgotten when a datacenter has no such record or one of another
-- server, or when a holder has seen a later generation, or a higher counter
-- of the same one (the database went back to an older state of itself: a
-- copy of its files restored), and then starts a quiet period: until every
-- server that may still hold an id has had time to re-assert it, no worker
-- id is granted but to the server that re-asserts it, and every other
-- grant starts at or above the floor it leaves.  new_datacenter(), an
-- administrator's step, records a brand-new datacenter without a quiet
-- period; end_quiet() ends one.
-- -----------------------------------------------------------------------

-- This install of the extension: one row, made by CREATE EXTENSION and not
-- dumped, so that a restore from a dump is another install
CREATE TABLE snowid_coordinator.install (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	install_id text NOT NULL
);

INSERT INTO snowid_coordinator.install (install_id)
VALUES (md5(random()::text || clock_timestamp()::text || pg_backend_pid()));

COMMENT ON TABLE snowid_coordinator.install IS
'This install of snowid_coordinator (CREATE EXTENSION makes it, pg_dump does not dump it)';

ALTER TABLE snowid_coordinator.datacenters
	ADD COLUMN written_under text,
	ADD COLUMN quiet_from_ms bigint,
	ADD COLUMN quiet_until_ms bigint,
	ADD COLUMN generation bigint NOT NULL DEFAULT 0
		CHECK (generation >= 0),
	ADD COLUMN counter bigint NOT NULL DEFAULT 0
		CHECK (counter >= 0),
	-- every grant that is not a re-assertion starts at or above it: the
	-- end of the last quiet period plus the fleet's clocks (see recall())
	ADD COLUMN forgot_floor_ms bigint NOT NULL DEFAULT 0
		CHECK (forgot_floor_ms >= 0),
	-- the longest quiet_ms any caller declared: every quiet period lasts
	-- at least that
	ADD COLUMN longest_quiet_ms bigint NOT NULL DEFAULT 0
		CHECK (longest_quiet_ms >= 0),
	-- the widest clock_margin_ms any caller declared (how far apart the
	-- fleet's clocks, and this server's, may lie): the floor lies past the
	-- end of a quiet period by at least that
	ADD COLUMN widest_margin_ms bigint NOT NULL DEFAULT 0
		CHECK (widest_margin_ms >= 0);

-- The server this call runs on: the install, the cluster's system
-- identifier, and the timeline (a point-in-time recovery or a promotion
-- starts a new one)
CREATE FUNCTION snowid_coordinator.server_now()
RETURNS text
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT i.install_id || ' ' || s.system_identifier || ' ' ||
		   substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)
	FROM snowid_coordinator.install i, pg_control_system() s
$$;

-- Refuses a quiet period or a clock margin a caller declares (ms; NULL:
-- none) out of bounds: a quiet period up to the longest a server declares
-- (see check_ms()), a margin up to an hour
CREATE FUNCTION snowid_coordinator.check_declared(quiet_ms bigint,
												  clock_margin_ms bigint)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF quiet_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_ms('quiet_ms', quiet_ms, 0, 90601000,
			'the longest quiet period a snowid server declares: a lease of a day, a coordinator timeout of ten minutes, a drift budget of an hour, and a second');
	END IF;
	IF clock_margin_ms < 0 OR clock_margin_ms > 3600000 THEN
		RAISE EXCEPTION 'clock_margin_ms is out of range: %', clock_margin_ms
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'clock_margin_ms must lie between 0 and 3600000 ms (an hour).';
	END IF;
END
$$;

-- Whether the database may have forgotten the claims of datacenter dc,
-- whose lock the caller holds, at now_ms: starts or lengthens the quiet
-- period, raises the floor it leaves and, for a call that declares its
-- quiet period (quiet_ms), moves the counter up.  seen_generation and
-- seen_counter are what the caller saw last (NULL: nothing yet).  Returns
-- the datacenter's row as it is now (its quiet period lasts while
-- quiet_until_ms > now_ms).  A quiet period lasts the longest quiet_ms
-- declared, and leaves a floor (forgot_floor_ms) for every grant that is
-- not a re-assertion: its end plus the widest clock_margin_ms declared
-- (how far apart the fleet's clocks may lie) plus its length (which covers
-- the drift budgets the callers declared), as free() would fence an id
-- whose holder may have issued up to then.  What a call does not declare
-- (a call by hand, a caller of another release) counts as a server of the
-- default settings for that call only, which the row does not keep: a
-- quiet period of 9 s (check-in 5 s, timeout 2 s, drift budget 1 s, 1 s)
-- and clocks a minute apart; such a call writes the row only if it
-- changes.  The same rule as snowid.lua's recall().
CREATE FUNCTION snowid_coordinator.recall(dc integer, now_ms bigint,
										  quiet_ms bigint,
										  clock_margin_ms bigint,
										  seen_generation bigint,
										  seen_counter bigint)
RETURNS snowid_coordinator.datacenters
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	d			snowid_coordinator.datacenters;
	was			snowid_coordinator.datacenters;
	here		text := snowid_coordinator.server_now();
	len			bigint;
BEGIN
	PERFORM snowid_coordinator.check_ms('seen_generation',
										coalesce(seen_generation, 0), 0);
	PERFORM snowid_coordinator.check_ms('seen_counter',
										coalesce(seen_counter, 0), 0);
	SELECT * INTO d FROM snowid_coordinator.datacenters x
	WHERE x.datacenter = dc;
	-- a generation is this server's clock when it was made: one past the
	-- datacenter's own and an hour (the widest clock margin) past the clock
	-- now was never made
	PERFORM snowid_coordinator.check_ms('seen_generation',
		coalesce(seen_generation, 0), 0, greatest(d.generation, now_ms + 3600000),
		'the datacenter''s generation, or an hour past the clock of the coordination server if later: no later one was made');
	was := d;
	d.longest_quiet_ms := greatest(d.longest_quiet_ms, coalesce(quiet_ms, 0));
	d.widest_margin_ms := greatest(d.widest_margin_ms,
								   coalesce(clock_margin_ms, 0));
	len := greatest(d.longest_quiet_ms, coalesce(quiet_ms, 9000));
	IF d.written_under IS DISTINCT FROM here OR
		seen_generation > d.generation OR
		(seen_generation = d.generation AND seen_counter > d.counter) THEN
		-- may have forgotten: a new generation, later than any the
		-- caller saw, and a quiet period from now
		d.written_under := here;
		d.generation := greatest(now_ms, d.generation + 1,
								 coalesce(seen_generation, 0) + 1);
		d.counter := 0;
		d.quiet_from_ms := now_ms;
		d.quiet_until_ms := now_ms + len;
	ELSIF d.quiet_until_ms > now_ms AND
		d.quiet_from_ms + len > d.quiet_until_ms THEN
		d.quiet_until_ms := d.quiet_from_ms + len;
	END IF;
	IF d.quiet_until_ms > now_ms THEN
		d.forgot_floor_ms := greatest(d.forgot_floor_ms,
									  d.quiet_until_ms +
									  greatest(d.widest_margin_ms,
											   coalesce(clock_margin_ms, 60000)) +
									  (d.quiet_until_ms - d.quiet_from_ms));
	END IF;
	IF quiet_ms IS NOT NULL THEN
		d.counter := d.counter + 1;
	END IF;
	IF quiet_ms IS NOT NULL OR d IS DISTINCT FROM was THEN
		UPDATE snowid_coordinator.datacenters x
		SET written_under = d.written_under, generation = d.generation,
			counter = d.counter, quiet_from_ms = d.quiet_from_ms,
			quiet_until_ms = d.quiet_until_ms,
			forgot_floor_ms = d.forgot_floor_ms,
			longest_quiet_ms = d.longest_quiet_ms,
			widest_margin_ms = d.widest_margin_ms
		WHERE x.datacenter = dc;
	END IF;
	RETURN d;
END
$$;

-- An administrator's step: datacenter dc, of which no server ever claimed
-- a worker id, recorded as brand new: a new generation, without a quiet
-- period or its floor, and without what the fleet declared.  Refused if
-- any worker id of it has a row (a holder or a fence), or if it has a
-- record of the server that wrote its claims (any call of a server writes
-- one, a claim the quiet period refused too: after it the database cannot
-- tell a new datacenter from one that lost its claims, as after a restore
-- that the refused claim then recorded anew).
CREATE FUNCTION snowid_coordinator.new_datacenter(datacenter integer)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	now_ms		bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	IF EXISTS (SELECT FROM snowid_coordinator.worker_ids x
			   WHERE x.datacenter = dc) OR
		EXISTS (SELECT FROM snowid_coordinator.datacenters x
				WHERE x.datacenter = dc AND x.written_under IS NOT NULL) THEN
		RAISE EXCEPTION 'datacenter % is not new', dc
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'It has worker ids, or a record of the server that wrote its claims: a server called for it already.',
				  HINT = 'Mark a datacenter new only before its first claim.';
	END IF;
	UPDATE snowid_coordinator.datacenters x
	SET written_under = snowid_coordinator.server_now(),
		generation = greatest(now_ms, x.generation + 1), counter = 0,
		quiet_from_ms = now_ms, quiet_until_ms = now_ms, forgot_floor_ms = 0,
		longest_quiet_ms = 0, widest_margin_ms = 0
	WHERE x.datacenter = dc;
	o.outcome := 'ok';
	RETURN o;
END
$$;

-- An administrator's step: the quiet period of datacenter dc and its
-- floor ended now, what the fleet declared (the longest quiet period, the
-- widest clock margin) forgotten, which the servers declare again at their
-- next call, and the database recorded as the writer of its claims, for a
-- database known to have lost nothing (a failover to a synchronous
-- standby).
CREATE FUNCTION snowid_coordinator.end_quiet(datacenter integer)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	now_ms		bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	UPDATE snowid_coordinator.datacenters x
	SET written_under = snowid_coordinator.server_now(),
		quiet_from_ms = now_ms, quiet_until_ms = now_ms, forgot_floor_ms = 0,
		longest_quiet_ms = 0, widest_margin_ms = 0
	WHERE x.datacenter = dc;
	o.outcome := 'ok';
	RETURN o;
END
$$;

-- -----------------------------------------------------------------------
-- The functions the snowid servers call
-- -----------------------------------------------------------------------

-- The claim, for good.
--
-- identity claims worker id want (-1: none configured) of datacenter, in
-- 0..max (the highest worker id of its layout), preferring prefer (-1:
-- none; the id it held last) when it holds none; usable_ms is the latest
-- fence it can start above now (its clock plus its drift budget).
--
-- An identity keeps the id it holds.  Without one it takes the configured
-- id if free; with none configured, the preferred id if free, or else the
-- lowest free id in 0..max.  Free is: no holder, or a lease that has run
-- out (whose fence covers all its holder issued).  An id fenced past
-- usable_ms is not taken: the choice goes on to the next free id, and a
-- configured or kept id is refused as fenced.  A server that already holds
-- its id causes no write.  The ids the identity holds besides the one it
-- keeps (beyond max after a layout change) are retired, fenced at
-- usable_ms + 1: a server may have issued up to usable_ms, that millisecond
-- included (snowid servers send the later of their clock plus drift budget
-- and their generator, which after a restart may lie ahead of both).
--
-- For the forgetting rule (see recall()), optionally: quiet_ms, how long a
-- quiet period must last for the caller's fleet; reassert, whether want or
-- prefer is the id the caller holds or its cache names; the generation and
-- counter it saw last; and clock_margin_ms, how far apart the fleet's
-- clocks may lie (snowid.clock_margin).
--
-- ok: worker_id, and floor_ms, its fence (0 if none): the server's ids
-- start at or above it.  Refusals: all_held, fenced, quiet (until
-- fence_ms), conflict (holder holds the configured id, worker_id),
-- holds_other (worker_id is this identity's).  A configured id past max is
-- an error (a caller's mistake).
CREATE FUNCTION snowid_coordinator.run_claim(datacenter integer,
											 identity text, secret text,
											 want integer, max integer,
											 prefer integer, usable_ms bigint,
											 quiet_ms bigint DEFAULT NULL,
											 reassert boolean DEFAULT false,
											 seen_generation bigint DEFAULT NULL,
											 seen_counter bigint DEFAULT NULL,
											 clock_margin_ms bigint DEFAULT NULL)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	hi			integer := max;
	usable		bigint := usable_ms;
	now_ms		bigint;
	quiet_until bigint;
	st			snowid_coordinator.datacenters;
	keep		integer;
	w			snowid_coordinator.worker_ids;
	f			bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_called_by('claim');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('want', want, -1);
	PERFORM snowid_coordinator.check_id('max', hi, 0);
	PERFORM snowid_coordinator.check_id('prefer', prefer, -1);
	PERFORM snowid_coordinator.check_ms('usable_ms', usable, 0);
	IF want > hi THEN
		RAISE EXCEPTION 'worker id % exceeds the highest worker id %', want, hi
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The configured worker id must lie between 0 and max.';
	END IF;
	PERFORM snowid_coordinator.check_given('reassert', reassert);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	PERFORM snowid_coordinator.check_holder(dc, me, secret);
	PERFORM snowid_coordinator.check_ahead('usable_ms', usable, now_ms);
	st := snowid_coordinator.recall(dc, now_ms, quiet_ms, clock_margin_ms,
									seen_generation, seen_counter);
	IF st.quiet_until_ms > now_ms THEN
		-- a refusal names when a grant can be made: past the floor too
		quiet_until := greatest(st.quiet_until_ms, st.forgot_floor_ms);
	END IF;
	IF quiet_ms IS NOT NULL THEN
		o.generation := st.generation;
		o.counter := st.counter;
	END IF;

	-- the id this identity holds for good in 0..max: want if it is one,
	-- else the lowest
	SELECT x.worker_id INTO keep
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
	  AND x.worker_id <= hi
	ORDER BY x.worker_id = want DESC, x.worker_id
	LIMIT 1;

	IF want >= 0 THEN
		IF keep IS NOT NULL AND keep <> want THEN
			o.outcome := 'holds_other';
			o.worker_id := keep;
			RETURN o;
		END IF;
		IF keep IS NULL THEN
			SELECT * INTO w FROM snowid_coordinator.worker_ids x
			WHERE x.datacenter = dc AND x.worker_id = want;
			IF w.holder IS NOT NULL AND
				(NOT w.on_lease OR w.lease_expires_ms > now_ms) AND
				quiet_until IS NOT NULL AND NOT reassert THEN
				-- in a quiet period, a claim that is not a re-assertion is
				-- refused as quiet first: what the database holds may be
				-- what it forgot
				o.outcome := 'quiet';
				o.fence_ms := quiet_until;
				RETURN o;
			END IF;
			IF w.holder IS NOT NULL AND
				(NOT w.on_lease OR w.lease_expires_ms > now_ms) THEN
				o.outcome := 'conflict';
				o.worker_id := want;
				o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
				RETURN o;
			END IF;
		END IF;
		keep := want;
	ELSIF keep IS NULL THEN
		keep := snowid_coordinator.pick(dc, hi, usable, prefer, NULL, now_ms);
		IF keep IS NULL THEN
			o.outcome := 'all_held';
			RETURN o;
		END IF;
	END IF;

	-- in a quiet period, only the id this identity holds, or re-asserts
	IF quiet_until IS NOT NULL AND NOT (reassert AND keep IN (want, prefer)) AND
		NOT EXISTS (SELECT FROM snowid_coordinator.worker_ids x
					WHERE x.datacenter = dc AND x.worker_id = keep
					  AND x.holder = me AND NOT x.on_lease) THEN
		o.outcome := 'quiet';
		o.fence_ms := quiet_until;
		RETURN o;
	END IF;

	f := snowid_coordinator.fence_of(dc, keep);
	-- a grant that is not a re-assertion starts past the last quiet period
	IF NOT (reassert AND keep IN (want, prefer)) AND
		NOT EXISTS (SELECT FROM snowid_coordinator.worker_ids x
					WHERE x.datacenter = dc AND x.worker_id = keep
					  AND x.holder = me AND NOT x.on_lease) THEN
		f := greatest(f, st.forgot_floor_ms);
	END IF;
	IF f > usable THEN
		-- fenced, or held back by the floor of a quiet period: refused as
		-- quiet until then
		o.outcome := CASE WHEN f > snowid_coordinator.fence_of(dc, keep)
						  THEN 'quiet' ELSE 'fenced' END;
		o.worker_id := CASE WHEN o.outcome = 'fenced' THEN keep END;
		o.fence_ms := f;
		RETURN o;
	END IF;

	-- the other ids this identity holds for good (one beyond max after a
	-- layout change, a duplicate written by hand) retired, fenced at what
	-- it may have issued with them
	PERFORM snowid_coordinator.retire(dc, x.worker_id, usable + 1)
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
	  AND x.worker_id <> keep;

	-- taken, unless held already: from no one, or from a lease run out
	-- (whose fence stays)
	INSERT INTO snowid_coordinator.worker_ids AS x (datacenter, worker_id, holder)
	VALUES (dc, keep, me)
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET holder = excluded.holder,
		on_lease = false,
		lease_expires_ms = NULL,
		lease_floor_ms = NULL,
		lease_token = NULL
	WHERE x.holder IS DISTINCT FROM excluded.holder OR x.on_lease;
	PERFORM snowid_coordinator.register_holder(dc, me, secret);

	o.outcome := 'ok';
	o.worker_id := keep;
	o.floor_ms := f;
	RETURN o;
END
$$;

-- The lease claim.
--
-- identity claims a worker id of datacenter in 0..max on a lease of
-- lease_ms; client_ms is where its generator is (Unix ms), usable_ms the
-- latest fence it can start above now, prefer the id it held last (-1:
-- none), wait_ms how far past usable_ms its own lease's fence may lie and
-- still be kept (its callers wait for the clock that long), token a new
-- token (16 lower-case hex digits) that the renewals and the release of
-- this lease name; and quiet_ms, the generation and counter seen and
-- clock_margin_ms as run_claim() takes them.
--
-- The floor of a claim is always the id's fence as it is now: every id any
-- holder issued with it lies below.  A server that still holds a lease
-- (even one run out, as long as nobody took the id since; a clean stop
-- parks it, its fence lowered to its last id) keeps it if its fence lies
-- within usable_ms plus wait_ms; otherwise it takes the id it held last if
-- that is free (no holder, or a lease that ran out) and it can start above
-- its fence now, else the lowest such id.  A permanent claim is never free,
-- but to its own holder: a server moved from a claim for good onto a lease
-- takes that id on lease, as it would its own lease.  Its other leases are
-- given back, fenced as they are, and its other ids held for good retired,
-- fenced past client_ms and usable_ms.  The new fence is a
-- lease past the floor or client_ms, whichever is later.
--
-- ok: worker_id, floor_ms, fence_ms (the new fence: ids below it only),
-- lease_ms.  Refusals: all_held, fenced, quiet.
CREATE FUNCTION snowid_coordinator.run_lease_claim(datacenter integer,
												   identity text,
												   secret text, max integer,
												   lease_ms bigint,
											   client_ms bigint,
											   usable_ms bigint,
											   prefer integer,
											   wait_ms bigint, token text,
											   quiet_ms bigint DEFAULT NULL,
											   seen_generation bigint DEFAULT NULL,
											   seen_counter bigint DEFAULT NULL,
											   clock_margin_ms bigint DEFAULT NULL)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	hi			integer := max;
	lease		bigint := lease_ms;
	client		bigint := client_ms;
	usable		bigint := usable_ms;
	tok			text := token;
	now_ms		bigint;
	quiet_until bigint;
	st			snowid_coordinator.datacenters;
	keep		integer;
	f			bigint;
	fresh		bigint := 0;
	new_fence	bigint;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_called_by('lease_claim');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('max', hi, 0);
	PERFORM snowid_coordinator.check_ms('lease_ms', lease, 1, 86400000,
		'a day, the longest lease of a snowid server');
	PERFORM snowid_coordinator.check_ms('client_ms', client, 0);
	PERFORM snowid_coordinator.check_ms('usable_ms', usable, 0);
	PERFORM snowid_coordinator.check_id('prefer', prefer, -1);
	PERFORM snowid_coordinator.check_ms('wait_ms', wait_ms, 0, 3600000,
		'an hour, the longest wait of a snowid server');
	PERFORM snowid_coordinator.check_token(tok);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	PERFORM snowid_coordinator.check_holder(dc, me, secret);
	PERFORM snowid_coordinator.check_ahead('client_ms', client, now_ms);
	PERFORM snowid_coordinator.check_ahead('usable_ms', usable, now_ms);
	st := snowid_coordinator.recall(dc, now_ms, quiet_ms, clock_margin_ms,
									seen_generation, seen_counter);
	IF st.quiet_until_ms > now_ms THEN
		-- a refusal names when a grant can be made: past the floor too
		quiet_until := greatest(st.quiet_until_ms, st.forgot_floor_ms);
	END IF;
	IF quiet_ms IS NOT NULL THEN
		o.generation := st.generation;
		o.counter := st.counter;
	END IF;

	-- a lease of this identity (run out or not) it can start above within
	-- its wait
	SELECT x.worker_id INTO keep
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND x.on_lease
	  AND x.worker_id <= hi
	  AND greatest(x.fence_ms, st.forgot_floor_ms) <= usable + wait_ms
	ORDER BY x.worker_id
	LIMIT 1;
	-- a server moved from a claim for good onto a lease: that id is its
	-- lease
	IF keep IS NULL THEN
		SELECT x.worker_id INTO keep
		FROM snowid_coordinator.worker_ids x
		WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
		  AND x.worker_id <= hi
		  AND greatest(x.fence_ms, st.forgot_floor_ms) <= usable + wait_ms
		ORDER BY x.worker_id
		LIMIT 1;
	END IF;
	IF keep IS NULL AND quiet_until IS NOT NULL THEN
		-- in a quiet period, only a lease this identity holds
		o.outcome := 'quiet';
		o.fence_ms := quiet_until;
		RETURN o;
	END IF;
	IF keep IS NULL THEN
		keep := snowid_coordinator.pick(dc, hi, usable, prefer, me, now_ms);
		IF keep IS NULL THEN
			o.outcome := 'all_held';
			RETURN o;
		END IF;
		-- a grant that is not a re-assertion starts past the last quiet
		-- period
		fresh := greatest(snowid_coordinator.fence_of(dc, keep),
						  st.forgot_floor_ms);
		IF fresh > usable THEN
			-- fenced, or held back by the floor of a quiet period: refused
			-- as quiet until then
			o.outcome := CASE WHEN fresh > snowid_coordinator.fence_of(dc, keep)
							  THEN 'quiet' ELSE 'fenced' END;
			o.worker_id := CASE WHEN o.outcome = 'fenced' THEN keep END;
			o.fence_ms := fresh;
			RETURN o;
		END IF;
	END IF;

	-- its other leases given back (another id, or one beyond max), each
	-- fenced as it is
	PERFORM snowid_coordinator.retire(dc, x.worker_id, 0)
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND x.on_lease
	  AND x.worker_id <> keep;
	-- and its other ids held for good, fenced past what it issued with
	-- them
	PERFORM snowid_coordinator.retire(dc, x.worker_id,
									  greatest(client, usable + 1))
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.holder = me AND NOT x.on_lease
	  AND x.worker_id <> keep;

	-- taken, from a lease run out too (whose fence stays), above its fence;
	-- a lease claim is never a re-assertion (a renewal is): even its own
	-- lease, whose row may be one the database went back to, starts past
	-- the floor the last quiet period left
	f := greatest(snowid_coordinator.fence_of(dc, keep), st.forgot_floor_ms);
	new_fence := greatest(client, f) + lease;
	INSERT INTO snowid_coordinator.worker_ids AS x
		(datacenter, worker_id, holder, on_lease, lease_expires_ms,
		 lease_floor_ms, lease_token, fence_ms)
	VALUES (dc, keep, me, true, now_ms + lease, f, tok, new_fence)
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET holder = excluded.holder,
		on_lease = true,
		lease_expires_ms = excluded.lease_expires_ms,
		lease_floor_ms = excluded.lease_floor_ms,
		lease_token = excluded.lease_token,
		fence_ms = greatest(x.fence_ms, excluded.fence_ms);
	PERFORM snowid_coordinator.register_holder(dc, me, secret);

	o.outcome := 'ok';
	o.worker_id := keep;
	o.floor_ms := f;
	o.fence_ms := new_fence;
	o.lease_ms := lease;
	RETURN o;
END
$$;

-- The renewal.
--
-- Succeeds only while worker_id is identity's lease of the claim token
-- names and the lease has not run out by this database's clock: the lease
-- then runs lease_ms from now, and the fence moves up to want_ms, never
-- down.  A lease that ran out, or that the database does not hold (it
-- forgot it: in a quiet period too), is not renewed: its holder may have
-- been stopped past it while another server took the id, which the
-- database may have forgotten.  The holder's next call is a lease claim,
-- held to every rule of a new grant.  quiet_ms, the generation and counter
-- seen and clock_margin_ms: see run_claim(); client_ms (the generator) is
-- taken from servers that send it, and unused.
--
-- ok: worker_id, floor_ms (the lease's floor), fence_ms (the fence now,
-- past want_ms if it stood higher), lease_ms.  Refusal: lost, with the
-- holder of the id now (NULL: no one).
CREATE FUNCTION snowid_coordinator.run_lease_renew(datacenter integer,
												   identity text,
												   secret text,
												   worker_id integer,
											   lease_ms bigint,
											   want_ms bigint, token text,
											   quiet_ms bigint DEFAULT NULL,
											   client_ms bigint DEFAULT NULL,
											   seen_generation bigint DEFAULT NULL,
											   seen_counter bigint DEFAULT NULL,
											   clock_margin_ms bigint DEFAULT NULL)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	id			integer := worker_id;
	lease		bigint := lease_ms;
	want		bigint := want_ms;
	tok			text := token;
	now_ms		bigint;
	st			snowid_coordinator.datacenters;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_called_by('lease_renew');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	PERFORM snowid_coordinator.check_ms('lease_ms', lease, 1, 86400000,
		'a day, the longest lease of a snowid server');
	PERFORM snowid_coordinator.check_ms('want_ms', want, 0);
	PERFORM snowid_coordinator.check_token(tok);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	-- (by hand, in a datacenter without a row: lost, nothing written)
	now_ms := snowid_coordinator.lock_datacenter(dc, quiet_ms IS NOT NULL);
	IF now_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_holder(dc, me, secret);
		PERFORM snowid_coordinator.check_ahead('want_ms', want, now_ms);
		PERFORM snowid_coordinator.check_ahead('client_ms', client_ms, now_ms);
		st := snowid_coordinator.recall(dc, now_ms, quiet_ms, clock_margin_ms,
										seen_generation, seen_counter);
	END IF;
	IF quiet_ms IS NOT NULL THEN
		o.generation := st.generation;
		o.counter := st.counter;
	END IF;

	SELECT * INTO w FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id = id;
	IF now_ms IS NULL OR w.holder IS DISTINCT FROM me OR NOT w.on_lease OR
		w.lease_token IS DISTINCT FROM tok OR
		-- run out by this database's clock
		w.lease_expires_ms <= now_ms THEN
		o.outcome := 'lost';
		o.worker_id := id;
		o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
		RETURN o;
	END IF;

	UPDATE snowid_coordinator.worker_ids x
	SET lease_expires_ms = now_ms + lease,
		fence_ms = greatest(x.fence_ms, want)
	WHERE x.datacenter = dc AND x.worker_id = id
	RETURNING x.fence_ms INTO o.fence_ms;
	PERFORM snowid_coordinator.register_holder(dc, me, secret);

	o.outcome := 'ok';
	o.worker_id := id;
	o.floor_ms := w.lease_floor_ms;
	o.lease_ms := lease;
	RETURN o;
END
$$;

-- The release.
--
-- The holder of worker_id's lease of the claim token names, having stopped
-- issuing, gives it back (park false) or parks it (park true): the fence
-- goes to final_ms (just past its last id), lowered too, but never below
-- the floor it took the id with.  A parked lease stays this identity's
-- until it runs out, so that the server, started again, takes it back at
-- once above its last id.
--
-- ok: worker_id, floor_ms, fence_ms (the fence left).  Refusal: lost, with
-- the holder of the id now (NULL: no one).
CREATE FUNCTION snowid_coordinator.run_lease_release(datacenter integer,
													 identity text,
													 secret text,
													 worker_id integer,
												 final_ms bigint,
												 park boolean, token text)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	id			integer := worker_id;
	final		bigint := final_ms;
	tok			text := token;
	now_ms		bigint;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_called_by('lease_release');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	PERFORM snowid_coordinator.check_ms('final_ms', final, 0);
	PERFORM snowid_coordinator.check_given('park', park);
	PERFORM snowid_coordinator.check_token(tok);
	now_ms := snowid_coordinator.lock_datacenter(dc, false);
	IF now_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_holder(dc, me, secret);
		PERFORM snowid_coordinator.check_ahead('final_ms', final, now_ms);
	END IF;

	SELECT * INTO w FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id = id;
	IF now_ms IS NULL OR w.holder IS DISTINCT FROM me OR NOT w.on_lease OR
		w.lease_token IS DISTINCT FROM tok THEN
		o.outcome := 'lost';
		o.worker_id := id;
		o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
		RETURN o;
	END IF;

	-- the one place a fence may fall: to what its holder issued
	UPDATE snowid_coordinator.worker_ids x
	SET fence_ms = greatest(final, x.lease_floor_ms),
		holder = CASE WHEN park THEN x.holder END,
		on_lease = park,
		lease_expires_ms = CASE WHEN park THEN x.lease_expires_ms END,
		lease_floor_ms = CASE WHEN park THEN x.lease_floor_ms END,
		lease_token = CASE WHEN park THEN x.lease_token END
	WHERE x.datacenter = dc AND x.worker_id = id
	RETURNING x.fence_ms INTO o.fence_ms;
	PERFORM snowid_coordinator.register_holder(dc, me, secret);

	o.outcome := 'ok';
	o.worker_id := id;
	o.floor_ms := w.lease_floor_ms;
	RETURN o;
END
$$;

-- An administrator's repair: worker_id taken from whoever holds it (a
-- server gone for good, or a lease that will not come back), its fence
-- raised to this server's clock plus margin_ms, never lowered.  A server
-- may have issued up to its clock plus its drift budget, that millisecond
-- included: the margin covers how far its clock ran ahead of this
-- server's, plus its snowid.max_drift_ms, plus 1, unless it stopped longer
-- ago than that.
--
-- ok: worker_id, fence_ms (the fence now), holder (who held it, or NULL).
CREATE FUNCTION snowid_coordinator.free(datacenter integer, worker_id integer,
										margin_ms bigint)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	id			integer := worker_id;
	margin		bigint := margin_ms;
	now_ms		bigint;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	PERFORM snowid_coordinator.check_ms('margin_ms', margin, 0, 176400000,
		'two days and an hour: no snowid server issues ids further ahead');
	now_ms := snowid_coordinator.lock_datacenter(dc, true);

	SELECT * INTO w FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id = id;
	o.outcome := 'ok';
	o.worker_id := id;
	o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
	o.fence_ms := snowid_coordinator.retire(dc, id, now_ms + margin);
	RETURN o;
END
$$;

-- -----------------------------------------------------------------------
-- The entry points of the snowid servers: procedures, each called with
-- CALL on its own, that commit right after their function's work, so that
-- the lock of the datacenter never outlasts the CALL.  Inside a
-- transaction block (or a multi-statement query string) their first COMMIT
-- fails (SQLSTATE 2D000, invalid transaction termination) before anything
-- is locked.  They run as their caller; their functions run_<name>() run
-- as the owner, and refuse to be called by anything but their procedure.
-- The outcome comes back in the INOUT parameters, which the caller leaves
-- out: one row of (outcome, worker_id, floor_ms, fence_ms, lease_ms,
-- holder), as described at run_<name>().  secret is the caller's holder
-- secret (64 lower-case hex digits).
-- -----------------------------------------------------------------------

CREATE PROCEDURE snowid_coordinator.claim(
	datacenter integer, identity text, secret text,
	want integer, max integer, prefer integer, usable_ms bigint,
	quiet_ms bigint DEFAULT NULL, reassert boolean DEFAULT false,
	seen_generation bigint DEFAULT NULL, seen_counter bigint DEFAULT NULL,
	clock_margin_ms bigint DEFAULT NULL,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT floor_ms bigint DEFAULT NULL,
	INOUT fence_ms bigint DEFAULT NULL,
	INOUT lease_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL,
	INOUT generation bigint DEFAULT NULL,
	INOUT counter bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.outcome;
BEGIN
	COMMIT;
	o := snowid_coordinator.run_claim(datacenter, identity, secret, want, max,
		prefer, usable_ms, quiet_ms, reassert, seen_generation, seen_counter,
		clock_margin_ms);
	COMMIT;
	outcome := o.outcome;
	worker_id := o.worker_id;
	floor_ms := o.floor_ms;
	fence_ms := o.fence_ms;
	lease_ms := o.lease_ms;
	holder := o.holder;
	generation := o.generation;
	counter := o.counter;
END
$$;

CREATE PROCEDURE snowid_coordinator.lease_claim(
	datacenter integer, identity text, secret text,
	max integer, lease_length_ms bigint, client_ms bigint, usable_ms bigint,
	prefer integer, wait_ms bigint, token text, quiet_ms bigint DEFAULT NULL,
	seen_generation bigint DEFAULT NULL, seen_counter bigint DEFAULT NULL,
	clock_margin_ms bigint DEFAULT NULL,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT floor_ms bigint DEFAULT NULL,
	INOUT fence_ms bigint DEFAULT NULL,
	INOUT lease_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL,
	INOUT generation bigint DEFAULT NULL,
	INOUT counter bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.outcome;
BEGIN
	COMMIT;
	o := snowid_coordinator.run_lease_claim(datacenter, identity, secret, max,
		lease_length_ms, client_ms, usable_ms, prefer, wait_ms, token, quiet_ms,
		seen_generation, seen_counter, clock_margin_ms);
	COMMIT;
	outcome := o.outcome;
	worker_id := o.worker_id;
	floor_ms := o.floor_ms;
	fence_ms := o.fence_ms;
	lease_ms := o.lease_ms;
	holder := o.holder;
	generation := o.generation;
	counter := o.counter;
END
$$;

CREATE PROCEDURE snowid_coordinator.lease_renew(
	datacenter integer, identity text, secret text,
	held_worker_id integer, lease_length_ms bigint, want_ms bigint,
	token text, quiet_ms bigint DEFAULT NULL, client_ms bigint DEFAULT NULL,
	seen_generation bigint DEFAULT NULL, seen_counter bigint DEFAULT NULL,
	clock_margin_ms bigint DEFAULT NULL,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT floor_ms bigint DEFAULT NULL,
	INOUT fence_ms bigint DEFAULT NULL,
	INOUT lease_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL,
	INOUT generation bigint DEFAULT NULL,
	INOUT counter bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.outcome;
BEGIN
	COMMIT;
	o := snowid_coordinator.run_lease_renew(datacenter, identity, secret,
		held_worker_id, lease_length_ms, want_ms, token, quiet_ms, client_ms,
		seen_generation, seen_counter, clock_margin_ms);
	COMMIT;
	outcome := o.outcome;
	worker_id := o.worker_id;
	floor_ms := o.floor_ms;
	fence_ms := o.fence_ms;
	lease_ms := o.lease_ms;
	holder := o.holder;
	generation := o.generation;
	counter := o.counter;
END
$$;

CREATE PROCEDURE snowid_coordinator.lease_release(
	datacenter integer, identity text, secret text,
	held_worker_id integer, final_ms bigint, park boolean, token text,
	INOUT outcome text DEFAULT NULL,
	INOUT worker_id integer DEFAULT NULL,
	INOUT floor_ms bigint DEFAULT NULL,
	INOUT fence_ms bigint DEFAULT NULL,
	INOUT lease_ms bigint DEFAULT NULL,
	INOUT holder text DEFAULT NULL,
	INOUT generation bigint DEFAULT NULL,
	INOUT counter bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $$
DECLARE
	o			snowid_coordinator.outcome;
BEGIN
	COMMIT;
	o := snowid_coordinator.run_lease_release(datacenter, identity, secret,
		held_worker_id, final_ms, park, token);
	COMMIT;
	outcome := o.outcome;
	worker_id := o.worker_id;
	floor_ms := o.floor_ms;
	fence_ms := o.fence_ms;
	lease_ms := o.lease_ms;
	holder := o.holder;
	generation := o.generation;
	counter := o.counter;
END
$$;

-- An administrator's step for a server that lost its secret file (its
-- calls are refused as those of another server): the hash registered for
-- identity dropped, so that the next call of that identity registers its
-- new secret.  Call it only once sure that the server refused is the one
-- that claims under that identity: whoever calls first then becomes it.
-- True if a hash was dropped.
CREATE FUNCTION snowid_coordinator.reset_secret(datacenter integer,
												identity text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	IF snowid_coordinator.lock_datacenter(dc, false) IS NULL THEN
		RETURN false;
	END IF;
	DELETE FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = me;
	RETURN FOUND;
END
$$;

-- Only the owner calls anything until granted (see the top of this file)
REVOKE ALL ON FUNCTION
	snowid_coordinator.check_given(text, anyelement),
	snowid_coordinator.check_id(text, integer, integer),
	snowid_coordinator.check_ms(text, bigint, bigint, bigint, text),
	snowid_coordinator.check_ahead(text, bigint, bigint),
	snowid_coordinator.check_identity(text),
	snowid_coordinator.check_token(text),
	snowid_coordinator.lock_datacenter(integer, boolean),
	snowid_coordinator.holder_name(text, boolean),
	snowid_coordinator.retire(integer, integer, bigint),
	snowid_coordinator.pick(integer, integer, bigint, integer, text, bigint),
	snowid_coordinator.fence_of(integer, integer),
	snowid_coordinator.check_secret(text),
	snowid_coordinator.check_holder(integer, text, text),
	snowid_coordinator.register_holder(integer, text, text),
	snowid_coordinator.check_called_by(text),
	snowid_coordinator.run_claim(integer, text, text, integer, integer, integer, bigint, bigint, boolean, bigint, bigint, bigint),
	snowid_coordinator.run_lease_claim(integer, text, text, integer, bigint, bigint, bigint, integer, bigint, text, bigint, bigint, bigint, bigint),
	snowid_coordinator.run_lease_renew(integer, text, text, integer, bigint, bigint, text, bigint, bigint, bigint, bigint, bigint),
	snowid_coordinator.run_lease_release(integer, text, text, integer, bigint, boolean, text),
	snowid_coordinator.free(integer, integer, bigint),
	snowid_coordinator.reset_secret(integer, text),
	snowid_coordinator.server_now(),
	snowid_coordinator.check_declared(bigint, bigint),
	snowid_coordinator.recall(integer, bigint, bigint, bigint, bigint, bigint),
	snowid_coordinator.new_datacenter(integer),
	snowid_coordinator.end_quiet(integer)
FROM PUBLIC;
REVOKE ALL ON ALL PROCEDURES IN SCHEMA snowid_coordinator FROM PUBLIC;

-- The privileges as this file states them, whatever default privileges
-- (ALTER DEFAULT PRIVILEGES) of the installing role granted at creation,
-- or an empty schema of the name had: the owner's alone on the schema, the
-- tables, the view and the functions, and USAGE of the types to everyone
-- (as without default privileges).  The grants to the servers and to
-- administrators are made afterwards, by hand (see the top of this file).
DO $$
DECLARE
	o			record;
BEGIN
	FOR o IN
		SELECT 'SCHEMA' AS kind, pg_catalog.quote_ident(n.nspname) AS name,
			   a.grantee
		FROM pg_catalog.pg_namespace n,
			 pg_catalog.aclexplode(n.nspacl) a
		WHERE n.nspname = 'snowid_coordinator' AND a.grantee <> n.nspowner
		UNION
		SELECT 'TABLE', c.oid::pg_catalog.regclass::text, a.grantee
		FROM pg_catalog.pg_class c,
			 pg_catalog.aclexplode(c.relacl) a
		WHERE c.relnamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND c.relkind IN ('r', 'v', 'S', 'm', 'p', 'f')
		  AND a.grantee <> c.relowner
		UNION
		SELECT CASE WHEN p.prokind = 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
			   p.oid::pg_catalog.regprocedure::text, a.grantee
		FROM pg_catalog.pg_proc p,
			 pg_catalog.aclexplode(p.proacl) a
		WHERE p.pronamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND a.grantee <> p.proowner
		UNION
		SELECT 'TYPE', t.oid::pg_catalog.regtype::text, a.grantee
		FROM pg_catalog.pg_type t,
			 pg_catalog.aclexplode(t.typacl) a
		WHERE t.typnamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND a.grantee <> t.typowner
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s CASCADE',
								  o.kind, o.name,
								  CASE WHEN o.grantee = 0 THEN 'PUBLIC'
									   ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(o.grantee))
								  END);
	END LOOP;
	GRANT ALL ON SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT ALL ON ALL TABLES IN SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT ALL ON ALL ROUTINES IN SCHEMA snowid_coordinator TO CURRENT_USER;
	GRANT USAGE ON TYPE snowid_coordinator.outcome TO PUBLIC;
END
$$;
