# A floor from the store reaches the disk before it is relied on.  A claim that
# takes a fenced worker id moves the generator to the fence; before, it did
# so in shared memory only, after the cache file already named the new id.
# A server that died before its first id wrote a mark then came back with
# the store unreachable, took the cached id without confirmation and
# started at its old mark: below the fence, among the ids of the id's last
# holder.
#
# Server l holds worker id 0 on lease with its clock 20 s ahead, issues ids
# and gives the id back: its fence lies 20 s ahead of the real clock.
# Server s claims for good with a drift budget of a minute and takes worker
# id 0 above that fence, but its mark cannot be written (a directory stands
# where the mark's temporary file goes).  Now the claim writes the mark past
# the floor before it caches the id, so the failed write fails the claim
# and nothing names the id; s, restarted with the store unreachable,
# issues no id below the fence.  Once the mark can be written, s claims
# again and starts above the fence.
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

my $coord = SnowidCoord::start(need_clock => 1);
my $dc = 6;

# The Unix ms and the worker id of an id, decoded by a server.
sub decode
{
	my ($node, $id) = @_;

	return split /\|/, $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM d.ts) * 1000)::bigint, d.worker_id FROM snowid_decode($id) d");
}

my $l = $coord->new_node('l',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '60s' });
SnowidLease::start_skewed($l, '+20s');
$l->safe_psql('postgres', 'CREATE EXTENSION snowid');
is(SnowidLease::wait_lease($l), 0, 'l takes worker id 0 on lease');
my $l_max = $l->safe_psql('postgres',
	'SELECT max(id) FROM generate_series(1, 2), snowid_next_batch(100000) id');
my ($l_last_ms) = decode($l, $l_max);
is($l->safe_psql('postgres', 'SELECT snowid_release_worker()'), 0,
	'l issues ids 20 s ahead and gives worker id 0 back');
$l->stop;

my $s = SnowidLease::start_node($coord, 's',
	{ 'snowid.datacenter_id' => $dc, 'snowid.max_drift_ms' => '1min' });
my $blocker = $s->data_dir . '/snowid_state.tmp';
mkdir $blocker or die "could not create $blocker: $!";
like(SnowidTest::psql_error($s, 'SELECT snowid_next()'),
	qr/could not (create|open) file "snowid_state.tmp"/,
	's claims worker id 0 above its fence, but its mark cannot be written: the claim fails');
ok(!-e $s->data_dir . '/snowid_worker', 'and no cache file names the id');
$s->stop('immediate');
rmdir $blocker or die "could not remove $blocker: $!";

# The store unreachable: the only worker id s could take is a cached one.
SnowidTest::set_conf($s, $coord->setting => $coord->unreachable_url);
$s->start;
my ($ret, $out) = $s->psql('postgres', 'SELECT snowid_next()');
my ($ms, $worker) = $ret == 0 ? decode($s, $out) : (0, -1);
ok($ret != 0 || $worker != 0 || $ms > $l_last_ms,
	'restarted with the store unreachable, s issues no id of worker id 0 below its fence');

SnowidTest::set_conf($s, $coord->setting => $coord->url);
$s->restart;
($ms, $worker) = decode($s, $s->safe_psql('postgres', 'SELECT snowid_next()'));
is($worker, 0, 'with the mark writable and the store back, s takes worker id 0');
cmp_ok($ms, '>', $l_last_ms, "and its first id lies above l's last");
$s->stop;

done_testing();
