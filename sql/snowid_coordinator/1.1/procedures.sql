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
-- proof for the call: the procedure's name and its arguments but the
-- proof (see call_text() and check_holder(); prove() takes its n first),
-- or its holder secret itself (64 lower-case hex digits, a server of
-- release 1.3.0).
-- -----------------------------------------------------------------------

-- Takes the n of a holder proof made for call (the procedure's name and
-- its arguments but the proof, see call_text() and check_holder()) before
-- the call does anything else, committed by the calling procedure at
-- once, so that a proof read from a log never makes its call again,
-- whether the call it came with was granted, refused or failed.  Raises
-- SQLSTATE 28000 for an n no larger than the largest taken for its
-- holder, taken already, or made before the database's start
-- (proofs_taken_until()), naming the last: the server sends a larger.
-- Anything else (a proof its key does not make for call, an identity
-- without a key, an n too far from the clock) it leaves to the call
-- (check_proof()), and takes nothing.
--
-- It takes nothing a caller could keep locked against another call, so
-- that it may run as any caller calls it (a transaction left open, a DO
-- block): it reads without locks, inserts its n into proofs_taken, which
-- waits only for an uncommitted insert of that very n (a replay of the
-- same proof, for at most the call's lock_timeout), and removes old rows
-- only where no other call holds them (SKIP LOCKED).
CREATE OR REPLACE PROCEDURE snowid_coordinator.prove(datacenter integer, identity text,
										  secret text, call text[])
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
	p			record;
	key			bytea;
	taken		bigint;
	now_us		bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
BEGIN
	-- the n taken is kept across a crash restart, as a grant is
	PERFORM snowid_coordinator.durable_commit();
	PERFORM snowid_coordinator.check_given('call', call);
	SELECT * INTO p FROM snowid_coordinator.proof_parts(secret);
	IF p.n IS NULL OR
		abs(p.n - now_us) > @SNOWID_CLOCK_MARGIN_MAX_MS@::bigint * 1000 THEN
		RETURN;
	END IF;
	SELECT h.secret_sha256 INTO key FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = me;
	IF key IS NULL OR
		p.proof <> snowid_coordinator.proof_of(encode(key, 'hex'), p.n,
											   snowid_coordinator.call_text(call)) THEN
		RETURN;
	END IF;
	taken := greatest(snowid_coordinator.last_proof_n(dc, me),
					  snowid_coordinator.proofs_taken_until());
	IF p.n > taken THEN
		INSERT INTO snowid_coordinator.proofs_taken AS t (datacenter, identity, n)
		VALUES (dc, me, p.n)
		ON CONFLICT DO NOTHING;
		IF FOUND THEN
			DELETE FROM snowid_coordinator.proofs_taken t
			WHERE t.ctid IN (SELECT o.ctid FROM snowid_coordinator.proofs_taken o
							 WHERE (o.datacenter = dc AND o.identity = me AND o.n < p.n)
								OR o.n < now_us - @SNOWID_CLOCK_MARGIN_MAX_MS@::bigint * 1000
							 FOR UPDATE SKIP LOCKED);
			RETURN;
		END IF;
		-- another call took this very n meanwhile
		taken := p.n;
	END IF;
	RAISE EXCEPTION 'holder proof taken already: the last n taken is %', taken
		USING ERRCODE = 'invalid_authorization_specification',
			  DETAIL = 'Each call of a holder sends a proof with an n larger than the last one the database took, made after the database started.';
END
$$;

CREATE OR REPLACE PROCEDURE snowid_coordinator.claim(
	datacenter integer, identity text, secret text,
	want integer, max integer, prefer integer, usable_ms bigint,
	quiet_ms bigint DEFAULT NULL, reassert boolean DEFAULT false,
	seen_generation bigint DEFAULT NULL, seen_counter bigint DEFAULT NULL,
	clock_margin_ms bigint DEFAULT NULL, confirmed_ms bigint DEFAULT NULL,
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
	-- what the proof is for: this call
	made_for	text[] :=
				   ARRAY['claim', datacenter::text, identity, want::text, max::text,
						 prefer::text, usable_ms::text, quiet_ms::text, reassert::text,
						 seen_generation::text, seen_counter::text,
						 clock_margin_ms::text, confirmed_ms::text];
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret, made_for);
	COMMIT;
	o := snowid_coordinator.run_claim(datacenter, identity, secret, want, max,
		prefer, usable_ms, quiet_ms, reassert, seen_generation, seen_counter,
		clock_margin_ms, confirmed_ms);
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

CREATE OR REPLACE PROCEDURE snowid_coordinator.lease_claim(
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
	-- what the proof is for: this call
	made_for	text[] :=
				   ARRAY['lease_claim', datacenter::text, identity, max::text,
						 lease_length_ms::text, client_ms::text, usable_ms::text,
						 prefer::text, wait_ms::text, token, quiet_ms::text,
						 seen_generation::text, seen_counter::text,
						 clock_margin_ms::text];
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret, made_for);
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

CREATE OR REPLACE PROCEDURE snowid_coordinator.lease_renew(
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
	-- what the proof is for: this call
	made_for	text[] :=
				   ARRAY['lease_renew', datacenter::text, identity, held_worker_id::text,
						 lease_length_ms::text, want_ms::text, token, quiet_ms::text,
						 client_ms::text, seen_generation::text, seen_counter::text,
						 clock_margin_ms::text];
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret, made_for);
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

CREATE OR REPLACE PROCEDURE snowid_coordinator.lease_release(
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
	-- what the proof is for: this call
	made_for	text[] :=
				   ARRAY['lease_release', datacenter::text, identity,
						 held_worker_id::text, final_ms::text, park::text, token];
BEGIN
	COMMIT;
	CALL snowid_coordinator.prove(datacenter, identity, secret, made_for);
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

