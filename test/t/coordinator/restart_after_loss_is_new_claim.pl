# An administrator's free() of a stopped server, another server's claim of
# its worker id, a loss of the store, and the stopped server's restart: the
# restarted server does not get the id the other server holds (issue 67,
# item 6).
#
# The path: a restart re-asserted its cache file's id, and the store took
# the re-assertion as the server's own when its last granted call lay
# within a quiet period before the loss (the confirmed re-assertion rule).
# A stopped server whose id was freed and claimed by another server within
# that time passed it: the store, having forgotten the other server's
# claim, granted the restarted server the id at once, and both issued with
# it until the other's next check-in.  Closed by the restart rule: only a
# holder that runs re-asserts after a loss (its check-in); a restart is a
# new claimant, refused in the quiet period and granted at or above its
# floor, like any new server (the server no longer re-asserts at start,
# and the stores take a restart of an earlier release, which says when its
# last granted call was, as a new claim after a loss).
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
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
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $dc = 6;
my %common = ('snowid.datacenter_id' => $dc, 'snowid.clock_margin' => '1s');

# A checks in every 30 s: its quiet period (34 s) is what the store weighed
# its last granted call against.  B checks in every 30 s too (as a large
# fleet may): the restart comes before its next check-in.
my $a = SnowidLease::start_node($coord, 'a',
	{ %common, 'snowid.checkin_interval' => '30s' });
my $b = SnowidLease::start_node($coord, 'b',
	{ %common, 'snowid.checkin_interval' => '30s' });
my $burst = SnowidTest::Bursts->sql(0.002);
$_->safe_psql('postgres', $burst) for ($a, $b);

$a->safe_psql('postgres', 'SELECT snowid_next()');
my $wa = SnowidLease::worker_id($a);
note("A holds worker id $wa");
$a->stop;

# the administrator frees A's id (a margin within B's drift budget, so that
# B can start above its fence at once), and B claims it
$coord->free($dc, $wa, 500);
$b->safe_psql('postgres', 'SELECT snowid_next()');
my $wb = SnowidLease::worker_id($b);
is($wb, $wa, 'B claims the worker id freed from A');

# the store loses everything; A starts again, its cache file naming the id
$coord->wipe;
my $lost = SnowidLease::now_ms();
$a->start;
my ($ret, $out, $err) = $a->psql('postgres', 'SELECT snowid_next()');
my $first = SnowidLease::worker_id($a);
note("A's first call after the loss: ret $ret, worker id '$first'"
	  . ($err ne '' ? ", stderr: $err" : ''));
isnt($first, $wb, 'A\'s restart does not get the worker id B holds');
like($err, qr/cannot claim a worker id of datacenter $dc until/,
	'A\'s claim is refused as quiet: a restart after a loss is a new claim');

# B's check-ins re-assert its id in the quiet period: it issues on
my $bursts = SnowidTest::Bursts->new->start({ b => $b->connstr('postgres') }, 3)->finish;
is($bursts->{errs}{b}, '', 'B issues on');
is(SnowidLease::worker_id($b), $wb, 'B keeps the worker id');

# A claims once the quiet period and its floor have passed: another id
my $deadline = time + 120;
until (time > $deadline)
{
	($ret, $out, $err) = $a->psql('postgres', 'SELECT snowid_next()');
	last if $ret == 0;
	sleep 1;
}
is($ret, 0, 'A claims after the quiet period and its floor') or diag($err);
my $wa2 = SnowidLease::worker_id($a);
note("A claimed worker id $wa2 " . (SnowidLease::now_ms() - $lost) . ' ms after the loss');
isnt($wa2, $wb, 'A holds another worker id than B');
$bursts = SnowidTest::Bursts->new->start(
	{ a => $a->connstr('postgres'), b => $b->connstr('postgres') }, 1)->finish;
is($bursts->{both}, 0, 'no id is issued by both A and B');
is($bursts->{shared}, 0, 'no millisecond of one worker id is issued by both A and B');
$_->stop for ($a, $b);
done_testing();
