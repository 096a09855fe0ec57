-- -----------------------------------------------------------------------
-- Helpers: checks of the arguments, the lock, the choice of an id,
-- retiring an id.  Called only by the functions below, as their owner.
-- -----------------------------------------------------------------------

-- The numbers and words of the protocol in the parts of this script are
-- named as in snowid's C headers (src/core/layout.h, src/core/mark.h,
-- src/coord/store.h, src/coord/request.h), between two @, and the build
-- writes in their values (test/tools/protocol): the script installed holds
-- them as the servers do.

-- Refuses a null argument
CREATE OR REPLACE FUNCTION snowid_coordinator.check_given(what text, value anyelement)
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
CREATE OR REPLACE FUNCTION snowid_coordinator.check_id(what text, value integer,
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
CREATE OR REPLACE FUNCTION snowid_coordinator.check_ms(what text, value bigint,
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
CREATE OR REPLACE FUNCTION snowid_coordinator.check_ahead(what text, value bigint,
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
-- holder does: the rule of snowid.lua's identity_refused() and of the
-- servers (snowid's src/coord/store.h)
CREATE OR REPLACE FUNCTION snowid_coordinator.check_identity(identity text)
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
	IF starts_with(identity, '@SNOWID_LEASE_HOLDER_PREFIX@') THEN
		RAISE EXCEPTION 'invalid identity %', quote_literal(identity)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'An identity does not begin with "@SNOWID_LEASE_HOLDER_PREFIX@", which names the holder of a lease.';
	END IF;
END
$$;

-- Refuses a lease token other than 16 lower-case hexadecimal digits
CREATE OR REPLACE FUNCTION snowid_coordinator.check_token(token text)
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

-- Refuses a holder secret other than 64 lower-case hexadecimal digits (a
-- server of release 1.3.0) or a holder proof "<n>:<proof>[:<key>]" (n of
-- 1 to 16 digits, proof and key 64), never quoting it
CREATE OR REPLACE FUNCTION snowid_coordinator.check_secret(secret text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.check_given('secret', secret);
	IF secret !~ '^[0-9a-f]{64}$' AND
		secret !~ '^[0-9]{1,16}:[0-9a-f]{64}(:[0-9a-f]{64})?$' THEN
		RAISE EXCEPTION 'invalid holder secret'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A holder proof is "<n>:<proof>[:<key>]", n of 1 to 16 digits, proof and key 64 lower-case hexadecimal digits; a holder secret is 64 such digits.';
	END IF;
END
$$;

-- A holder proof's parts: n, the proof, and the key sent XORed with a pad
-- (NULL: none); all NULL for a secret itself
CREATE OR REPLACE FUNCTION snowid_coordinator.proof_parts(secret text, OUT n bigint,
											   OUT proof text, OUT masked text)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT m[1]::bigint, m[2], nullif(m[3], '')
	FROM (SELECT regexp_match(secret,
			'^([0-9]{1,16}):([0-9a-f]{64}):?([0-9a-f]{64})?$') AS m) x
$$;

-- THE HOLDER'S PROOF (snowid's doc/security.md, "Holder secrets"): n is
-- the caller's clock in microseconds (or one past the last n it sent),
-- and the proof the SHA-256 of the holder's key, n and the call (its
-- procedure's name and every argument but the proof), each followed by a
-- line feed but the last.  Four rules, each for a proof read from a log:
--   * the proof covers the call: it can make only the call it was made
--     for (call_text());
--   * prove() takes n (proofs_taken) before the call does anything else,
--     committed whatever the call then does, and an n taken already or no
--     larger than the largest taken is refused (28000): a proof makes its
--     call once;
--   * an n made before the database's start, or before this install of
--     the extension (which a restore from a dump makes anew), counts as
--     taken (proofs_taken_until()): a restore brings back an older last n;
--   * n lies within the widest clock margin of the database's clock
--     (check_proof_time()): a proof the database never took is worth
--     nothing after that, whatever it forgot.
-- The same rules as snowid.lua's check_secret().

-- The text of a call a proof is for, from its parts: its procedure's
-- name, then its arguments but the proof, in order, NULL as nothing; each
-- but the last followed by a line feed
CREATE OR REPLACE FUNCTION snowid_coordinator.call_text(parts text[])
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT array_to_string(parts, chr(@SNOWID_PROOF_SEPARATOR@), '')
$$;

-- The proof of a holder of key (hexadecimal) for n and call (call_text())
CREATE OR REPLACE FUNCTION snowid_coordinator.proof_of(key text, n bigint, call text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT encode(sha256(convert_to(key || chr(@SNOWID_PROOF_SEPARATOR@) || n ||
									chr(@SNOWID_PROOF_SEPARATOR@) || call,
									'UTF8')), 'hex')
$$;

-- The n until which every proof counts as taken, microseconds: the start
-- of this database server or the install of this extension, whichever
-- came later (a restore of a dump installs it anew)
CREATE OR REPLACE FUNCTION snowid_coordinator.proofs_taken_until()
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT greatest(i.installed_us,
					(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint)
	FROM snowid_coordinator.install i
$$;

-- The largest n taken from identity's proofs (committed, read without a
-- lock; 0 for none)
CREATE OR REPLACE FUNCTION snowid_coordinator.last_proof_n(dc integer, identity text)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT coalesce(max(t.n), 0) FROM snowid_coordinator.proofs_taken t
	WHERE t.datacenter = dc AND t.identity = last_proof_n.identity
$$;

-- Refuses the n of a proof further from the database's clock than the
-- widest clock margin of a snowid server (SQLSTATE 22023)
CREATE OR REPLACE FUNCTION snowid_coordinator.check_proof_time(n bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	now_us		bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
BEGIN
	IF abs(n - now_us) > @SNOWID_CLOCK_MARGIN_MAX_MS@::bigint * 1000 THEN
		RAISE EXCEPTION 'holder proof made % s from the clock of the coordination server',
				round((n - now_us) / 1000000.0, 1)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The n of a holder proof is its server''s clock in microseconds, which lies within an hour (the widest clock margin) of this server''s.',
				  HINT = 'Check the clocks of the snowid server and of the coordination server.';
	END IF;
END
$$;

-- Two strings of 64 hexadecimal digits XORed
CREATE OR REPLACE FUNCTION snowid_coordinator.xor_hex(a text, b text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT string_agg(lpad(to_hex(('x' || substr(a, i, 8))::bit(32)::integer #
								  ('x' || substr(b, i, 8))::bit(32)::integer),
						   8, '0'), '' ORDER BY i)
	FROM generate_series(1, 64, 8) i
$$;

-- Refuses a call of identity with a secret other than the one its hash
-- was registered with (SQLSTATE 42501), or with a proof its key does not
-- make for call (call_text()): one prove() took already or counts as taken
-- (28000, naming the last n taken), else another server using this
-- server's name (42501).  Also refuses an n too far from the clock
-- (check_proof_time()).  A proof its key makes for call went through
-- prove(), which took its n (or a larger n of its holder was taken since,
-- which removed it); one of a larger n than any taken did not (its key
-- was registered while the call ran, after prove() looked): refused
-- (28000, naming the last n taken), so that the server sends a larger,
-- which prove() takes.  Writes nothing: called with the datacenter's lock
-- held, it waits for no other call.
CREATE OR REPLACE FUNCTION snowid_coordinator.check_holder(dc integer, identity text,
												secret text, call text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	known		snowid_coordinator.holders;
	p			record;
	newest		bigint;
	taken		bigint;
	wrong		boolean;
BEGIN
	SELECT * INTO p FROM snowid_coordinator.proof_parts(secret);
	IF p.n IS NOT NULL THEN
		PERFORM snowid_coordinator.check_proof_time(p.n);
	END IF;
	SELECT * INTO known
	FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = check_holder.identity;
	IF known.secret_sha256 IS NULL THEN
		RETURN;
	END IF;
	IF p.n IS NULL THEN
		wrong := known.secret_sha256 <> sha256(convert_to(secret, 'UTF8'));
	ELSE
		wrong := p.proof <> snowid_coordinator.proof_of(
			encode(known.secret_sha256, 'hex'), p.n, call);
		newest := snowid_coordinator.last_proof_n(dc, identity);
		taken := greatest(newest, snowid_coordinator.proofs_taken_until());
		IF (wrong AND p.n <= taken) OR
			(NOT wrong AND p.n > newest AND p.n <= taken) THEN
			RAISE EXCEPTION 'holder proof taken already: the last n taken is %',
					taken
				USING ERRCODE = 'invalid_authorization_specification',
					  DETAIL = 'Each call of a holder sends a proof with an n larger than the last one the database took, made after the database started.';
		END IF;
		IF NOT wrong AND p.n > newest THEN
			RAISE EXCEPTION 'holder proof not taken before its call: the last n taken is %',
					taken
				USING ERRCODE = 'invalid_authorization_specification',
					  DETAIL = 'The holder''s key was registered while this call ran, after prove() looked for it: the call is refused, and the next proof, of a larger n, is taken.';
		END IF;
	END IF;
	IF wrong THEN
		RAISE EXCEPTION 'wrong holder secret for identity %',
				quote_literal(identity)
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'Another secret was registered for this identity at its first claim: only that server, or an administrator, may change its claims.',
				  HINT = 'If the server that claims under this identity lost its secret file, an administrator who has checked that it is that server calls snowid_coordinator.reset_secret().';
	END IF;
END
$$;

-- THE HOLDER'S STEP of a call's checks (snowid's doc/internals.md, "The
-- order of a call's checks"), called by every call of a server with the
-- datacenter's lock held, once the call's form is checked: refuses a proof
-- that does not show identity's key (check_holder()), and answers a name
-- that has no key registered the pad it must send its key under (outcome
-- 'register', pad), where Redis answers SNOWID_REGISTER; or NULL if the
-- call may go on: it has a key registered, sends a secret itself, or sends
-- its key under the pad it was answered, which its proof for call then
-- shows; that key is key, for register_holder().  A key under that pad
-- that does not make the proof is refused as another server's (SQLSTATE
-- 42501), as Redis refuses a key sent so.  A pad is good for one call: the
-- call that sends the key under it takes it, whatever that call then
-- answers, so that a refused call leaves no pad behind, as Redis, which
-- keeps none, leaves nothing; the name's next call gets a new one.  A new
-- pad replaces the identity's last one.  One not taken lasts the longest
-- coordinator timeout of a server (the call that sends the key follows at
-- once), and a datacenter has at most as many as its layout has worker
-- ids (the one recorded, else hi, the call's): so made-up names fill no
-- table.  Beyond, refused (SQLSTATE 53400).  hi -1: a continuation of the
-- protocol in brief (run_extend_4()), which made-up names must not deny:
-- its pad is bounded per name (one, replaced) and in time only.
CREATE OR REPLACE FUNCTION snowid_coordinator.check_proof(dc integer, identity text,
											   secret text, call text,
											   hi integer, OUT outcome text,
											   OUT pad text, OUT key bytea)
RETURNS record
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	me			text := identity;
	p			record;
	given		text;
	sent		text;
	now_ms		bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
	most		integer;
BEGIN
	PERFORM snowid_coordinator.check_holder(dc, me, secret, call);
	SELECT * INTO p FROM snowid_coordinator.proof_parts(secret);
	IF p.n IS NULL OR
		EXISTS (SELECT FROM snowid_coordinator.holders h
				WHERE h.datacenter = dc AND h.identity = me) THEN
		RETURN;
	END IF;
	DELETE FROM snowid_coordinator.pads x
	WHERE x.datacenter = dc
	  AND x.made_ms < now_ms - @SNOWID_COORDINATOR_TIMEOUT_MAX_MS@;
	SELECT x.pad INTO given FROM snowid_coordinator.pads x
	WHERE x.datacenter = dc AND x.identity = me;
	IF p.masked IS NOT NULL AND given IS NOT NULL THEN
		sent := snowid_coordinator.xor_hex(p.masked,
			encode(sha256(convert_to(given, 'UTF8')), 'hex'));
		IF p.proof <> snowid_coordinator.proof_of(sent, p.n, call) THEN
			RAISE EXCEPTION 'wrong holder secret for identity %',
					quote_literal(identity)
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The key sent under the pad this identity was answered does not make the proof of the call.';
		END IF;
		-- taken by this call
		DELETE FROM snowid_coordinator.pads x
		WHERE x.datacenter = dc AND x.identity = me;
		key := decode(sent, 'hex');
		RETURN;
	END IF;
	IF given IS NULL AND hi >= 0 THEN
		SELECT coalesce(d.max_worker_id, hi) + 1 INTO most
		FROM snowid_coordinator.datacenters d
		WHERE d.datacenter = dc;
		IF (SELECT count(*) FROM snowid_coordinator.pads x
			WHERE x.datacenter = dc) >= most THEN
			RAISE EXCEPTION 'too many holder keys being registered in datacenter %', dc
				USING ERRCODE = 'configuration_limit_exceeded',
					  DETAIL = format('A datacenter has at most as many holder names registering their key at once as its layout has worker ids (%s), each for up to %s s.',
									  most, @SNOWID_COORDINATOR_TIMEOUT_MAX_MS@ / 1000),
					  HINT = 'Try again later.  Many registrations of names no server uses are a member of the fleet making names up: see who may call as the servers'' role (snowid''s doc/security.md, "What the fleet''s role can deny").';
		END IF;
	END IF;
	outcome := 'register';
	pad := encode(sha256(convert_to(gen_random_uuid()::text ||
									gen_random_uuid()::text, 'UTF8')), 'hex');
	INSERT INTO snowid_coordinator.pads AS x (datacenter, identity, pad, made_ms)
	VALUES (dc, me, pad, now_ms)
	ON CONFLICT (datacenter, identity)
	DO UPDATE SET pad = excluded.pad, made_ms = excluded.made_ms;
END
$$;

-- Registers identity's key, if it has none yet: after a call of that
-- identity was granted.  A secret itself registers its hash; a proof, the
-- key it sent under its pad (check_proof()'s key; NULL: none), with its n
-- taken.
CREATE OR REPLACE FUNCTION snowid_coordinator.register_holder(dc integer, identity text,
												   secret text, key bytea)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	me			text := identity;
	p			record;
	k			bytea := key;
BEGIN
	SELECT * INTO p FROM snowid_coordinator.proof_parts(secret);
	IF p.n IS NULL THEN
		k := sha256(convert_to(secret, 'UTF8'));
	ELSIF k IS NULL THEN
		RETURN;
	END IF;
	INSERT INTO snowid_coordinator.holders AS h (datacenter, identity,
												 secret_sha256)
	VALUES (dc, me, k)
	ON CONFLICT (datacenter, identity) DO NOTHING;
	-- no other call could take this n: none knew the key
	IF FOUND AND p.n IS NOT NULL THEN
		INSERT INTO snowid_coordinator.proofs_taken AS t (datacenter, identity, n)
		VALUES (dc, me, p.n)
		ON CONFLICT DO NOTHING;
	END IF;
END
$$;

-- Refuses a call of run_<name>() but from the procedure <name>(), which
-- commits right after it: so no caller keeps the datacenter's lock past
-- its CALL (a transaction left open, a DO block that sleeps on).  The
-- call stack, innermost first, is this function, the PERFORM of
-- run_<name>() that calls it, run_<name>(), and its caller, which must be
-- the procedure (its name qualified: no other schema can hold one of that
-- name), whose only call of run_<name>() is the one before its COMMIT.
-- The stack's lines are in the server's language (lc_messages), so only
-- the names in them are read: the caller's line begins as run_<name>()'s
-- own does, with the procedure's name in place of run_<name>'s.  A line
-- that begins with other words (a statement's text, which a caller
-- writes, or another language's function) is refused.
CREATE OR REPLACE FUNCTION snowid_coordinator.check_called_by(name text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	context		text;
	stack		text[];
	mine		text := 'snowid_coordinator.run_' || name || '(';
	words		text;
BEGIN
	GET DIAGNOSTICS context = PG_CONTEXT;
	stack := string_to_array(context, E'\n');
	-- the words before a function's name in a line of the stack
	words := left(stack[3], strpos(stack[3], mine) - 1);
	IF coalesce(strpos(stack[3], mine) = 0 OR
				NOT starts_with(stack[4], words || 'snowid_coordinator.' ||
								name || '('),
				true) THEN
		RAISE EXCEPTION 'snowid_coordinator.run_% is called only by CALL snowid_coordinator.%',
				name, name
			USING ERRCODE = 'invalid_transaction_termination',
				  DETAIL = 'The procedure commits right after the call, so that no caller keeps the lock of the datacenter past it.',
				  HINT = format('Run CALL snowid_coordinator.%s(...) on its own, outside a transaction block, with a search_path that does not name snowid_coordinator.', name);
	END IF;
END
$$;

-- RESTART_LOSS in a coordination database: a grant is answered only once
-- it is on disk (and on the synchronous standbys the server names), so
-- that a crash restart, which keeps the run (server_now()), loses nothing
-- it answered.  The rest of the transaction commits with synchronous_commit
-- on, whatever the caller's session, its role's defaults or the server's
-- configuration say: a fleet member's ALTER ROLE ... SET synchronous_commit
-- = off, or a server configured so, would otherwise let a crash restart
-- forget grants unnoticed.  A SET clause would not do: it ends with the
-- function, before the procedure's COMMIT; a setting local to the
-- transaction lasts until its end.
CREATE OR REPLACE FUNCTION snowid_coordinator.durable_commit()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM set_config('synchronous_commit', 'on', true);
END
$$;

-- Takes the lock of a datacenter (its row, inserted first if make_row) and
-- then reads the clock: Unix ms, or NULL if the datacenter has no row.
-- Refuses an isolation level above read committed, where the statements
-- after the lock would not see what the call before wrote.  Makes the
-- transaction commit durably (durable_commit()).
CREATE OR REPLACE FUNCTION snowid_coordinator.lock_datacenter(dc integer, make_row boolean)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.durable_commit();
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

-- The name of a holder as the outcome gives it: its identity after the
-- prefix of a lease holder's name for a lease, as Redis keeps it
CREATE OR REPLACE FUNCTION snowid_coordinator.holder_name(holder text, on_lease boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT CASE WHEN on_lease THEN '@SNOWID_LEASE_HOLDER_PREFIX@' || holder ELSE holder END
$$;

