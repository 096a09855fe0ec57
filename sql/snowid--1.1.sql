/* snowid--1.1.sql */

\echo Use "CREATE EXTENSION snowid" to load this file. \quit

-- Volatility and parallel markings:
-- * snowid_next() and snowid_next_batch() are VOLATILE: every call takes new
--   ids.  They are PARALLEL SAFE because the generator lives in shared memory
--   and parallel workers draw from it exactly as their leader would; no
--   backend-local state decides which id comes next.
-- * snowid_decode() and snowid_from_time() are STABLE, not IMMUTABLE: their
--   results depend on snowid.epoch (and the layout), which are fixed while the
--   server runs but may change across restarts.  An index or generated column
--   built on them could then silently disagree with the data.
-- * snowid_serial(prefix) takes a new id: VOLATILE, like snowid_next().
--   snowid_serial(prefix, id) and snowid_from_serial() are STABLE for the
--   same reason as snowid_decode().
-- * snowid_status() reads counters that change all the time: VOLATILE.

CREATE FUNCTION snowid_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_next'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_next() IS
'the next id of this server''s snowid generator';

CREATE FUNCTION snowid_next_batch(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowid_next_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
ROWS 10;

COMMENT ON FUNCTION snowid_next_batch(integer) IS
'n ids in ascending order, taken in one pass through the generator';

CREATE FUNCTION snowid_decode(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_decode(bigint) IS
'the time, datacenter id, worker id and sequence of a snowid';

CREATE FUNCTION snowid_from_time(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_time(timestamptz) IS
'the smallest snowid any server could issue at the given time';

-- Serial numbers: prefix, UTC time YYYYMMDDHHMMSSmmm, then datacenter id,
-- worker id and sequence as zero-padded decimals.  A NULL or malformed
-- prefix is an error, so these are not STRICT.
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
