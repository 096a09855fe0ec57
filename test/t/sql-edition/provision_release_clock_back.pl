# The provisioning script of doc/managed.md, its release when the
# database's clock steps back: release notes when it stopped the database
# (clock_timestamp() after the UPDATE that sets the worker id NULL) and
# waits for the transactions whose xact_start lies before that.  Both are
# readings of the wall clock: a transaction begun before the UPDATE, read
# after the clock stepped back (an NTP step), has an xact_start after the
# time noted, and release frees the worker id at once while it is open.
# A transaction open before a change goes on under the old row (a
# REPEATABLE READ one reads the row of its snapshot: doc/managed.md, "When
# a change takes effect"), and the next claim is granted the worker id
# once its fence has passed.
#
# - db1 claims a worker id (5/5/4); an application's REPEATABLE READ
#   transaction begins and goes on issuing batches.
# - The database's clock steps back 2 s; release runs: it should wait for
#   that transaction (it is still open when release frees the worker id?).
# - db2, on another server, claims once the fence has passed, and issues
#   beside the application's transaction: no id of one should equal an
#   id of the other.
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
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('release_clock_back'));

my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $coord_url = $cnode->connstr('coord');

my %node;
for my $name (qw(one two))
{
	$node{$name} = PostgreSQL::Test::Cluster->new("release_clock_$name");
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

# the application's transaction: begun now, issuing batches for a while
my ($aout, $aerr) = ('', '');
my $app = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node{one}->connstr('db') . ' user=app', '-c', q{
	BEGIN ISOLATION LEVEL REPEATABLE READ;
	INSERT INTO t (id, n) SELECT snowid_next_batch(10), 0;
	DO $$
	BEGIN
		FOR i IN 1 .. 1500 LOOP
			BEGIN
				INSERT INTO t (id, n) SELECT snowid_next_batch(40), i;
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				NULL;
			END;
			PERFORM pg_sleep(0.01);
		END LOOP;
	END $$;
	COMMIT} ],
	'<', \undef, '>', \$aout, '2>', \$aerr);
$node{one}->poll_query_until('db', q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE '%snowid_next_batch(40)%'
				   AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND state = 'active')})
  or die 'the application\'s transaction did not start';

# an NTP step back of the database's clock, then release
$clock->set('-2');
($rc, $out, $err) = run_script('one', 'release', 120);
my $open = $node{one}->safe_psql('db', q{
	SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%snowid_next_batch(40)%'
		AND pid <> pg_backend_pid() AND state = 'active'});
note("release: exit code $rc, $out $err");
is($open, '0', 'release frees the worker id only once the transaction begun before it has ended');

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
		FOR i IN 1 .. 300 LOOP
			INSERT INTO t (id, n) SELECT snowid_next_batch(40), i;
			PERFORM pg_sleep(0.01);
		END LOOP;
	END $$});
note("db2's ids: $err") if $rc;
$app->finish;

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
