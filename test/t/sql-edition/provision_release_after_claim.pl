# The provisioning script of doc/managed.md ("A worker id from a
# coordination database") run out of order: a release that gave up
# waiting notes the worker id in STATE_DIR/release, and "run again, goes
# on with the worker id it noted".  Between the two runs the operator,
# keeping the database after all (its application fails without a worker
# id), runs claim: the coordination database hands the holder back the
# worker id it still holds, and claim sets it in snowid_config, with
# STATE_DIR/release left as it was.  The release run again then frees
# that worker id while the database issues with it: the next claim of
# another database is granted it, and both issue the same ids until the
# first database's assert (every INTERVAL_MS) finds it gone, and after
# that for as long as a transaction then open lasts.
#
# - db1 claims a worker id; release gives up waiting for an application's
#   transaction (RELEASE_WAIT_S=2), the transaction ends.
# - claim for db1 again: it takes a worker id back (or refuses while a
#   release is pending).
# - release run again: where db1 holds a worker id, the worker id freed
#   should not be the one db1 issues with.
# - db2 claims once the fence of the freed worker id has passed (it picks
#   the lowest), and both issue: no id of one should equal an id of the
#   other (5/5/4, batches of 400 ids, 40,000 in each database).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidPgCoord;
use SnowidSqlEdition qw(app_url);
use SnowidTest;
use Test::More;

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $script = SnowidSqlEdition::provisioning_script('release_after_claim', $cnode,
	DATACENTER => 3, INTERVAL_MS => 60000, MARGIN_MS => 1000, RELEASE_WAIT_S => 2);

# app, who sees every session's transactions (as release needs), owns
# two databases of the edition
my $node = SnowidSqlEdition::new_server('release_after_claim', ['app'], [qw(db1 db2)]);
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
SnowidSqlEdition::install($node, $_,
	'UPDATE snowid_config SET sequence_bits = 4; '
	  . 'CREATE TABLE t (id bigint DEFAULT snowid_next() PRIMARY KEY, n int)')
  for qw(db1 db2);
$script->databases(map { $_ => app_url($node, $_) } qw(db1 db2));

my ($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);

# an application's transaction, open over release's wait
my $app = SnowidSqlEdition::open_transaction($node, 'db1', 5);
($rc, $out, $err) = $script->run('release', 'db1', limit => 60);
isnt($rc, 0, "release gives up waiting for the application's transaction ($err)");
$app->finish;

# the operator keeps db1 after all
($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
my ($w1) = $out =~ /^worker id (\d+) of datacenter 3$/;
note("claim for db1 again: exit code $rc, $out $err");

# the release begun before, run again (say by the retiring job)
($rc, $out, $err) = $script->run('release', 'db1', limit => 60);
note("release run again: exit code $rc, $out $err");
my $held = $node->safe_psql('db1', 'SELECT coalesce(worker_id, -1) FROM snowid_config');
my $live = $cnode->safe_psql('coord',
	"SELECT coalesce(bool_or(live), false) FROM snowid_coordinator.workers WHERE datacenter = 3 AND worker_id = $held");
ok($held < 0 || $live eq 't',
	"db1 issues with no worker id the coordination database has freed (db1: $held, held there: $live)");

# db2 claims once the freed worker id's fence has passed (the lowest
# worker id, which it then picks), and both issue; where db1 holds none,
# the worker id it was granted first is the one freed
my $freed = $held >= 0 ? $held : $w;
SnowidSqlEdition::fence_passed($cnode, 3, $freed)
  or diag('the freed worker id\'s fence did not pass');
($rc, $out, $err) = $script->run('claim', 'db2', limit => 120);
my ($w2) = $out =~ /^worker id (\d+) of datacenter 3$/;
note("claim for db2: exit code $rc, $out $err");
my @load = map {
	SnowidTest::start_psql($node, SnowidSqlEdition::batches_sql(100, 400, lost => 'EXIT'),
		db => $_, user => 'app')
} qw(db1 db2);
$_->finish for @load;
my ($twice, $total) = SnowidSqlEdition::ids_twice([ $node, 'db1' ], [ $node, 'db2' ]);
is($twice, 0, "no id of db1 equals one of db2 ($twice of $total ids twice; worker ids $held and "
	  . ($w2 // 'none') . ')');

$node->stop;
done_testing();
