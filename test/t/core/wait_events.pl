# What pg_stat_activity shows while a session waits in snowid.
#
# From PostgreSQL 17 on, snowid's waits have names of their own
# (wait_event_type "Extension"): SnowidClock while a call waits for a
# lagging clock, SnowidMarkWrite while the high-water mark file is written.
# Before 17 both show as wait_event "Extension".  The clock is moved with
# SnowidTest::Clock; the mark write is held up by a FIFO in place of its
# temporary file, which blocks the writer until the test reads it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use POSIX qw(mkfifo);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $node = $clock->new_server(
	'wait',
	{
		'snowid.datacenter_id' => 1,
		'snowid.worker_id' => 2,
		'snowid.max_drift_ms' => 0,
		'snowid.max_wait_ms' => 600000
	});

my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;

# Waiting for the clock: ids were issued at the real time, then the clock
# steps back a minute; with no drift budget the next call waits.
my $last = $node->safe_psql('postgres', 'SELECT snowid_next()');
$clock->set('-60');
my $session = SnowidTest::start_psql($node,
	"SET application_name = 'clock_waiter'; SELECT snowid_next() > $last");
my $expected = $named ? 'Extension/SnowidClock' : 'Extension/Extension';
is( SnowidTest::wait_event_of(
		$node, "application_name = 'clock_waiter'", $expected),
	$expected, "a call waiting for the clock shows $expected");
$clock->set('+0');
is($session->finish, 0, 'the call goes on once the clock is back');
like($session->stdout, qr/^t$/m, 'and its id lies above the last one');

# Waiting for the mark file: a restart starts from the mark, so the first
# id writes a new one; a FIFO where the temporary file goes holds the write.
$node->stop;
my $fifo = $node->data_dir . '/snowid_state.tmp';
$clock->start_node($node);
mkfifo($fifo, 0600) or die "mkfifo $fifo: $!";
$session = SnowidTest::start_psql($node,
	"SET application_name = 'mark_writer'; SELECT snowid_next()");
$expected = $named ? 'Extension/SnowidMarkWrite' : 'Extension/Extension';
is( SnowidTest::wait_event_of(
		$node, "application_name = 'mark_writer'", $expected),
	$expected, "a call writing the mark shows $expected");

# Reading the FIFO lets the write go on: the mark arrives there whole, and
# the call returns its id.  (The tests run with fsync = off, so the FIFO is
# then renamed into place like a file; the next mark replaces it.)
open(my $reader, '<', $fifo) or die "open $fifo: $!";
my $written = do { local $/; <$reader> };
close($reader);
like($written, qr/^snowid \d+ epoch_ms=\d+ .*high_water_ms=\d+/,
	'the held write was a whole mark');
is($session->finish, 0, 'the call goes on once the mark is written');
like($session->stdout, qr/^\d+$/m, 'and returns an id');

$node->stop;
done_testing();
