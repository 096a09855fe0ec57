-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- A writer (see 1.0): the lock is the row 'generator' of snowid_locks,
-- locked in the block's subtransaction, which the block ends with an error
-- of its own: the lock goes with it, on success, error or cancel alike,
-- and the sequences keep what was set (they do not roll back).  A
-- generator made on another server, or with other sequences, moves
-- nothing.
-- It sends no message to the client meanwhile (client_min_messages:
-- xact.c's DEBUG lines at the end of the subtransaction, sent to a client
-- that stops reading, would hold the lock until it disconnects).  A
-- generator whose sequences a subscription synchronises (PostgreSQL 19:
-- FOR ALL SEQUENCES, REFRESH SEQUENCES, which set them to the publisher's
-- values in place) moves nothing either.  It sets its search_path:
-- snowid_sql_next(), which calls it, runs in the caller's.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
	OUT first bigint, OUT got bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET client_min_messages = error
AS $$
DECLARE
	locked boolean;
	g bigint;
	-- what a call returns that is not used (an assignment is cheaper than
	-- PERFORM, which runs a query)
	done bigint;
BEGIN
	BEGIN
		IF wait THEN
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE;
		ELSE
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE SKIP LOCKED;
		END IF;
		IF locked THEN
			IF (@extschema@.snowid_sql_fixed()).server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
				PERFORM @extschema@.snowid_sql_elsewhere((@extschema@.snowid_sql_fixed()).worker_id);
			END IF;
			-- a claim granted under another start of the server is
			-- re-asserted before the generator moves with it (see
			-- snowid_sql_claim_stale()); a floor raised (n = 0, a claim's
			-- own) takes no position
			IF n > 0 AND (@extschema@.snowid_sql_fixed()).claim_worker_id
				AND @extschema@.snowid_sql_claim_stale() THEN
				IF wait THEN
					RAISE EXCEPTION 'snowid_sql has not re-asserted its worker id since its server started'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'Its coordination database may have given the worker id to another server while this server was down.',
							  HINT = 'Have the owner of the extension run SELECT snowid_claim() (schedule it at the server''s start too); no id was issued.';
				END IF;
				-- no position: the caller finds the claim stale, and
				-- re-asserts it
				RAISE SQLSTATE 'SN000';
			END IF;
			-- (before 19, no subscription synchronises a sequence)
			IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 >= 190000 THEN
				PERFORM @extschema@.snowid_sql_subscribed();
			END IF;
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further).  Its high bits
			-- are this server's token, which the readers check: a
			-- generation set elsewhere (the publisher's, synchronised)
			-- sends them here, to the check above.
			g := pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation');
			-- another server's token (none before 1.2): the sequences hold
			-- that server's values, synchronised (PostgreSQL 19: FOR ALL
			-- SEQUENCES) or copied, and the position may lie below ids
			-- this server issued.  Unless adopted (the worker id set, or
			-- claimed, anew since), the worker id does not hold: a claim
			-- is dropped (the next call claims anew, the generation taken
			-- as this server's), a worker id set must be set again.
			IF g >> 40 <> 0 AND g >> 40 <> (@extschema@.snowid_sql_fixed()).token
				AND g IS DISTINCT FROM (@extschema@.snowid_sql_fixed()).adopted THEN
				IF NOT (@extschema@.snowid_sql_fixed()).claim_worker_id THEN
					RAISE EXCEPTION 'the sequences of the snowid generator hold another server''s values'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'snowid_generation carries another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy set the generator''s sequences to that server''s values, with which ids could come again.',
							  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter and not used by this server before (its ids may lie above the position the sequences hold now).';
				END IF;
				done := pg_catalog.setval('@extschema@.snowid_claimed', 0, true);
				done := pg_catalog.setval('@extschema@.snowid_generation',
										  (@extschema@.snowid_sql_fixed()).token << 40);
				IF wait THEN
					RAISE EXCEPTION 'snowid_sql dropped the worker id it had claimed'
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = 'snowid_generation carried another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy had set the generator''s sequences, and the claim, to that server''s values.',
							  HINT = 'The next call claims another worker id; no id was issued.';
				END IF;
				-- no position: the caller finds no claim, and claims
				RAISE SQLSTATE 'SN000';
			END IF;
			IF g IS NULL OR g >> 40 <> (@extschema@.snowid_sql_fixed()).token THEN
				g := (@extschema@.snowid_sql_fixed()).token << 40;
			END IF;
			-- the start this writer checked the server under, for the
			-- common path (see snowid_sql_started)
			IF pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started')::double precision / 1000000)
				IS DISTINCT FROM pg_catalog.pg_postmaster_start_time() THEN
				PERFORM @extschema@.snowid_sql_stamp_start();
			END IF;
			g := pg_catalog.setval('@extschema@.snowid_generation', g + 1 + g % 2);
			-- the last position, read under the sequence's buffer lock (a
			-- nextval() may run meanwhile); before the first, the one below
			last := pg_catalog.pg_sequence_last_value('@extschema@.snowid_position');
			IF last IS NULL THEN
				SELECT s.last_value - 1 INTO last FROM @extschema@.snowid_position s;
			END IF;
			first := greatest(last + 1, low);
			got := greatest(least(n, high - first + 1), 0);
			IF first + got - 1 > last THEN
				done := pg_catalog.setval('@extschema@.snowid_position', first + got - 1);
			END IF;
			-- and closes: even again
			done := pg_catalog.setval('@extschema@.snowid_generation', g + 1);
		END IF;
		RAISE SQLSTATE 'SN000';
	EXCEPTION WHEN SQLSTATE 'SN000' THEN
		NULL;
	WHEN lock_not_available THEN
		RAISE EXCEPTION 'the snowid generator''s lock was not free within lock_timeout'
			USING ERRCODE = 'lock_not_available',
				  DETAIL = 'Another session held the row ''generator'' of snowid_locks for 10 s.',
				  HINT = 'Look for that session in pg_locks; snowid_sql holds the lock only while it moves the generator, and only its owner can take it otherwise.';
	END;
END
$$;

-- The id at a position (see 1.0), its node's bits grouped, so that the
-- planner folds them into one constant where the datacenter and worker
-- ids are constants (the common path of snowid_sql_next()): the same value
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| ((datacenter_id::bigint << (worker_bits + sequence_bits)) | (worker_id::bigint << sequence_bits))
	| (pos & ((1::bigint << sequence_bits) - 1));

-- One id (see 1.0).  The common path also checks that snowid_sql_fixed()
-- was made with this snowid_position, in this database (a restored dump
-- has another, a copy made from it as a template is in another), that a
-- writer checked the server since it started (snowid_sql_started: a
-- pg_createsubscriber copy's first call becomes a writer, which finds
-- another system identifier), and
-- makes its transaction write WAL of its own once (a transactional
-- logical message, which also gives it an xid): its commit then flushes
-- the WAL that logged the position (written maybe by another transaction,
-- not yet flushed) and waits for a synchronous standby.  An xid alone
-- would not do: a transaction that wrote no WAL of its own commits
-- asynchronously, also one that has an xid (pg_current_xact_id(), or
-- writes to temporary or unlogged tables only).  SQL cannot tell whether
-- a transaction wrote WAL, so the message's own: the setting
-- snowid_sql.message_written, on once the transaction wrote it, is local
-- to it (gone at its end, or with a subtransaction rolled back, where the
-- next call writes another).  A constant is cheaper to compare at every
-- call than the xid; a session that sets it on itself skips the message,
-- as one that sets synchronous_commit = off skips the flush.
--
-- What the common path costs (doc/managed.md, "What 1.2 costs"):
-- - STABLE: PL/pgSQL then takes no snapshot and makes no command counter
--   increment at each of its expressions.  It reads no table (only the
--   sequences, which no snapshot sees, and snowid_sql_fixed()'s
--   constants); what reads the tables is snowid_sql_next_table(), and the
--   writer snowid_sql_move(), both VOLATILE.  Its argument recovery is
--   pg_is_in_recovery(), read by the caller: VOLATILE, it makes every call
--   of snowid_next() volatile to the planner whatever the other functions
--   are labelled (a call is never evaluated once for several rows, nor
--   memoized), and any value a caller gives is safe (true takes the table
--   path, which checks again; false on a standby fails at nextval()).
-- - No SET search_path (which the call would set and reset each time):
--   the body runs as the superuser with the caller's search_path, so every
--   operator, function and type in it is named with its schema
--   (OPERATOR(pg_catalog.=), pg_catalog.nextval(), and the extension's
--   snowid_sql_private), and it uses no construct that looks an operator
--   up by name (IS DISTINCT FROM, BETWEEN, IN, CASE x WHEN).  The functions
--   it calls that need a search_path set their own.
CREATE FUNCTION @extschema@.snowid_sql_next(claimed boolean, recovery boolean)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
AS $$
DECLARE
	w integer;
	-- the clock's millisecond as a position: its first
	now_pos bigint;
	g bigint;
	v bigint;
BEGIN
	w := CASE WHEN (pg_catalog.pg_relation_filepath('@extschema@.snowid_position'::pg_catalog.regclass)
				   OPERATOR(pg_catalog.=) (@extschema@.snowid_sql_fixed()).position_path) IS NOT TRUE
		THEN NULL
		-- a claim only where it was noted under this run of the server
		-- (snowid_sql_claim_run()): a crash restart keeps the start and
		-- snowid_sql_started, which the test below compares with it, but
		-- not the run, and the claim is stale (the attack on 1.2: 77 ids
		-- of 77 with the worker id another server had taken meanwhile,
		-- the clock stepped back to a position it had left ahead; test
		-- 144).  Not on a standby, which issues no id.
		WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id
		THEN CASE WHEN NOT recovery
					   AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_claimed_run'::pg_catalog.regclass)
						   OPERATOR(pg_catalog.=) @extschema@.snowid_sql_claim_run()
			THEN @extschema@.snowid_sql_claimed_of(
				pg_catalog.pg_sequence_last_value('@extschema@.snowid_claimed'::pg_catalog.regclass),
				(@extschema@.snowid_sql_fixed()).datacenter_id, (@extschema@.snowid_sql_fixed()).worker_bits,
				(@extschema@.snowid_sql_fixed()).worker_id) END
		ELSE (@extschema@.snowid_sql_fixed()).worker_id END;
	g := pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass);
	v := CASE WHEN w IS NOT NULL AND NOT recovery
		THEN CASE WHEN pg_catalog.current_setting('snowid_sql.message_written', true) OPERATOR(pg_catalog.=) 'on'
					   OR (pg_catalog.pg_logical_emit_message(true, 'snowid_sql', '') IS NOT NULL
						   AND pg_catalog.set_config('snowid_sql.message_written', 'on', true) IS NOT NULL)
			THEN pg_catalog.nextval('@extschema@.snowid_position'::pg_catalog.regclass) END END;
	-- the generation even and this server's (its bits from 40 up the
	-- token): (g % 2 = 0 AND g >> 40 = token); a writer has checked the
	-- server since it started (snowid_sql_started); the position in the
	-- clock's millisecond or up to near_ms ahead, the clock read once
	-- here, after the position (a later reading only narrows what is
	-- kept): v - now_pos from 0 to ((near_ms + 1) << sequence_bits) - 1,
	-- compared unsigned (the sign bit flipped on both sides), one
	-- expression where a variable now_pos would cost a statement; and in
	-- the layout's time: (v >> sequence_bits) <= max_ms
	IF (g OPERATOR(pg_catalog.&) -1099511627775) OPERATOR(pg_catalog.=) ((@extschema@.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
		AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass) OPERATOR(pg_catalog.=) g
		AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started'::pg_catalog.regclass)::double precision
								OPERATOR(pg_catalog./) 1000000)
			OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
		AND ((v OPERATOR(pg_catalog.-) ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (@extschema@.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits))
			 OPERATOR(pg_catalog.#) -9223372036854775808)
			OPERATOR(pg_catalog.<) ((((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
									 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
									OPERATOR(pg_catalog.#) -9223372036854775808)
		AND v OPERATOR(pg_catalog.<=) (((@extschema@.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
									   OPERATOR(pg_catalog.|) ((1::bigint OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits)
															   OPERATOR(pg_catalog.-) 1)) THEN
		RETURN @extschema@.snowid_sql_fixed_id(CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id THEN w
													 ELSE (@extschema@.snowid_sql_fixed()).worker_id END, v);
	END IF;
	now_pos := CASE WHEN w IS NOT NULL AND NOT recovery THEN ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (@extschema@.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) END;
	-- (past the layout's time, the path below says so)
	IF v IS NOT NULL AND now_pos OPERATOR(pg_catalog.<=) ((@extschema@.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer, which
		-- moves the sequence ahead_ms (9, or near_ms if less) past the
		-- clock's millisecond: the calls of the next ahead_ms
		-- milliseconds find it ahead, within near_ms, and need no writer
		-- (one writer every ahead_ms + 1 milliseconds, not every one)
		IF NOT coalesce((g OPERATOR(pg_catalog.&) -1099511627775)
							OPERATOR(pg_catalog.=) ((@extschema@.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
						AND pg_catalog.pg_sequence_last_value('@extschema@.snowid_generation'::pg_catalog.regclass)
							OPERATOR(pg_catalog.=) g
						AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('@extschema@.snowid_sql_started'::pg_catalog.regclass)::double precision
												OPERATOR(pg_catalog./) 1000000)
							OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
						AND v OPERATOR(pg_catalog.>=) now_pos
						AND (v OPERATOR(pg_catalog.-) now_pos)
							OPERATOR(pg_catalog.>=) (((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
													 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits),
						false) THEN
			v := (@extschema@.snowid_sql_move(
				now_pos OPERATOR(pg_catalog.+)
					((CASE WHEN (@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.<) 9
						   THEN (@extschema@.snowid_sql_fixed()).near_ms ELSE 9 END)::bigint
					 OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits),
				1, NULL, false)).first;
		END IF;
		IF v OPERATOR(pg_catalog.>=) now_pos
			AND (v OPERATOR(pg_catalog.-) now_pos)
				OPERATOR(pg_catalog.<) (((@extschema@.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
										OPERATOR(pg_catalog.<<) (@extschema@.snowid_sql_fixed()).sequence_bits) THEN
			RETURN @extschema@.snowid_sql_fixed_id(CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id THEN w
													 ELSE (@extschema@.snowid_sql_fixed()).worker_id END, v);
		END IF;
	END IF;
	RETURN @extschema@.snowid_sql_next_table(claimed, v);
END
$$;

-- The rest of a call that the common path did not end (see 1.0): reads the
-- table, as the caller's snowid_sql_next() (the superuser)
CREATE FUNCTION @extschema@.snowid_sql_next_table(claimed boolean, v bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
BEGIN
	c := @extschema@.snowid_sql_config(false);
	-- a stale claim whatever the caller says (anyone may call
	-- snowid_sql_next() with claimed true)
	IF c.claim_worker_id AND ((c.worker_id IS NULL AND NOT claimed)
							  OR @extschema@.snowid_sql_claim_stale()) THEN
		RETURN NULL;
	END IF;
	c := @extschema@.snowid_sql_config(true);
	RETURN @extschema@.snowid_sql_compose(c, (@extschema@.snowid_sql_take(1, c, v)).first);
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_next_table(boolean, bigint) FROM PUBLIC;

-- Issuing (see 1.0), with pg_is_in_recovery() read here (see above)
CREATE OR REPLACE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN coalesce(@extschema@.snowid_sql_next(false, pg_catalog.pg_is_in_recovery()),
				@extschema@.snowid_sql_next(@extschema@.snowid_sql_claim_first(), pg_catalog.pg_is_in_recovery()));

DROP FUNCTION @extschema@.snowid_sql_next(boolean);

