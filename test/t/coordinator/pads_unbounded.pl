# What a member of the fleet's role stores with calls that are never
# granted: a pad for every holder name it makes up.
#
# CHANGELOG (issue 67, item 6): every value a member sends is bounded
# before it is stored, and a datacenter has no more holders than its layout
# has worker ids, which bounds the work of every call.  But check_proof()
# answers the first call of a name with no key registered by inserting a
# row into snowid_coordinator.pads (not dumped, never removed but by a
# registration), before any check of the layout, the quiet period or
# whether anything can be granted.  Here a datacenter of four worker ids (its
# layout recorded by one server's claim), all held, and a member's claims
# under 2,000 made-up names with a made-up proof: every call is answered
# 'register', and each leaves a row (2,000 rows for 4 worker ids).
#
# The coordination database only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use Test::More;

my $db = SnowidCoordDb->new('coord');
$db->grant;
my $dc = 3;
my $names = 2000;
$db->sql('coord_admin', "SELECT snowid_coordinator.new_datacenter($dc)");
for my $i (0 .. 3)
{
	my $o = $db->call("claim($dc, 'server $i', -1, 3, -1, @{[ $db->now_ms ]})");
	is($o->{outcome}, 'ok', "server $i claims in a layout of 0 to 3");
}

my $proof = '1:' . ('ab' x 32);
my $now = $db->now_ms;
my $file = PostgreSQL::Test::Utils::tempdir() . '/calls.sql';
PostgreSQL::Test::Utils::append_to_file($file, join '',
	map { "CALL snowid_coordinator.claim($dc, 'made-up $_', '$proof', -1, 3, -1, $now);\n" }
	  1 .. $names);
$db->node->command_ok([ 'psql', '-XAtq', '-d', $db->connstr('coord_fleet'), '-f', $file ],
	"$names claims under made-up names");
my $pads = $db->sql(undef,
	"SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc");
note("pads of datacenter $dc after $names claims: $pads");
cmp_ok($pads, '<=', 4,
	'the pads of a datacenter are bounded as its holders are (its layout of 4)');

done_testing();
