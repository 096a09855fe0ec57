# The wall clock steps back while the server runs.
#
# The server runs under libfaketime with an offset read from a file on every
# clock call, so the test can step the clock that the backends see.  A step
# back within snowid.max_drift_ms: ids continue, still increasing.  A step
# that the drift budget and snowid.max_wait_ms cannot cover: the call waits,
# then fails with an error saying by how much the clock is behind; once the
# clock is right again, ids continue above all earlier ones.  A step that a
# wait can cover: the call waits and succeeds.  A step back during a wait
# does not lengthen it beyond snowid.max_wait_ms.  Every id is kept and the
# whole set checked for duplicates.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $ids = SnowidTest::Ledger->new;

# One counter of snowid_status()
sub counter
{
	my ($node, $name) = @_;

	return $node->safe_psql('postgres', "SELECT $name FROM snowid_status()");
}

my $node = SnowidTest::new_node(
	'clock',
	{
		'snowid.datacenter_id' => 3,
		'snowid.worker_id' => 7,
		'snowid.max_drift_ms' => 10000,
		'snowid.max_wait_ms' => 500
	});
$clock->start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

$ids->take($node, 200, 'before any step');

# A step back of 5 s, within the 10 s drift budget: the generator keeps
# going, ahead of the clock, without waiting.
my $steps = counter($node, 'clock_steps');
my $waits = counter($node, 'waits');
$clock->set('-5');
$ids->take($node, 200, 'clock 5 s back');
cmp_ok(counter($node, 'clock_steps'), '>', $steps, 'the step was counted');
is(counter($node, 'waits'), $waits, 'no call waited');

$clock->set('+0');
$ids->take($node, 100, 'clock right again');

# A step back of 30 s: 10 s of drift and 0.5 s of waiting cannot cover it,
# even if the calls below come seconds after the step on a busy machine.
$steps = counter($node, 'clock_steps');
$waits = counter($node, 'waits');
my $errors = counter($node, 'clock_errors');
$clock->set('-30');

# (the real clock is read after the query, so that a slow query only adds
# to the lag)
my $seen = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp())');
my $lag = Time::HiRes::time() - $seen;
cmp_ok($lag, '>', 29, 'the backends see the clock 30 s back');

my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'snowid_next() fails when the clock is 30 s behind');
like(
	$stderr,
	qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
	'the error says by how many milliseconds the clock is behind');
my ($behind) = $stderr =~ /the system clock is (\d+) ms behind/;
cmp_ok($behind // 0, '>', 10000, 'and that is more than snowid.max_drift_ms');
like($stderr, qr/HINT:  Correct the system clock/, 'the hint says what to do');

($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT count(*) FROM snowid_next_batch(10)');
like(
	$stderr,
	qr/the system clock is \d+ ms behind the snowid generator/,
	'snowid_next_batch() fails the same way');

cmp_ok(counter($node, 'clock_steps'), '>', $steps, 'the step was counted');
cmp_ok(counter($node, 'waits'), '>=', $waits + 2, 'both calls waited');
is(counter($node, 'clock_errors'), $errors + 2, 'both calls failed');

# The clock is put right: ids continue above everything issued before.
$clock->set('+0');
$ids->take($node, 100, 'clock right after the errors');

# A step back of 6 s with only 0.2 s of drift allowed but 15 s of waiting:
# the call waits for the clock and then succeeds.
SnowidTest::reload_conf($node,
	'snowid.max_drift_ms' => 200,
	'snowid.max_wait_ms' => 15000);
$waits = counter($node, 'waits');
$errors = counter($node, 'clock_errors');
$clock->set('-6');
$ids->take($node, 10, 'clock 6 s back, waiting allowed');
cmp_ok(counter($node, 'waits'), '>', $waits, 'the call waited');
is(counter($node, 'clock_errors'), $errors, 'and did not fail');

# snowid.max_wait_ms bounds a wait even when the clock steps back again
# during it: the wait is measured on a clock that never steps.  The call
# waits for a clock 10 s behind, the clock steps back another 20 s, and the
# call still fails about 2 s after it began (a wait measured on the wall
# clock would go on for 20 s more, until at least 22 s after it began).
# The time is measured from before the call starts: however late in the
# wait the step comes, a wait measured on the wall clock would end at least
# 22 s after that, and the bound of 18 s leaves what a slow machine adds to
# the 2 s plenty of room.  The time measured is logged.
$clock->set('+0');
SnowidTest::reload_conf($node,
	'snowid.max_drift_ms' => 0,
	'snowid.max_wait_ms' => 2000);
$waits = counter($node, 'waits');
$errors = counter($node, 'clock_errors');
$ids->collect($node, 1);
$clock->set('-10');
my $began = Time::HiRes::time();
my $session = SnowidTest::start_psql($node, 'SELECT snowid_next()');
$node->poll_query_until('postgres',
	"SELECT waits > $waits FROM snowid_status()")
  or die 'the call did not wait';
$clock->set('-30');
my $stepped = Time::HiRes::time();
my $waiting = 1;
while ($waiting && Time::HiRes::time() - $stepped < 40)
{
	Time::HiRes::sleep(0.2);
	$waiting = $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity
		WHERE query = 'SELECT snowid_next()' AND state = 'active'});
}
my $ended = Time::HiRes::time();
$clock->set('+0');
note(sprintf('a step back during the wait: the call ended %.2f s after it was'
		  . ' started, %.2f s after the step', $ended - $began, $ended - $stepped));
isnt($session->finish, 0, 'a step back during the wait: the call fails');
like(
	$session->stderr,
	qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
	'a step back during the wait: with the clock error');
cmp_ok($ended - $began, '<', 18,
	'a step back during the wait: the call ended well before the wall clock caught up'
);
is(counter($node, 'clock_errors'), $errors + 1, 'the error was counted');

$ids->take($node, 100, 'clock right at the end');

$ids->no_duplicates;

$node->stop;
done_testing();
