/* snowid--1.0--1.1.sql */

\echo Use "ALTER EXTENSION snowid UPDATE TO '1.1'" to load this file. \quit

-- Serial numbers: prefix, UTC time YYYYMMDDHHMMSSmmm, then datacenter id,
-- worker id and sequence as zero-padded decimals.  A NULL or malformed
-- prefix is an error, so these are not STRICT.
-- * snowid_serial(prefix) takes a new id: VOLATILE, like snowid_next().
-- * snowid_serial(prefix, id) and snowid_from_serial() are STABLE for the
--   same reason as snowid_decode() (snowid--1.0.sql).
CREATE FUNCTION snowid_serial(prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_serial'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_serial(text) IS
'the serial number of a new id: prefix, UTC time, datacenter, worker, sequence';

CREATE FUNCTION snowid_serial(prefix text, id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_serial_of_id'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_serial(text, bigint) IS
'the serial number of an existing snowid';

CREATE FUNCTION snowid_from_serial(serial text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_serial'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_serial(text) IS
'the snowid a serial number was made from';

-- snowid_status() gains columns.  The OUT columns of a function cannot
-- change in place, so it is dropped and created again; a view built on the
-- 1.0 function makes this update fail until the view is dropped.
DROP FUNCTION snowid_status();

CREATE FUNCTION snowid_status(
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
	OUT time_left interval)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_status_1_1'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_status() IS
'the state of this server''s snowid generator';
