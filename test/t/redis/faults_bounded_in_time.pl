# Hanging and broken Redis servers: the whole claim ends within
# snowid.redis_timeout_ms however the server misbehaves (never answers,
# stalls after half a reply, drips a long reply a byte a second, closes
# mid-reply); a claim in progress is ended at once by pg_cancel_backend(),
# pg_terminate_backend(), statement_timeout and a fast shutdown, the
# sessions waiting for it are released, pg_stat_activity shows what it waits
# for, and no connection to Redis is left open.  Cluster redirections (MOVED,
# ASK, endless) are followed within the same deadline.
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
use Time::HiRes qw(time usleep);

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $timeout_ms = 1000;
# How long a stopped claim may take to end, in seconds.  A claim that does
# not end at its deadline or when stopped waits far longer (the fakes never
# answer, or drip for 100000 s; the claims stopped below have a 600 s
# timeout), so a bound this generous still tells the two apart and cannot
# be reached by a slow machine; the figures measured are logged.
my $ends_within_s = 30;
# (the fakes' redirections lead to other ports of 127.0.0.1: listed)
my $node = SnowidTest::new_server('faults',
	{ 'snowid.datacenter_id' => 1, 'snowid.redis_timeout_ms' => $timeout_ms,
	  'snowid.redis_redirect_hosts' => '127.0.0.1' });
my $redis_wait = SnowidTest::wait_event_name($node, 'SnowidCoordinator');
my $claim_wait = SnowidTest::wait_event_name($node, 'SnowidWorkerClaim');

# Each misbehaving server: the claim fails within the deadline (plus what
# psql itself takes) with a clear error.  A server that closes the
# connection ends the claim before its deadline, which is then generous:
# the fake, which forks for every connection, may take longer than 1 s to
# answer on a loaded machine, and the case shows the error of a closed
# connection, not the deadline.
for my $case (
	[ silent => $timeout_ms, qr/did not complete the worker id claim\nDETAIL:  The claim did not complete within snowid\.redis_timeout_ms \(1000 ms\)\./ ],
	[ half   => $timeout_ms, qr/did not complete the worker id claim\nDETAIL:  The claim did not complete within snowid\.redis_timeout_ms \(1000 ms\)\./ ],
	[ drip   => $timeout_ms, qr/did not complete the worker id claim\nDETAIL:  The claim did not complete within snowid\.redis_timeout_ms \(1000 ms\)\./ ],
	[ close  => 20000,       qr/did not complete the worker id claim\nDETAIL:  The server closed the connection\./ ])
{
	my ($rule, $deadline_ms, $pattern) = @$case;
	my $fake = SnowidFakeRedis->new(FCALL => $rule);

	SnowidRedis::point_at($node, $fake->url, $deadline_ms);
	my $start = time;
	my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
	my $elapsed = time - $start;
	like($err, qr/ERROR:  08006: redis server at 127\.0\.0\.1:\d+ $pattern/,
		"$rule: a clear error");
	note(sprintf('%s: the claim ended after %.2f s, on a %d ms deadline',
			$rule, $elapsed, $deadline_ms));
	cmp_ok($elapsed, '<', $ends_within_s,
		"$rule: the claim ends at its deadline, not when the server is done");
	$fake->stop;
}

# A server that answers AUTH, SELECT and FCALL, each just within the old
# per-command timeout, still ends within one deadline for the whole claim.
{
	my $fake = SnowidFakeRedis->new(
		AUTH   => 'perl:select(undef, undef, undef, 0.6); "+OK\r\n"',
		SELECT => 'perl:select(undef, undef, undef, 0.6); "+OK\r\n"',
		FCALL  => 'perl:select(undef, undef, undef, 0.6); "*2\r\n:1\r\n:0\r\n"');

	SnowidRedis::point_at($node, $fake->url('pw') . '/2', $timeout_ms);
	my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
	like($err, qr/ERROR:  08006: .*\nDETAIL:  The claim did not complete within snowid\.redis_timeout_ms/,
		'slow at every step: one deadline for all steps');
	$fake->stop;
}

# Redis Cluster redirections, followed within the same deadline: a MOVED
# to the node that owns the slot, an ASK that must be preceded by ASKING,
# and a node that redirects forever.  These cases show where the claim goes
# and that redirections end, not the deadline: it is generous, for fakes
# that fork for every connection on a loaded machine.
{
	my $owner = SnowidFakeRedis->new(
		ASKING => 'perl:$main::asking = 1; "+OK\r\n"',
		FCALL  => 'perl:$main::asking ? "*2\r\n:7\r\n:0\r\n" : "*2\r\n:5\r\n:0\r\n"');
	my $port = $owner->port;
	my $moved = SnowidFakeRedis->new(
		FCALL => qq{perl:"-MOVED 1234 127.0.0.1:$port\\r\\n"});
	my $ask = SnowidFakeRedis->new(
		FCALL => qq{perl:"-ASK 1234 127.0.0.1:$port\\r\\n"});
	my $loop = SnowidFakeRedis->new(
		FCALL => 'perl:"-MOVED 1234 :" . $ARGV[0] . "\r\n"');

	SnowidRedis::point_at($node, $moved->url, 30000);
	SnowidTest::next_ids($node, 1);
	is(SnowidRedis::worker($node), '5|redis', 'MOVED: claimed on the owner');
	SnowidRedis::point_at($node, $ask->url, 30000);
	SnowidTest::next_ids($node, 1);
	is(SnowidRedis::worker($node), '7|redis', 'ASK: claimed on the owner after ASKING');
	unlink $node->data_dir . '/snowid_worker';
	SnowidRedis::point_at($node, $loop->url, 30000);
	my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
	like($err, qr/ERROR:  58000: redis server at 127\.0\.0\.1:\d+ refused the worker id claim\nDETAIL:  Redis Cluster redirected the claim more than 3 times\./,
		'endless redirections: a clear error');
	unlink $node->data_dir . '/snowid_worker';
	$_->stop for ($owner, $moved, $ask, $loop);
}

# A claim that would hang for ten minutes, ended by each way a session can
# be stopped.  Returns the session and its backend's pid once it waits on
# Redis, with a second session queued behind it.
my $drip = SnowidFakeRedis->new(FCALL => 'drip');
SnowidRedis::point_at($node, $drip->url, 600000);

sub start_claim
{
	my ($sql) = @_;
	my $session = SnowidTest::start_psql($node, $sql // 'SELECT snowid_next()');
	my $pid = SnowidTest::pid_of(
		$node, qq{wait_event_type = 'Extension' AND wait_event = '$redis_wait'
		  AND query LIKE '%snowid_next%'},
		'the claim did not start waiting on Redis');
	my $queued = SnowidTest::start_psql($node, 'SELECT snowid_next() AS queued');
	$node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE wait_event = '$claim_wait' AND query LIKE '%AS queued%'})
	  or die 'the second session did not queue behind the claim';
	return ($session, $pid, $queued);
}

# Waits for a session to end; returns how long that took from $since, and
# logs it.
sub ended_after
{
	my ($session, $since, $what) = @_;
	my $elapsed;

	$session->finish;
	$elapsed = time - $since;
	note(sprintf('%s: the claim ended after %.2f s', $what, $elapsed));
	return $elapsed;
}

my ($session, $pid, $queued) = start_claim();
is(SnowidTest::wait_event_of($node, "pid = $pid", "Extension/$redis_wait"),
	"Extension/$redis_wait",
	"pg_stat_activity shows the claim waiting on Redis ($redis_wait)");
my $start = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
cmp_ok(ended_after($session, $start, 'pg_cancel_backend()'), '<', $ends_within_s,
	'pg_cancel_backend() ends the claim at once');
like($session->stderr, qr/ERROR:  57014: canceling statement due to user request/,
	'cancelled claim: the usual cancel error');
$queued->finish;
like($queued->stderr,
	qr/ERROR:  55000: snowid has no worker id\nDETAIL:  Another session failed to get one while this session waited for it/,
	'cancelled claim: the queued session is released with an error');

($session, $pid, $queued) = start_claim();
$start = time;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
cmp_ok(ended_after($session, $start, 'pg_terminate_backend()'), '<', $ends_within_s,
	'pg_terminate_backend() ends the claim at once');
like($session->stderr, qr/FATAL:  57P01: terminating connection due to administrator command/,
	'terminated claim: the usual error');
$queued->finish;
like($queued->stderr, qr/ERROR:  55000: snowid has no worker id/,
	'terminated claim: the queued session is released');

$session = SnowidTest::start_psql($node,
	"SET statement_timeout = '500ms'; SELECT snowid_next()");
$start = time;
cmp_ok(ended_after($session, $start, 'statement_timeout'), '<', $ends_within_s,
	'statement_timeout ends the claim');
like($session->stderr, qr/ERROR:  57014: canceling statement due to statement timeout/,
	'statement_timeout: the usual error');

($session, $pid, $queued) = start_claim();
$start = time;
$node->stop('fast');
my $stopped_s = time - $start;
note(sprintf('fast shutdown: the server stopped after %.2f s', $stopped_s));
cmp_ok($stopped_s, '<', $ends_within_s, 'a fast shutdown does not wait for the claim');
$session->finish;
$queued->finish;
like($session->stderr, qr/FATAL:  57P01: terminating connection due to administrator command/,
	'fast shutdown: the claiming session is terminated');
$drip->stop;

# A real Redis that hangs (SIGSTOP): a cancelled claim leaves no connection
# open once Redis runs again, and the next call claims.
my $redis = SnowidRedis->new;
my ($redis_pid) = $redis->cli('INFO', 'server') =~ /process_id:(\d+)/;
SnowidTest::set_conf($node, 'snowid.redis_url' => $redis->url,
	'snowid.redis_timeout_ms' => 600000);
$node->start;
kill 'STOP', $redis_pid or die "could not stop redis-server $redis_pid";
($session, $pid, $queued) = start_claim();
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$session->finish;
$queued->finish;
kill 'CONT', $redis_pid;
my $clients;
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
for (;;)
{
	($clients) = $redis->cli('INFO', 'clients') =~ /connected_clients:(\d+)/;
	last if $clients == 1 || time > $deadline;
	usleep(50_000);
}
is($clients, 1, 'cancelled claim: no connection to Redis left open');
# Redis may still run the EVAL it read after the cancel: then the claim is
# whole and this server's, and the next call gets the same id back.
my $owners = $redis->owners(1);
ok(!%$owners || (keys(%$owners) == 1
		&& $owners->{0} eq SnowidRedis::identity($node, 1)),
	'cancelled claim: Redis holds no claim, or a whole one of this server');
SnowidTest::next_ids($node, 10);
is(SnowidRedis::worker($node), '0|redis', 'the next call claims');
is_deeply($redis->owners(1), { 0 => SnowidRedis::identity($node, 1) },
	'Redis holds exactly that claim');

$node->stop;
done_testing();
