# Giving a worker id on lease back must not meet a new claim of the same
# server.  The lease renewer gave its lease back when it was terminated
# with snowid.release_on_shutdown on; a backend that needed an id in
# between used to claim again, take the "keep" path (Redis still listed
# this server) and get the id with a new fence, which the release then
# lowered and freed, while this server went on issuing with it.  Since
# 1.3 only the postmaster's shutdown ends the renewer for good and gives
# the lease back: a renewer an operator terminates comes back a second
# later and keeps the lease (test/t/coordinator/killed_workers.pl), so no release
# runs while backends claim.  Shown with the store holding writes (Redis:
# CLIENT PAUSE WRITE; a coordination database: its datacenters table
# locked): the terminated renewer releases nothing, and a backend issues
# at once with the same worker id, opening no connection to the store.
#
# And a release (or renewal) is tied to the claim it is of, by the token
# that claim left in the lease: one that names another changes nothing.
#
# The test runs against either store (SnowidCoord).
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

my $dc = 4;
my $coord = SnowidCoord::start();
my $node = SnowidLease::start_node($coord, 's',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.worker_bits' => 2,
		'snowid.worker_lease' => '60s',
		'snowid.release_on_shutdown' => 'on',
		# a loaded machine may take seconds between the pause and its end
		'snowid.coordinator_timeout_ms' => 15000
	});
my $me = 'lease ' . SnowidRedis::identity($node, $dc);
my $w = SnowidLease::wait_lease($node);
my @ids = SnowidTest::next_ids($node, 100);

# Waits until the store counts n connections of snowid servers, for at most
# the usual timeout.
sub wait_for_clients
{
	my ($n) = @_;
	my $deadline =
	  Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;

	until ($coord->clients == $n || Time::HiRes::time() > $deadline)
	{
		Time::HiRes::sleep(0.05);
	}
	return;
}

# -- a terminated renewer releases nothing, and a backend needs no store -

# The connection of the claim just made may take a moment to go.
wait_for_clients(0);
is($coord->clients, 0, 'no connection to the store between renewals');
ok($coord->hold_writes, 'the store holds writes');
my $worker = SnowidLease::lease_worker_pid($node);
kill 'TERM', $worker or die "could not signal the lease renewer";

my @more = SnowidTest::next_ids($node, 10);
cmp_ok($more[0], '>', $ids[-1],
	'a backend gets ids at once while the store holds writes, above every id before');
is(SnowidRedis::worker($node), "$w|lease",
	'with the worker id of its lease: the terminated renewer released nothing');

ok($coord->release_writes, 'the store lets writes through');
my $w2 = $w;
my ($last_ms, $fence_ms) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (extract(epoch FROM last_time) * 1000)::bigint,
		(extract(epoch FROM fence_time) * 1000)::bigint
	FROM snowid_status()});
is($coord->owners($dc)->{$w2}, $me,
	'the store lists this server as the holder of the worker id it issues with');
my $deadline_fence = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
until (SnowidLease::fence($coord, $dc, $w2) > $last_ms
	  || Time::HiRes::time() > $deadline_fence)
{
	Time::HiRes::sleep(0.1);
}
cmp_ok(SnowidLease::fence($coord, $dc, $w2), '>', $last_ms,
	'and the fence in the store lies past its last id');

# The lease renewer comes back (a second after it exited) and finds the
# server holding the id: nothing is lost.
my $offset = -s $node->logfile;
my $renewer;
my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
while (Time::HiRes::time() < $deadline)
{
	$renewer = eval { SnowidLease::lease_worker_pid($node) };
	last if defined $renewer && $renewer != $worker;
	Time::HiRes::sleep(0.1);
}
isnt($renewer, $worker, 'a new lease renewer runs');
@ids = SnowidTest::next_ids($node, 10);
is(SnowidRedis::worker($node), "$w2|lease", 'the server keeps its worker id');
is($coord->owners($dc)->{$w2}, $me, 'and the store still lists it');
ok(!$node->log_contains(qr/lost worker id/, $offset), 'nothing says it was lost');

# -- the token -----------------------------------------------------------

# Another claim's token in the lease: the release of this server's claim
# neither lowers the fence nor frees the id.
my $lease = SnowidLease::hget($coord, $dc, 'leases', $w2);
like($lease, qr/^\d+ \d+ [0-9a-f]{16}$/, 'a lease names the token of its claim');
(my $other = $lease) =~ s/[0-9a-f]{16}$/0123456789abcdef/;
$other =~ s/0123456789abcdef$/fedcba9876543210/ if $other eq $lease;
$coord->set_field($dc, 'leases', $w2, $other);
my $fence_before = SnowidLease::fence($coord, $dc, $w2);
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_release_worker()');
like($err, qr/no longer this server's lease|holds no worker id/,
	'a release under another claim\'s token is refused');
is($coord->owners($dc)->{$w2}, $me, 'the id stays listed');
cmp_ok(SnowidLease::fence($coord, $dc, $w2), '>=', $fence_before,
	'and its fence is not lowered');
is(SnowidLease::hget($coord, $dc, 'leases', $w2), $other, 'nor the lease changed');

done_testing();
