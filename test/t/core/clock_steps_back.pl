# The wall clock steps back while the server runs.
#
# The server runs under SnowidTest::Clock (test/tools/clock_offset.c), with
# an offset read from a file on every clock call, so the test can step the
# clock that the backends see.  A step
# back within snowid.max_drift_ms: ids continue, still increasing.  A step
# that the drift budget and snowid.max_wait_ms cannot cover: the call waits,
# then fails with an error saying by how much the clock is behind; once the
# clock is right again, ids continue above all earlier ones.  A step that a
# wait can cover: the call waits and succeeds.  A step back during a wait
# does not lengthen it beyond snowid.max_wait_ms.  Every id is kept and the
# whole set checked for duplicates.
#
# Then the clock itself: a process under it sees the wall clock at the
# file's offset (fractions and steps both ways), the monotonic clock
# untouched and errno kept; an absolute time ("@seconds") holds every wall
# clock still at that time; a file it cannot parse keeps the last setting
# and says so; a file missing at start stops the process.  A server under it
# follows the offset and keeps running through hundreds of statements
# cancelled by statement_timeout (a clock read in the SIGALRM handler, as
# the idle-stats timeout does after every statement on 15 and later) while
# the file is rewritten.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use IPC::Run;
use POSIX ();
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

my $node = $clock->new_server(
	'clock',
	{
		'snowid.datacenter_id' => 3,
		'snowid.worker_id' => 7,
		'snowid.max_drift_ms' => 10000,
		'snowid.max_wait_ms' => 500
	});

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

SnowidTest::fails_clock_behind($node, 'SELECT snowid_next()',
	'snowid_next() when the clock is 30 s behind');

my ($ret, $stdout, $stderr) =
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

# -- the clock itself --------------------------------------------------------

# Wall minus monotonic clock, s, read between two monotonic readings, and
# how far off it may be: half the time between them.
sub wall_minus_monotonic
{
	my $m1 = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
	my $r = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_REALTIME());
	my $m2 = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());

	return ($r - ($m1 + $m2) / 2, ($m2 - $m1) / 2);
}

# A Perl process under the clock reads the clock at +1000.5 s, writes a
# file it cannot parse and reads it again, writes -1000.25 and reads it
# again: each reading is wall minus monotonic clock, the error bound and
# the monotonic readings.  Then with errno set to EINVAL, time() and
# gettimeofday() (Time::HiRes::time) and errno afterwards.  Last, at the
# absolute time @1900000000.25: CLOCK_REALTIME, CLOCK_REALTIME_COARSE,
# gettimeofday() and time(), 50 ms of monotonic clock apart, and the
# monotonic clock before and after.
my $reader = q{
	use Time::HiRes qw(clock_gettime CLOCK_REALTIME CLOCK_MONOTONIC);
	use POSIX ();
	my $file = shift;
	sub put
	{
		open(my $fh, '>', "$file.tmp") or die $!;
		print $fh "$_[0]\n";
		close($fh);
		rename("$file.tmp", $file) or die $!;
	}
	sub reading
	{
		my $m1 = clock_gettime(CLOCK_MONOTONIC);
		my $r = clock_gettime(CLOCK_REALTIME);
		my $m2 = clock_gettime(CLOCK_MONOTONIC);
		printf "%s %.9f %.9f %.9f %.9f\n", $_[0], $r - ($m1 + $m2) / 2,
		  ($m2 - $m1) / 2, $m1, $m2;
	}
	put('+1000.5');
	reading('ahead');
	put('in an hour');
	reading('garbled');
	put('-1000.25');
	reading('behind');
	$! = POSIX::EINVAL;
	my $t = time;
	my $hires = Time::HiRes::time;
	printf "times %d %.6f %d\n", $t, $hires, $! + 0;
	put('@1900000000.25');
	for my $name ('still', 'still_later')
	{
		my $m = clock_gettime(CLOCK_MONOTONIC);
		printf "%s %.9f %.9f %.6f %d %.9f\n", $name, clock_gettime(CLOCK_REALTIME),
		  clock_gettime(Time::HiRes::CLOCK_REALTIME_COARSE()), Time::HiRes::time,
		  time, $m;
		select(undef, undef, undef, 0.05);
	}
};
my $probe = SnowidTest::Clock->new;
my ($real_before, $real_error) = wall_minus_monotonic();
my $mono_before = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
my $time_before = Time::HiRes::time();
my ($out, $err) = ('', '');
{
	my %env = $probe->env;
	local @ENV{ keys %env } = values %env;
	IPC::Run::run([ $^X, '-e', $reader, $probe->{file} ],
		'>', \$out, '2>', \$err)
	  or die "the reader failed: $err";
}
my $time_after = Time::HiRes::time();
my $mono_after = Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
my ($real_after, $real_error_after) = wall_minus_monotonic();
$real_error += $real_error_after + abs($real_after - $real_before);

my %reading;
for (split /\n/, $out)
{
	my ($name, @values) = split / /;
	$reading{$name} = \@values;
}
# A reading's offset from the real clock, and its error bound: the
# reading's and the real clock's, plus 10 ms for the frequency correction
# NTP may apply to the wall clock (not to CLOCK_MONOTONIC_RAW, but to
# CLOCK_MONOTONIC too) while the reader runs.
for my $case ([ 'ahead', 1000.5 ], [ 'garbled', 1000.5 ],
	[ 'behind', -1000.25 ])
{
	my ($name, $offset) = @$case;
	my ($diff, $error, $m1, $m2) = @{ $reading{$name} // [ 'nan', 0, 0, 0 ] };
	my $off_by = abs($diff - $real_before - $offset);

	cmp_ok($off_by, '<=', $error + $real_error + 0.01,
		"clock file: the wall clock reads at $offset s ($name)")
	  or diag("off by $off_by s");
	ok($m1 >= $mono_before && $m2 <= $mono_after,
		"clock file: the monotonic clock is the real one ($name)");
}
like($err, qr/clock_offset: could not read a clock setting, keeping the last one/,
	'clock file: a file that cannot be parsed is reported');
my ($t, $hires, $errno) = @{ $reading{times} // [ 0, 0, 0 ] };
ok( $t >= int($time_before - 1000.25) && $t <= $time_after - 1000.25,
	'clock file: time() reads at the offset');
ok( $hires >= $time_before - 1000.25 - 1e-6
	  && $hires <= $time_after - 1000.25,
	'clock file: gettimeofday() reads at the offset');
is($errno, POSIX::EINVAL(), 'clock file: errno is kept');
# (the readings go through Perl's doubles: 1e-6 s is far below their step)
my @still = @{ $reading{still} // [ 0, 0, 0, 0, 0 ] };
my @later = @{ $reading{still_later} // [ 0, 0, 0, 0, 0 ] };
ok( (grep { abs($_ - 1900000000.25) < 1e-6 } @still[ 0 .. 2 ], @later[ 0 .. 2 ])
	  == 6
	  && $still[3] == 1900000000
	  && $later[3] == 1900000000,
	'clock file: at @1900000000.25, every wall clock reads that time and stands still'
) or diag("read @still, then @later");
cmp_ok($later[4] - $still[4], '>=', 0.05,
	'clock file: at an absolute time, the monotonic clock runs on');

# A file missing when a process starts stops it.
unlink($probe->{file}) or die "could not remove the clock file: $!";
{
	my %env = $probe->env;
	local @ENV{ keys %env } = values %env;
	($out, $err) = ('', '');
	IPC::Run::run([ $^X, '-e', 'print time' ], '>', \$out, '2>', \$err);
}
is($? >> 8, 70, 'clock file: missing at start, the process exits');
like($err, qr/clock_offset: could not read a clock setting at start/,
	'clock file: missing at start, with a message');

# A server, without snowid, follows the offset both ways.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->append_conf('postgresql.conf', "log_min_messages = warning\n");
my $server_clock = SnowidTest::Clock->new;
$server_clock->start_node($plain);
for my $offset ('+1000', '-1000.5')
{
	$server_clock->set($offset);
	my $before = Time::HiRes::time();
	my $read = $plain->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $after = Time::HiRes::time();
	ok( $read >= $before + $offset - 1e-6 && $read <= $after + $offset,
		"a server's clock_timestamp() reads at $offset s")
	  or diag("read $read, real time from $before to $after");
}

# Statements cancelled by statement_timeout while they allocate, so that
# SIGALRM may land in malloc() and its handler reads the clock, while
# another process rewrites the clock file, alternately half a second ahead
# and behind (a statement the step back keeps from its timeout completes).
# Not a sure reproduction of the abort libfaketime's file mode caused (a
# signal has to interrupt malloc() at the right moment), but a server
# whose clock reads were not safe in a handler would show here in time.
my $rewriter = IPC::Run::start(
	[
		$^X, '-e', q{
			my $file = shift;
			for (my $i = 0;; $i++)
			{
				open(my $fh, '>', "$file.tmp") or die $!;
				print $fh ($i % 2 ? "-0.5\n" : "+0.5\n");
				close($fh);
				rename("$file.tmp", $file) or die $!;
				select(undef, undef, undef, 0.002);
			}
		},
		$server_clock->{file}
	]);
my $statements = 300;
my $script = "SET statement_timeout = '1ms';\n"
  . ("SELECT count(*) FROM generate_series(1, 200) g,"
	  . " LATERAL (SELECT repeat('x', 9000 + g * 61 % 120000) AS r) s"
	  . " WHERE length(r) > 0;\n") x $statements;
($stdout, $stderr) = (q{}, q{});
$plain->psql(
	'postgres', $script,
	on_error_stop => 0,
	stdout => \$stdout,
	stderr => \$stderr);
$rewriter->kill_kill;
my @lines = split /\n/, $stderr;
my $cancelled = grep { /canceling statement due to statement timeout/ } @lines;
my @other = grep { !/canceling statement due to statement timeout/ } @lines;
my $completed = () = $stdout =~ /^200$/mg;
is($cancelled + $completed, $statements,
	"$statements statements under a clock rewritten meanwhile: each completed or was cancelled"
) or diag(join("\n", @other[ 0 .. ($#other < 9 ? $#other : 9) ]));
note("$cancelled cancelled, $completed completed");
is($plain->safe_psql('postgres', 'SELECT 1'), '1', 'and the server still runs');
my $log = PostgreSQL::Test::Utils::slurp_file($plain->logfile);
unlike($log, qr/terminated by signal|clock_offset:/,
	'no backend died, no clock file unread');
$plain->stop;

done_testing();
