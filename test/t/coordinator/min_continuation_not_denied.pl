# After a loss, a fleet member's made-up names keep a running holder from
# continuing its range in a coordination database, where Redis continues it
# (found by the attack attack67x on 2cb02f4, issue 67): the two stores
# answer one sequence of calls differently.
#
# A store that lost a datacenter (a FLUSHALL, a restore from a backup made
# before the holder's key was registered) has forgotten the holder's key
# too: the holder's extend in the quiet period (CONTINUATION) registers it
# again.  Redis keeps nothing for a name asked to register
# (SNOWID_REGISTER); a coordination database keeps a pad per name, at most
# as many per datacenter as the layout the call names has worker ids, for
# up to the longest coordinator timeout (check_proof() of
# sql/snowid_coordinator/1.1/helpers.sql), and beyond refuses with 53400
# "too many holder keys being registered", an error that is neither an
# answer of the protocol in brief (ranges.sql lists its errors: 22023,
# 28000, 42501) nor something a holder can wait out within its range.  A
# fleet member that asks to register under made-up names, one call each,
# fills the pads.  doc/security.md: the fleet's role can deny new servers,
# not restarts; a continuation is how a running holder survives a loss.
#
# Here a holds worker id 0 of a layout of 32 ids for good; the datacenter
# is lost; a fleet member calls under 32 made-up names, sending no key; a's
# extend, in the quiet period, within its range.  Seen on 2cb02f4: Redis
# continues a's range (SNOWID_REGISTER, then the grant); the coordination
# database refuses a's registration with 53400, and a's range ends.
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

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'a is granted worker id 0 of worker ids 0 to 31 for good');

SnowidMinStore::lose($store, $dc);

# A fleet member calls under 32 made-up names, sending no key (a
# coordination database answers each a pad; Redis keeps nothing)
my @replies;
for my $i (1 .. 32)
{
	my $name = holder($dc, "made-up $i");
	my $numbers = "31 $R 1 -1";
	push @replies, raw($store, 'claim', $dc, $name, $numbers,
		proof($store, 'claim', $dc, $name, $numbers));
}
is(scalar(grep { /^ok/ } @replies), 0, '32 made-up names, sending no key, are granted nothing');
note("their answers: @replies[0, -1]");

my $reply = call($store, 'extend', $dc, $a, "0 31 $end $R 1");
like($reply, qr/^ok 0 /,
	'CONTINUATION: a\'s extend of its range, which the store forgot, registers its key again'
	  . ' and is granted, whatever names a fleet member made up');
note("a's extend: $reply");

$store->stop;
done_testing();
