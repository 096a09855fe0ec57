-- -------------------------------------------------------------------------
-- Serial numbers
-- -------------------------------------------------------------------------

-- An input as an error message shows it: its first 40 characters, and
-- "..." where it goes on (a serial prefix or a serial of 100,000
-- characters was echoed whole before 1.4)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_shown(input text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN pg_catalog.length(input) OPERATOR(pg_catalog.>) 40 THEN pg_catalog.left(input, 40) OPERATOR(pg_catalog.||) '...'
	ELSE input END;

-- What is wrong with a serial prefix, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_prefix_problem(prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	bad text;
BEGIN
	IF prefix = '' THEN
		RETURN 'The prefix is empty.';
	END IF;
	bad := substring(prefix FROM '[^A-Za-z0-9_-]');
	IF bad = ' ' THEN
		RETURN 'The prefix contains a space.';
	ELSIF bad IS NOT NULL AND (ascii(bad) < 32 OR ascii(bad) = 127) THEN
		RETURN format('The prefix contains the control character 0x%s.', lpad(to_hex(ascii(bad)), 2, '0'));
	ELSIF bad IS NOT NULL THEN
		RETURN format('The prefix contains "%s".', bad);
	ELSIF length(prefix) > 16 THEN
		RETURN format('The prefix has %s characters; at most 16 are allowed.', length(prefix));
	END IF;
	RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_check_prefix(prefix text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text;
BEGIN
	IF prefix IS NULL THEN
		RAISE EXCEPTION 'serial prefix must not be null'
			USING ERRCODE = 'null_value_not_allowed',
				  HINT = 'A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, "_" and "-".';
	END IF;
	problem := snowid_sql_private.snowid_sql_prefix_problem(prefix);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid serial prefix "%"', snowid_sql_private.snowid_sql_shown(prefix)
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'A serial prefix is 1 to 16 characters from A-Z, a-z, 0-9, "_" and "-".';
	END IF;
END
$$;

-- The decimal digits of the largest value of a field of the given width
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_width(bits integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN length(((1::bigint << bits) - 1)::text);

-- The serial of an id under a checked configuration, the prefix checked
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_format_serial(c snowid_sql_private.snowid_config,
													prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	unix_ms bigint := snowid_sql_private.snowid_sql_ms(c, id) + snowid_sql_private.snowid_sql_unix_ms(c.epoch);
BEGIN
	RETURN prefix
		|| to_char((timestamp '1970-01-01'
					+ make_interval(days => (unix_ms / 86400000)::integer))
				   + (unix_ms % 86400000) * interval '1 millisecond',
				   'YYYYMMDDHH24MISSMS')
		|| lpad(((id >> (c.worker_bits + c.sequence_bits)) & ((1 << c.datacenter_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.datacenter_bits), '0')
		|| lpad(((id >> c.sequence_bits) & ((1 << c.worker_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.worker_bits), '0')
		|| lpad((id & ((1 << c.sequence_bits) - 1))::text,
				snowid_sql_private.snowid_sql_width(c.sequence_bits), '0');
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_serial(prefix text, id bigint)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF prefix IS NOT NULL OR id IS NOT NULL THEN
		PERFORM snowid_sql_private.snowid_sql_check_prefix(prefix);
	END IF;
	IF id IS NULL THEN
		RETURN NULL;
	END IF;
	RETURN snowid_sql_private.snowid_sql_format_serial(snowid_sql_private.snowid_sql_config(false), prefix, id);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_serial(text, bigint) IS
'the serial number of an existing id';

CREATE OR REPLACE FUNCTION @extschema@.snowid_serial(prefix text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN @extschema@.snowid_serial(prefix, @extschema@.snowid_next());

COMMENT ON FUNCTION @extschema@.snowid_serial(text) IS
'the serial number of a new id: the prefix, the UTC time, then the datacenter id, worker id and sequence';

-- The id a serial was printed from, or an error (22P02) saying what is
-- wrong with it
CREATE OR REPLACE FUNCTION @extschema@.snowid_from_serial(serial text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c snowid_sql_private.snowid_config := snowid_sql_private.snowid_sql_config(false);
	wd integer := snowid_sql_private.snowid_sql_width(c.datacenter_bits);
	ww integer := snowid_sql_private.snowid_sql_width(c.worker_bits);
	ws integer := snowid_sql_private.snowid_sql_width(c.sequence_bits);
	total integer := 17 + wd + ww + ws;
	prefix_len integer := length(serial) - total;
	d text;
	y integer; mo integer; dd integer; h integer; mi integer; sec integer; milli integer;
	dc bigint; w bigint; sq bigint;
	unix_ms bigint;
	ms bigint;
	problem text;
BEGIN
	IF prefix_len < 1 THEN
		problem := format('A serial is a prefix followed by %s digits; this one has only %s characters.',
						  total, length(serial));
	ELSE
		d := substr(serial, prefix_len + 1);
		IF d !~ '^[0-9]*$' THEN
			problem := format('A serial ends in %s digits (17 for the time, then %s, %s and %s for the datacenter id, worker id and sequence).',
							  total, wd, ww, ws);
		END IF;
		IF problem IS NULL THEN
			problem := snowid_sql_private.snowid_sql_prefix_problem(substr(serial, 1, prefix_len));
		END IF;
	END IF;
	IF problem IS NULL THEN
		y := substr(d, 1, 4)::integer;
		mo := substr(d, 5, 2)::integer;
		dd := substr(d, 7, 2)::integer;
		h := substr(d, 9, 2)::integer;
		mi := substr(d, 11, 2)::integer;
		sec := substr(d, 13, 2)::integer;
		milli := substr(d, 15, 3)::integer;
		IF mo NOT BETWEEN 1 AND 12 OR dd < 1 OR dd >
			(ARRAY[31, CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END,
				   31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[mo] THEN
			problem := format('%s is not a date.', substr(d, 1, 8));
		ELSIF h > 23 OR mi > 59 OR sec > 59 THEN
			problem := format('%s is not a time of day.', substr(d, 9, 6));
		ELSE
			unix_ms := snowid_sql_private.snowid_sql_days(y, mo, dd) * 86400000
				+ ((h * 60 + mi) * 60 + sec) * 1000::bigint + milli;
			ms := unix_ms - snowid_sql_private.snowid_sql_unix_ms(c.epoch);
			dc := substr(d, 18, wd)::bigint;
			w := substr(d, 18 + wd, ww)::bigint;
			sq := substr(d, 18 + wd + ww, ws)::bigint;
			IF ms < 0 OR ms > snowid_sql_private.snowid_sql_max_ms(c) THEN
				problem := format('Its time %s lies outside the range of snowid timestamps.', substr(d, 1, 17));
			ELSIF dc > (1 << c.datacenter_bits) - 1 THEN
				problem := format('Its datacenter id %s is larger than %s, the largest snowid.datacenter_bits = %s can hold.',
								  dc, (1 << c.datacenter_bits) - 1, c.datacenter_bits);
			ELSIF w > (1 << c.worker_bits) - 1 THEN
				problem := format('Its worker id %s is larger than %s, the largest snowid.worker_bits = %s can hold.',
								  w, (1 << c.worker_bits) - 1, c.worker_bits);
			ELSIF sq > (1 << c.sequence_bits) - 1 THEN
				problem := format('Its sequence %s is larger than %s, the largest snowid.sequence_bits = %s can hold.',
								  sq, (1 << c.sequence_bits) - 1, c.sequence_bits);
			END IF;
		END IF;
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid serial "%"', snowid_sql_private.snowid_sql_shown(serial)
			USING ERRCODE = 'invalid_text_representation', DETAIL = problem;
	END IF;
	RETURN (ms << (c.datacenter_bits + c.worker_bits + c.sequence_bits))
		| (dc << (c.worker_bits + c.sequence_bits)) | (w << c.sequence_bits) | sq;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_serial(text) IS
'the id a serial number was printed from';

-- Days from 1970-01-01 to a date of the proleptic Gregorian calendar
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_days(y integer, m integer, d integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (make_date(2000, 1, 1) - date '1970-01-01')::bigint
	+ ((y - 2000) / 400) * 146097::bigint
	+ (make_date(2000 + (y - 2000) % 400 + CASE WHEN (y - 2000) % 400 < 0 THEN 400 ELSE 0 END, m, d)
	   - make_date(2000, 1, 1))
	- CASE WHEN (y - 2000) % 400 < 0 THEN 146097 ELSE 0 END;

