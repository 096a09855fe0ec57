-- The worker id a database holds by its claim becomes its configured one,
-- as if its owner had set it: the update from a claiming 1.2 keeps issuing
-- with it, and the coordination database keeps its claim, which nothing
-- re-asserts any more (doc/managed.md, "Updating to 1.3", says what that
-- means for the fleet and how the owner ends it).  Only a claim this
-- database holds now: one its holder made on this server, for its
-- configuration, re-asserted (noted) under this run of the server, and
-- answered by the coordination database since the server started (the
-- update from 1.1 notes a claim it finds under the run it runs in, without
-- asking: 1.0 and 1.1 re-asserted at no start).  A claim made before the
-- server last started, crashed or was copied may have been given to
-- another server while this one was down (1.2 re-asserted it at the next
-- call): kept, both could issue the same ids.
--
-- And an answer since the start is not a claim held now: a coordination
-- database that forgot its claims (restored, failed over, emptied) gives
-- a worker id nobody re-asserted within its quiet period to the next new
-- claim (before 1.3.0's fixes the update kept it, and two databases issued
-- with it: test update_reasserts_claim).  So the last answer must also lie
-- within the quiet period this database's claims declare to the
-- coordination database (checkin_interval_ms + timeout_ms + max_drift_ms
-- + 1 s, as 1.2 computes it): no other database can have been granted the
-- worker id since.  And that answer must have been made in the update's
-- own transaction: both times are this server's clock, read maybe months
-- apart, and a clock stepped back since the last answer (NTP, a VM
-- restored) made an answer older than the quiet period look recent (before
-- 1.4's fixes the update kept a worker id the coordination database had
-- given to another database: test update_claim_clock_back).  The owner
-- re-asserts with 1.2's snowid_claim() and updates in one transaction
-- (BEGIN; SELECT snowid_claim(); ALTER EXTENSION snowid_sql UPDATE;
-- COMMIT): no clock tells how old the answer is, the transaction does.
--
-- The update connects nowhere and calls nothing the installing role owns
-- or may alter.  Until 1.4's fixes it re-asserted the claim itself, through
-- 1.2's snowid_sql_claim_owned(), the installing role's, which it may
-- ALTER to SECURITY INVOKER with a search_path of its own: the update ran
-- the role's operator as the bootstrap superuser (test
-- update_claim_owned_invoker); and its dblink call, holding the edition's
-- tables, waited without bound on a coordination server that stopped
-- answering, deaf to cancel on 15 and 16, and every writer of the
-- generator waited behind it (test update_hung_coordinator).
--
-- So the update refuses where the claim is not confirmed, and where
-- nothing is claimed, changing nothing, and says how to go on: re-assert
-- with 1.2's snowid_claim() and update at once, or set a worker id
-- yourself.  It does not leave the worker id unset instead: the
-- application would stop at once, and the claim would stay in the
-- coordination database with nobody knowing it.
DO $$
DECLARE
	c snowid_sql_private.snowid_config;
	claimed integer;
	stale boolean;
	answered timestamptz;
	fresh boolean;
	quiet_ms bigint;
	holder text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	IF NOT FOUND OR NOT c.claim_worker_id THEN
		RETURN;
	END IF;
	claimed := snowid_sql_private.snowid_sql_claimed(c);
	stale := snowid_sql_private.snowid_sql_claim_stale();
	-- and whether this transaction wrote that answer (a row version this
	-- transaction sees whose writer is in progress is its own): its xmin
	-- made a full transaction id by the epoch of this one's
	SELECT s.answered_at,
		   pg_catalog.pg_xact_status(((pg_catalog.pg_current_xact_id()::text::pg_catalog.int8
									  OPERATOR(pg_catalog.-) ((pg_catalog.pg_current_xact_id()::text::pg_catalog.int8
															  OPERATOR(pg_catalog.-) s.xmin::text::pg_catalog.int8)
															 OPERATOR(pg_catalog.&) 4294967295))::text)::pg_catalog.xid8)
			   OPERATOR(pg_catalog.=) 'in progress'
	INTO answered, fresh FROM snowid_sql_private.snowid_coordinator_state s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id;
	SELECT ((x.checkin_interval_ms::pg_catalog.int8 OPERATOR(pg_catalog.+) x.timeout_ms)
			OPERATOR(pg_catalog.+) c.max_drift_ms) OPERATOR(pg_catalog.+) 1000
	INTO quiet_ms FROM snowid_sql_private.snowid_coordination x;
	-- kept only where every condition is known to hold: pg_xact_status()
	-- is NULL for a transaction older than the commit log kept, and an
	-- unknown counted as confirmed (before 1.4's fixes an IF over an OR of
	-- the refusals, NULL, went on: test update_claim_clog_truncated)
	IF (claimed IS NOT NULL AND NOT stale AND fresh
		AND answered OPERATOR(pg_catalog.>=) pg_catalog.pg_postmaster_start_time()
		AND answered OPERATOR(pg_catalog.>=) (pg_catalog.clock_timestamp()
			OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => quiet_ms::pg_catalog.float8 OPERATOR(pg_catalog./) 1000))) IS NOT TRUE THEN
		-- and 1.2 goes on only once it has re-asserted the claim (at its
		-- next call, as after a restart: the claim noted under another run,
		-- a change of a sequence, which the refusal does not roll back):
		-- a claim the coordination database forgot and gave away stops
		-- this database (before 1.4's fixes the update's own re-assertion
		-- did that, over dblink)
		IF claimed IS NOT NULL THEN
			PERFORM pg_catalog.setval('snowid_sql_private.snowid_sql_claimed_run',
									  snowid_sql_private.snowid_sql_claim_run() OPERATOR(pg_catalog.#) 1);
		END IF;
		RAISE EXCEPTION 'snowid_sql cannot be updated to 1.4 while its claimed worker id is not confirmed'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = CASE WHEN claimed IS NULL
						THEN 'claim_worker_id of snowid_config is on, and this database holds no worker id claimed for its configuration on this server.'
						WHEN stale OR answered IS NULL OR answered OPERATOR(pg_catalog.<) pg_catalog.pg_postmaster_start_time()
						THEN pg_catalog.format('Worker id %s was claimed before the server last started, crashed or was copied: the coordination database may have given it to another server meanwhile.', claimed)
						WHEN fresh IS NOT TRUE
						THEN pg_catalog.format('The coordination database last confirmed worker id %s in another transaction than the update''s: how long ago, only this server''s clock could tell, which may have stepped since; meanwhile it may have forgotten the claim and given the worker id to another server.', claimed)
						ELSE pg_catalog.format('The coordination database last confirmed worker id %s at %s, more than the quiet period of its claims (%s ms) ago: it may have forgotten the claim and given the worker id to another server meanwhile.',
											   claimed, answered, quiet_ms) END
					OPERATOR(pg_catalog.||) '  The update keeps only a worker id the coordination database confirmed in the update''s own transaction, within that period, and connects nowhere itself; 1.2 re-asserts the claim at its next call, as after a restart.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script), re-assert the claim and update in one transaction (BEGIN, SELECT snowid_claim(), then the update as it was installed: ALTER EXTENSION snowid_sql UPDATE, UPDATE TO ''1.4'' through pg_tle, or the update script, then COMMIT), or set the worker id yourself first (UPDATE snowid_config SET claim_worker_id = false, worker_id = N); doc/managed.md, "Updating to 1.3".';
	END IF;
	-- the identity its claims were made under
	SELECT pg_catalog.format('dc=%s %s', c.datacenter_id, h.name) INTO holder FROM snowid_sql_private.snowid_holder h;
	UPDATE snowid_sql_private.snowid_config x SET worker_id = claimed, claim_worker_id = false
	WHERE x.singleton;
	-- a warning: CREATE and ALTER EXTENSION send the client no notice
	RAISE WARNING 'snowid_sql keeps worker id % of datacenter % as its configured worker id', claimed, c.datacenter_id
		USING DETAIL = pg_catalog.format('It was claimed from the coordination database as %L, which keeps the claim; snowid_sql 1.4 re-asserts it no more.', holder),
			  HINT = 'See doc/managed.md, "Updating to 1.3": keep the claim in the coordination database, and free it there once this database issues no more ids.';
END
$$;
