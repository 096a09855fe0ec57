/* snowid--1.0.sql */

\echo Use "CREATE EXTENSION snowid" to load this file. \quit

-- The one install script: CREATE EXTENSION snowid runs it and then the
-- updates from 1.0 (snowid--1.0--1.1.sql, ...) up to default_version, so a
-- fresh install and an updated one are made by the same statements.  A new
-- version adds an update script, never another install script.

-- Volatility and parallel markings:
-- * snowid_next() and snowid_next_batch() are VOLATILE: every call takes new
--   ids.  They are PARALLEL SAFE because the generator lives in shared memory
--   and parallel workers draw from it exactly as their leader would; no
--   backend-local state decides which id comes next.
-- * snowid_decode() and snowid_from_time() are STABLE, not IMMUTABLE: their
--   results depend on snowid.epoch (and the layout), which are fixed while the
--   server runs but may change across restarts.  An index or generated column
--   built on them could then silently disagree with the data.
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
	OUT high_water_time timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_status() IS
'the state of this server''s snowid generator';
