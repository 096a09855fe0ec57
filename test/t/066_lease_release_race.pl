# Giving a worker id on lease back must not meet a new claim of the same
# server.  When the lease renewer is terminated with
# snowid.release_on_shutdown on, it stops issuing with the id, then runs the
# release script; a backend that needed an id in between used to claim
# again, take the "keep" path (Redis still listed this server) and get the
# id with a new fence, which the release then lowered and freed, while this
# server went on issuing with it.  Shown deterministically: the store holds
# the release (Redis: CLIENT PAUSE WRITE; a coordination database: its
# datacenters table locked), and a backend asks for an id meanwhile.  Now
# no claim starts until the release has ended (the backend waits, and opens
# no connection to the store), and then claims afresh above the fence the
# release left.
#
# And a release (or renewal) is tied to the claim it is of, by the token
# that claim left in the lease: one that names another changes nothing.
#
# The test runs against either store (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

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

my $dc = 4;
my $coord = SnowidCoord->new;
my $node = $coord->new_node('s',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.worker_bits' => 2,
		'snowid.worker_lease' => '60s',
		'snowid.release_on_shutdown' => 'on',
		# a loaded machine may take seconds between the pause and its end
		'snowid.coordinator_timeout_ms' => 15000
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
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

# -- a release held by the store, and a backend that needs an id ---------

# The connection of the claim just made may take a moment to go.
wait_for_clients(0);
is($coord->clients, 0, 'no connection to the store between renewals');
ok($coord->hold_writes, 'the store holds writes');
my $worker = SnowidLease::lease_worker_pid($node);
kill 'TERM', $worker or die "could not signal the lease renewer";
wait_for_clients(1);
is($coord->clients, 1,
	'the terminated lease renewer sends its release, which the store holds');

my $session = SnowidTest::start_psql($node, 'SELECT snowid_next()');
my $pid = SnowidTest::pid_of($node,
	q{query = 'SELECT snowid_next()' AND wait_event_type = 'Extension'},
	'the backend does not wait');
if ($node->safe_psql('postgres', 'SHOW server_version_num') >= 170000)
{
	is(SnowidTest::wait_event_of($node, "pid = $pid",
			'Extension/SnowidWorkerClaim'),
		'Extension/SnowidWorkerClaim',
		'the backend waits for the release to end, not on the store');
}
# give a claim that would start the time to connect
Time::HiRes::sleep(1);
is($coord->clients, 1,
	'the backend opens no connection to the store while the release is under way');

ok($coord->release_writes, 'the store lets the release through');
is($session->finish, 0, 'the backend then gets its id');
my $id = $session->stdout;
chomp $id;
cmp_ok($id, '>', $ids[-1], 'above every id before');
my ($w2, $last_ms, $fence_ms) = split /\|/, $node->safe_psql('postgres', q{
	SELECT worker_id, (extract(epoch FROM last_time) * 1000)::bigint,
		(extract(epoch FROM fence_time) * 1000)::bigint
	FROM snowid_status()});
is($coord->owners($dc)->{$w2}, $me,
	'the store lists this server as the holder of the worker id it issues with');
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
