-- snowid_public(id), snowid_from_public(text), snowid_scramble(id) and
-- snowid_unscramble(number): a keyed permutation of ids, as text with a
-- check character and as a number.  The keys come from
-- test/regress_public_keys (snowid.public_key_file, set by the Makefile).
-- A missing or bad key file, rotation and secrecy: test/t/core/public_ids.pl.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

-- the test vectors of doc/public-ids.md made with key K1
SELECT id, snowid_scramble(id) AS number, snowid_public(id) AS public_id
FROM (VALUES (0::bigint), (1), (2), (4096), (4194304),
			 (1541815603606036480), (7303347924938506240),
			 (9223372036854775806), (9223372036854775807)) v(id);

-- and those of key Z9, which reads them though it makes none
SELECT snowid_from_public(p) AS id
FROM (VALUES ('Z9-07HQBWT9W8HJT0'), ('Z9-5V5Y5V9G5QJ8EK'),
			 ('Z9-58P28QKQJAKQ75')) v(p);

-- round trips: edge values, random ids, this server's ids, for each width
-- of the timestamp field (39 to 62 bits: every layout) the id of its last
-- millisecond with the other fields 0, and every power of 2
SELECT count(*) AS ids,
	bool_and(snowid_unscramble(snowid_scramble(id)) = id) AS numbers_ok,
	bool_and(snowid_from_public(snowid_public(id)) = id) AS texts_ok,
	bool_and(snowid_scramble(id) >= 0) AS non_negative,
	bool_and(length(snowid_public(id)) = 17) AS length_ok,
	count(DISTINCT snowid_scramble(id)) = count(DISTINCT id) AS distinct_ok
FROM (SELECT id FROM (VALUES (0::bigint), (1), (2), (9223372036854775806),
						  (9223372036854775807)) v(id)
	  UNION ALL
	  SELECT (random() * 9223372036854775807)::bigint
	  FROM generate_series(1, 10000)
	  UNION ALL
	  SELECT snowid_next() FROM generate_series(1, 1000)
	  UNION ALL
	  SELECT ((1::bigint << (t - 1)) - 1) * 2 + 1 << (63 - t)
	  FROM generate_series(39, 62) t
	  UNION ALL
	  SELECT 1::bigint << b FROM generate_series(0, 62) b) ids(id);

-- texts are case-insensitive, hyphens are ignored, O reads as 0, I and L as 1
SELECT snowid_from_public('k1-5q6z9t1xf7htm3') AS lower_case,
	snowid_from_public('K1-5Q6Z-9T1X-F7HT-M3') AS hyphens,
	snowid_from_public('K15Q6Z9T1XF7HTM3') AS no_hyphen,
	snowid_from_public('K1-0ON5EXDSANVTVN') AS o_for_0,
	snowid_from_public('KI-5Q6Z9T1XF7HTM3') AS i_for_1,
	snowid_from_public('kl-5q6z9t1xf7htm3') AS l_for_1;

-- what is not a public id is 22P02, and shows no more than the input
SELECT snowid_from_public('K1-5Q6Z9T1XF7HTM4');		-- wrong check character
SELECT snowid_from_public('K1-5Q6Z9T1XF7HMT3');		-- two swapped
SELECT snowid_from_public('K1-5Q6Z9T1XF7HTM');		-- one short
SELECT snowid_from_public('K1-5Q6Z9T1XF7HTM3U');	-- no U
SELECT snowid_from_public('K1-5Q6Z9T1XF7H M3');
SELECT snowid_from_public('K1-5Q6Z9T1XF7Hé3');
SELECT snowid_from_public(E'K1-5Q6Z9T1XF7H\tM3');
SELECT snowid_from_public('');
SELECT snowid_from_public('ABCDEFGHJ-5Q6Z9T1XF7HTM3');	-- key id of 9
SELECT snowid_from_public(repeat('0', 100));
-- a forged text with a good check character: a key that is not in the file
SELECT snowid_from_public('K2-5Q6Z9T1XF7HTM1');
-- or a number above 2^63 - 1
SELECT snowid_from_public('K1-80000000000004');
-- snowid_public_is_valid(): true for what snowid_from_public() takes, false
-- for what it refuses with 22P02
SELECT what, snowid_public_is_valid(p) AS valid
FROM (VALUES ('a public id', 'K1-5Q6Z9T1XF7HTM3'),
			 ('lower case, hyphens', 'k1-5q6z-9t1x-f7ht-m3'),
			 ('wrong check character', 'K1-5Q6Z9T1XF7HTM4'),
			 ('two swapped', 'K1-5Q6Z9T1XF7HMT3'),
			 ('one short', 'K1-5Q6Z9T1XF7HTM'),
			 ('empty', ''),
			 ('a key not in the file', 'K2-5Q6Z9T1XF7HTM1'),
			 ('above 2^63 - 1', 'K1-80000000000004'),
			 ('100 characters', repeat('0', 100))) v(what, p);
-- NULL in, NULL out
SELECT snowid_public(NULL) IS NULL AS public_null,
	snowid_from_public(NULL) IS NULL AS from_null,
	snowid_public_is_valid(NULL) IS NULL AS is_valid_null,
	snowid_scramble(NULL) IS NULL AS scramble_null,
	snowid_unscramble(NULL) IS NULL AS unscramble_null;
-- negative numbers are no ids
SELECT snowid_public(-1);
SELECT snowid_scramble(-9223372036854775808);
SELECT snowid_unscramble(-5);

-- every single wrong character and every swap of two different neighbours
-- of 200 texts is refused, by both functions (the proof and 10,000 texts: the TAP test)
CREATE FUNCTION pg_temp.accepted_changes(n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	symbols CONSTANT text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
	accepted int := 0;
	t text;
	changed text;
BEGIN
	FOR t IN SELECT replace(snowid_public((random() * 9223372036854775807)::bigint), '-', '')
			 FROM generate_series(1, n)
	LOOP
		FOR i IN 1 .. length(t) LOOP
			FOR s IN 1 .. 32 LOOP
				CONTINUE WHEN substr(symbols, s, 1) = substr(t, i, 1);
				changed := overlay(t PLACING substr(symbols, s, 1) FROM i FOR 1);
				IF snowid_public_is_valid(changed) THEN
					accepted := accepted + 1;
				END IF;
				BEGIN
					PERFORM snowid_from_public(changed);
					accepted := accepted + 1;
				EXCEPTION WHEN invalid_text_representation THEN
				END;
			END LOOP;
			CONTINUE WHEN i = length(t) OR substr(t, i, 1) = substr(t, i + 1, 1);
			changed := overlay(t PLACING substr(t, i + 1, 1) || substr(t, i, 1) FROM i FOR 2);
			IF snowid_public_is_valid(changed) THEN
				accepted := accepted + 1;
			END IF;
			BEGIN
				PERFORM snowid_from_public(changed);
				accepted := accepted + 1;
			EXCEPTION WHEN invalid_text_representation THEN
			END;
		END LOOP;
	END LOOP;
	RETURN accepted;
END
$$;
SELECT pg_temp.accepted_changes(200) AS accepted;

-- consecutive ids give numbers in no visible order: about half of the 63
-- bits change from one to the next, and about half of them go up
SELECT avg(bit_count((n # lag_n)::bit(64)::bit varying)) BETWEEN 30.5 AND 32.5 AS half_the_bits,
	avg((n > lag_n)::int) BETWEEN 0.45 AND 0.55 AS half_go_up
FROM (SELECT n, lag(n) OVER (ORDER BY id) AS lag_n
	  FROM (SELECT id, snowid_scramble(id) AS n
			FROM generate_series(snowid_from_time('2025-01-01'),
								 snowid_from_time('2025-01-01') + 9999) id) s) d
WHERE lag_n IS NOT NULL;

-- STABLE: a lookup by public id is an index scan of the primary key,
-- snowid_from_public() computed once
CREATE TABLE public_orders (id bigint PRIMARY KEY DEFAULT snowid_next(), n int);
INSERT INTO public_orders (n) SELECT generate_series(1, 1000);
ANALYZE public_orders;
SELECT snowid_public(id) AS p FROM public_orders WHERE n = 500 \gset
EXPLAIN (COSTS OFF)
SELECT n FROM public_orders WHERE id = snowid_from_public('K1-5Q6Z9T1XF7HTM3');
SELECT n FROM public_orders WHERE id = snowid_from_public(:'p');
PREPARE by_public(text) AS SELECT n FROM public_orders WHERE id = snowid_from_public($1);
EXECUTE by_public(:'p');
-- a lookup that finds no row for a mistyped text, still by the primary key
PREPARE by_typed(text) AS SELECT n FROM public_orders
WHERE id = CASE WHEN snowid_public_is_valid($1) THEN snowid_from_public($1) END;
EXPLAIN (COSTS OFF) EXECUTE by_typed('K1-5Q6Z9T1XF7HTM4');
EXECUTE by_typed(:'p');
EXECUTE by_typed('K1-5Q6Z9T1XF7HTM4');
DROP TABLE public_orders;

SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p WHERE p.proname IN ('snowid_public', 'snowid_from_public',
	'snowid_public_is_valid', 'snowid_scramble', 'snowid_unscramble') ORDER BY 1;
