# Reuse whatever the clocks say: a worker id passes from holder to holder
# while each server's clock is skewed (SnowidTest::Clock), the next holder's clock
# 5 s behind the last holder's, then 5 s ahead, then 5 s behind again with a
# drift budget too small to run ahead (it waits, or fails clearly, until
# its clock reaches the fence).  Each holder dies without giving the id back
# (a crash), so the next takes it only when the lease runs out by the
# coordinator's clock (Redis, or a coordination database: SnowidCoord).  No
# duplicate, and each holder's ids lie above the last holder's.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();
SnowidTest::need_clock();

my $dc = 3;
my $lease_ms = 5000;
my $coord = SnowidCoord->new;
my $ledger = SnowidTest::Ledger->new;
my $by_worker = SnowidLease::ByWorker->new($ledger);

# A started server on lease of the only worker id (worker_bits = 0), with
# its clock offset by the given seconds.
sub skewed_node
{
	my ($name, $offset, %extra) = @_;
	my $node = $coord->new_node(
		$name,
		{
			'snowid.datacenter_id' => $dc,
			'snowid.worker_bits' => 0,
			'snowid.worker_lease' => "${lease_ms}ms",
			'snowid.max_drift_ms' => 10000,
			%extra
		});

	SnowidLease::start_skewed($node, $offset);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

# Waits until a server on lease issues ids, and adds those it issued
# meanwhile; then until its lease has been renewed once, which moves the
# fence a lease past the server's clock.  (Under libfaketime, used before,
# the lease renewer of 15 kept the real clock, and its claim set the fence
# a lease past that.)
sub wait_ids
{
	my ($node) = @_;
	my $deadline =
	  Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;

	while (Time::HiRes::time() < $deadline)
	{
		my ($ret, $out) = $node->psql('postgres', 'SELECT snowid_next()');

		if ($ret == 0)
		{
			$by_worker->add(0, $out);
			$node->poll_query_until('postgres',
				'SELECT renewals > 0 FROM snowid_status()')
			  or die $node->name . ' never renewed its lease';
			return;
		}
		Time::HiRes::sleep(0.2);
	}
	die $node->name . ' issues no ids';
}

# The first holder's clock is 5 s ahead.
my $ahead = skewed_node('ahead', '+5');
is(SnowidLease::wait_lease($ahead), 0, 'the server 5 s ahead holds worker id 0');
wait_ids($ahead);
$by_worker->take($ahead, 0, 300, 'holder 5 s ahead');

# The next one's clock is right: 5 s behind the last holder's.  It waits
# for the id, takes it once the lease runs out after the crash, and runs
# ahead of its own clock (within snowid.max_drift_ms) to start above the
# fence.
my $right = skewed_node('right', '+0');
is($right->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowid_status()'),
	't', 'the next server waits for the id');
$ahead->stop('immediate');
is(SnowidLease::wait_lease($right), 0,
	'after the crash and the lease, the server 5 s behind takes worker id 0');
$by_worker->take($right, 0, 300, 'holder 5 s behind the last');

# Then one 5 s ahead of the last holder.
my $ahead2 = skewed_node('ahead2', '+5');
$right->stop('immediate');
is(SnowidLease::wait_lease($ahead2), 0,
	'the server 5 s ahead of the last holder takes worker id 0');
wait_ids($ahead2);
my @last_ids = $by_worker->take($ahead2, 0, 300, 'holder 5 s ahead of the last');

# Then one 5 s behind with the default drift budget: it cannot run ahead
# that far, so it waits and fails clearly until its clock reaches the
# fence; never an id below it.
my $behind = skewed_node('behind', '+0', 'snowid.max_drift_ms' => 1000,
	'snowid.max_wait_ms' => 500);
$ahead2->stop('immediate');
is(SnowidLease::wait_lease($behind), 0,
	'a server 5 s behind with a small drift budget takes worker id 0');
my ($ret, $out, $err) = $behind->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
if ($ret == 0)
{
	# its clock had come within the drift budget and snowid.max_wait_ms of
	# the fence by the time it took the id (a slow machine)
	cmp_ok($out, '>', $last_ids[-1],
		'its first call waited for its clock: its id lies above the last holder\'s');
	$by_worker->add(0, $out);
}
else
{
	like($err, qr/55000.*the system clock is \d+ ms behind the snowid generator/s,
		'its first call fails clearly: its clock is behind the fence');
}
$behind->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM snowid_status() WHERE drift_ms > 900})
  or die 'the clock never caught up';
my $taken = 0;
for (1 .. 100)
{
	my ($r, $o) = $behind->psql('postgres', 'SELECT snowid_next()');
	next unless $r == 0;
	$by_worker->add(0, $o);
	$taken++;
	last if $taken >= 20;
	Time::HiRes::sleep(0.2);
}
cmp_ok($taken, '>', 0, 'once its clock reaches the fence it issues ids');

$by_worker->ok_all('every holder issued ids above the last holder\'s');
$ledger->no_duplicates;

done_testing();
