# A coordination database that fails over: a primary with a synchronous
# standby, and snowid servers issuing ids all the time, on lease and for
# good, while the primary is stopped, started again, then killed and the
# standby promoted.  The URL names both hosts with
# target_session_attrs=read-write, as doc/coordinator.md says.  Every id is
# kept: none repeats, and after the failover each lease's fence in the new
# primary still lies past every id its holder issued.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $dc = 6;
my $lease_ms = 3000;

# The coordination database, with a synchronous standby
my $db = SnowidCoordDb->new('coord_primary', allows_streaming => 1);
$db->grant;
my $primary = $db->node;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('coord_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf',
	"cluster_name = 'coord_standby'\n");
$standby->start;
$primary->append_conf('postgresql.conf', qq{
synchronous_standby_names = 'coord_standby'
synchronous_commit = on
});
$primary->reload;
$primary->poll_query_until('postgres', q{
	SELECT sync_state = 'sync' FROM pg_stat_replication})
  or die 'the standby never became synchronous';

my $url = 'postgresql:///coord?host=' . $primary->host . ',' . $standby->host
  . '&port=' . $primary->port . ',' . $standby->port
  . '&user=coord_fleet&target_session_attrs=read-write';

my %lease = (
	'snowid.datacenter_id' => $dc,
	'snowid.worker_lease' => "${lease_ms}ms",
	'snowid.coordinator_timeout_ms' => 1000,
	'snowid.max_wait_ms' => 5000,
	# the failover starts a quiet period: a second's clock margin keeps the
	# wait short
	'snowid.clock_margin' => '1s');
my @nodes;
for my $name ('l1', 'l2')
{
	my $n = SnowidTest::new_server($name,
		{ 'snowid.coordinator_url' => $url, %lease });
	push @nodes, $n;
}
my $perm = SnowidTest::new_server('perm',
	{ 'snowid.coordinator_url' => $url, 'snowid.datacenter_id' => $dc,
	  'snowid.clock_margin' => '1s' });
push @nodes, $perm;
SnowidLease::wait_lease($_) for @nodes[ 0 .. 1 ];

# Clients that issue ids all the time, into a table of each server
for my $n (@nodes)
{
	$n->safe_psql('postgres', 'CREATE TABLE got (id bigint, at timestamptz)');
}
my @clients = map {
	SnowidTest::start_psql($_, q{
		DO $$
		BEGIN
			FOR i IN 1 .. 100000 LOOP
				BEGIN
					INSERT INTO got SELECT snowid_next(), clock_timestamp()
					FROM generate_series(1, 50);
				EXCEPTION WHEN others THEN
					PERFORM pg_sleep(0.05);
				END;
				COMMIT;
				PERFORM pg_sleep(0.005);
			END LOOP;
		END $$})
} @nodes;

sub issued
{
	my ($n) = @_;
	return $n->safe_psql('postgres', 'SELECT count(*) FROM got');
}

sub wait_more
{
	my ($what) = @_;
	my %before = map { $_->name => issued($_) } @nodes;

	for my $n (@nodes)
	{
		$n->poll_query_until('postgres',
			"SELECT count(*) > $before{$n->name} + 500 FROM got")
		  or die $n->name . " issued no more ids $what";
	}
	pass("every server issues ids $what");
	return;
}

wait_more('at first');

# The primary stopped and started: renewals fail meanwhile, then go on.
$primary->stop('fast');
usleep(1_500_000);
$primary->start;
$primary->poll_query_until('postgres', q{
	SELECT sync_state = 'sync' FROM pg_stat_replication})
  or die 'the standby never came back';
wait_more('after the coordination database restarted');

# The failover: the primary killed, the standby promoted.
# The failover starts with each lease held (a holder whose lease ran out
# while the coordination database restarted holds no id until it has
# claimed again).
SnowidLease::wait_lease($_) for @nodes[ 0 .. 1 ];
my $t0 = time;
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
wait_more('after the failover');
for my $n (@nodes[ 0 .. 1 ])
{
	my $w = SnowidLease::wait_lease($n);
	my $f0 = $standby->safe_psql('coord', qq{
		SELECT fence_ms FROM snowid_coordinator.worker_ids
		WHERE datacenter = $dc AND worker_id = $w});
	ok($standby->poll_query_until('coord', qq{
		SELECT fence_ms > $f0 FROM snowid_coordinator.worker_ids
		WHERE datacenter = $dc AND worker_id = $w}),
		$n->name . ': its lease is renewed at the new primary');
}
diag(sprintf('ids flowed again on every server %.1f s after the primary was killed',
	time - $t0));

# The new primary knows every claim and a fence past every id
for my $n (@nodes[ 0 .. 1 ])
{
	my $w = SnowidLease::wait_lease($n);
	my $fence = $standby->safe_psql('coord', qq{
		SELECT fence_ms FROM snowid_coordinator.worker_ids
		WHERE datacenter = $dc AND worker_id = $w});
	my $last = $n->safe_psql('postgres', 'SELECT max(id) FROM got');
	cmp_ok(SnowidLease::id_ms($n, $last), '<', $fence,
		$n->name . ": the new primary's fence of worker id $w lies past its last id");
}
my $holders = $standby->safe_psql('coord', qq{
	SELECT count(*) FROM snowid_coordinator.worker_ids
	WHERE datacenter = $dc AND holder IS NOT NULL});
is($holders, 3, 'the new primary has every holder');

# A new server claims from the new primary, above every fence
my $late = SnowidTest::new_server('late',
	{ 'snowid.coordinator_url' => $url, %lease });
my $lw = SnowidLease::wait_lease($late);
my @holding = map { SnowidLease::worker_id($_) } @nodes;
ok(!grep({ $_ eq $lw } @holding), 'a new server takes an id no one holds');

# Stop the clients; every id once
$_->safe_psql('postgres', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE query LIKE '%INSERT INTO got%' AND pid <> pg_backend_pid()})
  for @nodes;
$_->finish for @clients;
my $ledger = SnowidTest::Ledger->new;
for my $n (@nodes, $late)
{
	$n->safe_psql('postgres', 'CREATE TABLE IF NOT EXISTS got (id bigint)');
	$ledger->add(SnowidTest::query_ids($n, 'SELECT id FROM got'));
}
cmp_ok($ledger->count, '>', 3000, 'thousands of ids issued through the events');
$ledger->no_duplicates('no id repeats through a restart and a failover of the coordination database');
done_testing();
