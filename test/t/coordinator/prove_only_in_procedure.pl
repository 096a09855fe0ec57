# prove() takes a holder's proof, and locks its row, only when a procedure
# of the servers calls it (which commits at once): a member of the fleet's
# role that read a proof the database never took, and calls prove() with
# it and the very call it was made for, in a transaction block or from a
# DO block that copies the procedure's text, is refused and holds
# nothing; the call itself, made as the holder made it, then goes through
# with that proof (its n was not taken).  Without that rule the member
# keeps the holder's row and every call of the holder waits
# (coordinator/prove_holds_holder_row.pl, with a made-up proof).
#
# The coordination database only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Digest::SHA qw(sha256_hex);
use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use Test::More;
use Time::HiRes qw(time);

my $db = SnowidCoordDb->new('coord');
$db->grant;
my $dc = 4;
my $who = q{'server 0'};
$db->sql('coord_admin', "SELECT snowid_coordinator.new_datacenter($dc)");
my $o = $db->call("claim($dc, $who, -1, 3, -1, @{[ $db->now_ms ]})");
is($o->{outcome}, 'ok', 'a holder claims (its secret registers its key)');

# the proof the holder would send for its next check-in: its key, n and
# the call, each part but the last followed by a line feed
my $key = sha256_hex(SnowidCoordDb::secret_of($who));
my $usable = $db->now_ms + 1000;
my @call = ('claim', $dc, 'server 0', -1, 3, $o->{worker_id}, $usable, '', 'false',
	'', '', '', '');
my $n = int(time * 1_000_000);
my $proof = "$n:" . sha256_hex(join "\n", $key, $n, @call);
my $array = 'ARRAY[' . join(', ', map { $_ eq '' ? 'NULL' : "'$_'" } @call) . ']';

my $err = $db->sql_error('coord_fleet',
	"BEGIN; CALL snowid_coordinator.prove($dc, $who, '$proof', $array); COMMIT;");
like($err // 'taken', qr/^2D000: snowid_coordinator\.prove is called only by the servers' procedures/,
	'prove() with a good proof, called in a transaction block, is refused');
$err = $db->sql_error('coord_fleet', qq{
	DO \$\$
	DECLARE
		datacenter integer := $dc;
		identity text := $who;
		secret text := '$proof';
		made_for text[] := $array;
	BEGIN
		CALL snowid_coordinator.prove(datacenter, identity, secret, made_for);
	END
	\$\$;});
like($err // 'taken', qr/^2D000: snowid_coordinator\.prove is called only by the servers' procedures/,
	'and so is a DO block that calls it as the procedures do');
is($db->sql(undef, "SELECT proof_n FROM snowid_coordinator.holders WHERE datacenter = $dc"),
	0, 'neither took its n');

my $check = $db->call("claim($dc, $who, -1, 3, $o->{worker_id}, $usable)", undef, "'$proof'");
is("$check->{outcome} $check->{worker_id}", "ok $o->{worker_id}",
	'the call the proof was made for goes through with it');
is($db->sql(undef, "SELECT proof_n FROM snowid_coordinator.holders WHERE datacenter = $dc"),
	$n, 'and takes its n');
$err = $db->sql_error('coord_fleet',
	"CALL snowid_coordinator.claim($dc, $who, '$proof', -1, 3, $o->{worker_id}, $usable)");
like($err // 'granted', qr/^28000: holder proof taken already/, 'once');

done_testing();
