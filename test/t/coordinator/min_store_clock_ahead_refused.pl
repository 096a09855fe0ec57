# A store whose clock steps ahead by more than the margin (outside the
# protocol in brief's assumption 1) grants a worker id while its last
# range runs (found by the attack attack67x on 2cb02f4, issue 67).
#
# doc/internals.md ("The worker-id protocol in brief"): "outside them
# [the assumptions] snowid waits or refuses, never issues twice"; its
# table of assumptions says a clock further ahead than the margin is not
# told apart from a right one.  But every call of a server sends its clock:
# the n of its holder proof is its clock in microseconds.  Both stores
# check n only against the widest clock margin of the older calls (an
# hour: check_secret() of src/redis/snowid.lua, check_proof() of the
# coordination database), not against the protocol in brief's margin (a
# minute), so a store clock stepped ahead by more than the margin and
# less than an hour grants on: each fence lies in its past, and the id
# whose range runs by every other clock is granted again.
#
# Here, under a copy whose longest range is 5 s and margin 0.5 s, the
# store's clock kept at this machine's (the callers' clocks, which make
# the proofs' n): a is granted worker id 0 on lease; the store's clock
# steps 10 s ahead; b's claim, its proof's n 10 s behind the store's
# clock, is granted worker id 0 at once, while a's range runs by a's clock
# and b's.  Seen on both stores (2cb02f4).  The store cannot tell this
# from b's clock 10 s behind true time (also outside assumption 1), where
# b's ids fall in the range of a's lease: the same refusal covers both.  (SnowidMinStore makes n from
# this machine's clock while the store's stands still where a test moves
# it: a fix that checks n against the margin has it make n from the
# store's clock there.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;
use Time::HiRes qw(time sleep);

my ($R, $M) = (5000, 500);
my $s = SnowidMinStore->started($R, $M);
my $store = $s->store;
my $dc = 1;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

# The store's clock set to this machine's plus $ahead ms; the callers'
# (the n of their proofs) stays this machine's
sub at_machine_clock
{
	my ($ahead) = @_;

	sleep 0.01 while time() * 1000 < $s->base * 1000;
	$s->set(int(time() * 1000) - $s->base * 1000 + ($ahead // 0));
	$s->callers_behind($ahead // 0);
	return;
}

at_machine_clock();
like(call($store, 'release', $dc, holder($dc, 'probe'), '0 0'), qr/^ok 0$/,
	'a first call notes the run of the store');
my (undef, $til) = record($store, $dc);
sleep 0.1 while time() * 1000 < $til + $M + 10;
at_machine_clock();

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 0 -1"));
is($id, 0, 'a is granted worker id 0 on lease, the store\'s clock at the callers\'');

# The store's clock steps 20 margins ahead
at_machine_clock(20 * $M);
my $reply = call($store, 'claim', $dc, $b, "31 $R 1 -1");
my $machine = int(time() * 1000);
unlike($reply, qr/^ok 0 /,
	'b, whose proof says its clock lies 20 margins behind the store\'s, is not granted'
	  . ' worker id 0 while a\'s range runs by the callers\' clocks');
note("b's claim at this machine's clock $machine, a's range ending at $end: $reply");

$store->stop;
done_testing();
