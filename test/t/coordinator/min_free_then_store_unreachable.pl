# The protocol in brief's free() of a running holder for good, then a
# store that does not answer for a while and comes back without a restart
# (found by the attack attack67x on 2cb02f4, issue 67).
#
# doc/internals.md ("The worker-id protocol in brief") says free() needs no
# assumption: "freeing a server that still runs costs it its id, not a
# duplicate", as its next extend is refused.  But a holder for good whose
# check-ins get no answer at all extends its own range and issues on
# (REFUSAL_ENDS: the mission's one-time claim), past the fence the store
# keeps; the brief counts on the store's restart when it comes back, whose
# quiet period lets the holder's check-in continue its range first.  A
# store that comes back without a restart (a network outage between it and
# every server, a paused VM or process, a Redis blocked by a long command,
# a coordination server out of connections) starts no quiet period, and
# none of the four assumptions excludes it: it kept what it acknowledged
# (2), and it answered no server meanwhile (4).  The model
# (src/coord/protocol_min.pml) has no such step: its store comes back only
# through a restart.
#
# Here: a holds worker id 0 for good, its range ending at E; an
# administrator frees it (a still runs, or runs on the far side of an
# outage that makes it look gone); the store answers no server for
# longer than E + margin (a's check-ins go unanswered: it extends its own
# range and issues on); the store answers again, never restarted, and b's
# claim is granted worker id 0 at once, while a issues on until its next
# check-in, up to a check-in interval and a timeout later, is refused.
# Seen on both stores (2cb02f4): b granted worker id 0 at E + margin.  The
# alternatives: free() of a holder for good waits for a quiet period (or
# for the holder's refusal), or the brief states free() as an assumption
# again.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();
SnowidTest::need_clock();

my ($R, $M) = (3000, 2000);
my $s = SnowidMinStore->new(SnowidMinStore::store_copy($R, $M));
my $store = $s->store;
my $dc = 1;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

like(call($store, 'release', $dc, holder($dc, 'probe'), '0 0'), qr/^ok 0$/,
	'a first call notes the run of the store');
my (undef, $til) = record($store, $dc);
$s->move_to($til + $M);

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'a is granted worker id 0 for good');
is(free($store, $dc, 0), "ok $end", 'an administrator frees worker id 0 while a runs');
my $run = run_id($store);

# The store answers no server, without restarting, past a's range and a
# margin: a's check-ins get no answer, and it extends its own range
$s->move_to($end + $M);
is(run_id($store), $run, 'the store answers again, never restarted');

my $reply = call($store, 'claim', $dc, $b, "31 $R 1 -1");
unlike($reply, qr/^ok 0 /,
	'b is not granted worker id 0 while a, freed while it ran and unanswered since,'
	  . ' may issue on in the range it extended itself');
note("b's claim: $reply");

$store->stop;
done_testing();
