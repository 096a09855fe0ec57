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
CREATE OR REPLACE FUNCTION snowid_coordinator.run_lease_claim(datacenter integer,
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
	-- what its proof is for (the procedure's arguments, see prove())
	call		text := snowid_coordinator.call_text(
		ARRAY['lease_claim', datacenter::text, identity, max::text,
			  lease_ms::text, client_ms::text, usable_ms::text, prefer::text,
			  wait_ms::text, token, quiet_ms::text, seen_generation::text,
			  seen_counter::text, clock_margin_ms::text]);
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
	layout		integer;
	o			snowid_coordinator.outcome;
	-- the key it sent under its pad (check_proof())
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('lease_claim');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('max', hi, 0);
	PERFORM snowid_coordinator.check_ms('lease_ms', lease, 1, @SNOWID_MAX_LEASE_MS@,
		'a day, the longest lease of a snowid server');
	PERFORM snowid_coordinator.check_ms('client_ms', client, 0);
	PERFORM snowid_coordinator.check_ms('usable_ms', usable, 0);
	PERFORM snowid_coordinator.check_id('prefer', prefer, -1);
	PERFORM snowid_coordinator.check_ms('wait_ms', wait_ms, 0, @SNOWID_MAX_WAIT_MS@,
		'an hour, the longest wait of a snowid server');
	PERFORM snowid_coordinator.check_token(tok);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	now_ms := snowid_coordinator.lock_datacenter(dc, true);
	-- the bounds against this server's clock, with the others before the
	-- proof; the fence it writes, a lease past client_ms: no later than
	-- the servers take one
	PERFORM snowid_coordinator.check_ms('client_ms', client, 0,
		now_ms + @SNOWID_FENCE_SLACK_MS@ - lease,
		'two days and an hour past the clock of the coordination server, less the lease: the servers refuse a later fence');
	PERFORM snowid_coordinator.check_ahead('usable_ms', usable, now_ms);
	PERFORM snowid_coordinator.check_seen(seen_generation, seen_counter, now_ms);
	layout := snowid_coordinator.check_layout(dc, me, hi, -1, now_ms);
	SELECT * INTO o.outcome, o.holder, sent_key
	FROM snowid_coordinator.check_proof(dc, me, secret, call, hi);
	IF o.outcome IS NOT NULL THEN
		RETURN o;
	END IF;
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
	PERFORM snowid_coordinator.record_layout(dc, layout);
	PERFORM snowid_coordinator.register_holder(dc, me, secret, sent_key);

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
CREATE OR REPLACE FUNCTION snowid_coordinator.run_lease_renew(datacenter integer,
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
	-- what its proof is for (the procedure's arguments, see prove())
	call		text := snowid_coordinator.call_text(
		ARRAY['lease_renew', datacenter::text, identity, worker_id::text,
			  lease_ms::text, want_ms::text, token, quiet_ms::text,
			  client_ms::text, seen_generation::text, seen_counter::text,
			  clock_margin_ms::text]);
	id			integer := worker_id;
	lease		bigint := lease_ms;
	want		bigint := want_ms;
	tok			text := token;
	now_ms		bigint;
	st			snowid_coordinator.datacenters;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
	-- the key it sent under its pad (check_proof())
	sent_key	bytea;
BEGIN
	PERFORM snowid_coordinator.check_called_by('lease_renew');
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	PERFORM snowid_coordinator.check_secret(secret);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	PERFORM snowid_coordinator.check_ms('lease_ms', lease, 1, @SNOWID_MAX_LEASE_MS@,
		'a day, the longest lease of a snowid server');
	PERFORM snowid_coordinator.check_ms('want_ms', want, 0);
	PERFORM snowid_coordinator.check_token(tok);
	PERFORM snowid_coordinator.check_declared(quiet_ms, clock_margin_ms);
	-- (by hand, in a datacenter without a row: lost, nothing written)
	now_ms := snowid_coordinator.lock_datacenter(dc, quiet_ms IS NOT NULL);
	IF now_ms IS NOT NULL THEN
		PERFORM snowid_coordinator.check_ahead('want_ms', want, now_ms);
		PERFORM snowid_coordinator.check_ahead('client_ms', client_ms, now_ms);
		PERFORM snowid_coordinator.check_seen(seen_generation, seen_counter,
											  now_ms);
		SELECT * INTO o.outcome, o.holder, sent_key
		FROM snowid_coordinator.check_proof(dc, me, secret, call, id);
		IF o.outcome IS NOT NULL THEN
			RETURN o;
		END IF;
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
	PERFORM snowid_coordinator.register_holder(dc, me, secret, sent_key);

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
CREATE OR REPLACE FUNCTION snowid_coordinator.run_lease_release(datacenter integer,
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
	-- what its proof is for (the procedure's arguments, see prove())
	call		text := snowid_coordinator.call_text(
		ARRAY['lease_release', datacenter::text, identity, worker_id::text,
			  final_ms::text, park::text, token]);
	id			integer := worker_id;
	final		bigint := final_ms;
	tok			text := token;
	now_ms		bigint;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
	-- the key it sent under its pad (check_proof())
	sent_key	bytea;
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
		PERFORM snowid_coordinator.check_ahead('final_ms', final, now_ms);
		SELECT * INTO o.outcome, o.holder, sent_key
		FROM snowid_coordinator.check_proof(dc, me, secret, call, id);
		IF o.outcome IS NOT NULL THEN
			RETURN o;
		END IF;
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
	PERFORM snowid_coordinator.register_holder(dc, me, secret, sent_key);

	o.outcome := 'ok';
	o.worker_id := id;
	o.floor_ms := w.lease_floor_ms;
	RETURN o;
END
$$;

