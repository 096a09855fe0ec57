# The SQL edition, snowid_sql (doc/managed.md), against the C edition and
# under the C edition's hostile tests that apply to it:
#
# - agreement: 100,000 ids (half of them issued by the C edition, half drawn
#   over the layout's range) decoded, timed, printed as serials and read
#   back, time bounds of random times, spans and public ids, computed by
#   both editions in one server, agree; again under another layout and
#   epoch on 10,000 ids;
# - a server with no snowid library: a database owner who is no superuser
#   installs it, configures it and owns its keys; another role takes ids
#   but reads no key and changes nothing; the plain script does the same;
# - bad configuration: a clear error at the first call, never a default;
# - concurrency: four sessions at once, no duplicate, each increasing;
# - kill -9 under load, then restart: no id repeats, new ones lie above;
# - a promoted standby repeats none of its primary's stored ids;
# - the update from 1.0 to the newest version, of the extension (by its
#   owner and by a superuser) and of the plain script: the configuration,
#   the keys and the generator kept, and the objects of a fresh install.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sql_edition'));

# The key of the public ids in both editions (the examples of
# doc/public-ids.md, known to everyone)
my %keys = (
	K1 => '000102030405060708090a0b0c0d0e0f',
	Z9 => 'f0e1d2c3b4a5968778695a4b3c2d1e0f');

# ---------------------------------------------------------------------------
# Agreement with the C edition
# ---------------------------------------------------------------------------

my $key_file = "$dir/public_keys";
open(my $fh, '>', $key_file) or die "could not write $key_file: $!";
print $fh "K1 $keys{K1}\nZ9 $keys{Z9}\n";
close($fh);
chmod 0600, $key_file or die "could not chmod $key_file: $!";

my $both = SnowidTest::new_server(
	'both_editions',
	{
		'snowid.datacenter_id' => 3,
		'snowid.worker_id' => 7,
		'snowid.public_key_file' => $key_file
	});
$both->safe_psql('postgres', 'CREATE DATABASE sqled');
$both->safe_psql(
	'sqled', qq{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_id = 3, worker_id = 7;
	INSERT INTO snowid_public_keys VALUES
		('K1', '\\x$keys{K1}', 1), ('Z9', '\\x$keys{Z9}', 2);
});

# The vectors of n ids under the C edition's layout: half issued by it,
# half drawn between its epoch and the last time ids hold; computed by the C
# edition, copied to the SQL edition's database, and the rows where the SQL
# edition gives anything else counted.
sub make_vectors
{
	my ($n, $label) = @_;
	(my $file = "vectors_$label") =~ s/\W/_/g;
	$file = "$dir/$file";

	$both->safe_psql(
		'postgres', qq{
	CREATE TABLE ids AS
		SELECT id FROM snowid_next_batch($n / 2) id
		UNION ALL
		SELECT snowid_from_time(e.epoch + random() * (e.last - e.epoch))
			+ (random() * (snowid_span('1 ms') - 1))::bigint
		FROM generate_series(1, $n - $n / 2),
			(SELECT epoch, exhausted_at - interval '1 ms' AS last
			 FROM snowid_status()) e;
	COPY (
		SELECT id, d.ts, d.datacenter_id, d.worker_id, d.sequence,
			snowid_time(id), snowid_serial('SN-_9z', id) AS serial,
			rts, snowid_from_time(rts), span, snowid_span(span),
			snowid_public(id), snowid_scramble(id)
		FROM (SELECT id,
				e.epoch + random() * (snowid_time(id) - e.epoch) AS rts,
				make_interval(days => (random() * 1000)::int)
					+ (random() * 86400000)::bigint * interval '1 ms' AS span
			  FROM ids, (SELECT epoch FROM snowid_status()) e) x,
			snowid_decode(id) d)
	TO '$file';
	DROP TABLE ids;
});
	is( $both->safe_psql(
			'sqled', qq{
	CREATE TABLE vectors (id bigint, ts timestamptz, datacenter_id int,
		worker_id int, sequence int, t timestamptz, serial text,
		rts timestamptz, from_time bigint, span interval, span_ids bigint,
		pub text, scr bigint);
	COPY vectors FROM '$file';
	SELECT count(*) FROM vectors;
}), $n, "$label: the C edition computed $n vectors");

	my %checks = (
		'snowid_decode()' => q{(d.ts, d.datacenter_id, d.worker_id, d.sequence)
			IS DISTINCT FROM (v.ts, v.datacenter_id, v.worker_id, v.sequence)},
		'snowid_time()' => 'snowid_time(v.id) IS DISTINCT FROM v.t',
		'snowid_serial()' =>
		  q{snowid_serial('SN-_9z', v.id) IS DISTINCT FROM v.serial},
		'snowid_from_serial()' =>
		  'snowid_from_serial(v.serial) IS DISTINCT FROM v.id',
		'snowid_from_time()' =>
		  'snowid_from_time(v.rts) IS DISTINCT FROM v.from_time',
		'snowid_span()' => 'snowid_span(v.span) IS DISTINCT FROM v.span_ids',
		'snowid_public()' => 'snowid_public(v.id) IS DISTINCT FROM v.pub',
		'snowid_from_public()' =>
		  'snowid_from_public(v.pub) IS DISTINCT FROM v.id',
		'snowid_scramble()' =>
		  'snowid_scramble(v.id) IS DISTINCT FROM v.scr',
		'snowid_unscramble()' =>
		  'snowid_unscramble(v.scr) IS DISTINCT FROM v.id');
	# one pass over the vectors, each function called once a row; public
	# ids cost a fraction of a millisecond in PL/pgSQL: the reverse
	# directions on every tenth vector
	my %sample = map { $_ => 1 }
	  ('snowid_from_public()', 'snowid_scramble()', 'snowid_unscramble()');
	my @names = sort keys %checks;
	my @counts = split /\|/, $both->safe_psql(
		'sqled',
		'SELECT concat_ws(\'|\', '
		  . join(', ',
			map {
				"count(*) FILTER (WHERE "
				  . ($sample{$_} ? 'v.id % 10 = 0 AND ' : '')
				  . "($checks{$_}))"
			} @names)
		  . ') FROM vectors v, snowid_decode(v.id) d');
	for my $i (0 .. $#names)
	{
		is($counts[$i], 0, "$label: $names[$i] agrees with the C edition");
	}
	$both->safe_psql('sqled', 'DROP TABLE vectors');
	return;
}

make_vectors(100_000, 'default layout');

# The same errors for the same bad input: SQLSTATE, message, detail and
# hint, as a function of both databases reports them.
my $report = q{
	CREATE FUNCTION pg_temp.report(q text) RETURNS text LANGUAGE plpgsql AS $$
	DECLARE
		s text; m text; d text; h text;
	BEGIN
		EXECUTE q;
		RETURN 'no error';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT,
			d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
		RETURN concat_ws(' | ', s, m, d, h);
	END $$;
};
# (the calls, a function and its arguments)
my @bad = map { "SELECT $_" } (
	'snowid_decode(-1)', 'snowid_time(-5)',
	(map { "snowid_from_time('$_')" }
	  ('1970-01-01 00:00:00+00', 'infinity', '2200-01-01 00:00:00+00')),
	(map { "snowid_span('$_')" } ('1 month', '1.5 ms', '-1 ms', '36500 days')),
	(map { "snowid_serial($_, 1)" }
	  ("''", "'a b'", "'a/b'", q{E'a\\x01b'}, q{repeat('a', 17)}, 'NULL')),
	(map { "snowid_from_serial('$_')" }
	  qw(X123 X2026x1311200000000000000000 X2026023012000000000000000000
	  X2026022924000000000000000000 X2000010100000000000000000000
	  X2026010100000000032000000000 X2026010100000000000320000000)),
	q{snowid_from_serial('X2026010100000000000004096000') || 'x'},
	q{snowid_from_serial('a b2026010100000000000000000')},
	(map { "snowid_from_public($_)" }
	  ("'K1-5Q6Z9T1XF7HTM4'", "'K1-5Q6Z9T1XF7HTM'", "'K1-5Q6Z9T1XF7 HTM3'",
		"'KU-5Q6Z9T1XF7HTM3'", "'K1-5Q6Z9T1XF7HTM3K1-5Q6Z9T1XF7HTM3'",
		"repeat('K', 65)", "'K1-8Q6Z9T1XF7HTM3'")),
	'snowid_public(-1)', 'snowid_scramble(-1)', 'snowid_unscramble(-2)',
	'snowid_next_batch(0)', 'snowid_next_batch(100001)');
for my $q (@bad)
{
	my @got = map { $both->safe_psql($_, "$report SELECT pg_temp.report(\$q\$$q\$q\$)") }
	  ('postgres', 'sqled');
	is($got[1], $got[0], "the same error: $q");
}

# an input of 100,000 characters is not echoed whole (the SQL edition's
# messages show its first 40 characters)
for my $q (q{SELECT snowid_serial(repeat('a', 100000), 1)},
	q{SELECT snowid_from_serial(repeat('a', 100000))})
{
	my ($stderr, $ret) = ('');
	$both->psql('sqled', $q, stderr => \$stderr);
	like($stderr, qr/"a{40}\.\.\."/, "the input cut to 40 characters: $q");
	cmp_ok(length($stderr), '<', 2000, "the message is short: $q");
}

# Another layout and epoch: the C edition's by its settings at the restart,
# the SQL edition's in its table, with its worker id, on the edition
# created anew (its first worker id, set above, raised its generator, and
# the guard then refuses another layout or epoch).
SnowidTest::set_conf(
	$both,
	'snowid.datacenter_bits' => 0,
	'snowid.worker_bits' => 6,
	'snowid.sequence_bits' => 6,
	'snowid.datacenter_id' => 0,
	'snowid.worker_id' => 42,
	'snowid.epoch' => '2024-02-29 12:34:56.789+00');
$both->stop;
unlink($both->data_dir . '/snowid_state');
$both->start;
$both->safe_psql(
	'sqled', qq{
	DROP EXTENSION snowid_sql;
	CREATE EXTENSION snowid_sql;
	INSERT INTO snowid_public_keys VALUES
		('K1', '\\x$keys{K1}', 1), ('Z9', '\\x$keys{Z9}', 2);
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6,
		sequence_bits = 6, datacenter_id = 0, worker_id = 42,
		epoch = '2024-02-29 12:34:56.789+00'});
make_vectors(10_000, 'layout 51/0/6/6');
$both->stop;

# ---------------------------------------------------------------------------
# A server with no snowid library, and a database owner who is no superuser
# ---------------------------------------------------------------------------

my $node = SnowidSqlEdition::new_server('sql_only', [qw(app clerk)], ['appdb'],
	allows_streaming => 1);
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'no library is preloaded');
my $app = $node->connstr('appdb') . ' user=app';
my $clerk = $node->connstr('appdb') . ' user=clerk';

my ($rc, $out, $err) = psql_as($app, 'CREATE EXTENSION snowid_sql');
is($rc, 0, 'a database owner who is no superuser installs snowid_sql')
  or diag($err);
is( $node->safe_psql(
		'appdb', q{
	SELECT count(*) FROM pg_depend dep
	JOIN pg_extension e ON e.oid = dep.refobjid AND e.extname = 'snowid_sql'
	JOIN pg_proc p ON p.oid = dep.objid AND dep.classid = 'pg_proc'::regclass
	JOIN pg_language l ON l.oid = p.prolang
	WHERE l.lanname NOT IN ('sql', 'plpgsql')}),
	0, 'every function of the extension is SQL or PL/pgSQL');

($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id/,
	'the first call without a worker id is an error, not a default');
($rc, $out, $err) =
  psql_as($app, 'UPDATE snowid_config SET worker_id = 32');
like(
	$err,
	qr/22023: invalid snowid configuration in snowid_config\nDETAIL:  worker_id is 32; with worker_bits = 5, worker ids run from 0 to 31\./,
	'a worker id too wide for its field is refused');
($rc, $out, $err) = psql_as($app,
	'UPDATE snowid_config SET datacenter_bits = 10, worker_bits = 10, sequence_bits = 12'
);
like($err, qr/leaving the timestamp 31 bits; it needs at least 39/,
	'a layout that leaves the timestamp too few bits is refused');
($rc, $out, $err) = psql_as($app,
	q{UPDATE snowid_config SET epoch = '2020-01-01 00:00:00.0005+00'});
like($err, qr/epoch must be a whole number of milliseconds/,
	'an epoch between milliseconds is refused');

# a path past the trigger meets the table's constraint: the row stays as
# it was; a replica's apply (session_replication_role = replica) changes
# no row at all
($rc, $out, $err) = $node->psql(
	'appdb', q{
	ALTER TABLE snowid_sql_private.snowid_config DISABLE TRIGGER snowid_config_check;
	UPDATE snowid_config SET worker_id = 1, max_wait_ms = -1;
}, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
$node->safe_psql('appdb', 'ALTER TABLE snowid_sql_private.snowid_config ENABLE TRIGGER snowid_config_check');
like(
	$err,
	qr/23514: new row for relation "snowid_config" violates check constraint "snowid_config_valid"/,
	'a bad row that passes the trigger by is refused by the table');
($rc, $out, $err) = $node->psql(
	'appdb', q{
	SET session_replication_role = replica;
	UPDATE snowid_config SET worker_id = 1, max_wait_ms = -1;
}, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($rc, 0, 'a replica\'s apply of a row is no error') or diag($err);
is( $node->safe_psql('appdb',
		'SELECT worker_id IS NULL AND max_wait_ms = 2000 FROM snowid_config'),
	't', 'and the row stays as it was');
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id/,
	'the next call still says what is missing');

($rc, $out, $err) = psql_as($app,
	'UPDATE snowid_config SET worker_id = 5, datacenter_id = 2, max_wait_ms = 2000'
);
is($rc, 0, 'the owner sets the worker id') or diag($err);
($rc, $out, $err) = psql_as($clerk,
	'SELECT worker_id, datacenter_id FROM snowid_decode(snowid_next())');
is($out, '5|2', 'another role takes ids of that worker id') or diag($err);

# The common path reads snowid_sql_fixed(), which the configuration's
# triggers make anew from the row, whichever way the row changes: a session
# that took ids takes the new worker id at its next transaction.
my $taker = $node->background_psql('appdb', extra_params => [ '-U', 'clerk' ]);
# (the BackgroundPsql of older test libraries ends its output with a newline)
my $worker_of_next = sub {
	my $out = $taker->query_safe(q{SELECT worker_id FROM snowid_decode(snowid_next())});
	chomp $out;
	return $out;
};
is($worker_of_next->(), '5', 'a session takes ids of worker id 5');
psql_as($app, 'UPDATE snowid_config SET worker_id = 6');
is($worker_of_next->(), '6',
	'the owner sets worker id 6: the session takes ids of it at its next transaction');
psql_as($app, 'BEGIN; UPDATE snowid_config SET worker_id = 7; ROLLBACK');
is($worker_of_next->(), '6', 'a change rolled back changes nothing');
$node->safe_psql(
	'appdb', q{
	SET session_replication_role = replica;
	UPDATE snowid_config SET worker_id = 8;
});
is($worker_of_next->(), '6',
	'a change under session_replication_role = replica (a replica\'s apply) changes nothing');
$node->safe_psql(
	'appdb', q{
	ALTER TABLE snowid_sql_private.snowid_config DISABLE TRIGGER snowid_config_check;
	UPDATE snowid_config SET worker_id = 8;
	ALTER TABLE snowid_sql_private.snowid_config ENABLE TRIGGER snowid_config_check;
});
is($worker_of_next->(), '8', 'a change past the check reaches the session too');
$node->safe_psql('appdb', 'DELETE FROM snowid_config');
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_next()');
like($err, qr/55000: snowid_sql has no configuration/,
	'with the row deleted, a call is an error');
# a new row once ids are issued: only past the check (a superuser's)
my $put_back = sub {
	my ($worker) = @_;
	$node->safe_psql(
		'appdb', qq{
	ALTER TABLE snowid_sql_private.snowid_config DISABLE TRIGGER snowid_config_check;
	INSERT INTO snowid_config (datacenter_id, worker_id) VALUES (2, $worker);
	ALTER TABLE snowid_sql_private.snowid_config ENABLE TRIGGER snowid_config_check;
});
};
$put_back->(9);
is($worker_of_next->(), '9', 'and a new row is read again');
$node->safe_psql('appdb', 'TRUNCATE snowid_sql_private.snowid_config');
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_next()');
like($err, qr/55000: snowid_sql has no configuration/,
	'so is TRUNCATE');
$put_back->(5);
is($worker_of_next->(), '5', 'and the row put back');
$taker->quit;
is( $node->safe_psql(
		'appdb', q{
	DO $$ BEGIN PERFORM snowid_next(), snowid_decode(1); END $$;
	SELECT count(*) FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') m
	WHERE m LIKE '%/snowid.so'}),
	0, 'a session that took and decoded ids has no snowid library loaded');

# no key yet: the hint's statement, with core functions only (no
# pgcrypto), gives a key of 16 random bytes
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_public(0)');
like($err, qr/55000: snowid_public_keys holds no key/, 'no public id without a key');
my ($hinted) = $err =~ /HINT:  .*?: (INSERT INTO snowid_public_keys VALUES .*\)) \(doc/;
ok($hinted && $hinted !~ /gen_random_bytes/,
	'the hint gives a statement that needs no pgcrypto') or diag($err);
like($err, qr/HINT:  As the role that installed snowid_sql \(the owner of the extension, or the one that ran its plain script\)/,
	'for the role that installed the edition, as an extension or as a plain script');
($rc, $out, $err) = psql_as($app, ($hinted // 'SELECT') . q{;
	SELECT length(key), key_id FROM snowid_public_keys});
is($out, '16|K1', "the owner adds a key of 16 bytes with the hint's statement")
  or diag($err);
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_from_public(snowid_public(12345))');
is($out, '12345', 'its public ids read back') or diag($err);
($rc, $out, $err) = psql_as($app, 'DELETE FROM snowid_public_keys');

($rc, $out, $err) = psql_as($app,
	q{INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)}
);
is($rc, 0, 'the owner adds a key') or diag($err);
($rc, $out, $err) = psql_as($app,
	q{INSERT INTO snowid_public_keys VALUES ('K10', '\x000102030405060708090a0b0c0d0e0f', 2)}
);
like($err, qr/differ by one character at the end/,
	'a key id that one character typed too many turns into another is refused');
($rc, $out, $err) = psql_as($clerk, 'SELECT snowid_public(0)');
is($out, 'K1-5Q6Z9T1XF7HTM3', 'another role makes public ids')
  or diag($err);
($rc, $out, $err) = psql_as($clerk, 'SELECT * FROM snowid_public_keys');
like($err, qr/42501: permission denied for (table|view) snowid_public_keys/,
	'but reads no key');
($rc, $out, $err) =
  psql_as($clerk, 'UPDATE snowid_config SET worker_id = 6');
like($err, qr/42501: permission denied for (table|view) snowid_config/,
	'nor changes the configuration');
($rc, $out, $err) = psql_as($clerk, q{SELECT setval('snowid_sql_private.snowid_position', 1)});
like($err, qr/42501: permission denied for sequence snowid_position/,
	'nor moves the generator');
($rc, $out, $err) = psql_as($app, 'UPDATE snowid_config SET sequence_bits = 10');
like($err,
	qr/55000: snowid layout or epoch cannot change once ids are issued/,
	'the layout stays once ids are issued');

# the plain script, in a database without the extension
$node->safe_psql('postgres', 'CREATE DATABASE plaindb OWNER app');
system("$src/test/tools/sql-edition plain $src 1.0 public > $dir/plain.sql") == 0
  or die 'could not make the plain script';
my $plain = $node->connstr('plaindb') . ' user=app';
my ($prc, $pout, $perr) = (0, '', '');
IPC::Run::run([ 'psql', '-Xq', '-d', $plain, '-f', "$dir/plain.sql" ],
	'<', \undef, '>', \$pout, '2>', \$perr)
  or $prc = 1;
is($prc, 0, 'the plain script runs as a role that is no superuser')
  or diag($perr);
($rc, $out, $err) = psql_as($plain,
	'UPDATE snowid_config SET worker_id = 9; SELECT worker_id FROM snowid_decode(snowid_next())'
);
is($out, '9', 'the plain script gives ids') or diag($err);

# ---------------------------------------------------------------------------
# Concurrency: four sessions at once
# ---------------------------------------------------------------------------

$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 1;
});
SnowidTest::concurrent_sessions($node, 4, 20_000);
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}),
	0, 'no session holds the generator\'s lock after its calls');

# Calls cancelled at any point (statement_timeout, 30 times in one
# session) leave the lock behind neither: the session holds none after.
my $cancels = join('',
	map { "SET statement_timeout = '${_}ms';\nSELECT count(snowid_next()) FROM generate_series(1, 10000000);\n" }
	  map { 5 + 3 * $_ } 1 .. 30);
my ($crc, $cout, $cerr) = $node->psql(
	'postgres', $cancels . q{RESET statement_timeout;
	SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();},
	on_error_stop => 0);
is($cout, '0', 'calls cancelled 30 times leave no lock in their session');
is(scalar(() = $cerr =~ /canceling statement due to statement timeout/g),
	30, 'every one of them was cancelled');

# An error while a call holds the lock, and one while it takes a position
# (in a database of its own, the sequence at its maximum): a batch, a
# writer, fails moving the sequence past its end while it holds the lock;
# a call fails in nextval().  Neither leaves the lock behind.  (Before the
# first worker id raised the generator, a call that took the last position
# became that writer, no writer having set the generation yet; the raise
# is one.)
$node->safe_psql('postgres', 'CREATE DATABASE maxed');
$node->safe_psql('maxed', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 30;
	SELECT setval('snowid_sql_private.snowid_position', 9223372036854775807);
});
($crc, $cout, $cerr) = $node->psql(
	'maxed', q{SELECT snowid_next_batch(1);
	SELECT snowid_next();
	SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();},
	on_error_stop => 0);
like($cerr, qr/bigint out of range.*snowid_sql_move/s,
	'a call fails while it holds the lock');
like($cerr, qr/reached maximum value of sequence "snowid_position"/,
	'and the next fails taking a position');
is($cout, '0', 'and neither leaves a lock in its session');

# Many sessions of short transactions, most of whose calls are the first
# of their millisecond (each then moves the sequence to the clock as a
# writer) and some batches (writers too), beside calls that take their
# positions with no lock: no id twice.
$node->safe_psql('postgres',
	'CREATE UNLOGGED TABLE many (id bigint)');
$node->pgbench(
	'--no-vacuum --client=8 --jobs=4 --transactions=300',
	0,
	[qr{processed: 2400/2400}],
	[qr{^$}],
	'eight sessions of short transactions, ones and batches, finish',
	{
		'110_one@4' => "INSERT INTO many VALUES (snowid_next());\n",
		'110_batch@1' => "INSERT INTO many SELECT snowid_next_batch(3);\n",
	});
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) > 2400, count(*) = count(DISTINCT id) FROM many}),
	't|t', 'eight sessions of ones and batches: no id twice');

# A writer holds the lock only while it moves the sequence, and calls take
# positions without it: while another session holds the lock outside a
# window (the generation even) and the sequence is 30 s ahead of the clock
# (within max_drift_ms), a call gives an id at once.  While the window is
# open (the generation odd, as between a writer's reading and its setting
# of the position), no call uses a position it takes: it waits for the
# lock, and, cancelled, leaves no lock behind.  In a database of its own,
# whose generator is left ahead.  (The generation carries this server's
# token in its high bits, and snowid_sql_started the server's start, as a
# writer sets them.)
$node->safe_psql('postgres', 'CREATE DATABASE windows');
$node->safe_psql('windows', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 29, max_drift_ms = 60000;
});
my $holder = $node->background_psql('windows');
$holder->query_safe(q{
	BEGIN;
	SELECT name FROM snowid_sql_private.snowid_locks WHERE name = 'generator' FOR UPDATE;
	SELECT setval('snowid_sql_private.snowid_position',
		(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
		 - 1288834974657 + 30000) << 12);
	SELECT setval('snowid_sql_private.snowid_generation',
		((snowid_sql_private.snowid_sql_fixed()).token << 40) + 2);
	SELECT snowid_sql_private.snowid_sql_stamp_start();
});
($crc, $cout, $cerr) = $node->psql(
	'windows', q{SET statement_timeout = '20s';
	SELECT count(snowid_next()) FROM generate_series(1, 100);},
	on_error_stop => 0);
is($cout, '100', 'calls take ids while another session holds the lock outside a window')
  or diag($cerr);
$holder->query_safe(q{SELECT nextval('snowid_sql_private.snowid_generation')});
is($node->safe_psql('windows', q{SELECT pg_sequence_last_value('snowid_sql_private.snowid_generation') % 2}),
	'1', 'the window is open');
($crc, $cout, $cerr) = $node->psql(
	'windows', q{SET statement_timeout = '1s';
	SELECT snowid_next();
	RESET statement_timeout;
	SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();},
	on_error_stop => 0);
like($cerr, qr/canceling statement due to statement timeout/,
	'a call waits while another session has the window open');
is($cout, '0', 'and, cancelled, leaves no lock in its session');
$holder->query_safe('COMMIT');
$holder->quit;
is( $node->safe_psql(
		'windows', q{
	SELECT count(DISTINCT id) FROM (SELECT snowid_next() AS id FROM generate_series(1, 100)) x;
	SELECT pg_sequence_last_value('snowid_sql_private.snowid_generation') % 2}),
	"100\n0", 'after the lock is let go, the next writer closes the window and ids go on');

# ---------------------------------------------------------------------------
# kill -9 under load
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE TABLE stored (id bigint)');
my @load = map {
	SnowidTest::start_psql($node, q{
		DO $$
		BEGIN
			FOR i IN 1 .. 10000000 LOOP
				INSERT INTO stored VALUES (snowid_next());
				COMMIT;
			END LOOP;
		END
		$$;
	})
} 1 .. 3;
$node->poll_query_until('postgres', 'SELECT count(*) >= 3000 FROM stored')
  or die 'the sessions stored no ids';
SnowidTest::crash_server($node);
$_->finish for @load;
$node->start;
my $stored = $node->safe_psql('postgres', 'SELECT count(*) FROM stored');
cmp_ok($stored, '>=', 3000, "$stored ids were stored before the crash");
$node->safe_psql('postgres',
	'CREATE TABLE after_crash AS SELECT snowid_next() AS id FROM generate_series(1, 5000)'
);
is( $node->safe_psql(
		'postgres', q{
	SELECT (SELECT min(id) FROM after_crash) > (SELECT max(id) FROM stored)}),
	't', 'after kill -9 every new id lies above every stored one');

# ---------------------------------------------------------------------------
# A dump restored
# ---------------------------------------------------------------------------

# A restored database keeps the layout, the epoch and the bounds of its
# source, but not its worker id: it is another server, whose position is
# the dump's.  Given one of its own, it issues above every restored id.
$node->safe_psql('postgres', 'CREATE DATABASE dumped');
$node->safe_psql(
	'dumped', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 3, datacenter_id = 1, worker_bits = 7,
		sequence_bits = 10, epoch = '2020-01-01 00:00:00+00', max_drift_ms = 5000;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowid_next(), n int);
	INSERT INTO t (n) SELECT g FROM generate_series(1, 1000) g;
});
my $dump = $node->basedir . '/dumped.dump';
SnowidSqlEdition::dump_restore($node, 'dumped', 'restored', $dump,
	'a database of the SQL edition');
is( $node->safe_psql(
		'restored', q{
	SELECT datacenter_id, worker_id IS NULL, worker_bits, sequence_bits,
		epoch = '2020-01-01 00:00:00+00', max_drift_ms FROM snowid_config}),
	'1|t|7|10|t|5000',
	'the restored row has its source\'s layout, epoch and bounds, and no worker id');
my ($drc, $dout, $derr) = $node->psql('restored', 'INSERT INTO t (n) VALUES (0)',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($derr, qr/55000: snowid has no worker id/,
	'it issues no id until it is given a worker id');
$node->safe_psql(
	'restored', q{
	UPDATE snowid_config SET worker_id = 4;
	INSERT INTO t (n) SELECT g FROM generate_series(1001, 2000) g;
});
is( $node->safe_psql(
		'restored', q{
	SELECT (SELECT min(id) FROM t WHERE n > 1000) > (SELECT max(id) FROM t WHERE n <= 1000)
		AND (SELECT bool_and(d.worker_id = 4 AND d.datacenter_id = 1)
			 FROM t, snowid_decode(t.id) d WHERE t.n > 1000)}),
	't', 'given one, it issues above every restored id, in the restored layout');

# ---------------------------------------------------------------------------
# A promoted standby
# ---------------------------------------------------------------------------

$node->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('sql_only_standby');
$standby->init_from_backup($node, 'backup', has_streaming => 1);
$standby->start;
$node->safe_psql('postgres',
	'INSERT INTO stored SELECT snowid_next() FROM generate_series(1, 5000)');
$node->wait_for_catchup($standby);
my ($src_rc, $sout, $serr) = (0, '', '');
$standby->psql(
	'postgres', 'SELECT snowid_next()',
	stdout => \$sout,
	stderr => \$serr,
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($serr, qr/25006: cannot generate snowids during recovery/,
	'a standby issues no id');
SnowidTest::crash_server($node);
SnowidTest::promote($standby);
$standby->safe_psql('postgres',
	'CREATE TABLE after_promotion AS SELECT snowid_next() AS id FROM generate_series(1, 5000)'
);
is( $standby->safe_psql(
		'postgres', q{
	SELECT (SELECT min(id) FROM after_promotion) > (SELECT max(id) FROM stored)
		AND (SELECT count(*) FROM stored) >= 5000}),
	't', 'the promoted standby\'s ids lie above every stored one of its primary');
is( $standby->safe_psql(
		'postgres', 'SELECT worker_id FROM snowid_config'),
	'1', 'it keeps its primary\'s worker id');
$standby->stop;

# ---------------------------------------------------------------------------
# The update from 1.0, by each way of installing
# ---------------------------------------------------------------------------

my @versions = sort map { m{/snowid_sql--([0-9.]+)\.sql$} ? $1 : () }
  glob("$src/sql/snowid_sql--*.sql");
is_deeply(\@versions, ['1.0', '1.3', '1.4'],
	'snowid_sql has install scripts of 1.0, 1.3 (kept whole as 1.3.0 made it) and 1.4 (made from their parts); 1.1 and 1.2 are update scripts');
my $version = SnowidSqlEdition::version();
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE DATABASE fresh OWNER app;
	CREATE DATABASE updated OWNER app;
	CREATE DATABASE updated_su OWNER app;
	CREATE DATABASE fresh_su OWNER app;
	CREATE DATABASE plainfresh OWNER app;
});
($rc, $out, $err) = psql_as($node->connstr('fresh') . ' user=app', 'CREATE EXTENSION snowid_sql');
is($rc, 0, "the owner creates snowid_sql $version") or diag($err);
$node->safe_psql('fresh_su', 'CREATE EXTENSION snowid_sql');

# What an installation of 1.0 issued before the update, and the update
# kept: the configuration, a key, the generator above every earlier id.
my %ids;
sub take_ids
{
	my ($connstr, $n) = @_;
	my ($rc, $out, $err) = psql_as($connstr,
		"SELECT snowid_next() FROM generate_series(1, $n)");
	my @got = split /\n/, $out;
	diag($err) if $rc;
	return @got;
}

sub check_updated
{
	my ($db, $how) = @_;
	my $other = $node->connstr($db) . ' user=clerk';
	my @before = @{ $ids{$db} };
	my @after = take_ids($other, 1000);

	is(scalar(@after), 1000, "$how: another role takes ids after the update");
	ok( (sort { $a <=> $b } @after)[0] > (sort { $b <=> $a } @before)[0],
		"$how: every new id lies above every id of 1.0");
	my %seen;
	is(scalar(grep { $seen{$_}++ } @before, @after), 0, "$how: no id twice");
	($rc, $out, $err) = psql_as($other, q{
		SELECT worker_id, snowid_public(0), coordinator_reassertions
		FROM snowid_status()});
	is($out, '4|K1-5Q6Z9T1XF7HTM3|0',
		"$how: the configuration and the key are kept, and snowid_status() has the columns of $version")
	  or diag($err);
	return;
}

# 1.0 installed by the owner of the database (updated, plaindb), which
# owns its objects, and by a superuser (updated_su)
for my $db ('updated', 'updated_su', 'plaindb')
{
	my $owner = $node->connstr($db) . ($db eq 'updated_su' ? '' : ' user=app');
	($rc, $out, $err) = psql_as($owner,
		($db eq 'plaindb' ? '' : q{CREATE EXTENSION snowid_sql VERSION '1.0';})
		  . q{UPDATE snowid_config SET worker_id = 4;
		DELETE FROM snowid_public_keys;
		INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)});
	is($rc, 0, "$db: the owner installs 1.0 and configures it") or diag($err);
	is($node->safe_psql($db, 'SELECT snowid_sql_version()'),
		'1.0', "$db: snowid_sql_version() says 1.0");
	$ids{$db} = [ take_ids($node->connstr($db) . ' user=clerk', 100) ];
}

# CREATE EXTENSION: the install of a superuser is updated; that of the
# owner, which owned the objects and could have changed them, is not (the
# update runs as the superuser): it is dropped and created again, as
# managed.md says ("Updating from 1.0 or 1.1"), as the owner, keeping the
# configuration and the keys, and issuing above every earlier id
$node->safe_psql('updated_su', "ALTER EXTENSION snowid_sql UPDATE TO '$version'");
($rc, $out, $err) = psql_as($node->connstr('updated') . ' user=app',
	"ALTER EXTENSION snowid_sql UPDATE TO '$version'");
like(
	$err,
	qr/55000: snowid_sql cannot be updated to 1.2 where a role that is no superuser owns it/,
	"the owner's install of 1.0 is not updated to $version");
my ($steps) = slurp_file("$src/doc/managed.md") =~ /^### Updating from 1\.0 or 1\.1\n.*?^```sql\n(.*?)^```$/ms;
ok(defined $steps, 'managed.md says how to drop it and create it again');
append_to_file("$dir/recreate.sql", $steps);
($rc, $err) = (IPC::Run::run(
		[ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('updated') . ' user=app',
		  '-f', "$dir/recreate.sql" ],
		'<', \undef, '>', \$out, '2>', \$err) ? 0 : 1, $err);
is($rc, 0, 'its steps, run by the owner') or diag($err);
for my $db ('updated', 'updated_su')
{
	($rc, $out, $err) = psql_as($node->connstr($db) . ' user=app', '\dx snowid_sql');
	like($out, qr/^snowid_sql\|\Q$version\E\|/, "$db: \\dx shows $version")
	  or diag($err);
	check_updated($db, $db);
	is(SnowidSqlEdition::objects($node, $db),
		SnowidSqlEdition::objects($node, $db eq 'updated' ? 'fresh' : 'fresh_su'),
		"$db: its objects, owners and privileges are those of a fresh $version");
}

# The plain script: the update file made by make snowid_sql-update.sql, run
# by the owner, against the plain script of the same version
system("$src/test/tools/sql-edition plain $src $version public 1.0 > $dir/plain-update.sql") == 0
  or die 'could not make the plain update script';
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain-$version.sql") == 0
  or die 'could not make the plain script';
sub run_file
{
	my ($db, $file) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[ 'psql', '-Xq', '-v', 'VERBOSITY=verbose', '-d', $node->connstr($db) . ' user=app', '-f', $file ],
		'<', \undef, '>', \$out, '2>', \$err);
	return ($ok ? 0 : 1, $err);
}
($rc, $err) = run_file('plainfresh', "$dir/plain-$version.sql");
is($rc, 0, "the plain script of $version runs") or diag($err);
($rc, $err) = run_file('fresh', "$dir/plain-update.sql");
like($err, qr/55000: snowid_sql is installed as an extension in this database/,
	'the plain update refuses a database where snowid_sql is an extension');
($rc, $err) = run_file('plaindb', "$dir/plain-update.sql");
is($rc, 0, "the plain update file updates the plain script of 1.0 to $version")
  or diag($err);
check_updated('plaindb', 'plain script');
is(SnowidSqlEdition::objects($node, 'plaindb'),
	SnowidSqlEdition::objects($node, 'plainfresh'),
	"plain script: its objects, owners and privileges are those of the plain script of $version");
($rc, $err) = run_file('plaindb', "$dir/plain-update.sql");
isnt($rc, 0, 'the plain update run twice fails, and changes nothing');
is(SnowidSqlEdition::objects($node, 'plaindb'),
	SnowidSqlEdition::objects($node, 'plainfresh'), '(nothing changed)');

# snowid_sql_version() says the version each way (a plain script records it
# nowhere else), the extension's as pg_extension has it
for my $db ('fresh', 'updated', 'updated_su', 'plainfresh', 'plaindb')
{
	is( $node->safe_psql(
			$db, q{
		SELECT snowid_sql_version() || '|' || coalesce((SELECT extversion
			FROM pg_extension WHERE extname = 'snowid_sql'), 'no extension')}),
		"$version|" . ($db =~ /^plain/ ? 'no extension' : $version),
		"$db: snowid_sql_version() says $version");
}

# make snowid_sql.sql makes the script again for another schema
# (SNOWID_SQL_SCHEMA), built outside the clone (VPATH); the schema must be
# there first
my $build = "$dir/make";
mkdir $build or die "could not make $build: $!";
sub make_plain
{
	my @args = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'make', '-s', '-f', "$src/Makefile", "VPATH=$src", @args, 'snowid_sql.sql' ],
		'<', \undef, '>', \$out, '2>', \$err, init => sub { chdir $build })
	  or die "make snowid_sql.sql @args failed:\n$out$err";
	return slurp_file("$build/snowid_sql.sql");
}
like(make_plain(), qr/^CREATE VIEW public\.snowid_config\b/m,
	'make snowid_sql.sql makes a script for public');
my $other = make_plain('SNOWID_SQL_SCHEMA=other');
ok($other =~ /^CREATE VIEW other\.snowid_config\b/m && $other !~ /\bpublic\./,
	'make snowid_sql.sql SNOWID_SQL_SCHEMA=other after it makes one for other');
is(make_plain('SNOWID_SQL_SCHEMA=other'), $other, 'and again the same');
$node->safe_psql('postgres', 'CREATE DATABASE plainother OWNER app');
($rc, $err) = run_file('plainother', "$build/snowid_sql.sql");
like($err, qr/schema "other" does not exist/, 'the schema must exist first');
$node->safe_psql('plainother', 'CREATE SCHEMA other AUTHORIZATION app');
($rc, $err) = run_file('plainother', "$build/snowid_sql.sql");
is($rc, 0, 'the script of other runs once the schema is there') or diag($err);
is( $node->safe_psql(
		'plainother', q{
	SELECT other.snowid_sql_version(), to_regclass('public.snowid_config') IS NULL}),
	"$version|t", 'it installs into other, and says its version');

$node->stop;
done_testing();
