# A worker id given back from a lease is taken for good only above its
# fence.  Before, a permanent claim read only the owners hash: it took a
# released id with no floor and repeated its last holder's ids.
#
# First exactly as measured: server a holds worker id 0 of datacenter 1 on
# a 60 s lease, its clock 20 s ahead of the others' (SnowidTest::Clock), issues
# 3 million ids and gives the id back with snowid_release_worker(); server
# b, same datacenter, no lease, claims for good, and issues ids
# once its clock reaches a's milliseconds.  Before, b took worker id 0 and
# repeated hundreds of thousands of a's ids; now it takes an id it can start
# above at once (worker id 1), and none repeats.
#
# Then without any skew, where the released id is the only one free and its
# last holder ran ahead of its clock by its snowid.max_drift_ms: a claim,
# configured or not, is refused with a clear error (and writes nothing)
# until the claiming server can start above the fence, and then starts
# there.
#
# The test runs against either store (SnowidCoord): Redis, or a PostgreSQL
# coordination database.
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
SnowidTest::need_clock();

my $coord = SnowidCoord->new;
my $dir = PostgreSQL::Test::Utils::tempdir();

# -- as measured ---------------------------------------------------------

my $dc = 1;
my $a = SnowidLease::start_node($coord, 'a',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '60s' }, skew => '+20s');
is(SnowidLease::wait_lease($a), 0, 'a takes worker id 0 on lease');

# b is set up before a issues, and claims right after a gives its id back,
# with every slow step (counting, copying a's ids) after the claim.  The
# claim must come while a's fence still lies beyond b's max_drift_ms (1 s)
# of b's clock: a's ids, and so its fence, run 20 s ahead of the real
# clock, but every second between a's last id and b's claim eats that
# lead.  Before, the count, the COPY and b's start came in between: 12 to
# 30 s on a loaded machine, and b rightly took the fenced id 0, its clock
# by then within its drift budget of the fence.  A server claims on its
# first call, not at its start.
my $b = SnowidLease::start_node($coord, 'b', { 'snowid.datacenter_id' => $dc });

$a->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE a_ids AS
		SELECT snowid_next_batch(100000) AS id FROM generate_series(1, 30)});
my $released = $a->safe_psql('postgres', 'SELECT snowid_release_worker()');
my $a_fence = SnowidLease::fence($coord, $dc, 0);
$b->safe_psql('postgres', 'SELECT snowid_next()');
my $b_worker = SnowidRedis::worker($b);

my ($a_count, $a_min, $a_max) = split /\|/, $a->safe_psql('postgres',
	'SELECT count(DISTINCT id), min(id), max(id) FROM a_ids');
is($a_count, 3000000, 'a issues 3 million ids, 20 s ahead of the real clock');
is($released, 0, 'a gives worker id 0 back');
$a->safe_psql('postgres', "COPY a_ids TO '$dir/a_ids'");
my $a_first_ms = SnowidLease::id_ms($a, $a_min);
my $a_last_ms = SnowidLease::id_ms($a, $a_max);
cmp_ok($a_fence, '>', $a_last_ms,
	'the fence of worker id 0 lies past a\'s last id');
is($b_worker, '1|' . $coord->source,
	'b claims for good the lowest id it can start above at once: worker id 1, not the fenced 0');

# b takes ids while its clock passes through a's milliseconds.
my $wait = ($a_first_ms - 200) / 1000 - Time::HiRes::time();
note(sprintf('waiting %.1f s for b\'s clock to reach a\'s ids', $wait));
Time::HiRes::sleep($wait) if $wait > 0;
$b->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE b_ids AS
		SELECT snowid_next_batch(100000) AS id FROM generate_series(1, 40)});
my ($b_first, $b_last) = split /\|/, $b->safe_psql('postgres',
	'SELECT min(id), max(id) FROM b_ids');
note(sprintf('a issued in [%d, %d] ms, b in [%d, %d] ms (Unix)',
		$a_first_ms, $a_last_ms, SnowidLease::id_ms($b, $b_first), SnowidLease::id_ms($b, $b_last)));
cmp_ok(SnowidLease::id_ms($b, $b_last), '>=', $a_first_ms,
	'b issued ids while its clock was in a\'s milliseconds');
$b->safe_psql('postgres', q{CREATE UNLOGGED TABLE a_ids (id bigint)});
$b->safe_psql('postgres', "COPY a_ids FROM '$dir/a_ids'");
is($b->safe_psql('postgres',
		'SELECT count(*) FROM b_ids JOIN a_ids USING (id)'),
	0, 'none of b\'s 4 million ids repeats one of a\'s 3 million');
$_->stop for $a, $b;

# -- only the released id free, no skew ----------------------------------

# One id a millisecond, so that a batch runs a server far ahead of its clock
# within its drift budget; two worker ids, one held for good.
$dc = 2;
my %layout = (
	'snowid.datacenter_id' => $dc,
	'snowid.worker_bits' => 1,
	'snowid.sequence_bits' => 0);
my $a2 = SnowidLease::start_node($coord, 'a2',
	{ %layout, 'snowid.worker_lease' => '60s', 'snowid.max_drift_ms' => 25000 });
is(SnowidLease::wait_lease($a2), 0, 'a2 takes worker id 0 on lease');
my $p = SnowidLease::start_node($coord, 'p', \%layout);
$p->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidRedis::worker($p), '1|' . $coord->source, 'p holds worker id 1 for good');

# The servers that claim once a2 has given its id back, c configured with
# worker id 0 and b2 free to choose, are started first: a server claims on
# its first call, not at its start, and their refusals below must come
# while a2's ids still lie beyond their drift budget (a2 runs 25 s ahead),
# however long a loaded machine takes to start a server.
my $c = SnowidLease::start_node($coord, 'c', { %layout, 'snowid.worker_id' => 0 });
my $b2 = SnowidLease::start_node($coord, 'b2', \%layout);

my $a2_max = $a2->safe_psql('postgres',
	'SELECT max(id) FROM snowid_next_batch(25000) id');
is($a2->safe_psql('postgres', 'SELECT snowid_release_worker()'), 0,
	'a2 runs its drift budget ahead of its clock and gives worker id 0 back');
my $fence = SnowidLease::fence($coord, $dc, 0);
cmp_ok($fence, '>', SnowidLease::id_ms($a2, $a2_max), 'the fence lies past a2\'s last id');

# A configured worker id: refused until the server can start above the
# fence, with nothing written.
my $err = SnowidTest::psql_error($c, 'SELECT snowid_next()');
like($err,
	qr/55006: worker id 0 of datacenter 2 cannot be taken until .*DETAIL:  It was on lease, and the ids its last holder issued reach up to then.*HINT:  Wait until then and call again, or set snowid.worker_id to another free id/s,
	'a configured worker id fenced past the drift budget: a clear error');
ok(!exists $coord->owners($dc)->{0}, 'and nothing is written in the store');

# A free choice: the same, then the id once the clock is near enough (the
# wait for it bounded by the time that takes plus the usual timeout).
$err = SnowidTest::psql_error($b2, 'SELECT snowid_next()');
like($err,
	qr/55006: no worker id of datacenter 2 can be taken until .*DETAIL:  Every worker id not held by a server was on lease.*worker id 0 is free first/s,
	'every free worker id fenced past the drift budget: a clear error');
$c->stop;
my $first;
my $deadline = $fence / 1000 + $PostgreSQL::Test::Utils::timeout_default;
while (Time::HiRes::time() < $deadline)
{
	my ($ret, $out, $stderr) = $b2->psql('postgres', 'SELECT snowid_next()');

	if ($ret == 0)
	{
		$first = $out;
		last;
	}
	die "unexpected error: $stderr" unless $stderr =~ /can be taken until/;
	Time::HiRes::sleep(0.1);
}
ok(defined $first, 'b2 takes the id once its clock is within its drift budget of the fence');
is(SnowidRedis::worker($b2), '0|' . $coord->source, 'b2 holds worker id 0 for good');
cmp_ok($first, '>', $a2_max, 'b2\'s first id lies above every id a2 issued');
cmp_ok(SnowidLease::id_ms($b2, $first), '>=', $fence, 'at or above the fence');
ok($b2->log_contains(
		qr/snowid starts the ids of worker id 0 above its fence in ${\ $coord->source}/),
	'the log says where b2 starts');

done_testing();
