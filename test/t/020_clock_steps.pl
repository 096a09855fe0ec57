# The wall clock steps back while the server runs.
#
# The server runs under libfaketime with an offset read from a file on every
# clock call, so the test can step the clock that the backends see.  A step
# back within snowid.max_drift_ms: ids continue, still increasing.  A step
# that the drift budget and snowid.max_wait_ms cannot cover: the call waits,
# then fails with an error saying by how much the clock is behind; once the
# clock is right again, ids continue above all earlier ones.  A step that a
# wait can cover: the call waits and succeeds.  Every id is kept and the
# whole set checked for duplicates.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
die "libfaketime is required: $libfaketime not found" unless -e $libfaketime;

my $clock_file = "${PostgreSQL::Test::Utils::tmp_check}/020_clock";

# Sets the offset of the server's clock, in seconds ("-0.8", "+0").  The
# file is replaced atomically so that a backend never reads it half written.
sub set_clock
{
	my ($offset) = @_;

	open(my $fh, '>', "$clock_file.tmp") or die "could not write clock: $!";
	print $fh "$offset\n";
	close($fh);
	rename("$clock_file.tmp", $clock_file) or die "could not rename: $!";
	return;
}

# Starts the node with its clock under libfaketime.  The offset is read on
# every call (FAKETIME_NO_CACHE); the monotonic clock is left alone, as an
# NTP step would leave it, so that latch timeouts are not disturbed.
sub start_faked
{
	my ($node) = @_;

	local $ENV{LD_PRELOAD} = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $clock_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
	return;
}

my %seen;			# every id taken, to count duplicates
my $duplicates = 0;
my $max_id = 0;		# the largest id taken so far

# Takes n ids, one call each, and checks that all of them lie above every
# id taken before and that they increase.
sub take_ids
{
	my ($node, $n, $name) = @_;
	my @ids = split /\n/,
	  $node->safe_psql('postgres',
		"SELECT snowid_next() FROM generate_series(1, $n)");
	my $increasing = 1;

	for my $i (1 .. $#ids)
	{
		$increasing = 0 unless $ids[$i] > $ids[ $i - 1 ];
	}
	is(scalar(@ids), $n, "$name: $n ids");
	ok($increasing, "$name: ids increase");
	cmp_ok($ids[0], '>', $max_id, "$name: ids lie above every earlier id");
	for my $id (@ids)
	{
		$duplicates++ if $seen{$id}++;
		$max_id = $id if $id > $max_id;
	}
	return;
}

# One counter of snowid_status()
sub counter
{
	my ($node, $name) = @_;

	return $node->safe_psql('postgres', "SELECT $name FROM snowid_status()");
}

set_clock('+0');

my $node = PostgreSQL::Test::Cluster->new('clock');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.datacenter_id = 3
snowid.worker_id = 7
snowid.max_drift_ms = 1000
snowid.max_wait_ms = 500
});
start_faked($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

take_ids($node, 200, 'before any step');

# A step back of 0.8 s, within the 1 s drift budget: the generator keeps
# going, ahead of the clock, without waiting.
my $steps = counter($node, 'clock_steps');
my $waits = counter($node, 'waits');
set_clock('-0.8');
take_ids($node, 200, 'clock 0.8 s back');
cmp_ok(counter($node, 'clock_steps'), '>', $steps, 'the step was counted');
is(counter($node, 'waits'), $waits, 'no call waited');

set_clock('+0');
take_ids($node, 100, 'clock right again');

# A step back of 3 s: 1 s of drift and 0.5 s of waiting cannot cover it.
$steps = counter($node, 'clock_steps');
$waits = counter($node, 'waits');
my $errors = counter($node, 'clock_errors');
set_clock('-3');

my $lag = Time::HiRes::time() -
  $node->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp())');
cmp_ok($lag, '>', 2.5, 'the backends see the clock 3 s back');

my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'snowid_next() fails when the clock is 3 s behind');
like(
	$stderr,
	qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
	'the error says by how many milliseconds the clock is behind');
my ($behind) = $stderr =~ /the system clock is (\d+) ms behind/;
cmp_ok($behind // 0, '>', 1000, 'and that is more than snowid.max_drift_ms');
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
set_clock('+0');
take_ids($node, 100, 'clock right after the errors');

# A step back of 1.5 s with only 0.2 s of drift allowed but 5 s of waiting:
# the call waits for the clock and then succeeds.
$node->append_conf(
	'postgresql.conf', q{
snowid.max_drift_ms = 200
snowid.max_wait_ms = 5000
});
$node->reload;
$node->poll_query_until('postgres',
	"SELECT current_setting('snowid.max_wait_ms') = '5s'")
  or die "snowid.max_wait_ms was not reloaded";
$waits = counter($node, 'waits');
$errors = counter($node, 'clock_errors');
set_clock('-1.5');
take_ids($node, 10, 'clock 1.5 s back, waiting allowed');
cmp_ok(counter($node, 'waits'), '>', $waits, 'the call waited');
is(counter($node, 'clock_errors'), $errors, 'and did not fail');

set_clock('+0');
take_ids($node, 100, 'clock right at the end');

is($duplicates, 0, 'no id was issued twice in ' . scalar(keys %seen));

$node->stop;
done_testing();
