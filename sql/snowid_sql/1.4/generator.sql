-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- The id at a position, for a node and a layout: one expression, which
-- the planner inlines where it is called, its node's bits grouped, so
-- that it folds them into one constant where the datacenter and worker ids
-- are constants (the common path of snowid_sql_next())
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| ((datacenter_id::bigint << (worker_bits + sequence_bits)) | (worker_id::bigint << sequence_bits))
	| (pos & ((1::bigint << sequence_bits) - 1));

-- The id at a position, for the node of snowid_sql_fixed() and a worker id
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fixed_id(worker_id integer, pos bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN snowid_sql_private.snowid_sql_id(pos, (snowid_sql_private.snowid_sql_fixed()).datacenter_id, worker_id,
	(snowid_sql_private.snowid_sql_fixed()).datacenter_bits, (snowid_sql_private.snowid_sql_fixed()).worker_bits,
	(snowid_sql_private.snowid_sql_fixed()).sequence_bits);

-- A call of 1.2 in flight through the update (its writer waited for the
-- update's locks) goes on in 1.2's body once the update commits, and
-- plans its next statement anew: it names claim_worker_id of
-- snowid_sql_fixed (kept, false: objects.sql), snowid_sql_claim_stale(),
-- and 1.2's signatures of the generator, which carried the claim's flag.
-- They stay, so that such a call plans and goes on into 1.4's functions:
-- before 1.4 the update dropped them, and such calls failed with
-- PostgreSQL's 42703 and 42883 (test 184).  Nothing claims since 1.3:
-- never stale, and the flag is ignored.  Only 1.2's bodies call them, as
-- the superuser (snowid_sql_next() is SECURITY DEFINER), but 1.2's
-- snowid_sql_claim_first() calls snowid_sql_claim_stale() as the caller:
-- PUBLIC may call it, a constant (before 1.4's fixes no role could, and a
-- batch in flight failed with 42501: test update_in_flight_batch_claim).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_claim_stale()
RETURNS boolean
LANGUAGE sql IMMUTABLE
RETURN false;

-- What 1.2's snowid_sql_config() in flight through the update calls where
-- it read the row of a snapshot from before the update, claim_worker_id
-- on: the worker id that 1.2's claim noted in snowid_claimed (a sequence:
-- read as it is now, whatever the snapshot), for the row's datacenter and
-- layout, the one the update kept as the configured one; NULL where none
-- (a fresh install's sequence).  Before 1.4's fixes it was dropped, and
-- such calls failed with 42883 (test update_in_flight_batch_claim).
-- PUBLIC may call it, as 1.2's callers do as themselves, and read that
-- sequence, as in 1.2 (privileges.sql).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_claimed(c snowid_sql_private.snowid_config)
RETURNS integer
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT ((s.last_value OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.&) 16777215)::integer
	FROM snowid_sql_private.snowid_claimed s
	WHERE s.is_called AND s.last_value OPERATOR(pg_catalog.>) 0
	  AND ((s.last_value OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.>>) 29) OPERATOR(pg_catalog.=) c.datacenter_id
	  AND ((s.last_value OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.&) 16777215)
		  OPERATOR(pg_catalog.<) (1::bigint OPERATOR(pg_catalog.<<) c.worker_bits);
END;

-- Makes snowid_sql_fixed() anew from the row of snowid_config (see
-- objects.sql), with this server, its sequences and its mark, once they
-- are as the generator needs them.  Its body holds only numbers and
-- booleans of the row, which the table's constraint holds in their
-- ranges, and texts of this server's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_refix()
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	here text := snowid_sql_private.snowid_sql_here();
	problem text := snowid_sql_private.snowid_sql_sequences_problem();
	before snowid_sql_private.snowid_sql_fixed;
	adopted bigint;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'the sequences or tables of the snowid generator were altered'
			USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = problem,
				  HINT = 'Put them back as the detail says (a superuser, where the extension''s objects are the superuser''s), then set the worker id again.';
	END IF;
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	-- the one made before (none, or one of other attributes, before an
	-- update ends)
	BEGIN
		before := snowid_sql_private.snowid_sql_fixed();
	EXCEPTION WHEN OTHERS THEN
		before := NULL;
	END;
	-- the generation as it is now is this server's where the worker id was
	-- set in this transaction, or this is another server (or other
	-- sequences): a copy's, which sets its worker id anew;
	-- otherwise the one adopted before stays
	adopted := CASE WHEN (snowid_sql_private.snowid_sql_noted()).worker_set
						 OR before.server IS DISTINCT FROM here
					THEN pg_sequence_last_value('snowid_sql_private.snowid_generation')
					ELSE before.adopted END;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fixed()
RETURNS snowid_sql_private.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(false, %s, %s, %s, %s, %s, %s, %s, %s, %L, %L, %s, %s)::snowid_sql_private.snowid_sql_fixed$f$,
		coalesce(c.datacenter_id, 0),
		coalesce(CASE WHEN c.worker_server = here THEN c.worker_id END::text, 'NULL'),
		coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(snowid_sql_private.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(snowid_sql_private.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0),
		pg_relation_filepath('snowid_sql_private.snowid_position'), here,
		1 + (hashtext(here)::bigint & 4194303), coalesce(adopted::text, 'NULL'));
END
$$;

-- The trigger that makes snowid_sql_fixed() anew whenever the row changes
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_refix();
	RETURN NULL;
END
$$;


-- The one way snowid_position is set: positions from first to first + got
-- - 1 made this call's, where first is the later of the position after
-- the last one taken (last) and low, and got is n, or fewer where the
-- positions would pass high (a NULL high: no bound), or none.  With got 0
-- the sequence still moves up to low - 1 if it lies below.
--
-- A writer: under the generator's lock taken exclusively, so that writers
-- take turns and none sets the sequence from a reading another's setting
-- made old, and within the window, snowid_generation odd from before the
-- reading until after the setting.  A nextval() that the window may
-- enclose gets a position that the setval() may set the sequence back
-- below; the call that took it sees the generation odd or changed and does
-- not use it (snowid_sql_next()).  With wait, the lock is waited for (at
-- most the caller's lock_timeout); without, only tried: first is NULL if
-- another writer holds it.  The writers hold it for a few statements.
--
-- The lock is the row 'generator' of snowid_locks, locked in the block's
-- subtransaction, which the block ends with an error of its own: the lock
-- goes with it, on success, error or cancel alike, and the sequences keep
-- what was set (they do not roll back).  A window left open by a writer
-- that failed (the generation odd) sends the calls that see it here, to
-- wait for the lock; the next writer closes it.  A generator made on
-- another server, or with other sequences, moves nothing.
-- It sends no message to the client meanwhile (client_min_messages:
-- xact.c's DEBUG lines at the end of the subtransaction, sent to a client
-- that stops reading, would hold the lock until it disconnects).  A
-- generator whose sequences a subscription synchronises (PostgreSQL 19:
-- FOR ALL SEQUENCES, REFRESH SEQUENCES, which set them to the publisher's
-- values in place) moves nothing either.  It sets its search_path:
-- snowid_sql_next(), which calls it, runs in the caller's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
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
			SELECT true INTO locked FROM snowid_sql_private.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE;
		ELSE
			SELECT true INTO locked FROM snowid_sql_private.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE SKIP LOCKED;
		END IF;
		IF locked THEN
			IF (snowid_sql_private.snowid_sql_fixed()).server IS DISTINCT FROM snowid_sql_private.snowid_sql_here() THEN
				PERFORM snowid_sql_private.snowid_sql_elsewhere((snowid_sql_private.snowid_sql_fixed()).worker_id);
			END IF;
			-- (before 19, no subscription synchronises a sequence)
			IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 >= 190000 THEN
				PERFORM snowid_sql_private.snowid_sql_subscribed();
			END IF;
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further).  Its high bits
			-- are this server's token, which the readers check: a
			-- generation set elsewhere (the publisher's, synchronised)
			-- sends them here, to the check above.
			g := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation');
			-- never called, though a writer moved it before
			-- (snowid_sql_started): set back, by hand or by a subscription
			-- (FOR ALL SEQUENCES) of a publisher that never issued, with the
			-- position (before 1.4's fixes it was taken as a first install's,
			-- and the generator started again below the ids it had issued:
			-- test sequences_synced_not_called).  Every call fails until
			-- the owner sets the worker id again, which raises the
			-- generator past the clock plus max_drift_ms, past every id it
			-- issued (with n = 0: moving the generator, that raise is let
			-- through).
			IF g IS NULL AND n > 0
				AND pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started') IS NOT NULL THEN
				RAISE EXCEPTION 'the sequences of the snowid generator were set back'
					USING ERRCODE = 'object_not_in_prerequisite_state',
						  DETAIL = 'snowid_generation has never been called, though the generator moved before: its sequences were set to values of a generator that never issued, by hand or by a subscription (FOR ALL SEQUENCES).',
						  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = worker_id, which raises the generator past the clock plus max_drift_ms, past every id this server issued.';
			END IF;
			-- another server's token (none before 1.2): the sequences hold
			-- that server's values, synchronised (PostgreSQL 19: FOR ALL
			-- SEQUENCES) or copied, and the position may lie below ids
			-- this server issued.  Unless adopted (the worker id set anew
			-- since), the worker id does not hold: it must be set again.
			IF g >> 40 <> 0 AND g >> 40 <> (snowid_sql_private.snowid_sql_fixed()).token
				AND g IS DISTINCT FROM (snowid_sql_private.snowid_sql_fixed()).adopted THEN
				RAISE EXCEPTION 'the sequences of the snowid generator hold another server''s values'
					USING ERRCODE = 'object_not_in_prerequisite_state',
						  DETAIL = 'snowid_generation carries another server''s mark: a subscription (FOR ALL SEQUENCES) or a copy set the generator''s sequences to that server''s values, with which ids could come again.',
						  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter and not used by this server before (its ids may lie above the position the sequences hold now).';
			END IF;
			-- the start this writer checked the server under, for the
			-- common path (see snowid_sql_started)
			IF pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started')::double precision / 1000000)
				IS DISTINCT FROM pg_catalog.pg_postmaster_start_time() THEN
				PERFORM snowid_sql_private.snowid_sql_stamp_start();
			END IF;
			-- the window opens by nextval(), which moves the generation from
			-- the value it holds, not from the one read above: a value set
			-- meanwhile by anything but a writer (a subscription's
			-- synchronisation, PostgreSQL 19) is never overwritten, and
			-- its mark stays for the check below and the readers (before
			-- 1.4's fixes the window opened and closed by setval(), and a
			-- synchronisation's setting of the generation between them was
			-- dropped: test subscriber_sequences_race).  Only a generation
			-- never this server's (a first install, one adopted) is set.
			IF g IS NULL OR g >> 40 <> (snowid_sql_private.snowid_sql_fixed()).token THEN
				g := pg_catalog.setval('snowid_sql_private.snowid_generation',
									   ((snowid_sql_private.snowid_sql_fixed()).token << 40) + 1);
			ELSE
				g := pg_catalog.nextval('snowid_sql_private.snowid_generation');
				IF g % 2 = 0 THEN
					g := pg_catalog.nextval('snowid_sql_private.snowid_generation');
				END IF;
			END IF;
			IF g >> 40 <> (snowid_sql_private.snowid_sql_fixed()).token THEN
				PERFORM snowid_sql_private.snowid_sql_set_meanwhile();
			END IF;
			-- the last position, read under the sequence's buffer lock (a
			-- nextval() may run meanwhile); before the first, the one below
			last := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_position');
			IF last IS NULL THEN
				SELECT s.last_value - 1 INTO last FROM snowid_sql_private.snowid_position s;
			END IF;
			first := greatest(last + 1, low);
			got := greatest(least(n, high - first + 1), 0);
			IF first + got - 1 > last THEN
				done := pg_catalog.setval('snowid_sql_private.snowid_position', first + got - 1);
			END IF;
			-- and closes, even again, by nextval() too, where the position
			-- was not set below what this writer left (the readers'
			-- nextval() only moves it up) and the generation is still the
			-- window's: otherwise something but a writer set them meanwhile,
			-- and the window stays open (the readers take nothing; the next
			-- writer reads the position anew, or refuses the generation)
			IF pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_position') < greatest(first + got - 1, last)
				OR pg_catalog.nextval('snowid_sql_private.snowid_generation') <> g + 1 THEN
				PERFORM snowid_sql_private.snowid_sql_set_meanwhile();
			END IF;
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

-- Moves the generator up so that its next position lies at or above
-- floor_ms (Unix ms), as a writer (snowid_sql_move()), waiting for the
-- lock at most 10 s: a copy's worker id set (snowid_sql_config_floor()).
-- Never further than the clock plus the largest max_drift_ms the table
-- allows (an hour, snowid_config_valid) and the floor's 2 ms: a floor
-- beyond it would stop the generator until the clock got there.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_raise_floor(floor_ms bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	floor_rel bigint := floor_ms - snowid_sql_private.snowid_sql_unix_ms(c.epoch);
BEGIN
	IF floor_rel <= 0 THEN
		RETURN;
	END IF;
	IF floor_ms > snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + 3600000 + 2 THEN
		RAISE EXCEPTION 'the snowid floor % lies more than an hour ahead of the clock', floor_ms
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A copy''s floor lies at most max_drift_ms, at most an hour, ahead of the clock; the generator would wait for the clock until then.',
				  HINT = 'The floor is raised when a worker id is set on a copy; nothing else calls this function.';
	END IF;
	IF floor_rel > snowid_sql_private.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'snowid has run out of timestamps'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('The layout %s holds no time after %s, and setting the worker id raises the generator past the clock plus max_drift_ms.',
								  snowid_sql_private.snowid_sql_layout(c),
								  snowid_sql_private.snowid_sql_timestamptz(snowid_sql_private.snowid_sql_max_ms(c) + snowid_sql_private.snowid_sql_unix_ms(c.epoch))),
				  HINT = 'Choose a layout with more bits of time, or a later epoch, before the first worker id (doc/layouts.md).';
	END IF;
	-- beyond what the generator may run ahead (max_drift_ms), its calls
	-- would fail until the clock got there: raised once it has (at most an
	-- hour, the caller's cancel or statement_timeout)
	WHILE floor_ms > snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + c.max_drift_ms LOOP
		PERFORM pg_sleep(least(0.1, (floor_ms - snowid_sql_private.snowid_sql_unix_ms(clock_timestamp())
									 - c.max_drift_ms) / 1000.0));
	END LOOP;
	PERFORM snowid_sql_private.snowid_sql_move(floor_rel << c.sequence_bits, 0, NULL, true);
END
$$;


-- Takes up to n consecutive positions (at least one), all at or after the
-- clock's millisecond and at most max_drift_ms ahead of it; first is the
-- first of them, got how many.  Waits at most max_wait_ms in all for the
-- clock when the positions run that far ahead.  given is a position that
-- snowid_sql_next() took and could not use at once, or NULL: it is kept if
-- the clock allows it, as a position taken here would be.  Otherwise takes
-- them as a writer, waiting for the lock at most 10 s.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_take(n integer, c snowid_sql_private.snowid_config,
	given bigint, OUT first bigint, OUT got integer)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	s integer := c.sequence_bits;
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
	now_ms bigint;
	allowed bigint;
	v bigint;
	m record;
	-- the time slept, counted rather than read from the wall clock, which
	-- may step back during the wait
	waited_ms integer := 0;
	nap_ms integer;
BEGIN
	IF pg_is_in_recovery() THEN
		RAISE EXCEPTION 'cannot generate snowids during recovery'
			USING ERRCODE = 'read_only_sql_transaction',
				  HINT = 'Take ids from the primary, or promote this server first.';
	END IF;
	-- a position the caller took ahead of the clock, within max_drift_ms,
	-- is used here without a writer: the subscription a writer refuses is
	-- refused here too (before 1.4's fixes such calls went on after a
	-- subscription listed the sequences, with no writer to make the
	-- generation one no call takes: test subscriber_sequences_race)
	IF current_setting('server_version_num')::integer >= 190000 THEN
		PERFORM snowid_sql_private.snowid_sql_subscribed();
	END IF;
	LOOP
		now_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
		-- as the C edition, before anything moves: a position taken before
		-- the epoch would lie at it, ahead of the clock by all the gap, and
		-- the generator, moved, would keep the epoch from being corrected
		-- (test epoch_in_future)
		IF now_ms < 0 THEN
			RAISE EXCEPTION 'the clock lies before the snowid epoch'
				USING ERRCODE = 'datetime_field_overflow',
					  DETAIL = format('The clock reads %s ms before the epoch of snowid_config, %s; ids count their time from the epoch.',
									  -now_ms, c.epoch),
					  HINT = 'Check the system clock and the epoch of snowid_config: while this database has issued no id, its owner may set an epoch in the past (UPDATE snowid_config SET epoch = ...).';
		END IF;
		IF now_ms > snowid_sql_private.snowid_sql_max_ms(c) THEN
			RAISE EXCEPTION 'snowid has run out of timestamps'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The layout %s holds no time after %s.', snowid_sql_private.snowid_sql_layout(c),
									  snowid_sql_private.snowid_sql_timestamptz(snowid_sql_private.snowid_sql_max_ms(c) + epoch_ms));
		END IF;
		-- the last position the drift bound allows
		allowed := ((now_ms + c.max_drift_ms + 1) << s) - 1;
		v := given;
		given := NULL;
		IF v IS NULL THEN
			-- at or after the clock, and up to the drift bound
			m := snowid_sql_private.snowid_sql_move(now_ms << s, n, allowed, true);
			first := m.first;
			got := m.got;
			IF now_ms < (m.last >> s) - 100 AND waited_ms = 0 THEN
				PERFORM nextval('snowid_sql_private.snowid_clock_steps');
			END IF;
		ELSE
			first := v;
			got := CASE WHEN v <= allowed THEN 1 ELSE 0 END;
			IF (v >> s) > now_ms + 100 AND waited_ms = 0 THEN
				PERFORM nextval('snowid_sql_private.snowid_clock_steps');
			END IF;
		END IF;
		IF got >= 1 THEN
			RETURN;
		END IF;
		-- the positions run too far ahead of the clock: wait for it
		IF waited_ms >= c.max_wait_ms THEN
			PERFORM nextval('snowid_sql_private.snowid_clock_errors');
			RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
				(first >> s) - now_ms
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
									  c.max_drift_ms, c.max_wait_ms),
					  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
		END IF;
		IF waited_ms = 0 THEN
			PERFORM nextval('snowid_sql_private.snowid_waits');
		END IF;
		nap_ms := least(10, c.max_wait_ms - waited_ms);
		PERFORM pg_sleep(nap_ms / 1000.0);
		waited_ms := waited_ms + nap_ms;
		IF v IS NOT NULL THEN
			-- the position taken is ours: wait until the clock allows it
			LOOP
				now_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
				IF v <= ((now_ms + c.max_drift_ms + 1) << s) - 1 THEN
					first := v;
					got := 1;
					RETURN;
				END IF;
				IF waited_ms >= c.max_wait_ms THEN
					PERFORM nextval('snowid_sql_private.snowid_clock_errors');
					RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
						(v >> s) - now_ms
						USING ERRCODE = 'object_not_in_prerequisite_state',
							  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
											  c.max_drift_ms, c.max_wait_ms),
							  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
				END IF;
				nap_ms := least(10, c.max_wait_ms - waited_ms);
				PERFORM pg_sleep(nap_ms / 1000.0);
				waited_ms := waited_ms + nap_ms;
			END LOOP;
		END IF;
	END LOOP;
END
$$;

-- The id at a position, for the node of the configuration
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_compose(c snowid_sql_private.snowid_config, pos bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN snowid_sql_private.snowid_sql_id(pos, c.datacenter_id, c.worker_id, c.datacenter_bits,
	c.worker_bits, c.sequence_bits);

-- One id, as snowid_next().
--
-- The common path takes no lock, opens no subtransaction, reads no table
-- and runs few statements (PL/pgSQL's cost is mostly per statement): the
-- worker id (snowid_sql_fixed()'s), then the generation is read, one
-- position taken with nextval(), the generation read again, and the clock.
-- The position is used if both readings are the same even value (no
-- writer's window can have enclosed the nextval(), see snowid_sql_move())
-- and it lies in the clock's millisecond or up to near_ms (100 ms, and no
-- more than max_drift_ms) ahead.
--
-- Why no position is used twice: nextval() gives each position at most
-- once, and only a setval() moves the sequence back, which only a writer
-- does, within a window; a position that a window may have enclosed is
-- never used, and every position taken outside the windows lies below
-- each later setting (a writer reads the sequence after its window
-- opens).  Writers take turns on the lock, and each uses only positions it
-- set itself under it.
--
-- A position behind the clock or one a window may have enclosed is
-- skipped: the call becomes a writer, which moves the sequence 9 ms past
-- the clock's millisecond and takes the first position there (so that the
-- calls of the next 9 ms need none).  Anything else takes the path of
-- snowid_sql_config() and snowid_sql_take(), which read the table, with
-- the position taken here if it is this call's: a configuration with
-- something missing (said there), a standby, the end of the layout's time,
-- or a position far ahead of the clock (counted, and waited for).
--
-- The common path also checks that snowid_sql_fixed() was made with this
-- snowid_position, in this database (a restored dump has another, a copy
-- made from it as a template is in another), that a writer checked the
-- server since it started (snowid_sql_started: a pg_createsubscriber
-- copy's first call becomes a writer, which finds another system
-- identifier), and makes its transaction write WAL of its own once (a transactional
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
-- What the common path costs (doc/managed.md, "Measuring"):
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
-- - The id is made of w, the worker id read at the start, which the
--   position was checked under: a writer's lock makes the session read a
--   change of the row made meanwhile, and a statement planned anew then
--   reads snowid_sql_fixed() of the new row (before 1.4's fixes the RETURN
--   read it again, and composed the id with the NULL worker id of a row
--   whose worker id was being unset: snowid_next() returned NULL, test
--   worker_unset_returns_null).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next(recovery boolean)
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
	w := CASE WHEN (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				   OPERATOR(pg_catalog.=) (snowid_sql_private.snowid_sql_fixed()).position_path) IS TRUE
		THEN (snowid_sql_private.snowid_sql_fixed()).worker_id END;
	g := pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass);
	-- no position while the clock lies before the epoch (an epoch set
	-- ahead of the clock): the path below refuses the call before it moves
	-- anything (before 1.4's fixes the position was taken, and the epoch
	-- could no more be corrected: test epoch_in_future)
	v := CASE WHEN w IS NOT NULL AND NOT recovery
			AND (pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
				 OPERATOR(pg_catalog.>=) (snowid_sql_private.snowid_sql_fixed()).epoch_ms)
		THEN CASE WHEN pg_catalog.current_setting('snowid_sql.message_written', true) OPERATOR(pg_catalog.=) 'on'
					   OR (pg_catalog.pg_logical_emit_message(true, 'snowid_sql', '') IS NOT NULL
						   AND pg_catalog.set_config('snowid_sql.message_written', 'on', true) IS NOT NULL)
			THEN pg_catalog.nextval('snowid_sql_private.snowid_position'::pg_catalog.regclass) END END;
	-- the generation even and this server's (its bits from 40 up the
	-- token): (g % 2 = 0 AND g >> 40 = token); a writer has checked the
	-- server since it started (snowid_sql_started); the position in the
	-- clock's millisecond or up to near_ms ahead, the clock read once
	-- here, after the position (a later reading only narrows what is
	-- kept): v - now_pos from 0 to ((near_ms + 1) << sequence_bits) - 1,
	-- compared unsigned (the sign bit flipped on both sides), one
	-- expression where a variable now_pos would cost a statement; and in
	-- the layout's time: (v >> sequence_bits) <= max_ms
	IF (g OPERATOR(pg_catalog.&) -1099511627775) OPERATOR(pg_catalog.=) ((snowid_sql_private.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
		AND pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass) OPERATOR(pg_catalog.=) g
		AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started'::pg_catalog.regclass)::double precision
								OPERATOR(pg_catalog./) 1000000)
			OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
		AND ((v OPERATOR(pg_catalog.-) ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (snowid_sql_private.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits))
			 OPERATOR(pg_catalog.#) -9223372036854775808)
			OPERATOR(pg_catalog.<) ((((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
									 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
									OPERATOR(pg_catalog.#) -9223372036854775808)
		AND v OPERATOR(pg_catalog.<=) (((snowid_sql_private.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
									   OPERATOR(pg_catalog.|) ((1::bigint OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits)
															   OPERATOR(pg_catalog.-) 1)) THEN
		RETURN snowid_sql_private.snowid_sql_fixed_id(w, v);
	END IF;
	now_pos := CASE WHEN w IS NOT NULL AND NOT recovery THEN ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint
			  OPERATOR(pg_catalog.-) (snowid_sql_private.snowid_sql_fixed()).epoch_ms)
			 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) END;
	-- (past the layout's time, the path below says so)
	IF v IS NOT NULL AND now_pos OPERATOR(pg_catalog.<=) ((snowid_sql_private.snowid_sql_fixed()).max_ms OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer, which
		-- moves the sequence ahead_ms (9, or near_ms if less) past the
		-- clock's millisecond: the calls of the next ahead_ms
		-- milliseconds find it ahead, within near_ms, and need no writer
		-- (one writer every ahead_ms + 1 milliseconds, not every one)
		IF NOT coalesce((g OPERATOR(pg_catalog.&) -1099511627775)
							OPERATOR(pg_catalog.=) ((snowid_sql_private.snowid_sql_fixed()).token OPERATOR(pg_catalog.<<) 40)
						AND pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_generation'::pg_catalog.regclass)
							OPERATOR(pg_catalog.=) g
						AND pg_catalog.to_timestamp(pg_catalog.pg_sequence_last_value('snowid_sql_private.snowid_sql_started'::pg_catalog.regclass)::double precision
												OPERATOR(pg_catalog./) 1000000)
							OPERATOR(pg_catalog.=) pg_catalog.pg_postmaster_start_time()
						AND v OPERATOR(pg_catalog.>=) now_pos
						AND (v OPERATOR(pg_catalog.-) now_pos)
							OPERATOR(pg_catalog.>=) (((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
													 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits),
						false) THEN
			v := (snowid_sql_private.snowid_sql_move(
				now_pos OPERATOR(pg_catalog.+)
					((CASE WHEN (snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.<) 9
						   THEN (snowid_sql_private.snowid_sql_fixed()).near_ms ELSE 9 END)::bigint
					 OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits),
				1, NULL, false)).first;
		END IF;
		IF v OPERATOR(pg_catalog.>=) now_pos
			AND (v OPERATOR(pg_catalog.-) now_pos)
				OPERATOR(pg_catalog.<) (((snowid_sql_private.snowid_sql_fixed()).near_ms OPERATOR(pg_catalog.+) 1)::bigint
										OPERATOR(pg_catalog.<<) (snowid_sql_private.snowid_sql_fixed()).sequence_bits) THEN
			RETURN snowid_sql_private.snowid_sql_fixed_id(w, v);
		END IF;
	END IF;
	RETURN snowid_sql_private.snowid_sql_next_table(v);
END
$$;

-- The rest of a call that the common path did not end: reads the table,
-- as the caller's snowid_sql_next() (the superuser), and takes the
-- position v that call took, or another
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_table(v bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
BEGIN
	c := snowid_sql_private.snowid_sql_config(true);
	RETURN snowid_sql_private.snowid_sql_compose(c, (snowid_sql_private.snowid_sql_take(1, c, v)).first);
END
$$;

-- 1.2's signatures, for its calls in flight through the update (above)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next(claimed boolean, recovery boolean)
RETURNS bigint
LANGUAGE sql VOLATILE
RETURN snowid_sql_private.snowid_sql_next(recovery);

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_table(claimed boolean, v bigint)
RETURNS bigint
LANGUAGE sql VOLATILE
RETURN snowid_sql_private.snowid_sql_next_table(v);

-- Issuing, with pg_is_in_recovery() read here (see above)
CREATE OR REPLACE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN snowid_sql_private.snowid_sql_next(pg_catalog.pg_is_in_recovery());

COMMENT ON FUNCTION @extschema@.snowid_next() IS
'the next id of this server''s generator';

-- n ids in one pass: as many positions as the clock and max_drift_ms allow
-- at a time, taken by a writer
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE STRICT
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 10
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	t record;
	taken integer := 0;
BEGIN
	IF n < 1 OR n > 100000 THEN
		RAISE EXCEPTION 'batch size % is out of range', n
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'snowid_next_batch() hands out from 1 to 100000 ids in one call.';
	END IF;
	c := snowid_sql_private.snowid_sql_config(true);
	WHILE taken < n LOOP
		t := snowid_sql_private.snowid_sql_take(n - taken, c, NULL);
		RETURN QUERY SELECT snowid_sql_private.snowid_sql_compose(c, t.first + g)
			FROM generate_series(0::bigint, t.got - 1) g;
		taken := taken + t.got;
	END LOOP;
END
$$;

-- 1.2's signature, for its calls in flight through the update (above)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_next_batch(n integer, claimed boolean)
RETURNS SETOF bigint
LANGUAGE sql VOLATILE STRICT
ROWS 10
BEGIN ATOMIC
	SELECT snowid_sql_private.snowid_sql_next_batch(n);
END;

CREATE OR REPLACE FUNCTION @extschema@.snowid_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
ROWS 10
BEGIN ATOMIC
	SELECT snowid_sql_private.snowid_sql_next_batch(n);
END;

COMMENT ON FUNCTION @extschema@.snowid_next_batch(integer) IS
'n ids (1 to 100,000) in ascending order';

