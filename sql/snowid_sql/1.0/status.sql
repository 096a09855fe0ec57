-- -------------------------------------------------------------------------
-- snowid_status()
-- -------------------------------------------------------------------------

CREATE FUNCTION @extschema@.snowid_sql_layout(c @extschema@.snowid_config)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN format('%s/%s/%s/%s', 63 - c.datacenter_bits - c.worker_bits - c.sequence_bits,
			  c.datacenter_bits, c.worker_bits, c.sequence_bits);

CREATE FUNCTION @extschema@.snowid_status(
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
	OUT failed_renewals bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config := @extschema@.snowid_sql_config(false);
	epoch_ms bigint := @extschema@.snowid_sql_unix_ms(c.epoch);
	node_seq_bits integer := c.datacenter_bits + c.worker_bits + c.sequence_bits;
	clock_ms bigint := @extschema@.snowid_sql_unix_ms(clock_timestamp()) - epoch_ms;
	end_ms bigint := @extschema@.snowid_sql_max_ms(c) + 1;
	safe_end_ms bigint := 1::bigint << (53 - node_seq_bits);
	left_ms bigint;
	last bigint;
	called boolean;
BEGIN
	SELECT s.last_value, s.is_called INTO last, called FROM @extschema@.snowid_position s;
	datacenter_id := c.datacenter_id;
	worker_id := c.worker_id;
	worker_source := CASE WHEN c.worker_id IS NULL THEN 'none'
		WHEN c.claim_worker_id THEN 'coordinator' ELSE 'config' END;
	IF called THEN
		last_time := @extschema@.snowid_sql_timestamptz((last >> c.sequence_bits) + epoch_ms);
		drift_ms := greatest((last >> c.sequence_bits) - clock_ms, 0);
		high_water_time := @extschema@.snowid_sql_timestamptz((last >> c.sequence_bits) + 1 + epoch_ms);
	ELSE
		drift_ms := 0;
		high_water_time := @extschema@.snowid_sql_timestamptz(epoch_ms);
	END IF;
	SELECT s.last_value + s.is_called::integer INTO waits FROM @extschema@.snowid_waits s;
	SELECT s.last_value + s.is_called::integer INTO clock_steps FROM @extschema@.snowid_clock_steps s;
	SELECT s.last_value + s.is_called::integer INTO clock_errors FROM @extschema@.snowid_clock_errors s;
	layout := @extschema@.snowid_sql_layout(c);
	epoch := c.epoch;
	ceiling_ids_per_s := (1::bigint << c.sequence_bits) * 1000;
	exhausted_at := @extschema@.snowid_sql_timestamptz(end_ms + epoch_ms);
	left_ms := greatest(end_ms - clock_ms, 0);
	time_left := make_interval(days => (left_ms / 86400000)::integer)
		+ (left_ms % 86400000) * interval '1 millisecond';
	IF safe_end_ms > end_ms - 1 THEN
		js_safe_until := 'infinity';
	ELSIF clock_ms < safe_end_ms THEN
		js_safe_until := @extschema@.snowid_sql_timestamptz(safe_end_ms + epoch_ms);
	END IF;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_status() IS
'the state of this database''s snowid generator (SQL edition)';

