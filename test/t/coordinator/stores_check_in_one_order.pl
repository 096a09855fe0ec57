# Both stores check a call in one order (doc/internals.md, "The order of a
# call's checks"): its form, every value within its bounds, before its
# holder's proof and the pad a name without a key registers it under; so
# that Redis' library and the coordination database answer the same calls
# alike (issue 67, item 4), where test/protocol-search --store both does
# not reach (its calls are those of honest servers, with proofs their keys
# make).  A member of the fleet calls by hand, with the same numbers on
# either store:
#
# - A call with a number out of bounds, under another holder's name with
#   a secret not its own, is refused as out of bounds: a usable time more
#   than two days past the store's clock, a generation seen more than an
#   hour past it, a quiet period shorter than any server declares, a lease
#   of 0 ms.  Before, Redis checked them after the secret, and so did the
#   coordination database those against its clock: refused as another
#   server's by one store and out of bounds by the other, or by both as
#   another server's.  Neither changes anything.
# - The same out of bounds in the first call of a name without a key:
#   refused as such, not asked to register its key (SNOWID_REGISTER, the
#   outcome register with a pad).  Before, both asked, and the database
#   kept the pad of the call that then sent its key under it and failed
#   (an error undid its taking).
# - A name without a key that sends one with a proof that key does not
#   make: refused as another server's by both (Redis checks the proof with
#   the key sent, the database with the key unmasked under the pad it
#   answered).  Before, the database answered it a new pad.  Nothing is
#   registered.
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
my $dc = 16;
my $usage = $pg ? qr/^22023: / : qr/^SNOWID_USAGE /;
my $wrong = $pg ? qr/^42501: / : qr/^SNOWID_WRONG_SECRET /;

# -- out of bounds under another holder's name --------------------------------

my $holder = SnowidMember->new($coord, $dc, 'holder');
like($holder->claim(quiet => 9000, margin => 1000), qr/^ok /,
	'a member claims, registering its secret for its name');
my $other = SnowidMember->named($coord, $dc, $holder->identity);
my $now = $holder->store_now;
like($other->claim(quiet => 9000, margin => 1000), $wrong,
	'another secret under its name is refused as another server\'s');
my $before = $holder->state;
my %bad = (
	'a usable time three days past the store\'s clock' =>
	  sub { $other->claim(usable => $now + 3 * 86400000, quiet => 9000, margin => 1000) },
	'a generation seen two hours past the store\'s clock' =>
	  sub { $other->claim(quiet => 9000, generation => $now + 7200000, counter => 0, margin => 1000) },
	'a quiet period of 1 ms' => sub { $other->claim(quiet => 1, margin => 1000) },
	'a lease of 0 ms' => sub {
		$other->lease_claim(max => 31, lease => 0, client => $now, token => 'ab' x 8)
	});
for my $what (sort keys %bad)
{
	like($bad{$what}->(), $usage,
		"under another holder's name, $what is refused as out of bounds");
}
is($holder->state, $before, 'and none of them changed anything');

# -- a name without a key: calls with holder proofs ----------------------------

# A call of claim by a name of its own with a proof "<n>:<proof>[:<key>]"
# (a proof, and a key as sent, of the store's length, made up; n the
# store's clock in microseconds, or past the n the store says it took, as
# a server sends it again): returns the refusal ("SQLSTATE: message",
# "SNOWID_... message"), or the outcome and the pad of the coordination
# database's register
my $name = "dc=$dc host=no-key port=1 sysid=1";
my $hex = $pg ? 64 : 40;

sub proof_call
{
	my ($usable, $key, $n) = @_;
	$n //= $holder->store_now * 1000;
	my $reply = proof_send($usable, "$n:" . ('5a' x ($hex / 2))
		  . (defined $key ? ":$key" : ''));

	return proof_call($usable, $key, $1 + 1)
	  if !defined $_[2] && $reply =~ /^(?:SNOWID_STALE_PROOF |28000: .*the last n taken is )(\d+)/;
	return $reply;
}

sub proof_send
{
	my ($usable, $proof) = @_;

	if ($pg)
	{
		my ($ret, $out, $err) = $coord->node->psql('coord',
			"CALL snowid_coordinator.claim($dc, '$name', '$proof', -1, 31, -1, $usable)",
			extra_params => [ '-U', 'coord_fleet', '-v', 'VERBOSITY=verbose' ]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		my ($outcome, $holder_field) = (split /\|/, $out, -1)[ 0, 5 ];
		return "$outcome $holder_field";
	}
	my @reply = eval {
		$coord->cli('FCALL', 'snowid_3_claim', 3, $holder->keys, $name,
			"-1 31 -1 0 $usable", $proof);
	};
	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	return "ok @reply";
}

my $pads = "SELECT count(*) FROM snowid_coordinator.pads WHERE datacenter = $dc";
$before = $holder->state;
like(proof_call($holder->store_now + 3 * 86400000), $usage,
	'the first call of a name without a key, out of bounds, is refused as such,'
	  . ' not asked to register');
is($coord->db->sql(undef, $pads), 0, 'the coordination database kept no pad for it')
  if $pg;

my $asked = proof_call($holder->store_now);
like($asked, $pg ? qr/^register [0-9a-f]{64}$/ : qr/^SNOWID_REGISTER /,
	'its call within bounds is asked to register its key');
# the key as sent: to the coordination database under the pad it answered
# (any 64 digits unmask to some key: the proof shows it is not this one)
like(proof_call($holder->store_now, 'c3' x ($hex / 2)), $wrong,
	'sent with a key that does not make its proof, it is refused as another server\'s');
is($holder->state, $before, 'nothing changed');
my $key = $pg
  ? $coord->db->sql(undef, "SELECT count(*) FROM snowid_coordinator.holders"
	  . " WHERE datacenter = $dc AND identity = '$name'")
  : $coord->cli('HEXISTS', ($holder->keys)[2], "secret $name");
is($key, 0, 'and no key is registered for the name');

done_testing();
