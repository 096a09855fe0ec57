-- -----------------------------------------------------------------------
-- Helpers: checks of the arguments, the lock, the choice of an id,
-- retiring an id.  Called only by the functions below, as their owner.
-- -----------------------------------------------------------------------

-- The numbers of the protocol in the parts of this script are named as in
-- snowid's C headers (src/core/layout.h, src/core/mark.h,
-- src/coord/store.h, src/coord/request.h), between two @, and the build
-- writes in their values (test/tools/protocol): the script installed holds
-- them as the servers do.

-- Refuses a null argument
CREATE FUNCTION snowid_coordinator.check_given(what text, value anyelement)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF value IS NULL THEN
		RAISE EXCEPTION '% must not be null', what
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
END
$$;

-- Refuses a datacenter or worker id (or -1 where lo is -1: none) outside
-- lo..@SNOWID_MAX_ID@, the most a layout's 24 bits of datacenter, worker and
-- sequence allow
CREATE FUNCTION snowid_coordinator.check_id(what text, value integer,
											lo integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given(what, value);
	IF value < lo OR value > @SNOWID_MAX_ID@ THEN
		RAISE EXCEPTION '% is out of range: %', what, value
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s must lie between %s and @SNOWID_MAX_ID@%s.',
								  what, lo,
								  CASE WHEN lo < 0 THEN ', -1 meaning none'
									   ELSE '' END);
	END IF;
END
$$;

-- Refuses a time or a duration (Unix ms, or ms) outside lo up to hi,
-- which why explains (a phrase): by default @SNOWID_END_UNIX_MS@, the year
-- 10000.  The tighter bounds of what a caller sends are fixed as the
-- servers' settings bound it: a lease of a day (snowid.worker_lease's
-- most), a wait of an hour (snowid.max_wait_ms'), a quiet period of
-- @SNOWID_QUIET_DECLARED_MAX_MS@ ms (the longest a server declares: a
-- lease of a day, a coordinator timeout of ten minutes, a drift budget of
-- an hour and a second), and a time @SNOWID_FENCE_SLACK_MS@ ms past this
-- server's clock (two days and an hour: a drift budget and a lease at
-- their most, and a day by which a server's clock may run ahead; the
-- servers refuse a later fence as one no snowid server wrote).
CREATE FUNCTION snowid_coordinator.check_ms(what text, value bigint,
											lo bigint,
											hi bigint DEFAULT @SNOWID_END_UNIX_MS@,
											why text DEFAULT 'the year 10000')
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given(what, value);
	IF value < lo OR value > hi THEN
		RAISE EXCEPTION '% is out of range: %', what, value
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s must lie between %s and %s ms (%s).',
								  what, lo, hi, why);
	END IF;
END
$$;

-- Refuses a time (Unix ms, NULL: none) further past now_ms, this server's
-- clock, than any snowid server sends one (see check_ms())
CREATE FUNCTION snowid_coordinator.check_ahead(what text, value bigint,
											   now_ms bigint)
RETURNS void
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT snowid_coordinator.check_ms(what, coalesce(value, 0), 0,
		now_ms + @SNOWID_FENCE_SLACK_MS@,
		'two days and an hour past the clock of the coordination server: no snowid server sends a later time')
$$;

-- Refuses an identity that is empty, longer than @SNOWID_IDENTITY_MAX@
-- bytes, holds a control character, or begins as the name of a lease
-- holder does
CREATE FUNCTION snowid_coordinator.check_identity(identity text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('identity', identity);
	IF octet_length(identity) NOT BETWEEN 1 AND @SNOWID_IDENTITY_MAX@ THEN
		RAISE EXCEPTION 'invalid identity of % bytes', octet_length(identity)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity has 1 to @SNOWID_IDENTITY_MAX@ bytes.';
	END IF;
	IF identity ~ '[\x01-\x1f\x7f]' THEN
		RAISE EXCEPTION 'invalid identity'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity holds no control characters.';
	END IF;
	IF identity LIKE 'lease %' THEN
		RAISE EXCEPTION 'invalid identity %', quote_literal(identity)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity does not begin with "lease ", which names the holder of a lease.';
	END IF;
END
$$;

-- Refuses a lease token other than 16 lower-case hexadecimal digits
CREATE FUNCTION snowid_coordinator.check_token(token text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('token', token);
	IF token !~ '^[0-9a-f]{16}$' THEN
		RAISE EXCEPTION 'invalid lease token %', quote_literal(token)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A lease token is 16 lower-case hexadecimal digits.';
	END IF;
END
$$;

-- Refuses a holder secret other than 64 lower-case hexadecimal digits,
-- never quoting it
CREATE FUNCTION snowid_coordinator.check_secret(secret text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('secret', secret);
	IF secret !~ '^[0-9a-f]{64}$' THEN
		RAISE EXCEPTION 'invalid holder secret'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A holder secret is 64 lower-case hexadecimal digits.';
	END IF;
END
$$;

-- Refuses a call of identity with a secret other than the one its hash
-- was registered with (SQLSTATE 42501): another server using this
-- server's name.  Called with the datacenter's lock held.
CREATE FUNCTION snowid_coordinator.check_holder(dc integer, identity text,
												secret text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	known		bytea;
BEGIN
	SELECT h.secret_sha256 INTO known
	FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = check_holder.identity;
	IF known IS NOT NULL AND
		known <> sha256(convert_to(secret, 'UTF8')) THEN
		RAISE EXCEPTION 'wrong holder secret for identity %',
				quote_literal(identity)
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'Another secret was registered for this identity at its first claim: only that server, or an administrator, may change its claims.',
				  HINT = 'If the server that claims under this identity lost its secret file, an administrator who has checked that it is that server calls snowid_coordinator.reset_secret().';
	END IF;
END
$$;

-- Registers the hash of identity's secret, if it has none yet: after a
-- call of that identity was granted.
CREATE FUNCTION snowid_coordinator.register_holder(dc integer, identity text,
												   secret text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.holders AS h (datacenter, identity,
												 secret_sha256)
	VALUES (dc, identity, sha256(convert_to(secret, 'UTF8')))
	ON CONFLICT (datacenter, identity) DO NOTHING
$$;

-- Refuses a call of run_<name>() but from the procedure <name>(), which
-- commits right after it: so no caller keeps the datacenter's lock past
-- its CALL (a transaction left open, a DO block that sleeps on).  The
-- call stack, innermost first, is this function, the PERFORM of
-- run_<name>() that calls it, run_<name>(), and its caller, which must be
-- the procedure (its name qualified: no other schema can hold one of that
-- name).
CREATE FUNCTION snowid_coordinator.check_called_by(name text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	context		text;
	stack		text[];
BEGIN
	GET DIAGNOSTICS context = PG_CONTEXT;
	stack := string_to_array(context, E'\n');
	IF coalesce(stack[3] !~ ('^PL/pgSQL function snowid_coordinator\.run_' ||
							 name || '\(') OR
				stack[4] !~ ('^PL/pgSQL function snowid_coordinator\.' ||
							 name || '\([a-z, ]*\) line [0-9]+ at assignment$'),
				true) THEN
		RAISE EXCEPTION 'snowid_coordinator.run_% is called only by CALL snowid_coordinator.%',
				name, name
			USING ERRCODE = 'invalid_transaction_termination',
				  DETAIL = 'The procedure commits right after the call, so that no caller keeps the lock of the datacenter past it.',
				  HINT = format('Run CALL snowid_coordinator.%s(...) on its own, outside a transaction block, with a search_path that does not name snowid_coordinator.', name);
	END IF;
END
$$;

-- Takes the lock of a datacenter (its row, inserted first if make_row) and
-- then reads the clock: Unix ms, or NULL if the datacenter has no row.
-- Refuses an isolation level above read committed, where the statements
-- after the lock would not see what the call before wrote.
CREATE FUNCTION snowid_coordinator.lock_datacenter(dc integer, make_row boolean)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF current_setting('transaction_isolation') NOT IN ('read committed',
													 'read uncommitted') THEN
		RAISE EXCEPTION 'snowid_coordinator cannot run at the % isolation level',
				current_setting('transaction_isolation')
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = 'Its functions read the claims of other transactions once they hold the lock of the datacenter.',
				  HINT = 'Call each function in a transaction of its own, at the read committed isolation level.';
	END IF;
	IF make_row THEN
		INSERT INTO snowid_coordinator.datacenters AS d (datacenter)
		VALUES (dc)
		ON CONFLICT DO NOTHING;
	END IF;
	PERFORM FROM snowid_coordinator.datacenters d
	WHERE d.datacenter = dc
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	RETURN floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint;
END
$$;

-- The name of a holder as the outcome gives it: 'lease ' || identity for a
-- lease, as Redis keeps it
CREATE FUNCTION snowid_coordinator.holder_name(holder text, on_lease boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT CASE WHEN on_lease THEN 'lease ' || holder ELSE holder END
$$;

