-- -------------------------------------------------------------------------
-- snowid_status()
-- -------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_layout(c snowid_sql_private.snowid_config)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN format('%s/%s/%s/%s', 63 - c.datacenter_bits - c.worker_bits - c.sequence_bits,
			  c.datacenter_bits, c.worker_bits, c.sequence_bits);

-- The C edition's columns; those of a lease and of a coordinator stay NULL
-- (coordinator_reassertions 0): the worker id is the row's
CREATE OR REPLACE FUNCTION @extschema@.snowid_status(
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT worker_source text,
	OUT last_time timestamptz,
	OUT drift_ms bigint,
	OUT ids_issued bigint,
	OUT waits bigint,
	OUT clock_steps bigint,
	OUT clock_errors bigint,
	OUT high_water_time timestamptz,
	OUT layout text,
	OUT epoch timestamptz,
	OUT ceiling_ids_per_s bigint,
	OUT exhausted_at timestamptz,
	OUT time_left interval,
	OUT js_safe_until timestamptz,
	OUT lease_expires_at timestamptz,
	OUT fence_time timestamptz,
	OUT renewals bigint,
	OUT failed_renewals bigint,
	OUT coordinator_generation bigint,
	OUT coordinator_counter bigint,
	OUT coordinator_answered_at timestamptz,
	OUT coordinator_forgot_at timestamptz,
	OUT coordinator_reassertions bigint,
	OUT coordinator_quiet_until timestamptz)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	epoch_ms bigint := snowid_sql_private.snowid_sql_unix_ms(c.epoch);
	node_seq_bits integer := c.datacenter_bits + c.worker_bits + c.sequence_bits;
	clock_ms bigint := snowid_sql_private.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
	end_ms bigint := snowid_sql_private.snowid_sql_max_ms(c) + 1;
	safe_end_ms bigint := 1::bigint << (53 - node_seq_bits);
	left_ms bigint;
	last bigint;
	called boolean;
BEGIN
	SELECT s.last_value, s.is_called INTO last, called FROM snowid_sql_private.snowid_position s;
	datacenter_id := c.datacenter_id;
	worker_id := c.worker_id;
	worker_source := CASE WHEN c.worker_id IS NULL THEN 'none' ELSE 'config' END;
	IF called THEN
		last_time := snowid_sql_private.snowid_sql_timestamptz((last >> c.sequence_bits) + epoch_ms);
		drift_ms := greatest((last >> c.sequence_bits) - clock_ms, 0);
		high_water_time := snowid_sql_private.snowid_sql_timestamptz((last >> c.sequence_bits) + 1 + epoch_ms);
	ELSE
		drift_ms := 0;
		high_water_time := snowid_sql_private.snowid_sql_timestamptz(epoch_ms);
	END IF;
	SELECT s.last_value + s.is_called::integer INTO waits FROM snowid_sql_private.snowid_waits s;
	SELECT s.last_value + s.is_called::integer INTO clock_steps FROM snowid_sql_private.snowid_clock_steps s;
	SELECT s.last_value + s.is_called::integer INTO clock_errors FROM snowid_sql_private.snowid_clock_errors s;
	layout := snowid_sql_private.snowid_sql_layout(c);
	epoch := c.epoch;
	ceiling_ids_per_s := (1::bigint << c.sequence_bits) * 1000;
	exhausted_at := snowid_sql_private.snowid_sql_timestamptz(end_ms + epoch_ms);
	left_ms := greatest(end_ms - clock_ms, 0);
	time_left := make_interval(days => (left_ms / 86400000)::integer)
		+ (left_ms % 86400000) * interval '1 millisecond';
	IF safe_end_ms > end_ms - 1 THEN
		js_safe_until := 'infinity';
	ELSIF clock_ms < safe_end_ms THEN
		js_safe_until := snowid_sql_private.snowid_sql_timestamptz(safe_end_ms + epoch_ms);
	END IF;
	coordinator_reassertions := 0;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_status() IS
'the state of this database''s snowid generator (SQL edition)';

-- The time of the high-water mark, for the configuration's check, which
-- runs as the superuser: through this, which names snowid_status() by oid
-- (the owner of the extension's schema could overload it there)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_high_water_time()
RETURNS timestamptz
LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT (@extschema@.snowid_status()).high_water_time;
END;
