# Worker ids on lease (snowid.worker_lease): taken at start by the lease
# worker, renewed in the background with a fence in the coordinator (Redis,
# or a coordination database: SnowidCoord), given back with
# snowid_release_worker() or at a clean shutdown (snowid.release_on_shutdown),
# parked at a clean stop (its fence lowered, the lease kept), taken back
# after a restart or a crash within the lease, above the fence the
# coordinator has for it then (or, where the server cannot start that far ahead within its
# drift budget and snowid.max_wait_ms, another id is taken); next to
# permanent claims in the same datacenter;
# the settings that refuse to start; and the coordinator traffic a fleet
# costs.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $dc = 1;
# No lease here needs to run out: a lease of 6 s, renewed every 2 s, holds
# on a busy machine (a renewal may come up to 4 s late), so that the
# servers below keep their ids for as long as the test counts on them.
my $lease_ms = 6000;
my $coord = SnowidCoord->new;
my $ledger = SnowidTest::Ledger->new;
my $by_worker = SnowidLease::ByWorker->new($ledger);
# A drift budget above the lease: a server restarting within its lease can
# start above its own fence at once.  A call to the coordinator may take up
# to 4 s (a busy machine, a new connection to a coordination database for
# every renewal): the renewal that does still comes within the lease.
my %lease = (
	'snowid.datacenter_id' => $dc,
	'snowid.worker_bits' => 3,
	'snowid.max_drift_ms' => 10000,
	'snowid.coordinator_timeout_ms' => 4000,
	'snowid.worker_lease' => "${lease_ms}ms");

# The Unix ms of an id
sub id_ms
{
	my ($node, $id) = @_;

	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (snowid_decode($id)).ts) * 1000)::bigint");
}

my $a = SnowidLease::start_node($coord, 'a', \%lease);
is(SnowidLease::wait_lease($a), 0, 'the lease renewer took worker id 0 at start');
is($coord->owners($dc)->{0}, 'lease ' . SnowidRedis::identity($a, $dc),
	'the coordinator names the server as the lease holder');
cmp_ok(SnowidLease::fence($coord, $dc, 0), '>', SnowidLease::now_ms(),
	'the fence lies ahead of the clock');
$by_worker->take($a, 0, 200, 'a');

# Renewals in the background, and what snowid_status() shows of them.
$a->poll_query_until('postgres',
	'SELECT renewals >= 3 FROM snowid_status()')
  or die 'no renewals';
my $status = $a->safe_psql('postgres', q{
	SELECT lease_expires_at > now(), fence_time > last_time,
		failed_renewals = 0, worker_source
	FROM snowid_status()});
is($status, 't|t|t|lease',
	'status: the lease runs out in the future, the fence lies past the last id, no failed renewals');
my $fence = SnowidLease::fence($coord, $dc, 0);
my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
while (SnowidLease::fence($coord, $dc, 0) <= $fence
	&& Time::HiRes::time() < $deadline)
{
	Time::HiRes::sleep(0.1);
}
cmp_ok(SnowidLease::fence($coord, $dc, 0), '>', $fence,
	'renewals move the fence ahead');
$by_worker->take($a, 0, 200, 'a after renewals');

# A second server takes the next free id.
my $b = SnowidLease::start_node($coord, 'b', \%lease);
is(SnowidLease::wait_lease($b), 1, 'a second server takes worker id 1');
$by_worker->take($b, 1, 100, 'b');

# A clean stop parks the lease: the fence lowered to just past the last id,
# the lease kept.  A restart within it gets the same id back above that
# fence, without waiting (a copy of the data directory restored in its
# place, with an older mark, starts above the fence too).
my $fence_before = SnowidLease::fence($coord, $dc, 0);
my $a_name = SnowidRedis::identity($a, $dc);
$a->stop;
my $parked = SnowidLease::fence($coord, $dc, 0);
cmp_ok($parked, '<', $fence_before,
	'a clean stop parks the lease: its fence lowered to just past the last id');
is($coord->owners($dc)->{0}, "lease $a_name", 'and the lease kept');
$a->start;
is(SnowidLease::wait_lease($a), 0, 'after a clean restart: worker id 0 again');
my @after = $by_worker->take($a, 0, 100, 'a after a restart');
cmp_ok(id_ms($a, $after[0]), '>=', $parked,
	'after a clean restart: the first id lies at or above the parked fence');

# A crash: the same id, above the fence of the last renewal, which lies
# within the drift budget.
$fence_before = SnowidLease::fence($coord, $dc, 0);
$a->stop('immediate');
$a->start;
is(SnowidLease::wait_lease($a), 0, 'after a crash: worker id 0 again');
@after = $by_worker->take($a, 0, 100, 'a after a crash');
cmp_ok(id_ms($a, $after[0]), '>=', $fence_before,
	'after a crash: the first id lies at or above the fence the id had');

# Giving the id back: at once, and no ids until a restart.
my $err = SnowidTest::psql_error($a, q{
	CREATE ROLE plain LOGIN;
	SET ROLE plain;
	SELECT snowid_release_worker()});
like($err, qr/42501/, 'snowid_release_worker() is for superusers only');
my $last_of_a = $ledger->max;
is($a->safe_psql('postgres', 'SELECT snowid_release_worker()'), 0,
	'snowid_release_worker() gives worker id 0 back');
ok(!exists $coord->owners($dc)->{0}, 'the coordinator no longer has worker id 0 held');
ok(!defined SnowidLease::hget($coord, $dc, 'leases', 0), 'nor leased');
my $final = SnowidLease::fence($coord, $dc, 0);
cmp_ok($final, '>', 0, 'the fence of worker id 0 is kept');
cmp_ok($final, '<=', id_ms($a, $by_worker->{max}{0}) + 1,
	'and lowered to just past the last id issued');
$err = SnowidTest::psql_error($a, 'SELECT snowid_next()');
like($err, qr/55000.*snowid has released its worker id/s,
	'after the release: no ids, with a clear error');
$err = SnowidTest::psql_error($a, 'SELECT snowid_release_worker()');
like($err, qr/55000.*holds no worker id/s, 'a second release: a clear error');
is($a->safe_psql('postgres',
		'SELECT worker_id IS NULL AND lease_expires_at IS NULL FROM snowid_status()'),
	't', 'status: no worker id, no lease');

# The next server takes the id given back, and its ids lie above a's.
my $c = SnowidLease::start_node($coord, 'c', \%lease);
is(SnowidLease::wait_lease($c), 0, 'a new server takes the released worker id 0 at once');
$by_worker->take($c, 0, 100, 'c on the worker id a gave back');

# A clean shutdown with snowid.release_on_shutdown gives the id back too.
SnowidTest::reload_conf($b, 'snowid.release_on_shutdown' => 'on');
$b->stop;
ok(!exists $coord->owners($dc)->{1}, 'release_on_shutdown: a clean stop gives worker id 1 back');
$b->start;
is(SnowidLease::wait_lease($b), 1, 'and the next start takes it again');
$by_worker->take($b, 1, 100, 'b after its restart');

# A stop right after a reload gives the id back as reloaded: the renewer,
# held still while both signals reach it, finds both at once.
SnowidTest::reload_conf($b, 'snowid.release_on_shutdown' => 'off');
my $renewer = $b->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowid lease renewer'});
kill 'STOP', $renewer;
SnowidTest::reload_conf($b, 'snowid.release_on_shutdown' => 'on');
# let go a second into the stop, once the postmaster's SIGTERM is on its
# way (were it later, the renewer would take the reload first anyway)
my $let_go = IPC::Run::start([ 'sh', '-c', "sleep 1; kill -CONT $renewer" ]);
$b->stop;
$let_go->finish;
ok(!exists $coord->owners($dc)->{1},
	'a stop right after a reload of release_on_shutdown gives worker id 1 back');
$b->start;
is(SnowidLease::wait_lease($b), 1, 'and the next start takes it again');

# A permanent claim in the same datacenter: never taken on lease, never
# expires.
my $p = SnowidLease::start_node($coord, 'p', { 'snowid.datacenter_id' => $dc, 'snowid.worker_bits' => 3 });
$ledger->collect($p, 10);
is(SnowidRedis::worker($p), '2|' . $coord->source,
	'a permanent claim takes the next id not held');
# d holds its lease for a minute: its restart further down must fall within
# the lease however slow the machine.
my $d_lease_ms = 60000;
my $d = SnowidLease::start_node($coord, 'd', { %lease, 'snowid.worker_lease' => "${d_lease_ms}ms" });
is(SnowidLease::wait_lease($d), 3, 'a lease skips the permanent claim');

# Coordinator traffic: one function call per server per third of a lease,
# counted over a lease and a half.  The bound is twice that, so that a slow
# machine's late renewals cannot reach it while a renewal storm still does;
# the rate measured is logged.  A lease and a half on, the permanent claim
# still holds its id.
my $before = $coord->command_calls->{fcall} // 0;
my $t0 = Time::HiRes::time();
Time::HiRes::sleep(1.5 * $lease_ms / 1000);
my $calls = ($coord->command_calls->{fcall} // 0) - $before;
my $per_s = $calls / (Time::HiRes::time() - $t0);
# b, c and d renew (a gave its id back, p holds one for good)
my $expected = 0;
$expected += 3 / ($_ / 1000) for $lease_ms, $lease_ms, $d_lease_ms;
note(sprintf('coordinator traffic: %.2f calls/s from 3 servers (3 / lease each = %.2f)',
		$per_s, $expected));
cmp_ok($per_s, '<=', $expected * 2,
	'the coordinator sees about 3 / lease calls a second per server, at most twice that');
is(SnowidRedis::identity($p, $dc), $coord->owners($dc)->{2},
	'the permanent claim does not run out');

# A server whose drift budget and snowid.max_wait_ms are below its lease
# cannot start above the fence of its last renewal after a crash: it takes
# the next free id instead (and its old id, free again once its lease runs
# out, keeps its fence).  After a clean stop it parked its lease, and takes
# it back (test/t/leases/restart_keeps_lease.pl restarts one 20 times).
SnowidTest::set_conf($d, 'snowid.max_drift_ms' => 0, 'snowid.max_wait_ms' => 0);
$d->restart;
is(SnowidLease::wait_lease($d), 3,
	'a clean restart with the fence of its renewals past its budgets: its own worker id again');
$by_worker->take($d, 3, 100, 'd after a clean restart');
my $fence3 = SnowidLease::fence($coord, $dc, 3);
$d->stop('immediate');
$d->start;
is(SnowidLease::wait_lease($d), 4,
	'after a crash, the fence past its budgets: the next free worker id');
cmp_ok(SnowidLease::fence($coord, $dc, 3), '>=', $fence3, 'the old id keeps its fence');
# its mark, written a step ahead, lies up to 1 s past its clock after the
# crash: callers wait for the clock again
SnowidTest::reload_conf($d, 'snowid.max_wait_ms' => 2000);
$by_worker->take($d, 4, 100, 'd on its new worker id');
$_->stop for $b, $c, $d, $p;

$by_worker->ok_all('every holder issued ids above the holders of its worker id before it');
$ledger->no_duplicates;

# Settings that cannot work refuse to start.
my $bad = SnowidTest::new_node('bad', { 'snowid.worker_lease' => '10s' });
SnowidTest::fails_to_start($bad, 'a lease without a coordinator',
	qr/snowid.worker_lease needs snowid.coordinator_url/);
SnowidTest::set_conf($bad, $coord->setting => $coord->url,
	'snowid.worker_id' => 3);
SnowidTest::fails_to_start($bad, 'a lease with a configured worker id',
	qr/snowid.worker_lease cannot be combined with snowid.worker_id/);
SnowidTest::set_conf($bad, 'snowid.worker_id' => -1,
	'snowid.worker_lease' => '50ms');
SnowidTest::fails_to_start($bad, 'a lease under 100 ms',
	qr/invalid value for parameter "snowid.worker_lease"/);

done_testing();
