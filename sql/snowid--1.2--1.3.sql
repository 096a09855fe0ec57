/* snowid--1.2--1.3.sql */

\echo Use "ALTER EXTENSION snowid UPDATE TO '1.3'" to load this file. \quit

-- Public ids (doc/public-ids.md).  STABLE, not IMMUTABLE: the result depends
-- on the keys of snowid.public_key_file, which a reload can change.  Within
-- a statement the keys stay the same, so WHERE id = snowid_from_public($1)
-- is computed once and looks the row up by the primary key.
CREATE FUNCTION snowid_public(id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_public(bigint) IS
'the public id of an id: a keyed permutation of it, in base32 with a check character';

CREATE FUNCTION snowid_from_public(public_id text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_from_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_from_public(text) IS
'the id of a public id made by snowid_public() with any key of the key file';

CREATE FUNCTION snowid_public_is_valid(public_id text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'snowid_public_is_valid'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_public_is_valid(text) IS
'whether snowid_from_public() takes a text, without an error for one it does not';

CREATE FUNCTION snowid_scramble(id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_scramble'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_scramble(bigint) IS
'the public number of an id: the permutation of snowid_public() with the first key, as a number';

CREATE FUNCTION snowid_unscramble(number bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowid_unscramble'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowid_unscramble(bigint) IS
'the id of a public number made by snowid_scramble()';

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

-- snowid_status() gains what this server knows of its coordinator's
-- forgetting (doc/coordinator.md, "When the coordinator forgets"): the
-- state record it saw last, when the coordinator last answered it, when it
-- last found the coordinator had forgotten and re-asserted its worker id,
-- how often, until when a quiet period refused it a claim; the background
-- worker that checks in or renews its worker id (its PID while it runs, how
-- often it was started again) and when the coordinator last confirmed the
-- worker id.  Dropped
-- and created again, as in 1.2: a view built on the 1.2 function makes this
-- update fail until the view is dropped.
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
	OUT coordinator_quiet_until timestamptz,
	OUT coordinator_worker_pid integer,
	OUT coordinator_worker_restarts bigint,
	OUT coordinator_confirmed_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowid_status_1_3'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowid_status() IS
'the state of this server''s snowid generator';
