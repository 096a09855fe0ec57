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

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidPgCoord;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('release_row_locked'));
my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my $coord = SnowidPgCoord->new;
my $coord_url = $coord->node->connstr('coord');

my $node = PostgreSQL::Test::Cluster->new('release_row_locked');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	GRANT pg_read_all_stats TO app;
	CREATE DATABASE db1 OWNER app;
});
my ($rc, $out, $err) = psql_as($node->connstr('db1') . ' user=app', 'CREATE EXTENSION snowid_sql');
die "CREATE EXTENSION: $err" if $rc;

sub run_script
{
	my ($command, $limit) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV,
		DB_URL => $node->connstr('db1') . ' user=app',
		COORD_URL => "$coord_url user=coord_fleet",
		ADMIN_URL => "$coord_url user=coord_admin",
		DATACENTER => 3, HOLDER => 'sql db1', STATE_DIR => "$dir/state-db1",
		INTERVAL_MS => 1000, MARGIN_MS => 1000, RELEASE_WAIT_S => 2);
	my $h = IPC::Run::start([ 'sh', $script, $command ], '<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($limit));
	my $ok = eval { $h->finish };
	if (!defined $ok)
	{
		$h->kill_kill;
		return (-1, $out, "$err(still running after $limit s)");
	}
	chomp $out;
	return ($ok ? 0 : $h->result, $out, $err);
}

($rc, $out, $err) = run_script('claim', 120);
like($out, qr/^worker id \d+ of datacenter 3$/, "claim: db1 takes a worker id ($out)") or diag($err);

my $open = $node->background_psql('db1', connstr => $node->connstr('db1') . ' user=app');
$open->query_safe('BEGIN; UPDATE snowid_config SET max_wait_ms = 3000');

($rc, $out, $err) = run_script('release', 30);
isnt($rc, -1, "release ends within 30 s (exit code $rc: $out $err)");

$open->query_safe('ROLLBACK');
$open->quit;
$node->stop;
done_testing();
