# The provisioning script of doc/managed.md ("A worker id from a
# coordination database"), run as the page shows it: it takes a database
# of the SQL edition its worker id from the coordination database, keeps
# it there, and gives it back (issue 68: the edition claims nothing
# itself since 1.3).
#
# - claim: two databases of a server without snowid's library, beside a
#   C-edition server claiming from the same coordination database: three
#   worker ids, and none of their ids twice;
# - assert: a re-assertion that writes nothing; after the coordination
#   database lost everything, it re-asserts the database's worker id, and
#   a new database's claim is refused until the quiet period (and its
#   floor) is over, then gets another worker id; after an administrator
#   freed the worker id (the re-assertion refused), the database issues no
#   more ids;
# - release: the database issues nothing, and its worker id, fenced, goes
#   to the next claim above every id it issued.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

# The coordination database (its datacenters marked new), and a C-edition
# server of datacenter 3 that claims from it, checking in every second
# with a clock margin of 1 s (as the script's claims below declare)
my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $script = SnowidSqlEdition::provisioning_script('provision', $cnode,
	DATACENTER => 3, INTERVAL_MS => 1000, MARGIN_MS => 1000);
ok(defined $script->text, 'managed.md shows the script snowid-worker-id');
my $dir = $script->dir;
my $cserver = $coord->new_node('c_edition', {
	'snowid.datacenter_id' => 3, 'snowid.checkin_interval' => '1s',
	'snowid.clock_margin' => '1s' });
$cserver->start;
$cserver->safe_psql('postgres', 'CREATE EXTENSION snowid; SELECT snowid_next()');
$cserver->poll_query_until('postgres',
	q{SELECT worker_source = 'postgresql' FROM snowid_status()})
  or die 'the C-edition server claimed no worker id';
my $cw = $cserver->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');

# The SQL edition's server: app owns the databases (and sees every
# session's transactions, as release needs)
my $node = SnowidSqlEdition::new_server('provisioned', ['app'], [qw(db1 db2)]);
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
SnowidSqlEdition::install($node, $_) for qw(db1 db2);
$script->databases(map { $_ => app_url($node, $_) } qw(db1 db2));

sub worker_of
{
	my ($db) = @_;
	return $node->safe_psql($db, 'SELECT coalesce(worker_id::text, \'none\') FROM snowid_config');
}

# n ids of a database, or of the C-edition server: (worker ids, ids)
my %all;
my $twice = 0;
sub take
{
	my ($who, $n) = @_;
	my $out = $who eq 'c'
	  ? $cserver->safe_psql('postgres', "SELECT snowid_next() FROM generate_series(1, $n)")
	  : $node->safe_psql($who, "SELECT snowid_next() FROM generate_series(1, $n)");
	my @ids = split /\n/, $out;
	$twice += grep { $all{$_}++ } @ids;
	my %w = map { (($_ >> 12) & 31) => 1 } @ids;
	return join(',', sort keys %w);
}

# ---------------------------------------------------------------------------
# claim, beside a C-edition server
# ---------------------------------------------------------------------------

my ($rc, $out, $err) = $script->run('claim', 'db1');
my ($w1) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w1, "claim: db1 takes a worker id ($out)") or diag($err);
is(worker_of('db1'), $w1, 'claim: and sets it in snowid_config');
isnt($w1, $cw, "claim: another than the C-edition server's ($cw)");
is( $cnode->safe_psql(
		'coord', q{SELECT holder || ' ' || live FROM snowid_coordinator.workers
	WHERE datacenter = 3 AND worker_id = } . $w1),
	'sql db1 true', 'the coordination database holds it for db1');
is(take('db1', 3000), $w1, 'db1 issues ids with it');
is(take('c', 3000), $cw, 'the C-edition server with its own');
($rc, $out, $err) = $script->run('claim', 'db1');
like($err, qr/the database has worker id $w1 already/, 'claim: run again, it changes nothing');

# ---------------------------------------------------------------------------
# assert
# ---------------------------------------------------------------------------

($rc, $out, $err) = $script->run('assert', 'db1');
is($rc, 0, 'assert: db1 re-asserts its worker id') or diag($err);
like(slurp_file("$dir/state-db1/state"), qr/^\d+ \d+\n\z/,
	'and keeps the state record the coordination database answered');
is((stat "$dir/state-db1")[2] & 07777, 0700, 'in a directory only its user reads');

# The coordination database loses everything; the C-edition server's
# check-in notices (a quiet period starts), db1's assert re-asserts
$coord->wipe;
$cserver->poll_query_until('postgres', q{SELECT coordinator_forgot_at IS NOT NULL FROM snowid_status()})
  or die 'the C-edition server did not notice the loss';
($rc, $out, $err) = $script->run('assert', 'db1');
is($rc, 0, 'assert: after the coordination database lost everything, db1 re-asserts') or diag($err);
is( $cnode->safe_psql(
		'coord', q{SELECT holder FROM snowid_coordinator.workers
	WHERE datacenter = 3 AND worker_id = } . $w1),
	'sql db1', 'the coordination database holds db1\'s worker id again');
($rc, $out, $err) = $script->run('claim', 'db2');
like($err, qr/the coordination database refused: quiet/,
	'a new database\'s claim is refused in the quiet period');
(my $w2, $err) = $script->claim_until_granted('db2', 120);
ok(defined $w2 && $w2 ne $w1 && $w2 ne $cw,
	'and gets another worker id once it is over (' . ($w2 // 'none') . ')')
  or diag($err);
is(take('db2', 3000), $w2, 'db2 issues ids with it');
is(take('db1', 3000) . ' ' . take('c', 3000), "$w1 $cw", 'db1 and the C-edition server go on');
is($twice, 0, 'no id twice');

# An administrator frees db2's worker id (db2 went on issuing with it):
# the re-assertion is refused, and db2 stops
$cnode->safe_psql('coord', "SELECT snowid_coordinator.free(3, $w2, 61001)",
	extra_params => [ '-U', 'coord_admin' ]);
($rc, $out, $err) = $script->run('assert', 'db2');
like($err, qr/worker id $w2 lost \(fenced\): the database issues no more ids/,
	'assert: refused (the worker id freed), it says so') or diag($err);
is(worker_of('db2'), 'none', 'and db2 has no worker id any more');
($rc, $out, $err) = psql_as(app_url($node, 'db2'), 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id/, 'nor issues ids');

# ---------------------------------------------------------------------------
# release
# ---------------------------------------------------------------------------

my $last = $node->safe_psql('db1', 'SELECT max(snowid_time(id)) FROM (SELECT snowid_next() AS id) x');
($rc, $out, $err) = $script->run('release', 'db1');
is($out, "worker id $w1 of datacenter 3 freed", 'release: db1 gives its worker id back') or diag($err);
is(worker_of('db1'), 'none', 'release: db1 has no worker id');
($rc, $out, $err) = psql_as(app_url($node, 'db1'), 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id/, 'release: db1 issues nothing');
my ($live, $fence) = split /\|/, $cnode->safe_psql('coord', qq{
	SELECT live, fence > '$last' FROM snowid_coordinator.workers
	WHERE datacenter = 3 AND worker_id = $w1});
is("$live $fence", 'f t', 'the coordination database frees it, fenced past db1\'s ids');

# A new claim gets a worker id free: db1's (above its fence) or another
($rc, $out, $err) = $script->run('claim', 'db2');
my ($w3) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w3 && $w3 ne $cw, 'db2 claims again (' . ($w3 // 'none') . ')') or diag($err);
is(take('db2', 3000), $w3, 'and issues ids with it');
is($twice, 0, 'no id twice, of all three');

$node->stop;
$cserver->stop;
$coord->stop;
done_testing();
