# A member's claims under made-up holder names, each with a proof whose n
# is the clock (as a server's is), fill no table: a datacenter holds at
# most as many pads (the one-time pads a name registers its key under) as
# its layout has worker ids, and refuses a new one beyond, saying so
# (53400), until they run out.  A name that has a pad gets a new one in
# its place, and a server's registration, which follows its pad at once,
# goes through while they are few.
#
# The coordination database only (Redis keeps no pads: it takes the key as
# it is, doc/security.md).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use Test::More;
use Time::HiRes qw(time);

my $db = SnowidCoordDb->new('coord');
$db->grant;
my $dc = 3;
$db->sql('coord_admin', "SELECT snowid_coordinator.new_datacenter($dc)");
for my $i (0 .. 2)
{
	my $o = $db->call("claim($dc, 'server $i', -1, 3, -1, @{[ $db->now_ms ]})");
	is($o->{outcome}, 'ok', "server $i claims in a layout of 0 to 3");
}

# a made-up proof of n now, as a server's
sub made_up
{
	return int(time * 1_000_000) . ':' . ('ab' x 32);
}

my @refused;
for my $i (1 .. 20)
{
	my $err = $db->sql_error('coord_fleet',
		"CALL snowid_coordinator.claim($dc, 'made-up $i', '@{[ made_up() ]}', -1, 3, -1, @{[ $db->now_ms ]})");
	push @refused, $err if defined $err;
}
my $pads = $db->sql(undef,
	"SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc");
is($pads, 4, 'the datacenter holds as many pads as its layout has worker ids');
is(scalar @refused, 16, 'the calls beyond are refused');
like($refused[0] // '', qr/^53400: too many holder keys being registered in datacenter $dc/,
	'saying why');
my $again = $db->sql_error('coord_fleet',
	"CALL snowid_coordinator.claim($dc, 'made-up 1', '@{[ made_up() ]}', -1, 3, -1, @{[ $db->now_ms ]})");
is($again, undef, 'a name that has a pad gets a new one in its place');
is($db->sql(undef, "SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc"),
	4, 'and the count stays');

# the pads run out: a new name gets one again
$db->sql(undef, "UPDATE snowid_coordinator.pads SET made_ms = made_ms - 3600000 WHERE datacenter = $dc");
my $later = $db->sql_error('coord_fleet',
	"CALL snowid_coordinator.claim($dc, 'made-up 21', '@{[ made_up() ]}', -1, 3, -1, @{[ $db->now_ms ]})");
is($later, undef, 'once they ran out, a new name gets a pad');
is($db->sql(undef, "SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc"),
	1, 'and those that ran out are gone');

done_testing();
