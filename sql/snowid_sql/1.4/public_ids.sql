-- -------------------------------------------------------------------------
-- Public ids (doc/public-ids.md, "Specification")
-- -------------------------------------------------------------------------
-- Words of 64 bits are bigints holding the same bits; additions wrap, as
-- SipHash needs, by adding the halves apart.

-- SipHash-2-4 under the key (k0, k1) of the 8-byte message m
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_siphash(k0 bigint, k1 bigint, m bigint)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v0 bigint := k0 # 8317987319222330741;	-- 0x736f6d6570736575
	v1 bigint := k1 # 7237128888997146477;	-- 0x646f72616e646f6d
	v2 bigint := k0 # 7816392313619706465;	-- 0x6c7967656e657261
	v3 bigint := k1 # 8387220255154660723;	-- 0x7465646279746573
	lo bigint;
	b bigint := 8::bigint << 56;
	w bigint;
BEGIN
	FOR r IN 1 .. 8 LOOP
		IF r = 1 THEN
			w := m;
			v3 := v3 # w;
		ELSIF r = 3 THEN
			v0 := v0 # w;
			w := b;
			v3 := v3 # w;
		ELSIF r = 5 THEN
			v0 := v0 # w;
			v2 := v2 # 255;
		END IF;
		-- one SipRound
		lo := (v0 & 4294967295) + (v1 & 4294967295);
		v0 := (((v0 >> 32) + (v1 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v1 := (v1 << 13) | ((v1 >> 51) & 8191);
		v1 := v1 # v0;
		v0 := (v0 << 32) | ((v0 >> 32) & 4294967295);
		lo := (v2 & 4294967295) + (v3 & 4294967295);
		v2 := (((v2 >> 32) + (v3 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v3 := (v3 << 16) | ((v3 >> 48) & 65535);
		v3 := v3 # v2;
		lo := (v0 & 4294967295) + (v3 & 4294967295);
		v0 := (((v0 >> 32) + (v3 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v3 := (v3 << 21) | ((v3 >> 43) & 2097151);
		v3 := v3 # v0;
		lo := (v2 & 4294967295) + (v1 & 4294967295);
		v2 := (((v2 >> 32) + (v1 >> 32) + (lo >> 32)) << 32) | (lo & 4294967295);
		v1 := (v1 << 17) | ((v1 >> 47) & 131071);
		v1 := v1 # v2;
		v2 := (v2 << 32) | ((v2 >> 32) & 4294967295);
	END LOOP;
	RETURN v0 # v1 # v2 # v3;
END
$$;

-- A 64-bit word of 8 bytes of a key, little-endian
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_word(key bytea, start integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (get_byte(key, start)::bigint) | (get_byte(key, start + 1)::bigint << 8)
	| (get_byte(key, start + 2)::bigint << 16) | (get_byte(key, start + 3)::bigint << 24)
	| (get_byte(key, start + 4)::bigint << 32) | (get_byte(key, start + 5)::bigint << 40)
	| (get_byte(key, start + 6)::bigint << 48) | (get_byte(key, start + 7)::bigint << 56);

-- The ten-round Feistel permutation of a number of 63 bits, forwards or
-- backwards
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_permute(key bytea, x bigint, backwards boolean)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k0 bigint := snowid_sql_private.snowid_sql_key_word(key, 0);
	k1 bigint := snowid_sql_private.snowid_sql_key_word(key, 8);
	h bigint := x >> 32;
	l bigint := x & 4294967295;
	r integer;
BEGIN
	FOR i IN 0 .. 9 LOOP
		r := CASE WHEN backwards THEN 9 - i ELSE i END;
		IF r % 2 = 0 THEN
			h := h # (snowid_sql_private.snowid_sql_siphash(k0, k1, (r::bigint << 32) | l) & 2147483647);
		ELSE
			l := l # (snowid_sql_private.snowid_sql_siphash(k0, k1, (r::bigint << 32) | h) & 4294967295);
		END IF;
	END LOOP;
	RETURN (h << 32) | l;
END
$$;

-- One step of the check: 2 * state + symbol in GF(32)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_damm(state integer, symbol integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (((state << 1) & 31) # CASE WHEN state & 16 <> 0 THEN 5 ELSE 0 END) # symbol;

-- The symbols of public ids, Crockford's base32
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_symbols()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

-- What is wrong with a key id, as a sentence, or NULL
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_id_problem(key_id text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE
	WHEN key_id !~ '^[A-Za-z0-9]{1,8}$'
		THEN 'A key id has 1 to 8 ASCII letters and digits.'
	WHEN key_id ~ '[IiLlOoUu]'
		THEN 'A key id has none of I, L, O and U.'
	END;

CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_check_id(id bigint, function_name text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF id < 0 THEN
		RAISE EXCEPTION '% takes a non-negative number, not %', function_name, id
			USING ERRCODE = 'numeric_value_out_of_range',
				  DETAIL = 'Ids and their public numbers lie from 0 to 9223372036854775807.';
	END IF;
END
$$;

-- The key of the smallest rank, which makes new public ids
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_first_key(OUT key_id text, OUT key bytea)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	SELECT k.key_id, k.key INTO key_id, key
	FROM snowid_sql_private.snowid_public_keys k ORDER BY k.rank LIMIT 1;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_public_keys holds no key'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Public ids are made with the keys of that table.',
				  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script), insert a key of 16 random bytes, with core functions only: INSERT INTO snowid_public_keys VALUES (''K1'', substr(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())), 1, 16), 1) (doc/managed.md).';
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_scramble(id bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(id, 'snowid_scramble()');
	RETURN snowid_sql_private.snowid_sql_permute((snowid_sql_private.snowid_sql_first_key()).key, id, false);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_scramble(bigint) IS
'the public number of an id: the permutation of snowid_public() with the first key, as a number';

CREATE OR REPLACE FUNCTION @extschema@.snowid_unscramble(number bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(number, 'snowid_unscramble()');
	RETURN snowid_sql_private.snowid_sql_permute((snowid_sql_private.snowid_sql_first_key()).key, number, true);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_unscramble(bigint) IS
'the id of a public number made by snowid_scramble()';

CREATE OR REPLACE FUNCTION @extschema@.snowid_public(id bigint)
RETURNS text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	k record;
	symbols text := snowid_sql_private.snowid_sql_symbols();
	number bigint;
	state integer := 0;
	body text := '';
	v integer;
BEGIN
	PERFORM snowid_sql_private.snowid_sql_check_id(id, 'snowid_public()');
	k := snowid_sql_private.snowid_sql_first_key();
	number := snowid_sql_private.snowid_sql_permute(k.key, id, false);
	FOR i IN 1 .. length(k.key_id) LOOP
		state := snowid_sql_private.snowid_sql_damm(state, strpos(symbols, substr(k.key_id, i, 1)) - 1);
	END LOOP;
	FOR i IN REVERSE 12 .. 0 LOOP
		v := ((number >> (5 * i)) & 31)::integer;
		state := snowid_sql_private.snowid_sql_damm(state, v);
		body := body || substr(symbols, v + 1, 1);
	END LOOP;
	RETURN k.key_id || '-' || body
		|| substr(symbols, snowid_sql_private.snowid_sql_damm(state, 0) + 1, 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public(bigint) IS
'the public id of an id: a keyed permutation of it, in base32 with a check character';

-- A text's ASCII letters in upper case, and nothing else changed (upper()
-- follows the collation: in Turkish, i becomes a dotted capital I)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_ascii_upper(s text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.translate(s, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');

-- Reads a public id: the id, or NULL with what is wrong (NULL too for a
-- text too long to show)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_read_public(input text, OUT id bigint, OUT problem text)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	symbols text := snowid_sql_private.snowid_sql_symbols();
	s integer[] := '{}';
	ch text;
	v integer;
	key_len integer;
	state integer := 0;
	number bigint := 0;
	kid text := '';
	key bytea;
BEGIN
	IF octet_length(input) > 64 THEN
		RETURN;
	END IF;
	FOREACH ch IN ARRAY regexp_split_to_array(input, '') LOOP
		CONTINUE WHEN ch = '-';
		v := CASE WHEN ch ~ '^[A-Za-z0-9]$'
			THEN strpos(symbols, translate(snowid_sql_private.snowid_sql_ascii_upper(ch), 'OIL', '011')) - 1
			ELSE -1 END;
		IF v < 0 THEN
			problem := CASE
				WHEN ch = ' ' THEN 'It contains a space.'
				WHEN ascii(ch) < 32 OR ascii(ch) = 127
					THEN format('It contains the control character 0x%s.', lpad(to_hex(ascii(ch)), 2, '0'))
				ELSE format('It contains "%s", which public ids do not use.', ch) END;
			RETURN;
		END IF;
		IF cardinality(s) = 22 THEN
			problem := 'A public id is a key id of 1 to 8 characters followed by 14 characters; this one is longer.';
			RETURN;
		END IF;
		s := s || v;
	END LOOP;
	key_len := cardinality(s) - 14;
	IF key_len < 1 THEN
		problem := format('A public id is a key id of 1 to 8 characters followed by 14 characters; this one has %s besides hyphens.',
						  cardinality(s));
		RETURN;
	END IF;
	FOR i IN 1 .. cardinality(s) LOOP
		state := snowid_sql_private.snowid_sql_damm(state, s[i]);
	END LOOP;
	IF state <> 0 THEN
		problem := 'Its check character does not match: a character is wrong, or two are swapped.';
		RETURN;
	END IF;
	IF s[key_len + 1] > 7 THEN
		problem := 'It lies outside the range of public ids.';
		RETURN;
	END IF;
	FOR i IN 1 .. 13 LOOP
		number := (number << 5) | s[key_len + i];
	END LOOP;
	FOR i IN 1 .. key_len LOOP
		kid := kid || substr(symbols, s[i] + 1, 1);
	END LOOP;
	SELECT k.key INTO key FROM snowid_sql_private.snowid_public_keys k WHERE k.key_id = kid;
	IF NOT FOUND THEN
		PERFORM snowid_sql_private.snowid_sql_first_key();
		problem := format('No key of snowid_public_keys has the id "%s".', kid);
		RETURN;
	END IF;
	id := snowid_sql_private.snowid_sql_permute(key, number, true);
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_from_public(public_id text)
RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record := snowid_sql_private.snowid_sql_read_public(public_id);
BEGIN
	IF r.id IS NOT NULL THEN
		RETURN r.id;
	ELSIF r.problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid public id "%"', public_id
			USING ERRCODE = 'invalid_text_representation', DETAIL = r.problem;
	END IF;
	RAISE EXCEPTION 'invalid public id'
		USING ERRCODE = 'invalid_text_representation',
			  DETAIL = format('It has %s bytes; a public id has at most 22 characters besides hyphens.',
							  octet_length(public_id));
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_from_public(text) IS
'the id of a public id made by snowid_public() with any key of snowid_public_keys';

CREATE OR REPLACE FUNCTION @extschema@.snowid_public_is_valid(public_id text)
RETURNS boolean
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN (snowid_sql_private.snowid_sql_read_public(public_id)).id IS NOT NULL;
END
$$;

COMMENT ON FUNCTION @extschema@.snowid_public_is_valid(text) IS
'whether snowid_from_public() takes a text, without an error for one it does not';

-- Checks a key: its id by the rules of the C edition's key file, 16 bytes,
-- and no two key ids that one character typed too many or dropped turns
-- into each other
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_key_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := snowid_sql_private.snowid_sql_key_id_problem(NEW.key_id);
	symbols text := snowid_sql_private.snowid_sql_symbols();
	other text;
	short text;
	long text;
	state integer;
BEGIN
	IF problem IS NULL AND octet_length(NEW.key) <> 16 THEN
		problem := format('A key has 16 bytes (128 bits), not %s.', octet_length(NEW.key));
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid key for snowid_public_keys'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	NEW.key_id := upper(NEW.key_id);
	FOR other IN SELECT k.key_id FROM snowid_sql_private.snowid_public_keys k
		WHERE k.key_id <> NEW.key_id AND abs(length(k.key_id) - length(NEW.key_id)) = 1
	LOOP
		short := CASE WHEN length(other) < length(NEW.key_id) THEN other ELSE NEW.key_id END;
		long := CASE WHEN length(other) < length(NEW.key_id) THEN NEW.key_id ELSE other END;
		-- long is short with one symbol added at its end, or put in where
		-- the check does not see it (3 * state)
		IF left(long, length(short)) = short THEN
			problem := format('The key ids "%s" and "%s" differ by one character at the end.', short, long);
		ELSE
			state := 0;
			FOR i IN 1 .. length(short) LOOP
				IF left(long, i - 1) = left(short, i - 1)
					AND substr(long, i + 1) = substr(short, i)
					AND strpos(symbols, substr(long, i, 1)) - 1 =
						(snowid_sql_private.snowid_sql_damm(state, 0) # state) THEN
					problem := format('The check of public ids does not tell "%s" from "%s".', short, long);
				END IF;
				state := snowid_sql_private.snowid_sql_damm(state, strpos(symbols, substr(short, i, 1)) - 1);
			END LOOP;
		END IF;
		IF problem IS NOT NULL THEN
			RAISE EXCEPTION 'invalid key for snowid_public_keys'
				USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
					  HINT = 'Choose key ids of one length, as K1, K2 and so on.';
		END IF;
	END LOOP;
	RETURN NEW;
END
$$;
