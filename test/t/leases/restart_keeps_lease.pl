# A restart keeps its worker id on lease where that is safe.  Before, a
# leased server restarted after a clean stop (its lease not given back) or
# after a crash found its own lease fenced a lease ahead of its clock and
# took another id each time, leaving the old one fenced: in a datacenter
# whose ids are mostly in use, a few rolling restarts ran it out of ids.
#
# Now a clean stop parks the lease (its fence lowered to just past the last
# id, the lease kept), so that a restart takes it back at once; and after a
# crash a server keeps its own lease if it can start above the fence of its
# last renewal within its drift budget and snowid.max_wait_ms (callers wait
# for the clock that long): here a 5 s lease within a drift budget of 10 s,
# then a drift budget of 1 s and 15 s of waiting.
#
# Measured: 20 restarts of one server, in a datacenter of 4 worker ids of
# which 2 are held for good, alternating clean stops and crashes, its clock
# now and then 5 s ahead (SnowidTest::Clock): how many distinct worker ids it
# issued under (1), and every id above every earlier one.
#
# The store is Redis or a PostgreSQL coordination database (SnowidCoord).
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

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();
SnowidTest::need_clock();

my $coord = SnowidCoord->new;
my %layout = (
	'snowid.datacenter_id' => 7,
	'snowid.worker_bits' => 2,
	'snowid.sequence_bits' => 15);
for my $name ('p1', 'p2')
{
	my $p = $coord->new_node($name, \%layout);
	$p->start;
	$p->safe_psql('postgres', 'CREATE EXTENSION snowid; SELECT snowid_next()');
	$p->stop;
}

my $node = SnowidLease::start_node($coord, 'leased',
	{ %layout, 'snowid.worker_lease' => '5s', 'snowid.max_drift_ms' => '10s',
	  'snowid.max_wait_ms' => '5s' });
my $first = SnowidLease::wait_lease($node);
my @kinds = (
	[ 'a clean stop', 'fast', 0 ],
	[ 'a crash', 'immediate', 0 ],
	[ 'a clean stop, the clock then 5 s ahead', 'fast', 1 ],
	[ 'a crash, the clock then 5 s ahead', 'immediate', 1 ]);
my (%workers, $last, $bad);
for my $i (1 .. 20)
{
	my ($what, $mode, $ahead) = @{ $kinds[ $i % @kinds ] };

	$node->stop($mode);
	SnowidLease::start_skewed($node, $ahead ? '+5s' : undef);
	my $w = SnowidLease::wait_lease($node);
	$workers{$w}++;
	# The test relied on every process of a skewed server reading the same
	# clock, which SnowidTest::Clock gives.  On PostgreSQL 15 under
	# libfaketime, used before, the lease renewer could read the real one:
	# the postmaster of 15 starts background workers from a signal handler,
	# which can interrupt libfaketime inside one of its own unfaked calls
	# (its select()), and the worker inherits that state for life (in the CI
	# logs of 15, the renewer's and the postmaster's lines run 5 s behind
	# the backends'; 16's postmaster forks outside its handlers).  The
	# renewer then takes the lease with a fence a lease past the real clock,
	# which the backends, 5 s ahead, already reached: their first calls fail
	# with "the lease ran out" until its first renewal, a third of a lease
	# on, moves the fence past them.  Once the machine was slow enough for
	# the first call to come after the fence.  So the ids are taken once the
	# server issues one; every assertion below stands.
	$node->poll_query_until('postgres', 'SELECT snowid_next() > 0')
	  or die "restart $i: the server issued no id";
	my @ids = SnowidTest::next_ids($node, 1000);
	for my $id (@ids)
	{
		$bad++ if defined $last && $id <= $last;
		$last = $id;
	}
	note("restart $i, after $what: worker id $w");
}
note('distinct worker ids over 20 restarts: ' . scalar(keys %workers));
is_deeply([ keys %workers ], [$first],
	'20 restarts after clean stops and crashes, the clock 5 s ahead at times: one worker id, the first');
ok(!$bad, 'every id above every earlier one');

# A crash with a drift budget of 1 s: the fence of the last renewal lies up
# to the 5 s lease past the generator (itself up to 5 s ahead of the clock
# after the restarts above); with snowid.max_wait_ms = 15s the server keeps
# its id, and its first callers wait for the clock to reach it.
SnowidTest::set_conf($node, 'snowid.max_drift_ms' => '1s',
	'snowid.max_wait_ms' => '15s');
$node->restart;
SnowidLease::wait_lease($node);
my $fence = SnowidLease::fence($coord, 7, $first);
$node->stop('immediate');
$node->start;
is(SnowidLease::wait_lease($node), $first,
	'a crash, the fence past the drift budget but within snowid.max_wait_ms: the same worker id');
my ($id) = SnowidTest::next_ids($node, 1);
cmp_ok(SnowidLease::id_ms($node, $id), '>=', $fence,
	'its first id at or above the fence, once the clock reached it');
$node->stop;

done_testing();
