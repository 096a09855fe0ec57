-- -------------------------------------------------------------------------
-- Decoding and time ranges
-- -------------------------------------------------------------------------

-- The last millisecond since the epoch that ids can hold: 2^(63 - bits) -
-- 1, computed as 2 * (2^(62 - bits) - 1) + 1, which does not overflow
-- where the node and sequence take no bit (before 1.4's fixes, (1 << 63)
-- - 1 failed the layout 63/0/0/0 with 22003: test layout_no_node_bits)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_max_ms(c snowid_sql_private.snowid_config)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least(((1::bigint << (62 - c.datacenter_bits - c.worker_bits - c.sequence_bits)) - 1) * 2 + 1,
			 253402300800000 - 1 - snowid_sql_private.snowid_sql_unix_ms(c.epoch));

-- The milliseconds field of an id a user gave, checked (no search_path
-- of its own: its operators are pg_catalog's by name)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ms(c snowid_sql_private.snowid_config, id bigint)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
	ms bigint := id OPERATOR(pg_catalog.>>)
		(c.datacenter_bits OPERATOR(pg_catalog.+) c.worker_bits OPERATOR(pg_catalog.+) c.sequence_bits);
BEGIN
	IF id OPERATOR(pg_catalog.<) 0 THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A snowid is never negative: its sign bit is always 0.';
	END IF;
	IF ms OPERATOR(pg_catalog.>) snowid_sql_private.snowid_sql_max_ms(c) THEN
		RAISE EXCEPTION 'invalid snowid %', id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Its timestamp field lies after 9999-12-31 23:59:59.999 UTC, the last time snowids can hold.';
	END IF;
	RETURN ms;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_decode(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	ms bigint := snowid_sql_private.snowid_sql_ms(c, id);
BEGIN
	ts := snowid_sql_private.snowid_sql_timestamptz(ms + snowid_sql_private.snowid_sql_unix_ms(c.epoch));
	datacenter_id := (id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1);
	worker_id := (id >> c.sequence_bits) & ((1 << c.worker_bits) - 1);
	sequence := id & ((1 << c.sequence_bits) - 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_decode(bigint) IS
'takes an id apart: its time, datacenter id, worker id and sequence';

CREATE OR REPLACE FUNCTION @extschema@.snowid_time(id bigint)
RETURNS timestamptz
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
BEGIN
	RETURN snowid_sql_private.snowid_sql_timestamptz(snowid_sql_private.snowid_sql_ms(c, id)
											  + snowid_sql_private.snowid_sql_unix_ms(c.epoch));
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_time(bigint) IS
'the time a snowid was made: the ts of snowid_decode()';

CREATE OR REPLACE FUNCTION @extschema@.snowid_from_time(ts timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
	max_ms bigint := snowid_sql_private.snowid_sql_max_ms(c);
	unix_ms bigint;
BEGIN
	-- past the year 294000 or so, Unix microseconds do not fit 64 bits
	IF isfinite(ts) THEN
		unix_ms := snowid_sql_private.snowid_sql_unix_ms(ts);
	END IF;
	IF unix_ms IS NULL OR unix_ms < epoch_ms OR unix_ms - epoch_ms > max_ms THEN
		RAISE EXCEPTION 'timestamp out of range for snowid: "%"', ts
			USING ERRCODE = 'datetime_field_overflow',
				  DETAIL = format('Ids can hold times from %s to %s.',
								  snowid_sql_private.snowid_sql_timestamptz(epoch_ms),
								  snowid_sql_private.snowid_sql_timestamptz(epoch_ms + max_ms));
	END IF;
	RETURN (unix_ms - epoch_ms) << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_time(timestamptz) IS
'the smallest id any server could issue at a given time';

CREATE OR REPLACE FUNCTION @extschema@.snowid_span(span interval)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	max_ms bigint := snowid_sql_private.snowid_sql_max_ms(c);
	-- an infinite interval (PostgreSQL 17) has no fixed length either, as
	-- in the C edition (before 1.4's fixes it failed in the EXTRACT with
	-- 0A000: test span_infinite_interval)
	months bigint := CASE WHEN isfinite(span)
		THEN EXTRACT(year FROM span)::bigint * 12 + EXTRACT(month FROM span)::bigint END;
	days bigint;
	time_us bigint;
	ms bigint;
BEGIN
	IF months IS DISTINCT FROM 0 THEN
		RAISE EXCEPTION 'interval "%" has no fixed length in milliseconds', span
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Months and years are not a fixed number of milliseconds, so they are not a fixed number of ids.',
				  HINT = 'Give the span in days or smaller units, or bound each month with snowid_from_time() of its first day.';
	END IF;
	days := EXTRACT(day FROM span)::bigint;
	time_us := (EXTRACT(hour FROM span)::bigint * 60 + EXTRACT(minute FROM span)::bigint)
		* 60000000 + EXTRACT(microseconds FROM span)::bigint;
	IF time_us % 1000 <> 0 THEN
		RAISE EXCEPTION 'interval "%" is not a whole number of milliseconds', span
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Ids count time in whole milliseconds.';
	END IF;
	ms := days * 86400000 + time_us / 1000;
	IF ms < 0 OR ms > max_ms THEN
		RAISE EXCEPTION 'interval "%" out of range for snowid', span
			USING ERRCODE = 'interval_field_overflow',
				  DETAIL = format('A span of ids lasts from 0 to %s (a day counted as 24 hours) under the layout %s.',
								  make_interval(days => (max_ms / 86400000)::integer)
								  + (max_ms % 86400000) * interval '1 millisecond',
								  snowid_sql_private.snowid_sql_layout(c));
	END IF;
	RETURN ms << (c.datacenter_bits + c.worker_bits + c.sequence_bits);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_span(interval) IS
'how many ids wide a span of time is: snowid_from_time(t + d) - snowid_from_time(t)';

