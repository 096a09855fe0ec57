-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- The configuration as the common path of the generator reads it: the row
-- of snowid_config made constants in the body of snowid_sql_fixed(), which
-- the planner inlines and folds into the expressions that use it, so that
-- a call reads no table.  The triggers on snowid_config make it anew from
-- the row whenever the row changes, in the transaction that changes it,
-- however it changes (ENABLE ALWAYS: also under session_replication_role =
-- replica and in a replica's apply; TRUNCATE too).  Plans that inlined it
-- are planned again once a session sees the change: a transaction that
-- begins after the change commits reads the new row; one open before may
-- read the old one until it ends, as one in REPEATABLE READ reads the old
-- row of the table.  STABLE, not IMMUTABLE: the planner folds a call of
-- an immutable function to its value without noting that the plan depends
-- on the function, and such a plan would keep the old row for good.  Like
-- every function of the extension, it is the owner's.
CREATE TYPE @extschema@.snowid_sql_fixed AS (
	claim_worker_id boolean,
	datacenter_id integer,
	worker_id integer,
	datacenter_bits integer,
	worker_bits integer,
	sequence_bits integer,
	-- the epoch in Unix milliseconds, and the last millisecond of the
	-- layout since it
	epoch_ms bigint,
	max_ms bigint,
	-- how far ahead of the clock a position the common path takes may lie
	near_ms integer
);

-- As made for no row (and so before the first change): no worker id
CREATE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(false, 0, NULL, 0, 0, 0, 0, 0, 0)::@extschema@.snowid_sql_fixed;

-- The id at a position, for a node and a layout: one expression, which
-- the planner inlines where it is called
CREATE FUNCTION @extschema@.snowid_sql_id(pos bigint, datacenter_id integer, worker_id integer,
	datacenter_bits integer, worker_bits integer, sequence_bits integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((pos >> sequence_bits) << (datacenter_bits + worker_bits + sequence_bits))
	| (datacenter_id::bigint << (worker_bits + sequence_bits))
	| (worker_id::bigint << sequence_bits)
	| (pos & ((1::bigint << sequence_bits) - 1));

-- The id at a position, for the node of snowid_sql_fixed() and a worker id
CREATE FUNCTION @extschema@.snowid_sql_fixed_id(worker_id integer, pos bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN @extschema@.snowid_sql_id(pos, (@extschema@.snowid_sql_fixed()).datacenter_id, worker_id,
	(@extschema@.snowid_sql_fixed()).datacenter_bits, (@extschema@.snowid_sql_fixed()).worker_bits,
	(@extschema@.snowid_sql_fixed()).sequence_bits);

-- Makes snowid_sql_fixed() anew from the row of snowid_config, or as for
-- none.  Its body holds only numbers and booleans of the row, which the
-- table's constraint holds in their ranges.
CREATE FUNCTION @extschema@.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
BEGIN
	SELECT * INTO c FROM @extschema@.snowid_config;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %s)::@extschema@.snowid_sql_fixed$f$,
		CASE WHEN c.claim_worker_id THEN 'true' ELSE 'false' END, coalesce(c.datacenter_id, 0),
		coalesce(c.worker_id::text, 'NULL'), coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(@extschema@.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(@extschema@.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0));
	RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_fix() FROM PUBLIC;

CREATE TRIGGER snowid_config_fix AFTER INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_fix();
CREATE TRIGGER snowid_config_fix_truncate AFTER TRUNCATE
	ON @extschema@.snowid_config
	FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.snowid_sql_fix();
ALTER TABLE @extschema@.snowid_config ENABLE ALWAYS TRIGGER snowid_config_fix,
	ENABLE ALWAYS TRIGGER snowid_config_fix_truncate;

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
-- Called only by the functions of the generator, which run as the owner
-- with search_path set: this one has neither of its own, which would cost
-- every writer two settings changed and changed back.
--
-- The lock and the flag that says it is held are set in one expression
-- (pg_advisory_lock() returns void, which IS NOT NULL): PL/pgSQL checks for
-- a cancel between statements, and one between the two would leave the
-- lock held with the handler not knowing it.  The handler lets the lock go
-- on any error or cancel.  A window left open so (the generation odd)
-- sends the calls that see it here, to wait for the lock; the next writer
-- closes it.
CREATE FUNCTION @extschema@.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
	OUT first bigint, OUT got bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	locked boolean := false;
	-- what a call returns that is not used (an assignment is cheaper than
	-- PERFORM, which runs a query)
	done bigint;
BEGIN
	BEGIN
		IF wait THEN
			locked := pg_catalog.pg_advisory_lock(1936617335, 5460300) IS NOT NULL;
		ELSE
			locked := pg_catalog.pg_try_advisory_lock(1936617335, 5460300);
		END IF;
		IF locked THEN
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further)
			done := pg_catalog.nextval('@extschema@.snowid_generation');
			IF done % 2 = 0 THEN
				done := pg_catalog.nextval('@extschema@.snowid_generation');
			END IF;
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
			done := pg_catalog.nextval('@extschema@.snowid_generation');
			locked := NOT pg_catalog.pg_advisory_unlock(1936617335, 5460300);
		END IF;
	EXCEPTION WHEN OTHERS OR query_canceled THEN
		IF locked THEN
			PERFORM pg_catalog.pg_advisory_unlock(1936617335, 5460300);
		END IF;
		IF SQLSTATE = '55P03' THEN
			RAISE EXCEPTION 'the snowid generator''s lock was not free within lock_timeout'
				USING ERRCODE = 'lock_not_available',
					  DETAIL = 'Another session held the advisory lock (1936617335, 5460300) of snowid_sql for 10 s.',
					  HINT = 'Look for that session in pg_locks; snowid_sql holds the lock only while it moves the generator.';
		END IF;
		RAISE;
	END;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_move(bigint, bigint, bigint, boolean) FROM PUBLIC;

-- Takes up to n consecutive positions (at least one), all at or after the
-- clock's millisecond and at most max_drift_ms ahead of it; first is the
-- first of them, got how many.  Waits at most max_wait_ms in all for the
-- clock when the positions run that far ahead.  given is a position that
-- snowid_sql_next() took and could not use at once, or NULL: it is kept if
-- the clock allows it, as a position taken here would be.  Otherwise takes
-- them as a writer, waiting for the lock at most 10 s.
CREATE FUNCTION @extschema@.snowid_sql_take(n integer, c @extschema@.snowid_config,
	given bigint, OUT first bigint, OUT got integer)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
	s integer := c.sequence_bits;
	epoch_ms bigint := @extschema@.snowid_sql_unix_ms(c.epoch);
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
	LOOP
		now_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
		IF now_ms > @extschema@.snowid_sql_max_ms(c) THEN
			RAISE EXCEPTION 'snowid has run out of timestamps'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The layout %s holds no time after %s.', @extschema@.snowid_sql_layout(c),
									  @extschema@.snowid_sql_timestamptz(@extschema@.snowid_sql_max_ms(c) + epoch_ms));
		END IF;
		-- the last position the drift bound allows
		allowed := ((now_ms + c.max_drift_ms + 1) << s) - 1;
		v := given;
		given := NULL;
		IF v IS NULL THEN
			-- at or after the clock, and up to the drift bound
			m := @extschema@.snowid_sql_move(now_ms << s, n, allowed, true);
			first := m.first;
			got := m.got;
			IF now_ms < (m.last >> s) - 100 AND waited_ms = 0 THEN
				PERFORM nextval('@extschema@.snowid_clock_steps');
			END IF;
		ELSE
			first := v;
			got := CASE WHEN v <= allowed THEN 1 ELSE 0 END;
			IF (v >> s) > now_ms + 100 AND waited_ms = 0 THEN
				PERFORM nextval('@extschema@.snowid_clock_steps');
			END IF;
		END IF;
		IF got >= 1 THEN
			RETURN;
		END IF;
		-- the positions run too far ahead of the clock: wait for it
		IF waited_ms >= c.max_wait_ms THEN
			PERFORM nextval('@extschema@.snowid_clock_errors');
			RAISE EXCEPTION 'the system clock is % ms behind the snowid generator',
				(first >> s) - now_ms
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = format('The generator may run at most %s ms (max_drift_ms) ahead of the clock, and waited %s ms (max_wait_ms) for it.',
									  c.max_drift_ms, c.max_wait_ms),
					  HINT = 'Correct the system clock, or raise max_drift_ms or max_wait_ms in snowid_config.';
		END IF;
		IF waited_ms = 0 THEN
			PERFORM nextval('@extschema@.snowid_waits');
		END IF;
		nap_ms := least(10, c.max_wait_ms - waited_ms);
		PERFORM pg_sleep(nap_ms / 1000.0);
		waited_ms := waited_ms + nap_ms;
		IF v IS NOT NULL THEN
			-- the position taken is ours: wait until the clock allows it
			LOOP
				now_ms := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
				IF v <= ((now_ms + c.max_drift_ms + 1) << s) - 1 THEN
					first := v;
					got := 1;
					RETURN;
				END IF;
				IF waited_ms >= c.max_wait_ms THEN
					PERFORM nextval('@extschema@.snowid_clock_errors');
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

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_take(integer, @extschema@.snowid_config, bigint) FROM PUBLIC;

-- The id at a position, for the node of the configuration
CREATE FUNCTION @extschema@.snowid_sql_compose(c @extschema@.snowid_config, pos bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN @extschema@.snowid_sql_id(pos, c.datacenter_id, c.worker_id, c.datacenter_bits,
	c.worker_bits, c.sequence_bits);

-- One id, as snowid_next(); NULL instead if the worker id is to be claimed
-- and is not, unless claimed says a claim was just made.
--
-- The common path takes no lock, opens no subtransaction, reads no table
-- and runs few statements (PL/pgSQL's cost is mostly per statement): the
-- worker id (snowid_sql_fixed()'s, or the claimed one), the clock, then
-- the generation is read, one position taken with nextval() and the
-- generation read again.  The position is used if both readings are the
-- same even value (no writer's window can have enclosed the nextval(), see
-- snowid_sql_move()) and it lies in the clock's millisecond or up to 100
-- ms ahead (and no more than max_drift_ms).
--
-- Why no position is used twice: nextval() gives each position at most
-- once, and only a setval() moves the sequence back, which only a writer
-- does, within a window; a position that a window may have enclosed is
-- never used, and every position taken outside the windows lies below
-- each later setting (a writer reads the sequence after its window
-- opens).  Writers take turns on the lock, and each uses only positions it
-- set itself under it.
--
-- A position behind the clock (the first call of each millisecond, below
-- 4096 ids a millisecond) or one a window may have enclosed is skipped:
-- the call becomes a writer, which moves the sequence to the clock's
-- millisecond and takes that position.  Anything else takes the path of
-- snowid_sql_config() and snowid_sql_take(), which read the table, with
-- the position taken here if it is this call's: a configuration with
-- something missing (said there), a standby, the end of the layout's time,
-- or a position far ahead of the clock (counted, and waited for).
CREATE FUNCTION @extschema@.snowid_sql_next(claimed boolean)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
	w integer;
	now_ms bigint;
	g bigint;
	v bigint;
BEGIN
	w := CASE WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id
		THEN @extschema@.snowid_sql_claimed_of(pg_sequence_last_value('@extschema@.snowid_claimed'),
											   (@extschema@.snowid_sql_fixed()).datacenter_id,
											   (@extschema@.snowid_sql_fixed()).worker_bits,
											   (@extschema@.snowid_sql_fixed()).worker_id)
		ELSE (@extschema@.snowid_sql_fixed()).worker_id END;
	now_ms := CASE WHEN w IS NOT NULL AND NOT pg_is_in_recovery()
		THEN floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint
			- (@extschema@.snowid_sql_fixed()).epoch_ms END;
	g := pg_sequence_last_value('@extschema@.snowid_generation');
	v := CASE WHEN now_ms <= (@extschema@.snowid_sql_fixed()).max_ms THEN nextval('@extschema@.snowid_position') END;
	IF g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
		AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
		RETURN @extschema@.snowid_sql_fixed_id(w, v);
	END IF;
	IF v IS NOT NULL THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer
		IF NOT coalesce(g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
						AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
							> now_ms + (@extschema@.snowid_sql_fixed()).near_ms, false) THEN
			v := (@extschema@.snowid_sql_move(now_ms << (@extschema@.snowid_sql_fixed()).sequence_bits,
											  1, NULL, false)).first;
		END IF;
		IF (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
			RETURN @extschema@.snowid_sql_fixed_id(w, v);
		END IF;
	END IF;

	c := @extschema@.snowid_sql_config(false);
	IF c.worker_id IS NULL THEN
		IF c.claim_worker_id AND NOT claimed THEN
			RETURN NULL;
		END IF;
		c := @extschema@.snowid_sql_config(true);
	END IF;
	RETURN @extschema@.snowid_sql_compose(c, (@extschema@.snowid_sql_take(1, c, v)).first);
END
$$;

-- Issuing runs as the caller until the worker id is claimed (see
-- snowid_sql_claim_first()), then in the functions above
CREATE FUNCTION @extschema@.snowid_next()
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN coalesce(@extschema@.snowid_sql_next(false),
				@extschema@.snowid_sql_next(@extschema@.snowid_sql_claim_first()));

COMMENT ON FUNCTION @extschema@.snowid_next() IS
'the next id of this server''s generator';

CREATE FUNCTION @extschema@.snowid_sql_next_batch(n integer, claimed boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE STRICT
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 10
AS $$
DECLARE
	c @extschema@.snowid_config;
	t record;
	taken integer := 0;
BEGIN
	IF n < 1 OR n > 100000 THEN
		RAISE EXCEPTION 'batch size % is out of range', n
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'snowid_next_batch() hands out from 1 to 100000 ids in one call.';
	END IF;
	c := @extschema@.snowid_sql_config(true);
	WHILE taken < n LOOP
		t := @extschema@.snowid_sql_take(n - taken, c, NULL);
		RETURN QUERY SELECT @extschema@.snowid_sql_compose(c, t.first + g)
			FROM generate_series(0::bigint, t.got - 1) g;
		taken := taken + t.got;
	END LOOP;
END
$$;

CREATE FUNCTION @extschema@.snowid_next_batch(n integer)
RETURNS SETOF bigint
LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
ROWS 10
BEGIN ATOMIC
	SELECT @extschema@.snowid_sql_next_batch(n, @extschema@.snowid_sql_claim_first());
END;

COMMENT ON FUNCTION @extschema@.snowid_next_batch(integer) IS
'n ids (1 to 100,000) in ascending order';

