# What a claim's messages may show of what Redis says.  The password never
# shows, not even in part: not when Redis echoes AUTH's arguments (a real
# Redis 7 with AUTH renamed away and a long user name), nor wherever a reply
# places it relative to the cut of a long message (an error reply, the
# holder of a conflicting claim, the eviction policy).  A message cut to
# fit never splits a character, so a WIN1252 client gets the Redis error,
# not "invalid byte sequence".  A reply that this server holds another id,
# when no worker id is configured, does not speak of "worker id -1".
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidFakeRedis;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $password = 'pw-Secret-4g1k2q9s7w3z';    # 22 characters
my $user = 'snowid-' . ('u' x 103);         # 110 characters

# Every run of four characters of the password, as a pattern.
my $pieces = join '|', map { quotemeta substr($password, $_, 4) }
  0 .. length($password) - 4;
$pieces = qr/$pieces/;

my $node = SnowidTest::new_node('messages', { 'snowid.datacenter_id' => 6 },
	extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	-- n claims in a row; the error of each, or 'claimed'
	CREATE FUNCTION tries(n int) RETURNS SETOF text LANGUAGE plpgsql AS $$
	DECLARE
		m text;
		d text;
		h text;
	BEGIN
		FOR i IN 1 .. n LOOP
			BEGIN
				PERFORM snowid_next();
				RETURN NEXT 'claimed';
			EXCEPTION WHEN OTHERS THEN
				GET STACKED DIAGNOSTICS m = MESSAGE_TEXT,
					d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
				RETURN NEXT m || ' | ' || d || ' | ' || h;
			END;
		END LOOP;
	END $$;
});

# Points the node at url (a restart), with more settings if given.
sub use_redis
{
	my ($url, %settings) = @_;

	SnowidTest::set_conf($node, 'snowid.redis_url' => $url,
		'snowid.worker_id' => -1, %settings);
	$node->restart;
	return;
}

# A real Redis 7 with AUTH renamed away: it answers AUTH with "unknown
# command 'AUTH', with args beginning with: ..." and the arguments, cut.
my $redis = SnowidRedis->new(args => [ '--rename-command', 'AUTH', '' ]);
use_redis('unix://' . $user . ':' . $password . '@' . $redis->socket);
my $log_offset = -s $node->logfile;
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  28P01: authentication to redis server at unix:\S+ failed\nDETAIL:  Redis refused AUTH \(ERR\); the rest of its reply is not shown because AUTH carried the password\./,
	'renamed AUTH: the reply to AUTH is not echoed');
unlike($err, $pieces, 'renamed AUTH: no piece of the password in the error');
$node->stop;
unlike(slurp_file($node->logfile, $log_offset), $pieces,
	'renamed AUTH: no piece of the password in the server log');
$node->start;
$redis->stop;

# Error replies that hold the password, placed so that the cut of the
# message (256 bytes) falls before, inside and after it: every one is
# withheld, and no piece of the password shows.
my $tries = 300;
my $fake = SnowidFakeRedis->new(
	FCALL => qq{perl:"-ERR " . ("x" x \$n) . "$password\\r\\n"});
use_redis($fake->url($password));
my @messages = split /\n/,
  $node->safe_psql('postgres', "SELECT * FROM tries($tries)");
is(scalar(grep { /^redis server at 127\.0\.0\.1:\d+ refused the worker id claim \| Redis replied: \(not shown: it contains part of the password\)\. \| $/ } @messages),
	$tries, "an error reply with the password at each of $tries offsets: withheld");
is(scalar(grep { /$pieces/ } @messages), 0,
	'error replies: no piece of the password in any message');
$fake->stop;

# The holder named by a "held by another server" reply, likewise.
$fake = SnowidFakeRedis->new(
	FCALL => qq{perl:"-SNOWID_CONFLICT dc=6 host=" . ("h" x \$n) . "$password\\r\\n"});
use_redis($fake->url($password), 'snowid.worker_id' => 3);
@messages = split /\n/,
  $node->safe_psql('postgres', "SELECT * FROM tries($tries)");
is(scalar(grep { /^worker id 3 of datacenter 6 is held by another server \| This server is "[^"]+"; Redis has worker id 3 registered to "\(not shown: it contains part of the password\)"\./ } @messages),
	$tries, "a conflict naming the password as holder at each of $tries offsets: withheld");
is(scalar(grep { /$pieces/ } @messages), 0,
	'conflicts: no piece of the password in any message');
$fake->stop;

# An eviction policy that holds the password, around the cut: the claim
# succeeds, the warning withholds the policy.
$fake = SnowidFakeRedis->new(
	FCALL => 'perl:"*2\r\n:0\r\n:0\r\n"',
	INFO  => qq{perl:my \$i = "# Memory\\r\\nmaxmemory_policy:allkeys-" . ("x" x (226 + 5 * \$n)) . "$password\\r\\n"; "\\\$" . length(\$i) . "\\r\\n\$i\\r\\n"});
use_redis($fake->url($password));
my $warnings = '';
for my $i (0 .. 5)
{
	$node->restart if $i > 0;
	my ($ret, $out, $stderr) = $node->psql('postgres', 'SELECT snowid_next()');
	$warnings .= $stderr;
}
is(scalar(() = $warnings =~ /WARNING:  redis server at 127\.0\.0\.1:\d+ may evict snowid's worker id claims\nDETAIL:  Its maxmemory-policy is \(not shown: it contains part of the password\)\. An evicted claim/g),
	6, 'an eviction policy holding the password around the cut: withheld');
unlike($warnings, $pieces, 'eviction warnings: no piece of the password');
$fake->stop;

$node->stop;
unlike(slurp_file($node->logfile), $pieces,
	'no piece of the password anywhere in the server log');
$node->start;

# Two-byte characters (é in UTF-8) across the cut, for a WIN1252 client:
# every call gets the Redis error, none an encoding error.
my $calls = 40;
$fake = SnowidFakeRedis->new(
	FCALL => qq{perl:"-ERR " . ("x" x (190 + \$n)) . ("\\xc3\\xa9" x 40) . "\\r\\n"});
use_redis($fake->url);
my ($ret, $out, $stderr) = $node->psql('postgres',
	"SET client_encoding = 'WIN1252';\n" . ("SELECT snowid_next();\n" x $calls),
	on_error_stop => 0, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is(scalar(() = $stderr =~ /ERROR:  58000: redis server at 127\.0\.0\.1:\d+ refused the worker id claim\nDETAIL:  Redis replied: ERR x+\xe9+/g),
	$calls, 'WIN1252 client: the Redis error, cut between characters, every time');
unlike($stderr, qr/invalid byte sequence|character with byte sequence/,
	'WIN1252 client: no encoding error');
$fake->stop;

# "This server holds another id" when none is configured.
$fake = SnowidFakeRedis->new(FCALL => 'perl:"-SNOWID_HOLDS_OTHER 3\r\n"');
use_redis($fake->url);
$err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  08P01: unexpected reply from redis server at 127\.0\.0\.1:\d+\nDETAIL:  The claim script answered that this server holds worker id 3, which it answers only when snowid.worker_id is set; it is not\./,
	'holds another id, none configured: says what happened');
unlike($err, qr/-1/, 'holds another id, none configured: no "worker id -1"');
$fake->stop;

$node->stop;
done_testing();
