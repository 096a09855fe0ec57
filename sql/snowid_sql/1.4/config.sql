-- -------------------------------------------------------------------------
-- The configuration
-- -------------------------------------------------------------------------

-- A timestamptz as Unix milliseconds, rounded down; NULL if infinite or
-- NULL.  The seconds of an interval from 2000 (PostgreSQL's own epoch, so
-- the subtraction never overflows), not of the timestamptz itself: that
-- EXTRACT is immutable, and the function not STRICT (the CASE is not), so
-- the planner inlines it where it is called with anything but a volatile
-- argument (which it would use twice), and a call runs no query of its own.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_unix_ms(ts timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.isfinite(ts)
	THEN pg_catalog.floor(EXTRACT(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000)::bigint
		+ 946684800000 END;

-- Unix milliseconds as a timestamptz, exactly (no floating point)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_timestamptz(unix_ms bigint)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((timestamp '1970-01-01'
		 + pg_catalog.make_interval(days => (unix_ms / 86400000)::integer))
		+ (unix_ms % 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';

-- Notes for this transaction in snowid_config_pending (pending.sql): the
-- floor's max_drift_ms (NULL: none), or that the worker id was set.
-- Called by the triggers of snowid_config, which run as the owner of the
-- table (SECURITY DEFINER), never granted.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_note(drift_ms integer, set_worker boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	DELETE FROM snowid_sql_private.snowid_config_pending p WHERE p.xact <> pg_current_xact_id();
	INSERT INTO snowid_sql_private.snowid_config_pending AS p (xact, copy_drift_ms, worker_set)
	VALUES (pg_current_xact_id(), drift_ms, coalesce(set_worker, false))
	ON CONFLICT (xact) DO UPDATE
	SET copy_drift_ms = CASE WHEN set_worker IS NULL THEN excluded.copy_drift_ms ELSE p.copy_drift_ms END,
		worker_set = p.worker_set OR excluded.worker_set;
END
$$;

-- The note of this transaction, or none
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_noted()
RETURNS snowid_sql_private.snowid_config_pending
LANGUAGE sql VOLATILE
RETURN (SELECT p FROM snowid_sql_private.snowid_config_pending p
		WHERE p.xact OPERATOR(pg_catalog.=) pg_catalog.pg_current_xact_id_if_assigned());

-- What is wrong with a configuration row: 0 for nothing, else the number
-- of the first check it fails (snowid_sql_config_problem() says which).
-- The same checks as the table's constraints, one by one, for the
-- trigger's message.  The epoch lies from 1970 to before the year 10000
-- (Unix milliseconds from 0 to 253402300799999), infinities excluded, and
-- on a whole millisecond.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_fault(c snowid_sql_private.snowid_config)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
	WHEN c.datacenter_bits NOT BETWEEN 0 AND 24 THEN 1
	WHEN c.worker_bits NOT BETWEEN 0 AND 24 THEN 2
	WHEN c.sequence_bits NOT BETWEEN 0 AND 24 THEN 3
	WHEN c.datacenter_bits + c.worker_bits + c.sequence_bits > 24 THEN 4
	WHEN c.datacenter_id NOT BETWEEN 0 AND (1 << c.datacenter_bits) - 1 THEN 5
	WHEN c.worker_id NOT BETWEEN 0 AND (1 << c.worker_bits) - 1 THEN 6
	WHEN NOT (c.epoch >= pg_catalog.to_timestamp(0) AND c.epoch < pg_catalog.to_timestamp(253402300800)) THEN 7
	WHEN pg_catalog.date_trunc('milliseconds', c.epoch AT TIME ZONE 'UTC') <> c.epoch AT TIME ZONE 'UTC' THEN 8
	WHEN c.max_drift_ms NOT BETWEEN 0 AND 3600000 THEN 9
	WHEN c.max_wait_ms NOT BETWEEN 0 AND 3600000 THEN 10
	-- a write (the trigger's check): a row read with it on is one of a
	-- snapshot from before the update from a claiming 1.2 (the table's
	-- constraint refuses it since), which kept its worker id, and which
	-- 1.2's snowid_sql_config() in flight through the update reads (before
	-- 1.4's fixes such calls failed with 22023: test
	-- update_in_flight_batch_claim)
	WHEN c.claim_worker_id AND pg_catalog.pg_trigger_depth() > 0 THEN 11
	ELSE 0 END;

-- The problem with a configuration row, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_problem(c snowid_sql_private.snowid_config)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE snowid_sql_private.snowid_sql_config_fault(c)
	WHEN 1 THEN
		pg_catalog.format('datacenter_bits is %s; it runs from 0 to 24.', c.datacenter_bits)
	WHEN 2 THEN
		pg_catalog.format('worker_bits is %s; it runs from 0 to 24.', c.worker_bits)
	WHEN 3 THEN
		pg_catalog.format('sequence_bits is %s; it runs from 0 to 24.', c.sequence_bits)
	WHEN 4 THEN
		pg_catalog.format('datacenter_bits, worker_bits and sequence_bits add up to %s, leaving the timestamp %s bits; it needs at least 39.',
			   c.datacenter_bits + c.worker_bits + c.sequence_bits,
			   63 - c.datacenter_bits - c.worker_bits - c.sequence_bits)
	WHEN 5 THEN
		pg_catalog.format('datacenter_id is %s; with datacenter_bits = %s, datacenter ids run from 0 to %s.',
			   c.datacenter_id, c.datacenter_bits, (1 << c.datacenter_bits) - 1)
	WHEN 6 THEN
		pg_catalog.format('worker_id is %s; with worker_bits = %s, worker ids run from 0 to %s.',
			   c.worker_id, c.worker_bits, (1 << c.worker_bits) - 1)
	WHEN 7 THEN
		'epoch must lie from 1970-01-01 00:00:00 UTC to before the year 10000.'
	WHEN 8 THEN
		'epoch must be a whole number of milliseconds.'
	WHEN 9 THEN
		pg_catalog.format('max_drift_ms is %s; it runs from 0 to 3600000.', c.max_drift_ms)
	WHEN 10 THEN
		pg_catalog.format('max_wait_ms is %s; it runs from 0 to 3600000.', c.max_wait_ms)
	WHEN 11 THEN
		'claim_worker_id is on: snowid_sql claims no worker id since 1.3; set worker_id, which a provisioning script may take from the coordination database (doc/managed.md, "A worker id from a coordination database").'
	END;

-- The configuration, checked: a bad one is an error naming what is wrong,
-- and a worker id needed is one set on this server.  No search_path of
-- its own: it names every object with its schema, and its callers set
-- pg_catalog's.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config(need_worker boolean)
RETURNS snowid_sql_private.snowid_config
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	c snowid_sql_private.snowid_config;
	f snowid_sql_private.snowid_sql_fixed;
	problem text;
BEGIN
	SELECT * INTO c FROM snowid_sql_private.snowid_config;
	-- on only in a row read in a snapshot taken before the update from a
	-- claiming 1.2 committed (the table's constraint refuses it since):
	-- that update kept the claimed worker id as the configured one, and a
	-- call of 1.2 in flight goes on with it (before 1.4's fixes it failed
	-- with 22023: test update_in_flight_batch_claim).  That row's worker id
	-- is NULL: the one in force is snowid_sql_fixed()'s, which the update's
	-- change of the row made anew, and which is read from the catalog as it
	-- is now, whatever the caller's snapshot (a REPEATABLE READ transaction
	-- begun before the update failed with 55000: test
	-- update_claim_old_snapshot); taken only where it was made in this
	-- database, for the row's datacenter, layout and epoch, and its server
	-- with it (otherwise none: the call says there is no worker id)
	IF c.claim_worker_id AND need_worker THEN
		f := snowid_sql_private.snowid_sql_fixed();
		IF (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				OPERATOR(pg_catalog.=) f.position_path) IS TRUE
			AND f.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
			AND f.datacenter_bits OPERATOR(pg_catalog.=) c.datacenter_bits
			AND f.worker_bits OPERATOR(pg_catalog.=) c.worker_bits
			AND f.sequence_bits OPERATOR(pg_catalog.=) c.sequence_bits
			AND f.epoch_ms OPERATOR(pg_catalog.=) snowid_sql_private.snowid_sql_unix_ms(c.epoch) THEN
			c.worker_id := f.worker_id;
			c.worker_server := f.server;
		ELSE
			c.worker_id := NULL;
		END IF;
	END IF;
	c.claim_worker_id := false;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no configuration'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The table snowid_config holds no row.',
				  HINT = 'Drop the extension and create it again, then set the worker id.';
	END IF;
	problem := snowid_sql_private.snowid_sql_config_problem(c);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'Correct the row of snowid_config as the owner of the extension (doc/managed.md).';
	END IF;
	-- the statement that sets the worker id raises the generator after it
	-- has written the row (snowid_sql_config_floor(), an AFTER trigger):
	-- a call before that, in its RETURNING or elsewhere in the statement,
	-- would issue under the new worker id unraised (before 1.4's fixes a
	-- restored copy's 1,000 ids taken so were its source's: test
	-- worker_set_returning_call).  Read only where a worker id is needed
	-- (the generator's callers, which run as the owner): EXECUTE on
	-- snowid_sql_noted() is checked where the expression is first planned,
	-- whether or not it runs, and decoding is any role's; nor during
	-- recovery, where no statement sets it and the note's table, unlogged,
	-- cannot be read (the call refuses with 25006 further on)
	IF need_worker AND NOT pg_catalog.pg_is_in_recovery() THEN
		IF (snowid_sql_private.snowid_sql_noted()).copy_drift_ms IS NOT NULL THEN
			RAISE EXCEPTION 'snowid issues no id in the statement that sets the worker id'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'Setting the worker id raises the generator past the clock plus max_drift_ms once the statement has written the row; an id taken before then, in its RETURNING or elsewhere in the statement, could equal one another server issued with that worker id.',
					  HINT = 'Take ids in a statement after the one that sets the worker id.';
		END IF;
	END IF;
	IF need_worker AND c.worker_id IS NOT NULL
		AND (c.worker_server IS NULL
			 OR c.worker_server OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_here()) THEN
		PERFORM snowid_sql_private.snowid_sql_elsewhere(c.worker_id);
	END IF;
	-- a row changed where the edition's triggers did not fire (see
	-- snowid_sql_config_check()) holds another node, layout or epoch than
	-- the generator runs under: the calls that read it refuse, as its
	-- owner's next change does (before 1.4's fixes they composed ids of
	-- the publisher's node a subscription's apply wrote there, where its
	-- stamp named this server: a copy of this server's files subscribed to
	-- it, test restore_disable_triggers_apply).  So does the row of a
	-- snapshot taken before the row's last change (a REPEATABLE READ
	-- transaction begun before a restore: test
	-- restore_raise_old_snapshot_epoch), which the message names first
	IF need_worker THEN
		f := snowid_sql_private.snowid_sql_fixed();
		IF f.max_ms OPERATOR(pg_catalog.>) 0
			AND (pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass)
				 OPERATOR(pg_catalog.=) f.position_path) IS TRUE
			AND (f.datacenter_id OPERATOR(pg_catalog.<>) c.datacenter_id
				 OR f.datacenter_bits OPERATOR(pg_catalog.<>) c.datacenter_bits
				 OR f.worker_bits OPERATOR(pg_catalog.<>) c.worker_bits
				 OR f.sequence_bits OPERATOR(pg_catalog.<>) c.sequence_bits
				 OR f.epoch_ms OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_unix_ms(c.epoch)) THEN
			RAISE EXCEPTION 'snowid_config as this transaction reads it is not what the generator runs under'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row this transaction reads holds another datacenter id, layout or epoch than the generator runs under: the row changed after the transaction''s snapshot was taken (a REPEATABLE READ or SERIALIZABLE transaction), or a write where the edition''s triggers did not fire put it there (a logical subscription''s apply, once pg_restore --disable-triggers had ended with ALTER TABLE ... ENABLE TRIGGER ALL).',
					  HINT = 'Retry in a new transaction.  If the error stays, as a superuser: ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica, ENABLE ALWAYS TRIGGER snowid_config_fix, ENABLE ALWAYS TRIGGER snowid_config_fix_truncate; then, as the owner, UPDATE snowid_config as its error says (doc/managed.md, "Dumps and restores").';
		END IF;
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		-- a row stamped elsewhere (a restored dump, which keeps no worker
		-- id): says it is a copy
		IF c.worker_server OPERATOR(pg_catalog.<>) snowid_sql_private.snowid_sql_here() THEN
			RAISE EXCEPTION 'snowid has no worker id on this server'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row of snowid_config was last stamped on another server, or with other sequences: a restored dump carries its source''s stamp but not its worker id, and this database issues no id until it has a worker id of its own.',
					  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET datacenter_id = D, worker_id = N, with D this server''s datacenter (a restored row carries its source''s) and N unique among the servers of that datacenter; setting it raises the generator past every id the other server may have issued.';
		END IF;
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- The invariant the configuration's triggers keep: per node (datacenter
-- id, worker id), a database issues only ids above every id any database
-- issued with that node before.  Within one database the generator keeps
-- it (snowid_position moves only forward).  Between databases, where a
-- worker id is given to a database that another one issued with (a
-- restore, a CREATE DATABASE ... TEMPLATE copy, a subscriber, a standby
-- promoted), it rests on one assumption, the owner's to check
-- (doc/managed.md, "Dumps and restores"): that database reads a clock,
-- when the worker id is set, no earlier than the other's clock when it
-- last issued.  The owner adds a margin by raising max_drift_ms in the
-- same UPDATE that sets the worker id.  Two rules, and no more:
-- - the raise (snowid_sql_config_stamp(), snowid_sql_config_floor()):
--   setting a worker id, or changing the datacenter id, raises the
--   generator past this server's clock plus the larger of the row's
--   max_drift_ms before and after, plus 2 ms, under the new row's layout
--   and epoch.  The other database issued at most its max_drift_ms ahead
--   of its clock, which by the assumption lies behind this one's.  It
--   reads no table of the application's: before 1.4's fixes it read the
--   largest id of every column whose default reached snowid_next(), found
--   by a search of the catalog that each attack found another way around
--   (a default through a view a function reads, an operator, a call
--   written U&"snowid\005fnext"(), a function in an extension of the
--   application's), and that ran for minutes beside thousands of
--   functions; every duplicate it was to prevent needed the other
--   server's clock ahead of this one's beyond max_drift_ms;
-- - the guard of the layout and the epoch (snowid_sql_config_check(),
--   below).
--
-- Checks a new configuration row (a trigger, as the owner of the
-- extension): its values, a lowered max_drift_ms, and a change of the
-- layout or the epoch.
--
-- The guard: the layout and the epoch make an id of a time and a node,
-- and under another layout or epoch the same number stands for another
-- time and node, so an id made after a change can equal one made before.
-- A change is refused where ids made under the old row's may exist where
-- this database's ids meet them:
-- - its generator moved (snowid_position called): this database issued,
--   or its worker id was set (which raises it); a copy of its files (a
--   standby, a CREATE DATABASE ... TEMPLATE copy, a snapshot) brings its
--   position along with its tables;
-- - the row carries the stamp of another server (worker_server set, and
--   not this one's): a worker id was set with it there, and the ids that
--   server issued travel with its tables (a restored dump, whose position
--   is not dumped; a pg_createsubscriber copy; pg_upgrade), as do those
--   of a dump of 1.0 or 1.1, or of a database that claimed its worker id,
--   whose restore gives it a stamp that names no server.  Before 1.3 the
--   check read the position alone: the owner of a restored copy moved its
--   epoch 30 s later, then set its gone source's worker id, and 200 of
--   5,000 new ids equalled ids in the restored table (test 149).
-- Otherwise (a fresh install, a restore into one) the change is taken.
-- What it cannot see stays the owner's (doc/managed.md): ids loaded into
-- a database whose row came from nowhere else (a dump of the tables
-- alone), or kept outside the database.  The restore of a dump's row
-- (snowid_sql_config_restore(), an INSERT where the row is) brings the
-- layout and epoch its tables' ids were made under (the tables of a dump
-- come back before the row), and is checked by the same rule as the
-- owner's UPDATE: taken into a fresh install, refused into a used
-- database or over another restore (before 1.4 a restore's update was not
-- checked, and the restore of another dump into a used database, the
-- owner's INSERT of the row, or the owner's own trigger that set
-- snowid_sql.restoring moved the epoch beside ids that new ones then
-- equalled: tests 176, 177); the restore then stamps the row with its
-- source's stamp.  An INSERT where the row is becomes such an update.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := snowid_sql_private.snowid_sql_config_problem(NEW);
	used boolean;
	held text;
	high timestamptz;
	f snowid_sql_private.snowid_sql_fixed;
	behind boolean;
BEGIN
	-- the restore's insert: its update is checked
	IF TG_OP = 'INSERT' AND EXISTS (SELECT FROM snowid_sql_private.snowid_config) THEN
		RETURN NEW;
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM snowid_sql_private.snowid_position;
	-- max_drift_ms says how far ids may lie ahead of the clock, which a
	-- copy's floor counts: lowered below how far they lie ahead now, it
	-- counted short, and ids came again (the attack on 1.2: 1,000 of 1,000
	-- from a restored dump).  And a copy's row (stamped by another server)
	-- keeps its source's in every UPDATE until one has set its worker id
	-- here (snowid_sql_config_stamp() counts it): whatever else the UPDATE
	-- names, since the stamp trigger fires only where worker_id or
	-- worker_server is named, and puts the old stamp back (before, an
	-- UPDATE that named worker_server beside a lowered max_drift_ms passed,
	-- and the worker id set next raised past the clock alone: test
	-- copy_drift_lowered_stamp_named)
	IF TG_OP = 'UPDATE' AND NEW.max_drift_ms < OLD.max_drift_ms THEN
		IF OLD.worker_server IS NOT NULL
			AND OLD.worker_server IS DISTINCT FROM snowid_sql_private.snowid_sql_here() THEN
			RAISE EXCEPTION 'max_drift_ms of a copy cannot be lowered before its worker id is set'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The row comes from another server (a restored dump, a copy), which issued ids up to max_drift_ms ahead of its clock: setting the worker id raises the generator past them.',
					  HINT = 'Set the worker id first (UPDATE snowid_config SET worker_id = N), then lower max_drift_ms.';
		END IF;
		high := snowid_sql_private.snowid_sql_high_water_time();
		IF used AND snowid_sql_private.snowid_sql_unix_ms(high)
			> snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + NEW.max_drift_ms THEN
			RAISE EXCEPTION 'max_drift_ms cannot be lowered below how far the snowid generator runs ahead of the clock'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('Ids were issued up to %s, %s ms ahead of the clock: a copy''s floor counts max_drift_ms, and would count short.',
												 high, snowid_sql_private.snowid_sql_unix_ms(high) - snowid_sql_private.snowid_sql_unix_ms(clock_timestamp())),
					  HINT = pg_catalog.format('Lower it once the clock has passed %s.', high);
		END IF;
	END IF;
	-- the node, the layout and the epoch the generator runs under are
	-- those of snowid_sql_fixed(), made from the row at its every change in
	-- this database, also in a replica's apply, which changes nothing
	-- (snowid_sql_config_replica()).  Where the row holds others, it was
	-- changed where the edition's triggers did not fire: pg_restore
	-- --disable-triggers ends with ALTER TABLE ... ENABLE TRIGGER ALL, which
	-- leaves the triggers of a replica (ENABLE REPLICA, ENABLE ALWAYS) firing
	-- only outside one, and a logical subscription's apply then wrote its
	-- publisher's row unchecked.  Before 1.4's fixes the owner's next
	-- UPDATE compared with that row alone: its worker id set again, the
	-- subscriber issued with the publisher's datacenter id, as the
	-- publisher did (test restore_disable_triggers_apply), and the
	-- publisher's layout and epoch passed the guard.  A change is refused
	-- unless it puts back those of the generator.
	f := snowid_sql_private.snowid_sql_fixed();
	behind := coalesce(TG_OP = 'UPDATE' AND f.max_ms > 0
		AND f.position_path = pg_relation_filepath('snowid_sql_private.snowid_position')
		AND (f.datacenter_id, f.epoch_ms, f.datacenter_bits, f.worker_bits, f.sequence_bits)
			IS DISTINCT FROM (OLD.datacenter_id, snowid_sql_private.snowid_sql_unix_ms(OLD.epoch),
							  OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits),
		false);
	IF behind AND (f.datacenter_id, f.epoch_ms, f.datacenter_bits, f.worker_bits, f.sequence_bits)
			IS DISTINCT FROM (NEW.datacenter_id, snowid_sql_private.snowid_sql_unix_ms(NEW.epoch),
							  NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		RAISE EXCEPTION 'snowid_config was changed without its triggers'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('The generator runs under datacenter id %s, the epoch %s and the layout %s, %s and %s bits; the row holds others, which a write where the edition''s triggers did not fire put there (a logical subscription''s apply, once pg_restore --disable-triggers had ended with ALTER TABLE ... ENABLE TRIGGER ALL).',
								  f.datacenter_id, snowid_sql_private.snowid_sql_timestamptz(f.epoch_ms),
								  f.datacenter_bits, f.worker_bits, f.sequence_bits),
				  HINT = format('As a superuser: ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica, ENABLE ALWAYS TRIGGER snowid_config_fix, ENABLE ALWAYS TRIGGER snowid_config_fix_truncate.  Then, as the owner, put them back in the UPDATE: SET datacenter_id = %s, epoch = %L, datacenter_bits = %s, worker_bits = %s, sequence_bits = %s (doc/managed.md, "Dumps and restores").',
								f.datacenter_id, snowid_sql_private.snowid_sql_timestamptz(f.epoch_ms),
								f.datacenter_bits, f.worker_bits, f.sequence_bits);
	END IF;
	IF NOT behind AND (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		-- (the rule above: no table is read)
		IF used THEN
			held := 'This database issued ids, or its worker id was set (which raises it): its generator (snowid_sql_private.snowid_position) has moved.';
		ELSIF OLD.worker_server IS DISTINCT FROM snowid_sql_private.snowid_sql_here() AND OLD.worker_server IS NOT NULL THEN
			held := format('The row comes from another server, which issued ids with it (it was stamped there: %s): a restored dump or a copy, whose tables hold those ids.',
						   OLD.worker_server);
		END IF;
		IF held IS NOT NULL THEN
			RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = held || '  An id of one layout or epoch can equal an id of another, so new ids could collide with those.',
					  HINT = CASE WHEN used
						THEN 'Set the layout and the epoch before the first worker id, or with it in one UPDATE (a restore: set them to the dump''s before restoring its tables).  To switch deliberately, follow doc/layouts.md ("Changing the layout of a running system").'
						ELSE 'A copy issues under the layout and the epoch its source issued with: set its worker id under them.  To switch deliberately, follow doc/layouts.md ("Changing the layout of a running system").' END;
		END IF;
		-- an epoch ahead of the clock is taken (the owner may mean it), but
		-- every call refuses until the clock passes it (snowid_sql_take())
		IF NEW.epoch > clock_timestamp() THEN
			RAISE WARNING 'the epoch of snowid_config lies ahead of the clock'
				USING DETAIL = format('The epoch is %s: every call refuses (22008) until the clock passes it.', NEW.epoch),
					  HINT = 'Set an epoch in the past, unless the system clock is wrong.';
		END IF;
	END IF;
	-- a change of node by the datacenter id alone (an UPDATE that names
	-- neither worker_id nor worker_server, which snowid_sql_config_stamp()
	-- does not see) raises as setting the worker id does, and so does a
	-- change of the layout or the epoch that the guard took with a worker
	-- id set (an epoch set ahead of the clock with it moved nothing, and
	-- its correction raises)
	IF TG_OP = 'UPDATE' AND NEW.worker_id IS NOT NULL
		AND (NEW.datacenter_id, NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits)
			IS DISTINCT FROM (OLD.datacenter_id, OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits) THEN
		PERFORM snowid_sql_private.snowid_sql_note(greatest(NEW.max_drift_ms, OLD.max_drift_ms), NULL);
	END IF;
	RETURN NEW;
END
$$;

-- An insert of the row where one is (a restore: CREATE EXTENSION made the
-- row before the dump's COPY of it) updates that row instead, all of it
-- but its worker id, which it sets NULL: a restored database issues no id
-- until its owner sets a worker id, and setting it raises the generator
-- past the clock plus max_drift_ms (snowid_sql_config_stamp(),
-- snowid_sql_config_floor(): past the ids the tables hold, by the
-- assumption the invariant rests on), the restore over.  That is the one way a
-- database's own ids come back into it that the edition covers (doc/managed.md,
-- "Dumps and restores"): restore, then set the worker id.  A database
-- that had a worker id loses it here too (before, it kept it, and 1.4
-- raised its generator at the first call after a restore, told by a
-- dumped number: attacks found restores that call did not see, or saw
-- too early, and the number was gone).  It carries the source's stamp
-- (a dump of a database that claimed its worker id, up to 1.2, has none,
-- and is given one that names no server), so that the guard refuses a
-- later change of its layout or epoch.  Its update is checked as the
-- owner's is (snowid_sql_config_check(): taken where this database
-- issued nothing and its row came from nowhere else; before 1.4's fixes
-- the setting snowid_sql.restoring said it was the restore's, and a
-- column search read it).  Fires after the check (triggers fire in the
-- order of their names), on the row inserted.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_restore()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	stamp text := coalesce(NEW.worker_server,
						   CASE WHEN NEW.claim_worker_id THEN 'a dump of snowid_sql that claimed its worker id' END);
	updated boolean;
BEGIN
	UPDATE snowid_sql_private.snowid_config x SET worker_id = NULL WHERE x.singleton AND x.worker_id IS NOT NULL;
	UPDATE snowid_sql_private.snowid_config x
	SET datacenter_id = NEW.datacenter_id, epoch = NEW.epoch,
		datacenter_bits = NEW.datacenter_bits, worker_bits = NEW.worker_bits,
		sequence_bits = NEW.sequence_bits, max_drift_ms = NEW.max_drift_ms,
		max_wait_ms = NEW.max_wait_ms
	WHERE x.singleton;
	updated := FOUND;
	IF updated THEN
		UPDATE snowid_sql_private.snowid_config x SET worker_server = stamp
		WHERE x.singleton AND stamp IS NOT NULL;
		RETURN NULL;
	END IF;
	NEW.claim_worker_id := false;
	NEW.worker_server := stamp;
	RETURN NEW;
END
$$;

-- A worker id set (an INSERT or UPDATE that names it) says so to
-- snowid_sql_refix() for the rest of the transaction: the generation then
-- held is adopted.  The note is a row of snowid_config_pending, which
-- only the owner of the table writes: this trigger, the stamp and the
-- restore run as it (SECURITY DEFINER), whoever writes the row
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_worker_set()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_note(NULL, true);
	RETURN NEW;
END
$$;

-- An UPDATE that names the worker id (or worker_server) stamps it with
-- this server, even where the value stays: so its owner sets the worker
-- id of a copy, or after an ALTER SEQUENCE, again.  An UPDATE that names
-- neither (the restore's of snowid_sql_config_restore(), a change of
-- max_drift_ms on a copy) leaves the stamp as it was.  Without a worker
-- id the row keeps the stamp it has, or is given: the server its worker id
-- was last set on (the restore of a dump carries its source's), which says
-- at the next stamp that it lay elsewhere.
--
-- The rule the edition's restores, copies and changes of node rest on,
-- in one place: setting a worker id (an INSERT or UPDATE that names
-- worker_id or worker_server, with a worker id; a change of the
-- datacenter id alone, snowid_sql_config_check()) raises the generator,
-- whatever the row held before and wherever it was stamped, past this
-- server's clock plus max_drift_ms (the larger of the row's before and
-- after; snowid_sql_config_floor(), through a note in
-- snowid_config_pending for the transaction), a first install's first
-- worker id too (the invariant and its assumption: above, before
-- snowid_sql_config_check()): a restore that
-- leaves the row out (pg_restore -n, a superuser's --disable-triggers or
-- replica restore) leaves it as never stamped, and before 1.4's fixes such
-- a worker id raised nothing, and a batch its source handed out came
-- again (tests restore_schema_into_fresh_install,
-- restore_row_skipped_fresh_install).  The generator moved, the layout
-- and the epoch are set before or with the first worker id
-- (snowid_sql_config_check()).  So a restored dump (which never carries
-- a worker id: snowid_sql_config_restore()), a pg_createsubscriber copy,
-- pg_upgrade, a CREATE DATABASE ... TEMPLATE copy, a sequence made anew,
-- and a subscriber given its gone publisher's worker id each start past
-- the ids their source issued, its clock no later than theirs.  Before, only a stamp over another server's raised by
-- max_drift_ms, and a row stamped here not at all: a subscriber with
-- a worker id of its own given its gone publisher's issued the
-- replicated ids again (test subscriber_changes_worker_id).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_stamp()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	here text;
BEGIN
	here := snowid_sql_private.snowid_sql_here();
	IF NEW.worker_id IS NULL THEN
		-- the owner's UPDATE of worker_server neither clears a stamp nor
		-- writes this server's: either would make a copy's row look never
		-- stamped, or stamped here, and its worker id set next would raise
		-- nothing (before 1.4, SET worker_server = NULL: test 172)
		IF TG_OP = 'UPDATE' AND (NEW.worker_server IS NULL OR NEW.worker_server = here) THEN
			NEW.worker_server := OLD.worker_server;
		END IF;
		RETURN NEW;
	END IF;
	PERFORM snowid_sql_private.snowid_sql_note(
		greatest(NEW.max_drift_ms, CASE WHEN TG_OP = 'UPDATE' THEN OLD.max_drift_ms END), NULL);
	NEW.worker_server := here;
	RETURN NEW;
END
$$;

-- After the worker id is set (snowid_sql_config_stamp(), the rule): the
-- generator raised, so that this server's next id lies past its clock
-- plus that max_drift_ms.  A server that issued with the node before
-- (gone, or it keeps another worker id now) issued ids up to its clock
-- plus max_drift_ms: a batch, or a clock stepped back, runs ahead of the
-- clock, and a copy that started at its clock issued them again (a
-- restored dump given its gone source's worker id at once: 1,000 of
-- 1,000).  One millisecond more than that: the common path reads the
-- clock in floating point, which may lie one millisecond ahead at a
-- boundary.  Under the new row's layout and epoch; no table of the
-- application's is read (the invariant: above, before
-- snowid_sql_config_check(); before 1.4's fixes the largest id a column
-- search found was read too, and the raise waited for it).  The position
-- is only raised, never lowered, by a writer (snowid_sql_raise_floor(),
-- snowid_sql_move()), after snowid_config_fix (triggers fire in the order
-- of their names) made snowid_sql_fixed() with this server and adopted
-- the generation as it is, as a writer needs.  Only the setting pays: the
-- common path is as it was, and its calls take the path of a clock
-- stepped back (snowid_sql_take()) until the clock has caught up, at most
-- max_drift_ms.  SECURITY DEFINER, so that the installing role, whose
-- writes fire it, needs no EXECUTE on snowid_sql_raise_floor() (before
-- 1.4 it had it, and moved the generator to 2070 with one call: test
-- 175).  What it does not cover stays the operator's: the clock of this
-- server must not lie behind the other's when it last issued (a margin:
-- a larger max_drift_ms in the UPDATE that sets the worker id), and the
-- other server must have stopped issuing ids with the node before.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_floor()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	drift_ms integer := (snowid_sql_private.snowid_sql_noted()).copy_drift_ms;
	floor_ms bigint;
BEGIN
	IF drift_ms IS NOT NULL THEN
		UPDATE snowid_sql_private.snowid_config_pending p SET copy_drift_ms = NULL
		WHERE p.xact = pg_current_xact_id();
		-- never more than the row allows
		drift_ms := least(drift_ms, greatest(NEW.max_drift_ms,
											 CASE WHEN TG_OP = 'UPDATE' THEN OLD.max_drift_ms END));
		floor_ms := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) + drift_ms + 2;
		PERFORM snowid_sql_private.snowid_sql_raise_floor(floor_ms);
	END IF;
	RETURN NULL;
END
$$;

-- A replica's apply (and any session with session_replication_role =
-- replica) changes no row of snowid_config or snowid_locks: a publication
-- carries the publisher's rows, whose worker id and layout are not this
-- server's (also in the initial copy, whose rows the trigger drops, so
-- that it does not fail on the subscriber's keys).  Enabled anew for
-- every session (ALTER TABLE ... ENABLE TRIGGER ALL, which pg_restore
-- --disable-triggers runs after a superuser's data-only restore), it
-- would drop every change of the row, the owner's setting of the worker
-- id with it, which then raised nothing: it drops them only as a replica
-- (test restore_row_skipped_superuser)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_config_replica()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF current_setting('session_replication_role') = 'replica' THEN
		RETURN NULL;
	ELSIF TG_OP = 'DELETE' THEN
		RETURN OLD;
	END IF;
	RETURN NEW;
END
$$;
