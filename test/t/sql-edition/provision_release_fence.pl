# The provisioning script of doc/managed.md frees a worker id with a fence
# of the database's max_drift_ms plus MARGIN_MS past the coordination
# server's clock (release: free(..., $drift + $MARGIN_MS + 1)), not past
# where the database's generator is.  A database whose clock stepped
# forward and back (an NTP step corrected) has issued ids as far ahead as
# the step, beyond max_drift_ms: read_db even reads that (usable, its
# generator if ahead), but release does not pass it on, and the next claim
# is granted the worker id below those ids.
#
# - db1 claims a worker id (5/5/4); its server's clock steps 10 s forward,
#   db1 issues batches for 2 s, the clock steps back; release runs (no
#   transaction open).
# - db2, on another server, claims once the fence has passed, and issues
#   for 12 s: no id of one should equal an id of the other.
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

SnowidTest::need_clock();
my $clock = SnowidTest::Clock->new;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('release_ahead'));

my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $coord_url = $cnode->connstr('coord');

my %node;
for my $name (qw(one two))
{
	$node{$name} = PostgreSQL::Test::Cluster->new("release_ahead_$name");
	$node{$name}->init;
	if ($name eq 'one')
	{
		$clock->start_node($node{$name});
	}
	else
	{
		$node{$name}->start;
	}
	$node{$name}->safe_psql(
		'postgres', q{
		CREATE ROLE app LOGIN;
		GRANT pg_read_all_stats TO app;
		CREATE DATABASE db OWNER app;
	});
	my ($rc, $out, $err) = psql_as($node{$name}->connstr('db') . ' user=app', q{
		CREATE EXTENSION snowid_sql;
		UPDATE snowid_config SET sequence_bits = 4;
		CREATE TABLE t (id bigint, n int)});
	die "CREATE EXTENSION: $err" if $rc;
}

# The script for the database of a node: (exit code, stdout, stderr),
# given at most $limit seconds
sub run_script
{
	my ($name, $command, $limit) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV,
		DB_URL => $node{$name}->connstr('db') . ' user=app',
		COORD_URL => "$coord_url user=coord_fleet",
		ADMIN_URL => "$coord_url user=coord_admin",
		DATACENTER => 3, HOLDER => "sql $name", STATE_DIR => "$dir/state-$name",
		INTERVAL_MS => 60000, MARGIN_MS => 1000, RELEASE_WAIT_S => 60);
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

my ($rc, $out, $err) = run_script('one', 'claim', 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);

# a step forward: db1 issues 10 s ahead for 2 s, then the step is undone
$clock->set('+10');
($rc, $out, $err) = psql_as($node{one}->connstr('db') . ' user=app', q{
	DO $$
	DECLARE
		until timestamptz := clock_timestamp() + interval '2 s';
	BEGIN
		WHILE clock_timestamp() < until LOOP
			INSERT INTO t (id, n) SELECT snowid_next_batch(40), 1;
			PERFORM pg_sleep(0.005);
		END LOOP;
	END $$});
is($rc, 0, 'db1 issues with its clock 10 s ahead') or diag($err);
$clock->set('+0');
($rc, $out, $err) = run_script('one', 'release', 120);
is($rc, 0, "release frees db1's worker id ($out)") or diag($err);

# db2 claims once the fence has passed, and issues beside it
$cnode->poll_query_until('coord', qq{
	SELECT fence_ms < floor(extract(epoch FROM clock_timestamp()) * 1000)
	FROM snowid_coordinator.workers WHERE datacenter = 3 AND worker_id = $w})
  or diag('the freed worker id\'s fence did not pass');
($rc, $out, $err) = run_script('two', 'claim', 120);
note("claim for db2: exit code $rc, $out $err");
($rc, $out, $err) = psql_as($node{two}->connstr('db') . ' user=app', q{
	DO $$
	BEGIN
		FOR i IN 1 .. 100000 LOOP
			INSERT INTO t (id, n) SELECT snowid_next_batch(40), i;
			PERFORM pg_sleep(0.005);
			EXIT WHEN clock_timestamp() > statement_timestamp() + interval '12 s';
		END LOOP;
	END $$});
note("db2's ids: $err") if $rc;

my %ids;
my $total = 0;
for my $name (qw(one two))
{
	my @got = split /\n/, $node{$name}->safe_psql('db', 'SELECT id FROM t');
	$total += @got;
	$ids{$_}++ for @got;
}
my $twice = grep { $ids{$_} > 1 } keys %ids;
is($twice, 0, "no id of db1 equals one of db2 ($twice of $total ids twice)");

$_->stop for values %node;
done_testing();
