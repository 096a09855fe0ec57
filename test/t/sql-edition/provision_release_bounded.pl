# The provisioning script of doc/managed.md ("A worker id from a
# coordination database"), its release while an application's transaction
# is open: the script sets the worker id NULL, then waits in one DO block
# until no transaction begun before that is open (pg_stat_activity), then
# frees the worker id.  pg_stat_activity is read once per transaction, so
# the loop sees the first reading to its end: a transaction open when it
# starts, ended a moment later, keeps it waiting for good, and the worker
# id is never freed.  Interrupted and run again, release finds no worker
# id in the database and exits 0, freeing nothing: the coordination
# database keeps the worker id held under the database's name for good.
#
# - claim: a database takes a worker id;
# - an application's transaction takes an id and ends 2 s later, begun
#   before release;
# - release should end (within 60 s) and free the worker id; stopped and
#   run again, it should free it then.
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
my $script = SnowidSqlEdition::provisioning_script('release_waits', $cnode,
	DATACENTER => 3, INTERVAL_MS => 1000, MARGIN_MS => 1000);

# app, who sees every session's transactions (as release needs), owns a
# database of the edition
my $node = SnowidSqlEdition::new_server('release_waits', ['app'], ['db1']);
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
SnowidSqlEdition::install($node, 'db1');
$script->databases(db1 => app_url($node, 'db1'));

my ($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);
$node->safe_psql('db1', 'SELECT snowid_next() FROM generate_series(1, 100)');

# An application's transaction, begun before release, which takes an id
# and ends 2 s later
my $app = SnowidSqlEdition::open_transaction($node, 'db1', 2);

($rc, $out, $err) = $script->run('release', 'db1', limit => 60);
$app->finish;
is($rc, 0, 'release ends once the transaction begun before it has ended') or diag($err);
is($out, "worker id $w of datacenter 3 freed", 'release: db1 gives its worker id back');
# an operator who stopped it runs it again
if ($rc)
{
	($rc, $out, $err) = $script->run('release', 'db1', limit => 60);
	is($out, "worker id $w of datacenter 3 freed", 'release, run again, frees it')
	  or diag("exit code $rc: $err");
}
is( $cnode->safe_psql(
		'coord', qq{SELECT live FROM snowid_coordinator.workers
	WHERE datacenter = 3 AND worker_id = $w}),
	'f', 'the coordination database frees it');

$node->stop;
done_testing();
