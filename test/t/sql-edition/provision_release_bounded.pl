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

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidPgCoord;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('release_waits'));

my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $coord_url = $cnode->connstr('coord');

my $node = PostgreSQL::Test::Cluster->new('release_waits');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	GRANT pg_read_all_stats TO app;
	CREATE DATABASE db1 OWNER app;
});
my ($rc, $out, $err) = psql_as($node->connstr('db1') . ' user=app', 'CREATE EXTENSION snowid_sql');
die "CREATE EXTENSION: $err" if $rc;

# The script for the database: (exit code, stdout, stderr), given at most
# $limit seconds
sub run_script
{
	my ($command, $limit) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV,
		DB_URL => $node->connstr('db1') . ' user=app',
		COORD_URL => "$coord_url user=coord_fleet",
		ADMIN_URL => "$coord_url user=coord_admin",
		DATACENTER => 3, HOLDER => 'sql db1', STATE_DIR => "$dir/state-db1",
		INTERVAL_MS => 1000, MARGIN_MS => 1000);
	my $h = IPC::Run::start([ 'sh', $script, $command ], '<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($limit));
	my $ok = eval { $h->finish };
	if (!defined $ok)
	{
		$h->kill_kill;
		chomp $out;
		return (-1, $out, "$err(still running after $limit s)");
	}
	chomp $out;
	return ($ok ? 0 : $h->result, $out, $err);
}

($rc, $out, $err) = run_script('claim', 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);
$node->safe_psql('db1', 'SELECT snowid_next() FROM generate_series(1, 100)');

# An application's transaction, begun before release, which takes an id
# and ends 2 s later
my ($aout, $aerr) = ('', '');
my $app = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('db1') . ' user=app', '-c',
	  'BEGIN; SELECT snowid_next(); SELECT pg_sleep(2); COMMIT' ],
	'<', \undef, '>', \$aout, '2>', \$aerr);
$node->poll_query_until('db1', q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'BEGIN; SELECT snowid_next()%'
				   AND xact_start IS NOT NULL)})
  or die 'the application\'s transaction did not start';

($rc, $out, $err) = run_script('release', 60);
$app->finish;
is($rc, 0, 'release ends once the transaction begun before it has ended') or diag($err);
is($out, "worker id $w of datacenter 3 freed", 'release: db1 gives its worker id back');
# an operator who stopped it runs it again
if ($rc)
{
	($rc, $out, $err) = run_script('release', 60);
	is($out, "worker id $w of datacenter 3 freed", 'release, run again, frees it')
	  or diag("exit code $rc: $err");
}
is( $cnode->safe_psql(
		'coord', qq{SELECT live FROM snowid_coordinator.workers
	WHERE datacenter = 3 AND worker_id = $w}),
	'f', 'the coordination database frees it');

$node->stop;
done_testing();
