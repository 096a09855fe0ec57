# A copy of a lease holder's data directory, restored in its place (same
# host, port and system identifier, so the same identity in the store), must
# not repeat the ids the original issued after the copy was taken.  The
# restored server re-claims its own lease (the "keep" path), which used to
# give back the floor the id was first taken with, so that only the copy's
# older high-water mark stood between it and the original's later ids.
# Now every claim starts at or above the id's current fence.
#
# The original renews its lease several times after the copy and runs
# ahead of its clock (one id a millisecond, within its drift budget and its
# fence) before it crashes; the copy, restored at once, must start above
# all of that.
#
# The test runs against either store (SnowidCoord): Redis, or a PostgreSQL
# coordination database.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Path qw(rmtree);
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

my $dc = 5;
my $coord = SnowidCoord->new;
my $node = SnowidLease::start_node($coord, 's',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.worker_bits' => 0,
		'snowid.sequence_bits' => 0,
		'snowid.worker_lease' => '10s',
		'snowid.max_drift_ms' => 6000,
		'snowid.max_wait_ms' => 10000
	});
is(SnowidLease::wait_lease($node), 0, 'the server takes worker id 0 on lease');
SnowidTest::next_ids($node, 10);

# A copy of the data directory, taken at a clean stop.
$node->stop;
my $copy = PostgreSQL::Test::Utils::tempdir() . '/copy';
system('cp', '-a', $node->data_dir, $copy) == 0 or die "cp failed";
$node->start;

# Ids until the server holds its lease again, allowing only the clear
# error of a fenced id meanwhile (the session's own claim's, or that of the
# lease renewer's claim it waited for); returns the first.
sub first_id
{
	for (1 .. 300)
	{
		my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()');

		return $out if $ret == 0;
		die "unexpected error: $err"
		  unless $err =~ /can be taken until|Another session failed to get one/;
		Time::HiRes::sleep(0.1);
	}
	die 'the server issues no ids';
}

first_id();
my $renewals = $node->safe_psql('postgres', 'SELECT renewals FROM snowid_status()');
$node->poll_query_until('postgres',
	"SELECT renewals >= $renewals + 3 FROM snowid_status()")
  or die 'no renewals';
# (the clock is read in the statement that takes the batch, once the batch
# is taken, so that no later call's latency counts against the lead)
my ($max, $ahead) = split /\|/, $node->safe_psql('postgres', q{
	SELECT max(id),
		(extract(epoch FROM (snowid_decode(max(id))).ts - clock_timestamp()) * 1000)::int
	FROM snowid_next_batch(4500) id});
note("the original ran $ahead ms ahead of its clock");
cmp_ok($ahead, '>', 3000, 'the original renewed its lease and ran ahead of its clock');
SnowidTest::crash_server($node);

# Restore the copy in its place.
rmtree($node->data_dir);
system('cp', '-a', $copy, $node->data_dir) == 0 or die "cp failed";
$node->start;
my $first = first_id();
cmp_ok($first, '>', $max,
	'the restored copy starts above every id the original issued after the copy');
is(SnowidRedis::worker($node), '0|lease', 'on its worker id, taken again');

done_testing();
