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
# - A claim that declares a layout beyond the one the datacenter records
#   (worker id 40 of 0 to 63, where its live holder runs 0 to 31) is a
#   bound of its form too: refused as such under another holder's name,
#   by a name without a key before it is asked for one, and by a member
#   of its own, a lease claim too (which an id of the datacenter's own
#   layout, free, no longer lets through); and it writes nothing.
#   Before, both stores checked the layout of the id chosen, after the
#   proof, the pad and the forgetting rule: refused as another server's,
#   or asked to register, and Redis kept what the forgetting rule wrote
#   (the state record's counter) where the coordination database undid
#   the call.
# - The number of a proof its key makes is taken before anything else of
#   the call, a call whose declared layout (max), lease token or worker id
#   is out of bounds too: a later call of a smaller number is refused as
#   stale by both (SNOWID_STALE_PROOF, 28000).  Before, Redis checked
#   those three before taking the number, where the coordination
#   database's prove() takes it first: a logged proof of such a call made
#   a call later in Redis.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Digest::SHA qw(sha1_hex sha256_hex);
use SnowidCoord;
use SnowidMember;
use SnowidRedis;
use Test::More;

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 16;
my $usage = SnowidCoord::refused_as('usage');
my $wrong = SnowidCoord::refused_as('wrong');

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

# -- a layout beyond the datacenter's -------------------------------------------

# The datacenter records the layout of 0 to 31, of its two live holders
my $beyond = $pg
  ? qr/^55000: worker id (\d+) lies beyond the worker ids of datacenter $dc, 0 to 31\b/
  : qr/^SNOWID_LAYOUT 31 worker id (\d+) lies beyond the datacenter's worker ids, 0 to 31\b/;
like(SnowidMember->new($coord, $dc, 'second')->claim(quiet => 9000, margin => 1000),
	qr/^ok /, 'a second member claims in the layout of 0 to 31');
my $wide = SnowidMember->new($coord, $dc, 'wide');
$before = $holder->state;
like($other->claim(want => 40, max => 63, quiet => 9000, margin => 1000), $beyond,
	'under another holder\'s name, worker id 40 of a layout of 0 to 63 is refused as beyond'
	  . ' the datacenter\'s layout, not as another server\'s');
like($wide->claim(want => 40, max => 63, quiet => 9000, margin => 1000), $beyond,
	'so is it by a member of its own');
like($wide->lease_claim(max => 63, lease => 60000, client => $now, token => 'cd' x 8),
	$beyond, 'and a lease claim declaring 0 to 63, though ids of 0 to 31 are free');
is($holder->state, $before,
	'none of them changed anything: a claim beyond the layout writes nothing in either store');

# -- a name without a key: calls with holder proofs ----------------------------

# A call of claim by a name of its own with a proof "<n>:<proof>[:<key>]"
# (a proof, and a key as sent, of the store's length, made up; n the
# store's clock in microseconds, or past the n the store says it took, as
# a server sends it again): returns the refusal ("SQLSTATE: message",
# "SNOWID_... message"), or the outcome and the pad of the coordination
# database's register
my $name = "dc=$dc host=no-key port=1 sysid=1";
my $hex = $pg ? 64 : 40;

# (want, max: -1 and 31 unless given)
sub proof_call
{
	my ($usable, $key, $n, $want, $max) = @_;
	$n //= $holder->store_now * 1000;
	($want, $max) = (-1, 31) unless defined $max;
	my $reply = send_call($name, 'claim', "$want, $max, -1, $usable",
		"$want $max -1 0 $usable",
		"$n:" . ('5a' x ($hex / 2)) . (defined $key ? ":$key" : ''));

	return proof_call($usable, $key, $1 + 1, $want, $max)
	  if !defined $_[2] && $reply =~ /^(?:SNOWID_STALE_PROOF |28000: .*the last n taken is )(\d+)/;
	return $reply;
}

# A call of function as identity: its arguments after the proof as the
# coordination database's procedure takes them (sql) and as the library's
# numbers; last, the library's last argument ("[<token> ]<proof>"), the
# procedure's proof and, for a lease function, its token, last.  Returns
# the refusal ("SQLSTATE: message", "SNOWID_... message"), or "<outcome>
# <holder>" of the coordination database, "ok <reply>" of Redis
sub send_call
{
	my ($identity, $function, $sql, $numbers, $last) = @_;

	if ($pg)
	{
		my ($token, $proof) = $last =~ /^(?:(\S+) )?(\S+)$/;
		my ($ret, $out, $err) = $coord->node->psql('coord',
			"CALL snowid_coordinator.$function($dc, '$identity', '$proof', $sql"
			  . (defined $token ? ", '$token')" : ')'),
			extra_params => [ '-U', 'coord_fleet', '-v', 'VERBOSITY=verbose' ]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		my ($outcome, $holder_field) = (split /\|/, $out, -1)[ 0, 5 ];
		return "$outcome $holder_field";
	}
	my @reply = eval {
		$coord->cli('FCALL', "snowid_3_$function", 3, $holder->keys, $identity,
			$numbers, $last);
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

like(proof_call($holder->store_now, undef, undef, 40, 63), $beyond,
	'its call of worker id 40 of 0 to 63 is refused as beyond the layout, not asked'
	  . ' to register');
is($coord->db->sql(undef, $pads), 1,
	'the coordination database made no pad for it (the one it answered before stays)')
  if $pg;

# -- the number of a proof taken before every bound -----------------------------

# A call of the holder with its proof for n, made with the key its secret
# registered (each store's hash of the secret): function, its arguments
# after the proof as the proof covers them (undef: NULL), the same as SQL
# and as the library's numbers, and a lease function's token
sub holder_call
{
	my ($function, $n, $parts, $sql, $numbers, $token) = @_;
	my $me = $holder->identity;
	# (the member's secret: as its claims above registered it)
	my $secret = $holder->{secret};
	my $proof;

	if ($pg)
	{
		my $call = join "\n", map { $_ // '' } $function, $dc, $me, @$parts;
		$proof = "$n:" . sha256_hex(sha256_hex($secret) . "\n$n\n$call");
	}
	else
	{
		$proof = "$n:" . sha1_hex(join "\n", sha1_hex($secret), $n, $function,
			$holder->keys, $me, $numbers, defined $token ? $token : ());
	}
	return send_call($me, $function, $sql, $numbers,
		defined $token ? "$token $proof" : $proof);
}

# Its claim of the id it holds, within bounds, with its proof for n
sub holder_claim
{
	my ($n) = @_;
	my $usable = $holder->store_now;

	return holder_call('claim', $n,
		[ -1, 31, -1, $usable, undef, 'false', undef, undef, undef, undef ],
		"-1, 31, -1, $usable", "-1 31 -1 0 $usable");
}

my $stale = $pg ? qr/^28000: holder proof taken already/ : qr/^SNOWID_STALE_PROOF /;
my $n = $holder->store_now * 1000;
my $granted = holder_claim($n);
# (past the n the store says it took: none made within the second its run
# started, as the servers send it again)
($n, $granted) = ($1 + 1, holder_claim($1 + 1))
  if $granted =~ /^(?:SNOWID_STALE_PROOF |28000: .*the last n taken is )(\d+)/;
like($granted, qr/^ok /, 'the holder\'s claim with a proof of its key is granted');
my $at = $holder->store_now;
my $token = 'cd' x 8;
my %out_of_bounds = (
	'declaring a layout of 0 to 16777216' => [ 'claim',
		[ -1, 16777216, -1, $at, undef, 'false', undef, undef, undef, undef ],
		"-1, 16777216, -1, $at", "-1 16777216 -1 0 $at" ],
	'with a lease token in upper case' => [ 'lease_claim',
		[ 31, 60000, $at, $at, -1, 0, uc $token, undef, undef, undef, undef ],
		"31, 60000, $at, $at, -1, 0", "31 60000 $at $at -1 0", uc $token ],
	'renewing worker id 16777216' => [ 'lease_renew',
		[ 16777216, 60000, $at, $token, undef, undef, undef, undef, undef ],
		"16777216, 60000, $at", "16777216 60000 $at", $token ]);
for my $what (sort keys %out_of_bounds)
{
	my ($function, $parts, $sql, $numbers, $tok) = @{ $out_of_bounds{$what} };
	like(holder_call($function, $n + 2, $parts, $sql, $numbers, $tok), $usage,
		"the holder's call with its proof, $what, is refused as out of bounds");
	like(holder_claim($n + 1), $stale,
		'and took the number of its proof: its next call with a smaller one is refused as stale');
	$n += 2;
}
like(holder_claim($n + 1), qr/^ok /, 'its call with a larger number is granted');

done_testing();
