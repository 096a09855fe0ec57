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
#
# Decision (issue 67, fix67y): no bounded rule closes this simply.  The
# store cannot tell a holder for good that stopped from one that runs on
# the far side of an outage, so a freed id would have to wait for the
# holder's refusal (never, for a server gone) or for a time since its last
# grant, which an outage of any length outlasts.  So free() is an
# assumption again (doc/internals.md's assumption 5 of the protocol in
# brief, doc/coordinator.md, doc/redis.md, doc/security.md): an
# administrator frees only a server that has stopped.  This test checks
# the assumption's inside: a stopped holder's id, freed, then the store
# answering no one and coming back without a restart, is granted to b only
# once the store's clock is a margin past a's last range (MARGIN), when
# every clock within the margin of the store's is past it, and a, stopped,
# issues nothing since.  (Outside it, a freed holder that still runs,
# this path stays open: documented, not covered.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

my ($R, $M) = (3000, 2000);
my $dc = 1;
my $s = SnowidMinStore->started($R, $M, $dc);
my $store = $s->store;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'a is granted worker id 0 for good');

# a stops (assumption 5: an administrator frees only a server that has
# stopped): it issued below its range's end, $end, and issues no more
is(free($store, $dc, 0), "ok $end", 'an administrator frees worker id 0 of a, stopped');
my $run = run_id($store);

# The store answers no server, without restarting, until a margin less a
# millisecond past a's range
$s->move_to($end + $M - 1);
is(run_id($store), $run, 'the store answers again, never restarted');
like(call($store, 'claim', $dc, $b, "0 $R 1 -1"), qr/^SNOWID_FENCED 0 /,
	'b waits for worker id 0 while a clock within the margin of the store\'s may still lie'
	  . ' before the end of a\'s last range');
$s->move_to($end + $M);
my ($id_b, $end_b, $now_b) = granted(call($store, 'claim', $dc, $b, "0 $R 1 -1"));
is($id_b, 0, 'b is granted worker id 0 once the store\'s clock is a margin past a\'s last range');
cmp_ok(($now_b // 0) - $M, '>=', $end,
	'then every clock within the margin of the store\'s is past the end of a\'s last range');

$store->stop;
done_testing();
