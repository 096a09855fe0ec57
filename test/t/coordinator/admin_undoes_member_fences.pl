# An administrator can undo every fence and quiet period a fleet member
# set, and the refusals say how (issue 67, item 6).  Before, a member's
# lease claim with its generator two days ahead left a fence there that
# neither free() (which never lowers a fence) nor end_quiet() undid, and
# the server refused that worker id said to free it.  Now:
#
# - lower_fence(), an administrator's, sets the fence of a worker id that
#   no live holder holds to the store's clock plus a margin, lowering it;
#   it is refused while a holder is live (free() it first), and, in the
#   coordination database, to the fleet's role;
# - the server refused a fenced worker id names that step in its hint;
# - a quiet period a member's word started ends with end_quiet().
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
use SnowidTest;
use Test::More;
use Time::HiRes qw(usleep);

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 17;
my $id = 7;
my $member = SnowidMember->new($coord, $dc, 'made-up');
my $day = 86400000;

# -- a fence two days ahead ---------------------------------------------------

# The member's lease of worker id 7 for 2 s, its generator two days ahead
# (less the lease and a minute: the most the store takes)
my $now = $member->store_now;
my $lease = 2000;
like($member->lease_claim(max => 31, lease => $lease, client => $now + 176400000 - $lease - 60000,
		prefer => $id, token => '0123456789abcdef'),
	qr/^ok $id\b/, 'a member takes worker id 7 on lease, its generator two days ahead');
my $fence = $coord->field($dc, 'fences', $id);
cmp_ok($fence, '>', $now + 2 * $day - 120000, 'its fence lies two days ahead');

like($member->admin('lower_fence', "$id 1"),
	$pg ? qr/^55006: worker id $id of datacenter $dc is held by/ : qr/^SNOWID_HELD $id /,
	'lower_fence() is refused while the lease is live');

# the lease runs out
usleep(100_000) while $member->store_now <= $now + $lease;
$coord->free($dc, $id, 61001);
cmp_ok($coord->field($dc, 'fences', $id), '>=', $fence, 'free() leaves the fence where it was');

# A server configured with that worker id is refused, and told how to go on
my $node = $coord->new_node('server',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => $id });
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  55006: worker id $id of datacenter $dc cannot be taken until/,
	'a server configured with worker id 7 is refused: fenced');
like($err, qr/HINT: .*an administrator lowers it with .*lower_fence/s,
	'its hint names the administrator\'s lower_fence');

if ($pg)
{
	like($member->admin('lower_fence', "$id 1", 'fleet'),
		qr/^42501: permission denied for function lower_fence/,
		'the fleet\'s role may not call lower_fence()');
}

$now = $member->store_now;
my ($lowered) = $member->admin('lower_fence', "$id 1") =~ /^ok (\d+)/;
ok(defined $lowered && $lowered >= $now && $lowered < $now + 60000,
	'an administrator\'s lower_fence() sets the fence to the store\'s clock plus the margin')
  or diag("lowered to " . ($lowered // 'nothing') . ", the store's clock $now");
cmp_ok($coord->field($dc, 'fences', $id), '==', $lowered, 'the fence is lowered');
my ($ret, $out, $again) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($ret, 0, 'the server then takes worker id 7') or diag($again);
is((split /\|/, SnowidRedis::worker($node))[0], $id, 'and holds it');

# -- a quiet period a member's word started -----------------------------------

my ($gen, $counter) = $member->record;
like($member->claim(quiet => 9000, generation => $gen, counter => $counter + 1000, margin => 1000),
	qr/^SNOWID_QUIET /, 'a member\'s word that it saw a later counter starts a quiet period');
my $other = $coord->new_node('other', { 'snowid.datacenter_id' => $dc });
$other->start;
$other->safe_psql('postgres', 'CREATE EXTENSION snowid');
like(SnowidTest::psql_error($other, 'SELECT snowid_next()'),
	qr/ERROR:  55006: snowid cannot claim a worker id of datacenter $dc until/,
	'a new server is refused in it');
like($member->admin('end_quiet', ''), qr/^ok/, 'an administrator ends it with end_quiet()');
($ret, $out, $again) = $other->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($ret, 0, 'the new server then claims') or diag($again);

done_testing();
