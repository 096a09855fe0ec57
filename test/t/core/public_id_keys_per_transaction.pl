# Public ids, the second pass: one key set per transaction, for every
# process.  A change of the key file takes effect at the next reload, for
# every transaction that starts after it; a transaction keeps the keys it
# started with to its end, and its parallel workers use the leader's keys,
# not a file they read afresh.  A key removed and reloaded is gone for every
# session, an old one included.  Key ids that one wrong character count
# confuses (1 and 01, 12 and 120, K1 and K10) cannot share a file, and the
# reference implementation refuses what the server refuses (a text over 64
# bytes, a dotless i that str.upper() would read as I).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_program('/usr/bin/python3', 'python3');

my $reference = "$FindBin::RealBin/../../public_ids.py";
my %key = (
	K1 => '000102030405060708090a0b0c0d0e0f',
	K2 => 'f0e1d2c3b4a5968778695a4b3c2d1e0f',
	K3 => '8c1f5e33a0b7d2946e0a51c7f3b29d48');

my $node = SnowidTest::new_node('public_keys',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_id' => 2 });
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE t (id bigint);
	INSERT INTO t SELECT snowid_next() FROM generate_series(1, 100000);
	ANALYZE t;
});
my $keys = $node->data_dir . '/public_keys';

sub write_keys
{
	my @ids = @_;

	open(my $fh, '>', $keys) or die "could not write $keys: $!";
	print $fh map { "$_ $key{$_}\n" } @ids;
	close $fh;
	chmod 0600, $keys or die "could not chmod $keys: $!";
	return;
}

write_keys('K1');
SnowidTest::reload_conf($node, 'snowid.public_key_file' => $keys);

# A query of a background session, without the line end that BackgroundPsql
# of PostgreSQL 15 and 16 leaves.
sub ask
{
	my ($session, $sql) = @_;
	my $out = $session->query_safe($sql);

	$out =~ s/\n+\z//;
	return $out;
}

# A query whose snowid_public() calls run in parallel workers; it returns
# the key ids its public ids were made with.
my $setup = q{
	SET parallel_setup_cost = 0;
	SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;
	SET parallel_leader_participation = off;
};
my $query = q{
	SELECT string_agg(k, ',' ORDER BY k)
	FROM (SELECT DISTINCT split_part(snowid_public(id), '-', 1) AS k FROM t) s
};
my $parallel = "$setup $query";
like($node->safe_psql('postgres', "$setup EXPLAIN (COSTS OFF) $query"),
	qr/Gather.*\n\s*Workers Planned: 2\n.*snowid_public\(.*Parallel Seq Scan/s,
	'the query makes its public ids in parallel workers');
is($node->safe_psql('postgres', $parallel), 'K1', 'workers use the key file');

# A transaction keeps its keys across a reload, and so do its workers.
my $session = $node->background_psql('postgres');
$session->query_safe('BEGIN');
is(ask($session, q{SELECT split_part(snowid_public(1), '-', 1)}),
	'K1', 'a transaction takes the keys of the last reload');
write_keys('K2', 'K1');
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT snowid_public(0) LIKE 'K2-%'})
  or die 'K2 never came into use';
is(ask($session, $parallel), 'K1',
	'after a reload, the open transaction and its parallel workers keep K1');
is(ask($session, q{SELECT split_part(snowid_public(1), '-', 1)}), 'K1',
	'and so does the leader');
$session->query_safe('COMMIT');
is(ask($session, $parallel), 'K2',
	'its next transaction takes K2, in its workers too');

# A transaction whose workers take the keys first: they and the leader use
# one generation, that of the last reload.
$session->query_safe('BEGIN');
is(ask($session, $parallel), 'K2', 'workers first: the last reload\'s keys');
is(ask($session, q{SELECT split_part(snowid_public(1), '-', 1)}), 'K2',
	'and the leader takes the same');
$session->query_safe('COMMIT');

# A key removed and reloaded is gone for every session, an old one too.
my $old = $node->background_psql('postgres');
write_keys('K1');
$node->reload;
$node->poll_query_until('postgres', q{SELECT snowid_public(0) LIKE 'K1-%'})
  or die 'K1 never came back';
write_keys('K2');
$node->reload;
$node->poll_query_until('postgres', q{SELECT snowid_public(0) LIKE 'K2-%'})
  or die 'K2 never came back';
my $k2_text = $node->safe_psql('postgres', 'SELECT snowid_public(7)');
is(ask($old, "SELECT snowid_from_public('$k2_text')"), '7',
	'an old session reads K2');
write_keys('K3');
$node->reload;
$node->poll_query_until('postgres', q{SELECT snowid_public(0) LIKE 'K3-%'})
  or die 'K3 never came into use';
for my $s ($old, $session)
{
	my $got = ask($s,
		"SELECT snowid_public_is_valid('$k2_text') AS still_valid");
	is($got, 'f', 'K2 removed and reloaded: gone for an old session too');
}
$old->quit;
$session->quit;

# Key ids one wrong character count confuses are refused together.
for my $pair ([ '1', '01' ], [ '12', '120' ], [ 'K1', 'K10' ])
{
	my ($a, $b) = @$pair;

	open(my $fh, '>', $keys) or die;
	print $fh "$a $key{K1}\n$b $key{K2}\n";
	close $fh;
	$node->reload;
	$node->poll_query_until('postgres', q{
		SELECT setting <> '' FROM pg_settings
		WHERE name = 'snowid.public_key_file'})
	  or die 'no reload';
	like(SnowidTest::psql_error($node, 'SELECT snowid_public(1)'),
		qr/F0000: invalid snowid.public_key_file .*\nDETAIL:  Line 2: Key ids "\Q$a\E" and "\Q$b\E" differ by one character that the check character may not see/,
		"key ids $a and $b are refused in one file");
	my ($out, $err) = ('', '');
	IPC::Run::run([ '/usr/bin/python3', $reference, 'confusable', $a, $b ],
		'>', \$out, '2>', \$err);
	is($out, "yes\n", "the reference agrees that $a and $b are confused");
}
write_keys('K1', 'K2');
$node->reload;
$node->poll_query_until('postgres', q{SELECT snowid_public(0) LIKE 'K1-%'})
  or die 'K1, K2 never came into use';
pass('K1 and K2 share a file');

# The server and the reference read the same texts the same way.
my $t = $node->safe_psql('postgres', 'SELECT snowid_public(12345)');
my @texts = ($t, lc $t, $t =~ s/-//r, $t . ('-' x 48),
	$t . ('-' x 47), "\x{131}" . substr($t, 1), 'K' . "\x{131}" . substr($t, 2),
	'0' . $t);
for my $text (@texts)
{
	my $bytes = $text;
	utf8::encode($bytes);
	my $sql_text = $bytes =~ s/'/''/gr;
	my $server = $node->safe_psql('postgres',
		"SELECT CASE WHEN snowid_public_is_valid('$sql_text') THEN snowid_from_public('$sql_text')::text ELSE 'invalid' END");
	my ($out, $err) = ('', '');
	IPC::Run::run([ '/usr/bin/python3', $reference, 'parse', $bytes ],
		'>', \$out, '2>', \$err);
	chomp $out;
	my $reference_id = $out eq 'invalid' ? 'invalid' : undef;
	if (!defined $reference_id)
	{
		my ($kid, $number) = split /\|/, $out;
		# the file holds K1 and K2; another key id reads as no id
		$reference_id =
		  $kid eq 'K1'
		  ? $node->safe_psql('postgres', "SELECT snowid_unscramble($number)")
		  : 'invalid';
	}
	is($reference_id, $server,
		'the reference reads "' . (length $bytes > 30 ? substr($bytes, 0, 30) . '...' : $bytes) . '" as the server does');
}

done_testing();
