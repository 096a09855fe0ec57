# A role without privileges learns nothing of Redis from snowid.  The claim
# runs in whichever session needs an id first after a start: a plain role
# that set client_min_messages = debug5 used to receive the LOG line of the
# claim, naming the Redis server, and errors, details, hints and contexts
# naming its hosts, the server's identity and the keys.  Now all of that
# goes to the server log only; such a client gets the outcome (its ids, or
# an error's SQLSTATE and a message without addresses).  A role that may
# read snowid.redis_url anyway (a superuser, a member of
# pg_read_all_settings) still gets the whole message.  The warning that
# snowid's library is not loaded in Redis (or one of an earlier release,
# 1.3.0's) names the installed file: a plain role does not get it either.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 7;
my $redis = SnowidRedis->new(tcp => 1);
my $tcp_url = 'redis://127.0.0.1:' . $redis->port;
my $node = $redis->new_node('msgs',
	{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $tcp_url });
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE ROLE plain LOGIN;
	CREATE ROLE watcher LOGIN IN ROLE pg_read_all_settings;
});
my $port = $redis->port;
my $identity = SnowidRedis::identity($node, $dc);

# What a client running sql as role receives on stderr, with every message
# level sent to it; and whether it failed.
sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		"SET client_min_messages = debug5;\n$sql",
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);

	return ($ret, $err);
}

# Checks that text names no Redis host, port, key or identity.
sub tells_nothing
{
	my ($text, $name) = @_;

	unlike($text, qr/127\.0\.0\.1|:$port\b|\Q$tcp_url\E/,
		"$name: no Redis host or port");
	unlike($text, qr/sysid=|\Q$identity\E/, "$name: no identity");
	unlike($text, qr/\{snowid:dc:/, "$name: no key");
}

# -- the first claim after a start, in a plain role's session ---------------

my ($ret, $err) = as_role('plain', 'SELECT snowid_next()');
is($ret, 0, 'the plain role takes the first id');
tells_nothing($err, 'claim');
ok( $node->log_contains(
		qr/LOG:  snowid claimed worker id \d+ of datacenter $dc in redis at 127\.0\.0\.1:$port\n/
	),
	'the claim is in the server log, with the server it went to');

# -- a failed claim ------------------------------------------------------------

# The claims of the datacenter dropped, not its state record: without it
# Redis would count as having forgotten them, and refuse every claim as
# quiet first.
sub drop_claims
{
	$redis->cli('HDEL', "{snowid:dc:$dc}:owners", $_)
	  for grep { /^\d+$/ }
	  split /\n/, $redis->cli('HKEYS', "{snowid:dc:$dc}:owners");
	return;
}

# The configured worker id is held by another server.
drop_claims();
$redis->cli('HSET', "{snowid:dc:$dc}:owners", '3',
	"dc=$dc host=elsewhere port=5432 sysid=1");
SnowidTest::set_conf($node, 'snowid.worker_id' => 3);
$node->restart;
my $log_at = -s $node->logfile;
($ret, $err) = as_role('plain', 'SELECT snowid_next()');
isnt($ret, 0, 'a conflict fails the plain role\'s call');
like(
	$err,
	qr/ERROR:  55006: worker id 3 of datacenter $dc is held by another server\nDETAIL:  The server log says which Redis server and why\./,
	'it gets the SQLSTATE and a message without addresses');
tells_nothing($err, 'conflict');
unlike($err, qr/elsewhere/, 'conflict: not the other server either');
my $log = slurp_file($node->logfile, $log_at);
like(
	$log,
	qr/LOG:  worker id 3 of datacenter $dc is held by another server\n.*DETAIL:  This server is "\Q$identity\E"; Redis has worker id 3 registered to "dc=$dc host=elsewhere/,
	'the server log has the whole report');

# The same error for a role that may read snowid.redis_url: the whole of it.
($ret, $err) = as_role('watcher', 'SELECT snowid_next()');
like(
	$err,
	qr/ERROR:  55006: worker id 3 of datacenter $dc is held by another server\nDETAIL:  This server is "\Q$identity\E"/,
	'a member of pg_read_all_settings gets the whole report');

# Redis cannot be reached (no cache to fall back on: a new data directory
# would have none; here the configured id was never confirmed).
$redis->stop;
($ret, $err) = as_role('plain', 'SELECT snowid_next()');
like(
	$err,
	qr/ERROR:  08001: could not connect to redis server\nDETAIL:  The server log says which Redis server and why\./,
	'unreachable: the outcome without the address');
tells_nothing($err, 'unreachable');
ok( $node->log_contains(
		qr/LOG:  could not connect to redis server at 127\.0\.0\.1:$port\n/),
	'the server log has the address');
$redis->start;

# -- the library not loaded: a warning whose hint names the installed file -----

$redis->cli('FUNCTION', 'FLUSH');
drop_claims();
SnowidTest::set_conf($node, 'snowid.worker_id' => -1);
$node->restart;
$log_at = -s $node->logfile;
($ret, $err) = as_role('plain', 'SELECT snowid_next()');
is($ret, 0, 'no library: the plain role takes an id, the library run with EVAL');
unlike($err, qr/function library|FUNCTION LOAD|\.lua/,
	'no library: the plain role gets no warning naming the installed file');
like(
	slurp_file($node->logfile, $log_at),
	qr/LOG:  snowid's function library is not loaded in redis, so snowid runs it with EVAL\n(?:.*\n)*?.*HINT:  Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < \S+snowid\.lua /,
	'no library: the server log has the warning and its hint');

# -- 1.3.0's library: a server of this release runs its own -------------------

# Release 1.3.0's library (SNOWID_EARLIER_RELEASES, or this clone's
# history), whose snowid_2_* functions take the holder secret itself: a
# server of this release, which sends a proof, finds no function of its
# own (snowid_3_*) and never calls one of 1.3.0's; its Redis user may EVAL
# here, so it runs the library it was built with, and the server log says
# why, with the command that loads this release's.
my $library_13 = SnowidTest::release_file('1.3', 'src/redis/snowid.lua');
like($library_13, qr/^local prefix = 'snowid_2_'$/m, "1.3.0's library names its functions snowid_2_*");
$redis->cli('FUNCTION', 'LOAD', 'REPLACE', $library_13);
drop_claims();
$node->restart;
$log_at = -s $node->logfile;
($ret, $err) = as_role('plain', 'SELECT snowid_next()');
is($ret, 0, '1.3.0\'s library: the server takes an id, its own library run with EVAL');
like(
	slurp_file($node->logfile, $log_at),
	qr/LOG:  snowid's function library is not loaded in redis, so snowid runs it with EVAL\n.*DETAIL:  Redis has no function snowid_3_\.\.\. of this release \(no snowid library is loaded there, or one of an earlier release\)\.(?:.*\n)*?.*HINT:  Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < \S+snowid\.lua /,
	'1.3.0\'s library: the server log says so, the hint the command that loads this release\'s');
$redis->load_library;

$node->stop;
done_testing();
