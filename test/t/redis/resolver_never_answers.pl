# A name server that never answers: resolving Redis' host name is part of
# the claim, so the claim still ends within snowid.redis_timeout_ms, and a
# cancel, statement_timeout or a fast shutdown ends it at once, however long
# the system's resolver would wait (here 150 s a lookup; hiredis made two).
# The server stays healthy, and names that resolve (through DNS, or
# /etc/hosts) still work, each address of a name tried in turn.  The same
# for a coordination database behind a host name.
#
# The test runs in namespaces of its own (SnowidFakeDns::isolate): a
# network with only loopback, where test/t/lib/fake_dns_server listens on
# 127.0.0.1:53, and an /etc/resolv.conf that names it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

my $skip;
BEGIN
{
	# What this test needs beyond PostgreSQL, before it enters its
	# namespaces: a skip naming the Debian package where it is missing (a
	# failure under SNOWID_REQUIRE_TOOLS=1).  Namespaces the kernel does
	# not offer are no missing tool: then it skips in any case.
	require SnowidRedis;
	SnowidRedis::need_redis();
	SnowidTest::need_program('ip', 'iproute2');
	require SnowidFakeDns;
	$skip = SnowidFakeDns::isolate();
}

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time usleep);

plan skip_all => $skip if $skip;

my $timeout_ms = 1000;
# How long a claim may take to end, in seconds: far below the 150 s a lookup
# takes (twice), so a generous bound that a slow machine cannot reach still
# tells the two apart; the figures measured are logged.
my $ends_within_s = 30;

# Redis listens on 127.0.0.3 only: at 127.0.0.2, the first address of
# redis.snowid.test, nothing listens.
my $redis = SnowidRedis->new(tcp => 1, args => [ '--bind', '127.0.0.3' ]);
my $port = $redis->port;
my $dns = SnowidFakeDns->new(
	'redis.snowid.test'   => '127.0.0.2,127.0.0.3',
	'refused.snowid.test' => '127.0.0.2',
	'coord.snowid.test'   => '127.0.0.1',
	'dual.snowid.test'    => '127.0.0.2,::1',
	'local.snowid.test'   => '127.0.0.1,::1',
	'gone.snowid.test'    => '');

my $node = SnowidTest::new_server('resolver',
	{
		'snowid.datacenter_id' => 1,
		'snowid.redis_url' => "redis://hang.snowid.test:$port",
		'snowid.redis_timeout_ms' => $timeout_ms
	});
my $redis_wait = SnowidTest::wait_event_name($node, 'SnowidCoordinator');

# Starts psql in the background running sql twice in one session, with
# verbose errors, not stopping at the first; a SnowidTest::Session.
sub start_twice
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $handle = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d',
			$node->connstr('postgres'), '-c', $sql, '-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err);

	return bless { handle => $handle, out => \$out, err => \$err },
	  'SnowidTest::Session';
}

# Waits for a background session to end, for at most twice $ends_within_s
# (a claim stuck in the resolver is then given up on: psql is killed);
# returns how long it took from $since, and logs it.
sub ended_after
{
	my ($session, $since, $what) = @_;
	my $handle = $session->{handle};
	my $elapsed;

	while ($handle->pumpable && time - $since < 2 * $ends_within_s)
	{
		$handle->pump_nb;
		usleep(10_000);
	}
	$handle->kill_kill if $handle->pumpable;
	$handle->finish;
	$elapsed = time - $since;
	note(sprintf('%s: the claim ended after %.2f s', $what, $elapsed));
	return $elapsed;
}

# A name that is never answered: the claim fails at its deadline, with the
# error of a Redis that cannot be reached.
my $start = time;
my $session = SnowidTest::start_psql($node, 'SELECT snowid_next()');
cmp_ok(ended_after($session, $start, 'unanswered name'), '<', $ends_within_s,
	'unanswered name: the claim ends at its deadline, not the resolver\'s');
like($session->stderr,
	qr/ERROR:  08001: could not connect to redis server at hang\.snowid\.test:$port\nDETAIL:  Resolving the host name did not complete within half of snowid\.redis_timeout_ms \(1000 ms\)\./,
	'unanswered name: the error of a Redis that cannot be reached');
ok(grep({ $_ eq 'hang.snowid.test 1' } $dns->queries),
	'unanswered name: the name server was asked');

# Two claims in one session: the second starts while glibc still runs the
# first's lookup, and ends at its own deadline too.
$start = time;
$session = start_twice('SELECT snowid_next()');
cmp_ok(ended_after($session, $start, 'two claims in one session'), '<',
	$ends_within_s, 'two claims in one session: both end at their deadline');
my @errors = $session->stderr =~ /(Resolving the host name did not complete)/g;
is(scalar @errors, 2, 'two claims in one session: both fail the same way');

# A claim waiting for the name server, with a deadline ten minutes away,
# ended each way a session can be stopped.  Returns the session and its
# backend's pid once the name server has the query.
SnowidRedis::point_at($node, "redis://hang.snowid.test:$port", 600000);

sub start_claim
{
	my ($sql) = @_;
	my $session = SnowidTest::start_psql($node, $sql // 'SELECT snowid_next()');
	# exactly one such session: the one just started (the sessions of an
	# earlier step may still be ending)
	my $pid = SnowidTest::pid_of($node, "query LIKE '%snowid_next%'",
		'the claim did not start');

	return ($session, $pid);
}

my $asked = $dns->queries;
($session, my $pid) = start_claim();
$dns->wait_for_query('hang.snowid.test', $asked)
  or die 'the claim did not ask the name server';
is(SnowidTest::wait_event_of($node, "pid = $pid", "Extension/$redis_wait"),
	"Extension/$redis_wait",
	"pg_stat_activity shows the lookup as a wait on Redis ($redis_wait)");
$start = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
cmp_ok(ended_after($session, $start, 'pg_cancel_backend()'), '<',
	$ends_within_s, 'pg_cancel_backend() ends a claim waiting for the name');
like($session->stderr,
	qr/ERROR:  57014: canceling statement due to user request/,
	'cancelled lookup: the usual cancel error');

$start = time;
$session = SnowidTest::start_psql($node,
	"SET statement_timeout = '500ms'; SELECT snowid_next()");
cmp_ok(ended_after($session, $start, 'statement_timeout'), '<',
	$ends_within_s, 'statement_timeout ends a claim waiting for the name');
like($session->stderr,
	qr/ERROR:  57014: canceling statement due to statement timeout/,
	'statement_timeout: the usual error');

# The server is healthy: it answers, and the lookups given up still running
# in glibc's threads leave its sessions alone.
is($node->safe_psql('postgres', 'SELECT snowid_decode(snowid_from_time(now())) IS NOT NULL'),
	't', 'after the given-up lookups, the server answers');

$asked = $dns->queries;
($session, $pid) = start_claim();
$dns->wait_for_query('hang.snowid.test', $asked)
  or die 'the claim did not ask the name server';
$start = time;
$node->stop('fast');
my $stopped_s = time - $start;
note(sprintf('fast shutdown: the server stopped after %.2f s', $stopped_s));
cmp_ok($stopped_s, '<', $ends_within_s,
	'a fast shutdown does not wait for the lookup');
ended_after($session, $start, 'fast shutdown');
like($session->stderr,
	qr/FATAL:  57P01: terminating connection due to administrator command/,
	'fast shutdown: the claiming session is terminated');

# Names that resolve.  An address that refuses: its own error.
SnowidTest::set_conf($node,
	'snowid.redis_url' => "redis://refused.snowid.test:$port",
	'snowid.redis_timeout_ms' => 5000);
$node->start;
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  08001: could not connect to redis server at refused\.snowid\.test:$port\nDETAIL:  Connection refused\./,
	'a name whose one address refuses: the connection\'s error');

# A name whose first address refuses and second is Redis: the claim tries
# each in turn.
SnowidRedis::point_at($node, "redis://redis.snowid.test:$port", 5000);
SnowidTest::next_ids($node, 10);
is(SnowidRedis::worker($node), '0|redis',
	'a name with two addresses: claimed at the second');
is_deeply($redis->owners(1), { 0 => SnowidRedis::identity($node, 1) },
	'Redis holds the claim');

# Takes an id, noting the error if the claim fails (the caller checks
# where the worker id came from).
sub claim_note
{
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	note $err if $ret != 0;
	return;
}

# A name with an IPv4 address where nothing listens and an IPv6 one where
# Redis does: every address of the name is tried, of either family, in the
# order the system sorts them.  Before, only a name's IPv4 addresses were.
$redis->stop;
$redis = SnowidRedis->new(tcp => 1, args => [ '--bind', '::1' ]);
$port = $redis->port;
SnowidRedis::point_at($node, "redis://dual.snowid.test:$port", 5000);
claim_note();
is(SnowidRedis::worker($node), '0|redis',
	'a name with an IPv4 and an IPv6 address: claimed at the IPv6 one');
ok(grep({ $_ eq 'dual.snowid.test 28' } $dns->queries),
	'the name\'s IPv6 addresses were asked for');

# Redis on 127.0.0.1 only, behind a name whose ::1 the system may sort
# first, as localhost often is: the IPv4 address is still tried.
$redis->stop;
$redis = SnowidRedis->new(tcp => 1);
$port = $redis->port;
SnowidRedis::point_at($node, "redis://local.snowid.test:$port", 5000);
claim_note();
is(SnowidRedis::worker($node), '0|redis',
	'a name with ::1 and 127.0.0.1, Redis on 127.0.0.1 only: claimed');

# A name from /etc/hosts, which never asks the name server, and an address.
SnowidRedis::point_at($node, "redis://localhost:$port", 5000);
SnowidTest::next_ids($node, 10);
is(SnowidRedis::worker($node), '0|redis',
	'localhost, from /etc/hosts: claimed');
SnowidRedis::point_at($node, "redis://127.0.0.1:$port", 5000);
SnowidTest::next_ids($node, 10);
is(SnowidRedis::worker($node), '0|redis', 'an address: claimed');
ok(!grep({ /^(localhost|127\.0\.0\.1) / } $dns->queries),
	'neither /etc/hosts names nor addresses ask the name server');

# A coordination database behind a host name: snowid resolves it, within
# snowid.coordinator_timeout_ms and cancellably, and hands libpq the
# address (libpq's own lookup could not be interrupted).
my $coord = SnowidPgCoord->new;
my $cn = $coord->node;
SnowidTest::prepend_hba($cn, 'host coord coord_fleet 127.0.0.1/32 trust',
	'host coord coord_fleet ::1/128 trust');
$cn->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1,::1'\n");
$cn->restart;
my $cport = $cn->port;

sub use_coordinator
{
	my ($url, $timeout) = @_;

	$node->stop;
	SnowidTest::set_conf($node,
		'snowid.redis_url' => '',
		'snowid.coordinator_url' => $url,
		'snowid.coordinator_timeout_ms' => $timeout);
	$node->start;
	return;
}

use_coordinator("postgresql://coord_fleet\@hang.snowid.test:$cport/coord",
	1000);
$start = time;
$session = SnowidTest::start_psql($node, 'SELECT snowid_next()');
cmp_ok(ended_after($session, $start, 'coordination database, unanswered name'),
	'<', $ends_within_s,
	'a coordination database behind an unanswered name: the claim ends at its deadline');
like($session->stderr,
	qr/ERROR:  08001: could not connect to the coordination database at hang\.snowid\.test:$cport\/coord\nDETAIL:  Resolving "hang\.snowid\.test" did not complete within half of snowid\.coordinator_timeout_ms \(1000 ms\)\./,
	'and says the name did not resolve in time');
unlike($session->stderr, qr/snowid cannot confirm worker id/,
	'the id claimed in Redis is not asked of the coordination database');

use_coordinator("postgresql://coord_fleet\@hang.snowid.test:$cport/coord",
	600000);
my $asked = grep { /^hang\.snowid\.test / } $dns->queries;
$session = SnowidTest::start_psql($node, 'SELECT snowid_next()');
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT snowid_next()'")
  or die 'the claim never started';
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
usleep(100_000)
  while (grep { /^hang\.snowid\.test / } $dns->queries) <= $asked
  && time < $deadline;
(grep { /^hang\.snowid\.test / } $dns->queries) > $asked
  or die 'the claim never asked the name server';
$start = time;
$node->safe_psql('postgres', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE query = 'SELECT snowid_next()'});
cmp_ok(ended_after($session, $start, 'coordination database, cancel'), '<',
	$ends_within_s, 'a cancel ends a claim waiting for the name at once');
like($session->stderr, qr/57014/, 'as a cancel');

use_coordinator("postgresql://coord_fleet\@coord.snowid.test:$cport/coord",
	5000);
# The coordination server was restarted above (to listen on both
# families), which its first answered call takes as a possible loss: a
# quiet period, which the administrator ends, the restart having kept every
# write (coordinator.md).
like(SnowidTest::psql_error($node, 'SELECT snowid_next()'),
	qr/55006: snowid cannot claim a worker id of datacenter 1 until/,
	'a name that resolves: the first call reaches the restarted coordination database');
$coord->db->sql('coord_admin', 'SELECT snowid_coordinator.end_quiet(1)');
SnowidTest::next_ids($node, 10);
like(SnowidRedis::worker($node), qr/^\d+\|postgresql$/,
	'a name that resolves: claimed from the coordination database');

# A name whose first IPv4 address refuses: libpq is handed every address
# of the name, of either family, as it would have tried them itself.
# Before, it was handed the first IPv4 one only, and the claim failed.
use_coordinator("postgresql://coord_fleet\@dual.snowid.test:$cport/coord",
	5000);
claim_note();
like(SnowidRedis::worker($node), qr/^\d+\|postgresql$/,
	'a name with a refusing IPv4 address and an IPv6 one: claimed from the coordination database');

# One host of several whose name has no address (a failed node whose DNS
# record went away), or whose name server never answers: left out like a
# host that does not answer, and the others are tried.  Before, the first
# failed every call, and the second took the whole timeout.
for my $case ([ 'gone.snowid.test', 'a name without an address' ],
	[ 'hang.snowid.test', 'an unanswered name' ])
{
	my ($name, $what) = @$case;

	use_coordinator(
		"postgresql://coord_fleet\@$name:$cport,coord.snowid.test:$cport/coord",
		6000);
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	note $err if $ret != 0;
	# claimed from the store, not taken from the cache file as when the
	# coordination database cannot be reached
	like(SnowidRedis::worker($node), qr/^\d+\|postgresql$/,
		"the first of two hosts $what: the claim is made through the other");
}

$node->stop;
done_testing();
