-- -------------------------------------------------------------------------
-- The configuration
-- -------------------------------------------------------------------------

-- A timestamptz as Unix milliseconds, rounded down; NULL if infinite or
-- NULL.  The seconds of an interval from 2000 (PostgreSQL's own epoch, so
-- the subtraction never overflows), not of the timestamptz itself: that
-- EXTRACT is immutable, and the function not STRICT (the CASE is not), so
-- the planner inlines it where it is called with anything but a volatile
-- argument (which it would use twice), and a call runs no query of its own.
CREATE FUNCTION @extschema@.snowid_sql_unix_ms(ts timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.isfinite(ts)
	THEN pg_catalog.floor(EXTRACT(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000)::bigint
		+ 946684800000 END;

-- Unix milliseconds as a timestamptz, exactly (no floating point)
CREATE FUNCTION @extschema@.snowid_sql_timestamptz(unix_ms bigint)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((timestamp '1970-01-01'
		 + pg_catalog.make_interval(days => (unix_ms / 86400000)::integer))
		+ (unix_ms % 86400000) * interval '1 millisecond') AT TIME ZONE 'UTC';

-- What is wrong with a configuration row: 0 for nothing, else the number
-- of the first check it fails (snowid_sql_config_problem() says which).
-- The same checks as the constraint snowid_config_valid, one by one, for
-- the trigger's message.  The epoch lies from 1970 to before the year
-- 10000 (Unix milliseconds from 0 to 253402300799999), infinities
-- excluded, and on a whole millisecond.
CREATE FUNCTION @extschema@.snowid_sql_config_fault(c @extschema@.snowid_config)
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
	ELSE 0 END;

-- The problem with a configuration row, as a sentence, or NULL
CREATE FUNCTION @extschema@.snowid_sql_config_problem(c @extschema@.snowid_config)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE @extschema@.snowid_sql_config_fault(c)
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
	END;

-- The configuration, checked: a bad one is an error naming what is wrong.
-- No search_path of its own: it names every object with its schema, and
-- its callers set pg_catalog's.
CREATE FUNCTION @extschema@.snowid_sql_config(need_worker boolean)
RETURNS @extschema@.snowid_config
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	c @extschema@.snowid_config;
	problem text;
BEGIN
	SELECT * INTO c FROM @extschema@.snowid_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no configuration'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The table snowid_config holds no row.',
				  HINT = 'Drop the extension and create it again, then set the worker id.';
	END IF;
	problem := @extschema@.snowid_sql_config_problem(c);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'Correct the row of snowid_config as the owner of the extension (doc/managed.md).';
	END IF;
	IF c.claim_worker_id THEN
		-- the worker id claimed for this configuration, or none
		c.worker_id := @extschema@.snowid_sql_claimed(c);
		IF need_worker AND c.worker_id IS NULL THEN
			RAISE EXCEPTION 'snowid has not claimed a worker id'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'claim_worker_id of snowid_config is on, and no worker id is claimed for its datacenter_id, worker_bits and worker_id.',
					  HINT = 'The first call of snowid_next() by a role that is no superuser claims one, or the owner of the extension with SELECT snowid_claim().';
		END IF;
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- Checks a new configuration row; the layout and the epoch stay as they
-- are once an id is issued, since an id of one layout can equal an id of
-- another (doc/layouts.md)
CREATE FUNCTION @extschema@.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_config_problem(NEW);
	used boolean;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM @extschema@.snowid_position;
	IF used AND (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'An id of one layout can equal an id of the other, so new ids could collide with old ones.',
				  HINT = 'To switch layouts deliberately, follow doc/managed.md: drop the extension and create it again with the new layout.';
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_check BEFORE INSERT OR UPDATE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_check();

-- An insert of the row where one is (a restore: CREATE EXTENSION made the
-- row before the dump's COPY of it) updates that row instead, all but its
-- worker id: a restored database is another server, whose position is the
-- dump's, below the ids its source issued since, so it issues no id until
-- it is given a worker id of its own or claims one.  Fires after the check
-- above (triggers fire in the order of their names), on the row inserted.
CREATE FUNCTION @extschema@.snowid_sql_config_restore()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	UPDATE @extschema@.snowid_config x
	SET datacenter_id = NEW.datacenter_id, epoch = NEW.epoch,
		datacenter_bits = NEW.datacenter_bits, worker_bits = NEW.worker_bits,
		sequence_bits = NEW.sequence_bits, max_drift_ms = NEW.max_drift_ms,
		max_wait_ms = NEW.max_wait_ms, claim_worker_id = NEW.claim_worker_id
	WHERE x.singleton;
	IF FOUND THEN
		RETURN NULL;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_restore BEFORE INSERT
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_restore();

