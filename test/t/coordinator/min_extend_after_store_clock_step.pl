# A running holder's extend is refused as out of bounds once the store's
# clock lies behind where it granted the range, within the margin (found
# by the attack attack67x on 2cb02f4, issue 67).
#
# BOUND (snowid_4_extend of src/redis/snowid.lua, extend_4 of
# sql/snowid_coordinator/1.1/ranges.sql) refuses an end later than the
# store's clock plus the longest range.  A range granted as long as the
# longest ends exactly there, by the store's clock at the grant; if that
# clock then steps back (assumption 1 allows it within the margin), or the
# store fails over to a replica or standby whose clock runs behind the old
# one's (each within the margin), the holder's extend of that very range,
# live by every clock, is refused as out of bounds (SNOWID_USAGE, 22023),
# an answer: the holder drops its worker id (REFUSAL_ENDS).  The brief
# (doc/internals.md, "What it costs"): running holders lose nothing across
# any restart, restore, failover or loss of the store.  The quiet period
# already counts the store's clock stepping back by the margin; the bound
# does not.
#
# Here a lease of the longest range (3 s in the copy, margin 2 s); the
# store's clock steps back 1 s; the holder extends its range at once.
# Seen on both stores (2cb02f4): refused, "end_ms must lie between 0 and"
# the store's clock plus 3 s.
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
my $a = holder($dc, 'a');

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 0 -1"));
is($id, 0, 'a is granted worker id 0 on a lease of the longest range');

# The store's clock steps back half a margin
$s->set($s->at - $M / 2);
my $reply = call($store, 'extend', $dc, $a, "0 31 $end $R 0");
like($reply, qr/^ok 0 /,
	'a\'s extend of its range, live by every clock, is granted after the store\'s clock'
	  . ' stepped back within the margin');
note("a's extend: $reply");

$store->stop;
done_testing();
