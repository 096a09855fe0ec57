# The coordinator (Redis, or a coordination database: SnowidCoord) gone
# and back, on lease: the holder issues ids until its fence, then fails
# clearly (SQLSTATE 08006, the lease ran out; or, once the lease ran out by
# its own clock and it dropped the id, the error of its claim: the
# coordinator cannot be reached); renewals are counted as
# failed; a server that starts meanwhile cannot take an id; once the
# coordinator is back (with its data) both hold an id, and each issues
# above every earlier id of its worker id, with no duplicate.
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

my $dc = 4;
my $lease_ms = 3000;
# The coordinator keeps its data across the stop and start: for Redis an
# append-only file, written through on every write (a coordination
# database keeps it anyway).
my $coord = SnowidCoord->new(
	args => [ '--appendonly', 'yes', '--appendfsync', 'always' ]);
my $ledger = SnowidTest::Ledger->new;
my $by_worker = SnowidLease::ByWorker->new($ledger);
# A coordinator that is down refuses connections at once, whatever the
# timeout; while it is up, the timeout leaves a renewal (a new connection
# each, to a coordination database) time enough on a loaded machine, so
# that the fence stays a lease ahead until the coordinator goes away.
my %lease = (
	'snowid.datacenter_id' => $dc,
	'snowid.worker_lease' => "${lease_ms}ms",
	'snowid.coordinator_timeout_ms' => 2000,
	# the coordinator's restart starts a quiet period (a new run of
	# Redis): a second's clock margin keeps the wait short
	'snowid.clock_margin' => '1s');

my $node = SnowidLease::start_node($coord, 'holder', \%lease);
is(SnowidLease::wait_lease($node), 0, 'the holder takes worker id 0');
$by_worker->take($node, 0, 200, 'with the coordinator up');

# The coordinator goes away: ids until the fence, then a clear error.
$coord->stop;
my $down_at = Time::HiRes::time();
my ($err, $batches) = ('', 0);
while (Time::HiRes::time() - $down_at < 3 * $lease_ms / 1000)
{
	my ($ret, $out, $stderr) = $node->psql('postgres',
		'SELECT snowid_next() FROM generate_series(1, 50)',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	if ($ret != 0)
	{
		$err = $stderr;
		last;
	}
	$by_worker->add(0, split /\n/, $out);
	$batches++;
	Time::HiRes::sleep(0.1);
}
my $stopped_after = Time::HiRes::time() - $down_at;
cmp_ok($batches, '>', 0, 'with the coordinator gone, the holder goes on issuing ids');
my $unreachable = $coord->unreachable;
like($err,
	qr/08006.*the lease on snowid worker id 0 ran out|ERROR:  (?:08001: \Q$unreachable\E\n|55000: snowid has no worker id\nDETAIL:  Another session failed to get one)/s,
	'until its fence, or its lease ran out by its own clock: then a clear error');
like($err, qr/The coordinator could not be reached|\Q$unreachable\E|Another session failed/,
	'which says that the coordinator is unreachable');
diag(sprintf('ids stopped %.2f s after the coordinator went away, on a %d ms lease',
		$stopped_after, $lease_ms));
cmp_ok($node->safe_psql('postgres', 'SELECT failed_renewals FROM snowid_status()'),
	'>', 0, 'status counts the failed renewals');
ok($node->log_contains(qr/snowid could not renew the lease on worker id 0/),
	'the log says why');

# A server that starts while the coordinator is gone gets no id.
my $other = SnowidLease::start_node($coord, 'other', \%lease);
$err = SnowidTest::psql_error($other, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  (?:08001: \Q$unreachable\E\n|55000: snowid has no worker id\nDETAIL:  Another session failed to get one)/,
	'a server starting meanwhile cannot take an id: a clear error');

# The coordinator is back with its data: the holder renews and goes on.
my $renewals =
  $node->safe_psql('postgres', 'SELECT renewals FROM snowid_status()');
$coord->start;
my $fence = SnowidLease::fence($coord, $dc, 0);
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FROM unnest(ARRAY[@{[ join(',', $ledger->all) ]}]::bigint[]) x
	WHERE (snowid_decode(x)).ts >= to_timestamp($fence / 1000.0)}),
	0,
	'every id issued while the coordinator was gone lies below its fence there');

# The lease ran out during the outage, so whichever asks first when the
# coordinator is back gets id 0: the holder renewing it, or the other server taking it
# over above its fence (the holder then takes id 1 without a restart).
my @both = ($node, $other);
for my $n (@both)
{
	$n->poll_query_until('postgres',
		q{SELECT worker_source = 'lease' FROM snowid_status()})
	  or die $n->name . ' holds no lease';
}
my %held;
my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
for (;;)
{
	# until the holder's next renewal both may name id 0: the holder
	# still issues below its own fence then, which the other started above
	%held = map { SnowidRedis::worker($_) => 1 } @both;
	last if keys %held == 2 || Time::HiRes::time() > $deadline;
	Time::HiRes::sleep(0.1);
}
is_deeply([ sort keys %held ], [ '0|lease', '1|lease' ],
	'both servers hold a worker id on lease, one each');
for my $n (@both)
{
	# the holder issues again once its renewer has renewed (it tries
	# again on its own schedule), its fence then ahead of the clock
	$n->poll_query_until('postgres',
		q{SELECT fence_time > clock_timestamp() FROM snowid_status()})
	  or die $n->name . ' has no fence ahead of its clock';
	my ($w) = split /\|/, SnowidRedis::worker($n);
	$by_worker->take($n, $w, 200, $n->name . ' after the coordinator came back');
}
$ledger->no_duplicates;

done_testing();
