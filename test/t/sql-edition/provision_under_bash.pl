# The provisioning script of doc/managed.md under bash, /bin/sh on Red
# Hat, Fedora and Amazon Linux hosts: read_db takes the database's
# worker_bits into shell arithmetic, max=$(( (1 << $1) - 1 )), and bash
# expands an array subscript there, command substitutions included.  The
# owner of the database, whose login the script uses (DB_URL), resolves
# the unqualified snowid_config of read_db's query: a view of that name in
# a schema of its own name (first in the default search_path) hands the
# script a worker_bits of any text without blanks, and the next assert
# (cron, every INTERVAL_MS) runs the owner's command on the host that
# keeps every holder's secret and reaches the coordination database as
# its administrator (test 180 is the same reading sent on as SQL).
#
# - db1 claims a worker id; its owner plants the view, whose worker_bits
#   is HOME[$(cp${IFS}<STATE_DIR/secret>${IFS}<a file of its choosing>)].
# - assert runs under bash: it should run no command of the owner's (the
#   file is not made, the holder's secret is not copied).
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
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('provision_bash'));

my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $coord_url = $cnode->connstr('coord');

my $node = PostgreSQL::Test::Cluster->new('provision_bash');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE db1 OWNER app;
});
for my $db (qw(db1))
{
	my ($rc, $out, $err) = psql_as($node->connstr($db) . ' user=app', 'CREATE EXTENSION snowid_sql');
	die "CREATE EXTENSION: $err" if $rc;
}

sub run_script
{
	my ($db, $command, $limit) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV,
		DB_URL => $node->connstr($db) . ' user=app',
		COORD_URL => "$coord_url user=coord_fleet",
		ADMIN_URL => "$coord_url user=coord_admin",
		DATACENTER => 3, HOLDER => "sql $db", STATE_DIR => "$dir/state-$db",
		INTERVAL_MS => 60000, MARGIN_MS => 1000);
	my $h = IPC::Run::start([ 'bash', $script, $command ], '<', \undef, '>', \$out, '2>', \$err,
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

my ($rc, $out, $err) = run_script('db1', 'claim', 120);
like($out, qr/^worker id \d+ of datacenter 3$/, "claim: db1 takes a worker id ($out)") or diag($err);

# the owner of db1 plants its own snowid_config, first in its search_path
my $copied = "$dir/copied";
($rc, $out, $err) = psql_as($node->connstr('db1') . ' user=app', qq{
	CREATE SCHEMA app;
	CREATE VIEW app.snowid_config AS
	SELECT 'HOME[\$(cp\${IFS}$dir/state-db1/secret\${IFS}$copied)]'::text AS worker_bits,
		c.worker_id, c.max_drift_ms
	FROM public.snowid_config c});
is($rc, 0, 'the owner of db1 makes a view snowid_config in a schema of its name') or diag($err);

($rc, $out, $err) = run_script('db1', 'assert', 120);
note("assert: exit code $rc, $out $err");
ok(!-e $copied, 'assert, under bash, runs no command of the database owner\'s (the holder\'s secret is not copied)');

$node->stop;
done_testing();
