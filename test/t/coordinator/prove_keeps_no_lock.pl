# prove() takes a holder's proof and keeps no lock another call waits for,
# however its caller calls it: a member of the fleet's role that read
# proofs the database never took, and takes them with prove() in a
# transaction left open, or in a DO block in one, delays none of the
# holder's calls, which go through with their own proofs within their
# lock_timeout while those transactions stay open.  Only a replay of the
# very proof the member took waits (its n is being taken), for at most the
# call's lock_timeout, and once the member commits it is refused: a proof
# makes its call once, whoever took it.  No check of a call reads the
# words of a message, which lc_messages translates: with lc_messages
# German, prove() takes a proof and the holder's call goes through as in
# English, and run_<name>() still refuses any caller but its procedure
# (where the server has German translations and the locale de_DE.UTF-8).
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
my $w = $o->{worker_id};

# A check-in of the holder with a proof of its own: its key, n (its clock
# in microseconds, past the last it sent) and the call, each part but the
# last followed by a line feed.  Returns the proof, the call's arguments
# after the proof, and the array of the call prove() is given.
my $key = sha256_hex(SnowidCoordDb::secret_of($who));
my $last_n = 0;
sub check_in
{
	my $usable = $db->now_ms + 1000;
	my @call = ('claim', $dc, 'server 0', -1, 3, $w, $usable, '', 'false',
		'', '', '', '');
	my $n = int(time * 1_000_000);
	$n = $last_n + 1 if $n <= $last_n;
	$last_n = $n;
	return {
		n => $n,
		proof => "$n:" . sha256_hex(join "\n", $key, $n, @call),
		args => "-1, 3, $w, $usable",
		array => 'ARRAY['
		  . join(', ', map { $_ eq '' ? 'NULL' : "'$_'" } @call) . ']',
	};
}
sub holder_call
{
	my ($c, $lock_timeout) = @_;
	return "SET lock_timeout = '$lock_timeout';\n"
	  . "CALL snowid_coordinator.claim($dc, $who, '$c->{proof}', $c->{args});";
}

# the member takes two proofs the holder made and the database never took,
# one with prove() in a transaction it leaves open, one with a DO block in
# another
my ($open, $in_do) = (check_in(), check_in());
my $member = $db->node->background_psql('coord',
	extra_params => [ '-U', 'coord_fleet' ]);
$member->query_safe('BEGIN');
$member->query_safe(
	"CALL snowid_coordinator.prove($dc, $who, '$open->{proof}', $open->{array})");
my $member_do = $db->node->background_psql('coord',
	extra_params => [ '-U', 'coord_fleet' ]);
$member_do->query_safe('BEGIN');
$member_do->query_safe(qq{
	DO \$\$
	BEGIN
		CALL snowid_coordinator.prove($dc, $who, '$in_do->{proof}', $in_do->{array});
	END
	\$\$});

# the holder's next check-in, with its own proof: no wait
my $next = check_in();
my $start = time;
my $err = $db->sql_error('coord_fleet', holder_call($next, '10s'));
is($err, undef,
	'the holder\'s next call goes through within its lock_timeout while both stay open');
note(sprintf('it took %.2f s', time - $start));
is($db->sql(undef, "SELECT max(n) FROM snowid_coordinator.proofs_taken"
	  . " WHERE datacenter = $dc"), $next->{n}, 'and its n is taken');
is($db->sql(undef, "SELECT worker_id FROM snowid_coordinator.workers"
	  . " WHERE datacenter = $dc AND holder = $who"), $w, 'it keeps its worker id');

# a replay of the proof the member's DO block is taking waits for it, for
# at most the call's lock_timeout (its n is below the holder's last since,
# so replay the one the member took before the holder's call: made anew)
my $replayed = check_in();
my $taker = $db->node->background_psql('coord',
	extra_params => [ '-U', 'coord_fleet' ]);
$taker->query_safe('BEGIN');
$taker->query_safe(
	"CALL snowid_coordinator.prove($dc, $who, '$replayed->{proof}', $replayed->{array})");
$start = time;
$err = $db->sql_error('coord_fleet', holder_call($replayed, '1s'));
like($err // 'granted', qr/^55P03: /,
	'a replay of a proof another transaction is taking waits for it, up to its lock_timeout');
note(sprintf('it waited %.2f s', time - $start));
$taker->query_safe('COMMIT');
$taker->quit;
$err = $db->sql_error('coord_fleet', holder_call($replayed, '10s'));
like($err // 'granted', qr/^28000: holder proof taken already/,
	'and is refused once that transaction commits');

# the members commit: what they took counts as taken
$member->query_safe('COMMIT');
$member_do->query_safe('COMMIT');
$member->quit;
$member_do->quit;
for my $c ($open, $in_do)
{
	$err = $db->sql_error('coord_fleet', holder_call($c, '10s'));
	like($err // 'granted', qr/^28000: holder proof taken already/,
		'a proof a member took is refused to its call');
}
my $after = check_in();
is($db->sql_error('coord_fleet', holder_call($after, '10s')), undef,
	'the holder\'s next call goes through');
is($db->sql(undef, "SELECT string_agg(n::text, ' ') FROM snowid_coordinator.proofs_taken"
	  . " WHERE datacenter = $dc"), $after->{n},
	'its n is all the table keeps of the holder: the rows below it went');

# German messages: the words of the stack's lines are translated
SKIP:
{
	my $de = $db->sql_error(undef,
		"SET lc_messages = 'de_DE.UTF-8';\nSELECT 1 / 0;");
	skip('the locale de_DE.UTF-8 is missing on this machine', 5)
	  if $de =~ /^22023: /;
	skip('this PostgreSQL has no German translations (built without NLS)', 5)
	  unless $de =~ /Division durch Null/;
	$db->sql(undef, "ALTER ROLE coord_fleet SET lc_messages = 'de_DE.UTF-8'");
	my $c = check_in();
	$err = $db->sql_error('coord_fleet',
		"CALL snowid_coordinator.prove($dc, $who, '$c->{proof}', $c->{array})");
	is($err, undef, 'prove() takes a proof with lc_messages German');
	is($db->sql(undef, "SELECT max(n) FROM snowid_coordinator.proofs_taken"
		  . " WHERE datacenter = $dc"), $c->{n}, 'its n');
	$err = $db->sql_error('coord_fleet',
		"CALL snowid_coordinator.prove($dc, $who, '$c->{proof}', $c->{array})");
	like($err // 'taken', qr/\b28000: holder proof taken already/, 'once');
	$c = check_in();
	is($db->sql_error('coord_fleet', holder_call($c, '10s')), undef,
		'the holder\'s call goes through with lc_messages German');
	like($db->sql_error('coord_fleet', qq{
			DO \$\$ BEGIN
			PERFORM snowid_coordinator.run_claim($dc, $who, '$c->{proof}', $c->{args});
			END \$\$}) // 'granted',
		qr/\b2D000: snowid_coordinator\.run_claim is called only by CALL/,
		'and run_claim() still refuses any caller but its procedure');
	$db->sql(undef, "ALTER ROLE coord_fleet RESET lc_messages");
}

done_testing();
