/* snowid--1.2--1.3.sql */

\echo Use "ALTER EXTENSION snowid UPDATE TO '1.3'" to load this file. \quit

-- time ranges (1.3)
-- snowid_span() and snowid_time() depend on the layout and snowid.epoch,
-- fixed while the server runs: STABLE, like snowid_from_time().

CREATE FUNCTION snowid_span(span interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_span'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_span(interval) IS
'how many ids wide a span of time is: snowid_from_time(t + d) - snowid_from_time(t)';

CREATE FUNCTION snowid_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowid_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_time(bigint) IS
'the time a snowid was made: the ts of snowid_decode()';

-- end of time ranges (1.3)
