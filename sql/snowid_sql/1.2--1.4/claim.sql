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
-- So the update refuses then, and where nothing is claimed, changing
-- nothing, and says how to go on: re-assert with 1.2's snowid_claim() and
-- update at once, or set a worker id yourself.  It does not leave the
-- worker id unset instead: the application would stop at once, and the
-- claim would stay in the coordination database with nobody knowing it.
--
-- And an answer since the start is not a claim held now: a coordination
-- database that forgot its claims (restored, failed over, emptied) gives
-- a worker id nobody re-asserted within its quiet period to the next new
-- claim (before 1.4 the update kept it, and two databases
-- issued with it: test 171).  So the update re-asserts the claim itself,
-- through 1.2's claim (its own transaction's: refused or unreachable, the
-- update fails and changes nothing), and keeps the worker id only where
-- the coordination database confirms it now.
DO $$
DECLARE
	c snowid_sql_private.snowid_config;
	claimed integer;
	stale boolean;
	answered timestamptz;
	holder text;
	r record;
	confirmed integer;
	msg text;
	msg_detail text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	IF NOT FOUND OR NOT c.claim_worker_id THEN
		RETURN;
	END IF;
	claimed := snowid_sql_private.snowid_sql_claimed(c);
	stale := snowid_sql_private.snowid_sql_claim_stale();
	SELECT s.answered_at INTO answered FROM snowid_sql_private.snowid_coordinator_state s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id;
	IF claimed IS NULL OR stale OR answered IS NULL
		OR answered OPERATOR(pg_catalog.<) pg_catalog.pg_postmaster_start_time() THEN
		RAISE EXCEPTION 'snowid_sql cannot be updated to 1.3 while its claimed worker id is not confirmed'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = CASE WHEN claimed IS NULL
						THEN 'claim_worker_id of snowid_config is on, and this database holds no worker id claimed for its configuration on this server.'
						ELSE pg_catalog.format('Worker id %s was claimed before the server last started, crashed or was copied: the coordination database may have given it to another server meanwhile.', claimed) END
					|| '  1.3 claims no worker id; it keeps the one a database holds now as its configured one.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script), re-assert the claim and update at once (SELECT snowid_claim(), then the update as it was installed: ALTER EXTENSION snowid_sql UPDATE, UPDATE TO ''1.4'' through pg_tle, or the update script), or set the worker id yourself first (UPDATE snowid_config SET claim_worker_id = false, worker_id = N); doc/managed.md, "Updating to 1.3".';
	END IF;
	-- re-asserted now
	BEGIN
		SELECT * INTO r FROM snowid_sql_private.snowid_sql_claim_owned();
		confirmed := r.worker_id;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, msg_detail = PG_EXCEPTION_DETAIL;
	END;
	IF msg IS NOT NULL OR confirmed IS DISTINCT FROM claimed THEN
		RAISE EXCEPTION 'snowid_sql cannot be updated to 1.3 while its claimed worker id is not confirmed'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('The coordination database did not confirm worker id %s when the update re-asserted it (%s): it may have given it to another server.',
											 claimed, coalesce(msg OPERATOR(pg_catalog.||) coalesce(': ' OPERATOR(pg_catalog.||) msg_detail, ''),
															   'it answered worker id ' OPERATOR(pg_catalog.||) coalesce(confirmed::text, 'none')))
					|| '  1.3 claims no worker id; it keeps the one a database holds now as its configured one.',
				  HINT = 'Where the coordination database is reachable again, try the update again.  Otherwise, as the role that installed snowid_sql, stop the database issuing ids (UPDATE snowid_config SET claim_worker_id = false, worker_id = NULL), update, and take a worker id with the provisioning script (doc/managed.md, "Updating to 1.3").';
	END IF;
	-- the identity its claims were made under
	SELECT pg_catalog.format('dc=%s %s', c.datacenter_id, h.name) INTO holder FROM snowid_sql_private.snowid_holder h;
	UPDATE snowid_sql_private.snowid_config SET worker_id = claimed, claim_worker_id = false;
	-- a warning: CREATE and ALTER EXTENSION send the client no notice
	RAISE WARNING 'snowid_sql keeps worker id % of datacenter % as its configured worker id', claimed, c.datacenter_id
		USING DETAIL = pg_catalog.format('It was claimed from the coordination database as %L, which keeps the claim; snowid_sql 1.3 re-asserts it no more.', holder),
			  HINT = 'See doc/managed.md, "Updating to 1.3": keep the claim in the coordination database, and free it there once this database issues no more ids.';
END
$$;
