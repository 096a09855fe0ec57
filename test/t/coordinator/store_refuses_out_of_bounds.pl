# Every number a fleet member sends is bounded before anything is stored,
# and no store writes a number it would refuse when a holder sends it back
# (issue 67, item 6: the counter past its bound).  A member of the servers'
# role (coordination database) or user (Redis) calls the store's functions
# by hand, under a holder name of its own.
#
# - The counter at its bound: a member says it saw a generation an hour
#   past the store's clock (the most the store takes) with a counter of
#   2^53 - 1 (the most it takes).  Before, the store kept the counter past
#   that bound (Redis 2^53, the coordination database 253402300800002 after
#   a word of 253402300800000), and refused it at every later call of every
#   server that had seen it: a lease holder lost its id, a permanent
#   holder's check-ins failed.  Now the counter stays at the bound, the next
#   call moves the state on to the next generation, and every state the
#   store answers is taken back.
# - Numbers out of bounds are refused and change nothing: a counter past
#   2^53 - 1, a lease token that is not 16 lower-case hex digits (the Redis
#   library stored any), an identity of 513 bytes.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMember;
use SnowidRedis;
use Test::More;

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 15;
my $member = SnowidMember->new($coord, $dc, 'made-up');
my $counter_max = 9007199254740991;
my $usage = SnowidCoord::refused_as('usage');

# -- the counter at its bound -------------------------------------------------

my $at = $member->land_word_at_bound($counter_max);
ok(defined $at,
	'a word at both bounds lands: a generation an hour past the store\'s clock, a counter of 2^53 - 1');
my ($gen, $counter) = $member->record;
cmp_ok($counter, '<=', $counter_max, 'the store keeps no counter past 2^53 - 1');

# Every server that saw that state sends it back at its next call, which
# declares its quiet period (and so moves the counter up): taken, and the
# state moves on to the next generation, its counter from 0, no later
# than the store's bound
my $reply = $member->claim(quiet => 1101, generation => $gen, counter => $counter, margin => 0);
like($reply, qr/^(ok|SNOWID_QUIET) /, 'the state the store answered, sent back, is taken')
  or diag($reply);
my ($g, $c) = $member->record;
my $highest = $c;
for (1 .. 100)
{
	last if $g > $gen;
	$member->claim(quiet => 1101, generation => $g, counter => $c, margin => 0);
	($g, $c) = $member->record;
	$highest = $c if $c > $highest && $g == $gen;
}
cmp_ok($highest, '<=', $counter_max, 'no counter past the bound meanwhile');
cmp_ok($g, '>', $gen, 'a call past the counter\'s bound starts the next generation');
cmp_ok($c, '<=', 1, 'whose counter starts again from 0');
like($member->claim(quiet => 1101, generation => $g, counter => $c, margin => 0),
	qr/^(ok|SNOWID_QUIET) /, 'and which is taken back too');

# -- numbers out of bounds, refused before anything is written ---------------

my $now = $member->store_now;
my $before = $member->state;
($gen, $counter) = $member->record;
like($member->claim(quiet => 9000, generation => $gen, counter => $counter_max + 1, margin => 1000),
	$usage, 'a counter past 2^53 - 1 is refused');
like($member->lease_claim(max => 31, lease => 60000, client => $now, token => 'abc'),
	$usage, 'a lease token of three digits is refused');
like($member->lease_claim(max => 31, lease => 60000, client => $now, token => 'ab' x 16),
	$usage, 'a lease token of 32 digits is refused');
my $long = SnowidMember->new($coord, $dc, 'x' x 500);
like($long->claim(quiet => 9000, margin => 1000), $usage, 'an identity of 513 bytes is refused');
is($member->state, $before, 'and none of them changed anything');

done_testing();
