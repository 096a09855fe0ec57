# A member's claims under made-up holder names, each with a proof whose n
# is the clock (as a server's is), fill no table: a datacenter holds at
# most as many pads (the one-time pads a name registers its key under) as
# its layout has worker ids, and refuses a new one beyond, saying so
# (53400), until they run out.  A name that has a pad gets a new one in
# its place, and a server's registration, which follows its pad at once,
# goes through while they are few.  A pad is good for one call: the call
# that sends its key under it takes it, refused or granted, so that a
# refused call leaves none behind (Redis, which keeps no pads, answers it
# alike; test/protocol-search --store both compares them).
#
# The coordination database only (Redis keeps no pads: it takes the key as
# it is, doc/security.md).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use Digest::SHA;
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

# A server's call, as the servers send it (coord/holder_secret.c): its
# proof for the call, with its key XORed with the SHA-256 of pad if one is
# given.  parts: the procedure's arguments after the proof, as the
# procedure sees them (undef for NULL)
my $last_n = 0;

sub server_proof
{
	my ($identity, $pad, @parts) = @_;
	my $key = Digest::SHA::sha256_hex(SnowidCoordDb::secret_of($identity));
	my $n = int(time * 1_000_000);
	$n = $last_n + 1 if $n <= $last_n;
	$last_n = $n;
	my $call = join "\n", map { $_ // '' } 'claim', $dc, $identity, @parts;
	my $proof = "$n:" . Digest::SHA::sha256_hex("$key\n$n\n$call");

	return $proof unless defined $pad;
	return "$proof:" . unpack('H*', pack('H*', $key) ^ Digest::SHA::sha256($pad));
}

# A server's claim of worker id want, with the proof for it
sub server_claim
{
	my ($identity, $pad, $want, $usable) = @_;
	my $proof = server_proof($identity, $pad, $want, 3, -1, $usable, undef,
		'false', undef, undef, undef, undef);

	return $db->call("claim($dc, '$identity', $want, 3, -1, $usable)",
		undef, "'$proof'");
}

my $pads_of = "SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc";
my $usable = $db->now_ms;
my $o = server_claim('server 9', undef, 0, $usable);
is($o->{outcome}, 'register', 'a server without a key registered is answered a pad');
is($db->sql(undef, $pads_of), 2, 'which the datacenter keeps');
$o = server_claim('server 9', $o->{holder}, 0, $usable);
is($o->{outcome}, 'conflict',
	'its call with its key under the pad is refused (the id it wants is held)');
is($db->sql(undef, $pads_of), 1, 'and took the pad: a refused call leaves none');
$o = server_claim('server 9', undef, -1, $usable);
is($o->{outcome}, 'register', 'its next call is answered a new pad');
$o = server_claim('server 9', $o->{holder}, -1, $usable);
is($o->{outcome}, 'ok', 'and granted with its key under it');
is($db->sql(undef, $pads_of), 1, 'which took that pad too');
is($db->sql(undef,
		"SELECT encode(secret_sha256, 'hex') FROM snowid_coordinator.holders"
		  . " WHERE datacenter = $dc AND identity = 'server 9'"),
	Digest::SHA::sha256_hex(SnowidCoordDb::secret_of('server 9')),
	'its key is registered, as it sent it');

done_testing();
