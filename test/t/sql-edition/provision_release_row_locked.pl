# The provisioning script of doc/managed.md, its release: "It waits at most
# RELEASE_WAIT_S seconds; it notes the worker id and the transactions in
# STATE_DIR/release, so that run again (stopped, or given up waiting) it
# goes on with them".  Its first step, UPDATE snowid_config SET worker_id =
# NULL, has no bound: a transaction that changed the row and stays open (an
# operator's psql, BEGIN; UPDATE snowid_config SET max_wait_ms = ...; gone
# to lunch) keeps release waiting on the row for good, with nothing noted.
#
# - claim: a database takes a worker id;
# - a transaction changes the row of snowid_config and stays open;
# - release, with RELEASE_WAIT_S 2, should end within 30 s (freeing the
#   worker id, or saying to run it again).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidSqlEdition qw(app_url);
use Test::More;

my $coord = SnowidPgCoord->new;
my $script = SnowidSqlEdition::provisioning_script('release_row_locked', $coord->node,
	DATACENTER => 3, INTERVAL_MS => 1000, MARGIN_MS => 1000, RELEASE_WAIT_S => 2);

my $node = SnowidSqlEdition::new_server('release_row_locked', ['app'], ['db1']);
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
SnowidSqlEdition::install($node, 'db1');
$script->databases(db1 => app_url($node, 'db1'));

my ($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
like($out, qr/^worker id \d+ of datacenter 3$/, "claim: db1 takes a worker id ($out)") or diag($err);

my $open = $node->background_psql('db1', connstr => app_url($node, 'db1'));
$open->query_safe('BEGIN; UPDATE snowid_config SET max_wait_ms = 3000');

($rc, $out, $err) = $script->run('release', 'db1', limit => 30);
isnt($rc, -1, "release ends within 30 s (exit code $rc: $out $err)");

$open->query_safe('ROLLBACK');
$open->quit;
$node->stop;
done_testing();
