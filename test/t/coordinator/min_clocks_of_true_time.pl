# The protocol in brief's MARGIN and QUIET at the edge of its assumption 1
# (found by the attack attack67x on 2cb02f4, issue 67, as a premise outside
# the assumption as it then read).
#
# doc/internals.md and src/coord/store.h stated assumption 1 as "every
# clock (the servers' and the store's) lies within the margin of true
# time": two clocks within a margin M of true time lie up to 2M apart,
# while both stores (snowid_4_claim of src/redis/snowid.lua, claim_4 of
# sql/snowid_coordinator/1.1/ranges.sql) and the model
# (src/coord/protocol_min.pml) count one margin between a server's clock
# and the store's.  Seen on both stores (2cb02f4): with the store's clock M
# ahead of true time and a's M behind, b granted worker id 0 at the
# store's clock E + M, a's lease ending at E by the store's clock (MARGIN);
# and after a loss and the store's clock stepping back 2M, at E (QUIET).
#
# The assumption is now stated as the rules need it, and as README's
# Guarantees said it: every server's clock lies within the margin of the
# store's clock.  A clock further behind the store's than that is refused
# at each call (CLOCK: the n of its proof is its clock); one ahead issues
# later than its range starts and never past its end.  So this test checks
# the assumption's edge instead of a premise outside it:
#
# MARGIN: a's lease ends at E.  With b's clock a margin behind the store's
# (inside), b's claim waits until the store's clock is E + M, when b's
# clock reads E: a issued below E by its own clock.  With b's clock further
# behind (outside), b's claim is refused, whatever the store's clock.
#
# QUIET: a holds worker id 0 for good, its range ending at E; the store
# loses its data, and its clock steps back a margin (the most the quiet
# period counts).  b's claims wait for the quiet period, which ends with
# the store's clock at least two margins past E: every clock within the
# margin of the store's is then a margin past a's end.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

my ($R, $M) = (3000, 2000);
my $s = SnowidMinStore->started($R, $M);
my $store = $s->store;

$s->quiet_over(1, 2);

# MARGIN
my $dc = 1;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));
my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 0 -1"));
is($id, 0, 'MARGIN: a is granted worker id 0 on lease');
# (b's layout a worker id alone, which a's wider one holds: worker id 0)
$s->move_to($end + $M - 1);
$s->callers_behind($M);
like(call($store, 'claim', $dc, $b, "0 $R 1 -1"), qr/^SNOWID_FENCED 0 /,
	'MARGIN: b, its clock a margin behind the store\'s, waits while the store\'s clock is'
	  . ' short of a margin past a\'s end');
$s->move_to($end + $M);
$s->callers_behind($M + 1);
like(call($store, 'claim', $dc, $b, "0 $R 1 -1"), qr/^SNOWID_USAGE /,
	'MARGIN: b, its clock further behind the store\'s than the margin (outside assumption 1),'
	  . ' is refused');
$s->callers_behind($M);
my ($id_b) = granted(call($store, 'claim', $dc, $b, "0 $R 1 -1"));
is($id_b, 0,
	'MARGIN: b, its clock a margin behind the store\'s, is granted worker id 0 once the'
	  . ' store\'s clock is a margin past a\'s end, when b\'s clock reads a\'s end');
$s->callers_behind(0);

# QUIET
$dc = 2;
($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));
($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'QUIET: a is granted worker id 0 for good');
SnowidMinStore::lose($store, $dc);
# the store's clock steps back a margin (the callers' stay: a margin ahead)
$s->set($s->at - $M);
$s->callers_behind(-$M);
my $reply = call($store, 'claim', $dc, $b, "31 $R 1 -1");
like($reply, qr/^SNOWID_QUIET \d+$/,
	'QUIET: the datacenter lost, b\'s claim is refused as quiet');
my ($quiet_end) = $reply =~ /^SNOWID_QUIET (\d+)$/;
cmp_ok($quiet_end // 0, '>=', $end + 2 * $M,
	'QUIET: the quiet period ends with the store\'s clock two margins past a\'s end, after its'
	  . ' clock stepped back a margin: every clock within the margin of it is past a\'s end');
$s->move_to($quiet_end - 1) if $quiet_end;
like(call($store, 'claim', $dc, $b, "31 $R 1 -1"), qr/^SNOWID_QUIET /,
	'QUIET: b\'s claim waits until then');

$store->stop;
done_testing();
