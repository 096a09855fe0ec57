# Public ids: snowid_public(), snowid_from_public(), snowid_public_is_valid(),
# snowid_scramble() and snowid_unscramble() with the keys of
# snowid.public_key_file.
#
# Without a key file, with a missing, too widely readable or malformed one,
# the functions fail with a clear error and CREATE EXTENSION does not; no
# message, setting or log line shows a key.  test/public_ids.py, the
# reference implementation, agrees with the SQL functions on 100,000 ids and
# proves the check character; every single wrong character and every swap
# of two neighbours of 10,000 texts is refused (snowid_public_is_valid(),
# and snowid_from_public() with 22P02 for 300 of them).  No two of 10 million
# consecutive ids share a public id.  A new first key, put in by a reload,
# makes new public ids while the old ones still read; two keys give
# unrelated numbers.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_program('/usr/bin/python3', 'python3');

my $reference = "$FindBin::RealBin/../../public_ids.py";
my $key_k1 = '000102030405060708090a0b0c0d0e0f';
my $key_z9 = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
my $key_n2 = '8c1f5e33a0b7d2946e0a51c7f3b29d48';
my @secrets = ($key_k1, $key_z9, $key_n2, substr($key_n2, 0, 16),
	substr($key_n2, 16));

my $node = SnowidTest::new_server('public_ids',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_id' => 2 });
my $keys = $node->data_dir . '/public_keys';
my @messages;

# Writes the key file with the given lines and permissions.
sub write_keys
{
	my ($mode, @lines) = @_;

	open(my $fh, '>', $keys) or die "could not write $keys: $!";
	print $fh map { "$_\n" } @lines;
	close $fh;
	chmod $mode, $keys or die "could not chmod $keys: $!";
	return;
}

# The error of sql (verbose, with its SQLSTATE), kept for the secrecy check.
sub error_of
{
	my ($sql) = @_;
	my $err = SnowidTest::psql_error($node, $sql);

	push @messages, $err;
	return $err;
}

# Reloads and waits until a new session makes public ids with key_id.
sub reload_until_key
{
	my ($key_id) = @_;

	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT snowid_public(0) LIKE '$key_id-%'")
	  or die "key $key_id not in use after reload";
	return;
}

# -- no key file, and bad ones: errors on use ---------------------------

like(error_of('SELECT snowid_public(1)'),
	qr/55000: snowid.public_key_file is not set/,
	'no key file: an error on use, 55000');

SnowidTest::reload_conf($node, 'snowid.public_key_file' => $keys);
like(error_of('SELECT snowid_scramble(1)'),
	qr/58P01: could not use the file named by snowid.public_key_file\nDETAIL:  Could not open ".*public_keys": No such file/,
	'missing key file: 58P01');

write_keys(0644, "K1 $key_k1");
like(error_of('SELECT snowid_public(1)'),
	qr/F0000: could not use the file named by snowid.public_key_file\nDETAIL:  The file ".*" has mode 0644: others than its owner may read it\./,
	'key file readable by others: refused');
write_keys(0640, "K1 $key_k1");
like(error_of('SELECT snowid_from_public(\'K1-5Q6Z9T1XF7HTM3\')'),
	qr/F0000: could not use the file named by snowid.public_key_file\nDETAIL:  The file ".*" has mode 0640: others than its owner may read it\./,
	'key file readable by the group: refused');

my %bad = (
	'a key of 31 digits' =>
	  [ [ "K1 " . substr($key_k1, 1) ], qr/Line 1: The key is not 32 hex/ ],
	'a key of 33 digits' =>
	  [ [ '# c', "K1 ${key_k1}0" ], qr/Line 2: The key is not 32 hex/ ],
	'no key' => [ [ 'K1' ], qr/Line 1: The key is not 32 hex/ ],
	'a key id with O' =>
	  [ [ "KO $key_k1" ], qr/Line 1: A key id has no I, L, O or U/ ],
	'a key id of 9' => [ [ "ABCDEFGHJ $key_k1" ], qr/1 to 8 characters/ ],
	'a key id with _' =>
	  [ [ "K_1 $key_k1" ], qr/only letters and digits/ ],
	'the same key id twice' => [
		[ "K1 $key_k1", "k1 $key_z9" ],
		qr/Line 2: Key id "K1" is there twice/
	],
	'only comments' => [ [ '# none', '' ], qr/It holds no key/ ],
	'a NUL byte' => [ [ "K1 $key_k1", "\0" ], qr/It holds a NUL byte/ ],
	'a key with a stray word' =>
	  [ [ "K1 $key_k1 extra" ], qr/Line 1: The key is not 32 hex/ ]);
for my $case (sort keys %bad)
{
	my ($lines, $pattern) = @{ $bad{$case} };

	write_keys(0600, @$lines);
	my $err = error_of('SELECT snowid_public(1)');
	like($err, qr/F0000: invalid snowid.public_key_file/,
		"$case: invalid key file");
	like($err, $pattern, "$case: the detail says why");
}

# -- the keys of the test vectors ---------------------------------------

write_keys(0600, '# key id, key', "K1 $key_k1", "z9 $key_z9  # reads only");
is( $node->safe_psql(
		'postgres',
		"SELECT snowid_public(0), snowid_scramble(0),
		        snowid_from_public('Z9-58P28QKQJAKQ75')"),
	'K1-5Q6Z9T1XF7HTM3|6601126760466859860|9223372036854775807',
	'the test vectors of doc/public-ids.md');

# a role without any privilege on settings makes and reads public ids
$node->safe_psql('postgres', 'CREATE ROLE customer_app LOGIN');
is( $node->safe_psql(
		'postgres',
		"SET ROLE customer_app;
		 SELECT snowid_from_public(snowid_public(42))"),
	'42', 'an ordinary role makes and reads public ids');

# -- the reference implementation ---------------------------------------

my ($ok, $out, $err);
$ok = IPC::Run::run([ '/usr/bin/python3', $reference, 'selftest', '1000' ],
	'>', \$out, '2>', \$err);
ok($ok, 'reference: SipHash vectors, the check proved, 1,000 texts')
  or diag("$out$err");

my $rows = $node->safe_psql('postgres',
	"SELECT id, snowid_scramble(id), snowid_public(id)
	 FROM (SELECT (random() * 9223372036854775807)::bigint AS id
	       FROM generate_series(1, 99000)
	       UNION ALL SELECT snowid_next() FROM generate_series(1, 1000)) s");
is(scalar(split /\n/, $rows), 100000, '100,000 ids');
$ok = IPC::Run::run([ '/usr/bin/python3', $reference, 'check', 'K1', $key_k1 ],
	'<', \$rows, '>', \$out, '2>', \$err);
ok($ok && $out =~ /^100000 ids agree/,
	'reference and SQL agree on 100,000 ids')
  or diag("$out$err");

# -- the check character, on 10,000 texts -------------------------------

# Every single wrong character and every swap of two different neighbours
# of 10,000 texts, asked of snowid_public_is_valid() in one query.
my ($accepted, $changes) = split /\|/, $node->safe_psql(
	'postgres', q{
WITH texts AS MATERIALIZED (
	SELECT replace(snowid_public((random() * 9223372036854775807)::bigint), '-', '') AS t
	FROM generate_series(1, 10000)),
changed AS (
	SELECT overlay(t PLACING c FROM i FOR 1) AS changed
	FROM texts, generate_series(1, length(t)) i,
		 regexp_split_to_table('0123456789ABCDEFGHJKMNPQRSTVWXYZ', '') c
	WHERE c <> substr(t, i, 1)
	UNION ALL
	SELECT overlay(t PLACING substr(t, i + 1, 1) || substr(t, i, 1) FROM i FOR 2)
	FROM texts, generate_series(1, length(t) - 1) i
	WHERE substr(t, i, 1) <> substr(t, i + 1, 1))
SELECT count(*) FILTER (WHERE snowid_public_is_valid(changed)), count(*)
FROM changed});
is($accepted, '0', 'every wrong character and swap of 10,000 texts is refused');
cmp_ok($changes, '>', 10000 * 15 * 31, "($changes changed texts)");

# Both functions refuse each change of 300 texts, snowid_from_public() with
# 22P02.
$node->safe_psql('postgres', q{
CREATE FUNCTION not_refused(n int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	symbols CONSTANT text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
	slipped bigint := 0;
	t text;
	changed text;
	taken bool;
BEGIN
	FOR t IN SELECT replace(snowid_public((random() * 9223372036854775807)::bigint), '-', '')
			 FROM generate_series(1, n)
	LOOP
		FOR i IN 1 .. length(t) LOOP
			FOR s IN 1 .. 33 LOOP
				IF s <= 32 THEN
					CONTINUE WHEN substr(symbols, s, 1) = substr(t, i, 1);
					changed := overlay(t PLACING substr(symbols, s, 1) FROM i FOR 1);
				ELSE
					CONTINUE WHEN i = length(t) OR substr(t, i, 1) = substr(t, i + 1, 1);
					changed := overlay(t PLACING substr(t, i + 1, 1) || substr(t, i, 1) FROM i FOR 2);
				END IF;
				BEGIN
					PERFORM snowid_from_public(changed);
					taken := true;
				EXCEPTION WHEN invalid_text_representation THEN
					taken := false;
				END;
				IF taken OR snowid_public_is_valid(changed) THEN
					slipped := slipped + 1;
				END IF;
			END LOOP;
		END LOOP;
	END LOOP;
	RETURN slipped;
END
$$});
is($node->safe_psql('postgres', 'SELECT not_refused(300)'),
	'0', 'both functions refuse every change of 300 texts, snowid_from_public() with 22P02');

# -- 10 million consecutive ids -----------------------------------------

# snowid_from_public() gives each public id back its own id, so no two of
# them can be the same text: that proves them distinct without sorting 10
# million texts.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(*) FILTER (WHERE snowid_from_public(snowid_public(id)) <> id)
FROM generate_series(snowid_from_time(now()),
                     snowid_from_time(now()) + 9999999) id}),
	'10000000|0',
	'10 million consecutive ids, 10 million public ids: each reads back as its own id');

# -- a new key ----------------------------------------------------------

$node->safe_psql('postgres', q{
CREATE TABLE old_key AS
SELECT id, snowid_scramble(id) AS number, snowid_public(id) AS public_id
FROM generate_series(snowid_from_time('2025-06-01'),
                     snowid_from_time('2025-06-01') + 9999) id});

write_keys(0600, "N2 $key_n2", "K1 $key_k1", "Z9 $key_z9");
reload_until_key('N2');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*), bool_and(snowid_from_public(public_id) = id),
		        bool_and(snowid_public(id) LIKE 'N2-%'),
		        bool_and(snowid_from_public(snowid_public(id)) = id)
		 FROM old_key"),
	'10000|t|t|t',
	'after a reload the new first key makes public ids; the old still read'
);

# two keys: unrelated numbers (about half of the bits differ, none equal)
my ($same, $bits, $up) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT count(*) FILTER (WHERE snowid_scramble(id) = number),
       avg(bit_count((snowid_scramble(id) # number)::bit(64))),
       avg((snowid_scramble(id) > number)::int)
FROM old_key});
is($same, '0', 'two keys: no id gets the same number');
ok($bits > 30.5 && $bits < 32.5,
	"two keys: about half of the bits differ ($bits of 63)");
ok($up > 0.45 && $up < 0.55, "two keys: about half go up ($up)");

# consecutive ids under one key: about half of the bits change
my ($step_bits, $step_up) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT avg(bit_count((number # prev)::bit(64))), avg((number > prev)::int)
FROM (SELECT number, lag(number) OVER (ORDER BY id) AS prev FROM old_key) s
WHERE prev IS NOT NULL});
ok($step_bits > 30.5 && $step_bits < 32.5,
	"consecutive ids: $step_bits of 63 bits change");
ok($step_up > 0.45 && $step_up < 0.55,
	"consecutive ids: a fraction of $step_up go up");

# a key file broken by a reload: errors, never the old keys
write_keys(0600, "N2 " . substr($key_n2, 2));
$node->reload;
$node->safe_psql('postgres', q{
CREATE FUNCTION key_file_broken() RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM snowid_public(0);
	RETURN false;
EXCEPTION WHEN config_file_error THEN
	RETURN true;
END
$$});
$node->poll_query_until('postgres', 'SELECT key_file_broken()')
  or die 'broken key file not read';
like(error_of("SELECT snowid_from_public('K1-5Q6Z9T1XF7HTM3')"),
	qr/F0000: invalid snowid.public_key_file/,
	'a key file broken by a reload: an error, not the old keys');
write_keys(0600, "K1 $key_k1");
reload_until_key('K1');

# -- the keys are never shown -------------------------------------------

push @messages, $node->safe_psql('postgres',
	"SELECT string_agg(concat_ws(' ', name, setting, reset_val, boot_val,
	                              sourcefile, short_desc, extra_desc), ' ')
	 FROM pg_settings");
push @messages, error_of("SELECT snowid_from_public('K1-5Q6Z9T1XF7HTM4')");
push @messages, error_of("SELECT snowid_from_public('N9-5Q6Z9T1XF7HTMW')");
my $log = slurp_file($node->logfile);
my $leaks = 0;
for my $secret (@secrets)
{
	for my $text (@messages, $log)
	{
		$leaks++ if index(lc($text), lc($secret)) >= 0;
	}
}
is($leaks, 0, 'no key in any message, pg_settings or the server log');

$node->stop;
done_testing();
