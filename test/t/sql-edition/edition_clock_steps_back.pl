# The SQL edition when the wall clock steps back (as core/clock_steps_back.pl for
# the C edition): the server runs under SnowidTest::Clock with an offset the test
# changes.  A step back within max_drift_ms: ids go on, still increasing,
# without waiting.  A step that max_drift_ms and max_wait_ms cannot cover:
# the call fails saying by how much the clock is behind; once the clock is
# right, ids go on above all earlier ones.  A step a wait can cover: the
# call waits and succeeds.  A restart with the clock back: ids go on above.
# Every id is kept and the whole set checked for duplicates.  Then kill -9
# right after autocommit calls, and after transactions that had an xid
# before they took an id, and a synchronous standby promoted, the clock
# back: no committed id comes again.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes ();

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $ids = SnowidTest::Ledger->new;
my $one = 'SELECT snowid_next()';

sub counter
{
	my ($node, $name) = @_;

	return $node->safe_psql('postgres', "SELECT $name FROM snowid_status()");
}

sub configure
{
	my ($node, $drift, $wait) = @_;

	$node->safe_psql('postgres',
		"UPDATE snowid_config SET max_drift_ms = $drift, max_wait_ms = $wait");
	return;
}

my $node = PostgreSQL::Test::Cluster->new('sql_clock');
$node->init;
$clock->start_node($node);
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_id = 3, worker_id = 7;
});
configure($node, 10000, 500);

$ids->take($node, 200, 'before any step', "$one FROM generate_series(1, 200)");

my $steps = counter($node, 'clock_steps');
my $waits = counter($node, 'waits');
$clock->set('-5');
$ids->take($node, 200, 'clock 5 s back', "$one FROM generate_series(1, 200)");
cmp_ok(counter($node, 'clock_steps'), '>', $steps, 'the step was counted');
is(counter($node, 'waits'), $waits, 'no call waited');

$clock->set('+0');
$ids->take($node, 100, 'clock right again', "$one FROM generate_series(1, 100)");

# A step back of 30 s: 10 s of drift and 0.5 s of waiting cannot cover it.
my $errors = counter($node, 'clock_errors');
$clock->set('-30');
my $seen = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp())');
cmp_ok(Time::HiRes::time() - $seen, '>', 29, 'the backends see the clock 30 s back');
SnowidTest::fails_clock_behind($node, $one, 'snowid_next() when the clock is 30 s behind');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT count(*) FROM snowid_next_batch(10)');
like($stderr, qr/the system clock is \d+ ms behind the snowid generator/,
	'snowid_next_batch() fails the same way');
is(counter($node, 'clock_errors'), $errors + 2, 'both calls failed');

$clock->set('+0');
$ids->take($node, 100, 'clock right after the errors',
	"$one FROM generate_series(1, 100)");
$ids->take($node, 1000, 'a batch after the errors',
	'SELECT snowid_next_batch(1000)');

# A step back of 6 s with 0.2 s of drift but 15 s of waiting: the call
# waits and succeeds.
configure($node, 200, 15000);
$waits = counter($node, 'waits');
$errors = counter($node, 'clock_errors');
$clock->set('-6');
$ids->take($node, 10, 'clock 6 s back, waiting allowed',
	"$one FROM generate_series(1, 10)");
cmp_ok(counter($node, 'waits'), '>', $waits, 'the call waited');
is(counter($node, 'clock_errors'), $errors, 'and did not fail');

# A restart with the clock 3 s back: the sequence keeps the position.
$clock->set('+0');
configure($node, 10000, 500);
$ids->take($node, 100, 'before the restart', "$one FROM generate_series(1, 100)");
$node->stop;
$clock->set('-3');
$clock->start_node($node);
$ids->take($node, 100, 'after a restart with the clock 3 s back',
	"$one FROM generate_series(1, 100)");

$ids->no_duplicates;
$node->stop;

# An id is durable once the transaction that took it commits (issue 56).
# A call whose nextval() falls among the positions another transaction
# logged ahead writes no WAL of its own: before 1.2, its transaction had
# no xid, and its commit flushed nothing and waited for no standby.  Here
# that other transaction stays open with its WAL unwritten (the WAL writer
# asleep for 10 s, WAL buffers that nothing fills, no background writer to
# flush WAL before it writes the sequence's page), five autocommit calls
# of one session take ids, and the server is killed; with the clock 30 s back (inside max_drift_ms), the generator
# runs on the positions the sequence kept.  Then the same with five
# transactions that have an xid before they take an id, which wrote no
# WAL of their own either and so committed asynchronously up to 1.2's
# first version.  Then autocommit calls with a synchronous standby,
# promoted.  Each transaction is the query given; its last line is the
# id.
sub unflushed_calls
{
	my ($node, $query) = @_;

	$clock->set('+0');
	$node->safe_psql('postgres', 'SELECT count(snowid_next()) FROM generate_series(1, 100)');
	# a call behind the clock moves the sequence to it (setval(), which
	# logs that position, no more): the next nextval() logs ahead anew
	Time::HiRes::usleep(20_000);
	$node->safe_psql('postgres', 'SELECT snowid_next()');
	$clock->set('-30');
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $open = $node->background_psql('postgres');
	my $autocommit = $node->background_psql('postgres');
	$open->query_safe('BEGIN; SELECT snowid_next()');
	my @taken = map { (SnowidTest::query_ids($autocommit, $query))[-1] } 1 .. 5;
	SnowidTest::crash_server($node);
	eval { $_->quit } for $open, $autocommit;
	return @taken;
}

sub durable_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(allows_streaming => 1);
	$node->append_conf('postgresql.conf',
		"wal_writer_delay = 10s\nautovacuum = off\nwal_buffers = 16MB\n"
		  . "shared_buffers = 32MB\nbgwriter_lru_maxpages = 0\n");
	return $node;
}

my $durable = SnowidTest::Ledger->new;
my $crashed = durable_node('sql_durable');
$clock->set('+0');
$clock->start_node($crashed);
# the worker id first, then max_drift_ms raised: setting a worker id raises
# the generator past the clock plus max_drift_ms (doc/managed.md), and a
# generator raised 60 s ahead would be 90 s ahead of the clock stepped
# 30 s back, past max_drift_ms, and refuse
$crashed->safe_psql('postgres', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 2;
	UPDATE snowid_config SET max_drift_ms = 60000, max_wait_ms = 0;
});
$durable->add(unflushed_calls($crashed, $one));
$clock->start_node($crashed);
$durable->take($crashed, 100, 'after kill -9, the clock 30 s back',
	"$one FROM generate_series(1, 100)");
$durable->no_duplicates('no autocommit id of before the crash comes again');
$durable->add(unflushed_calls($crashed,
	'BEGIN; SELECT pg_current_xact_id(); SELECT snowid_next(); COMMIT'));
$clock->start_node($crashed);
$durable->take($crashed, 100, 'after kill -9 of transactions with an xid, the clock 30 s back',
	"$one FROM generate_series(1, 100)");
$durable->no_duplicates('no id of a transaction that had an xid before it comes again');
$crashed->stop;

my $durable_standby = SnowidTest::Ledger->new;
my $primary = durable_node('sql_durable_primary');
$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
$clock->set('+0');
$clock->start_node($primary);
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('sql_durable_standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
# promoted, it has no synchronous standby of its own to wait for
$standby->append_conf('postgresql.conf', "synchronous_standby_names = ''\n");
$clock->start_node($standby);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 2;
	UPDATE snowid_config SET max_drift_ms = 60000, max_wait_ms = 0;
});
$primary->wait_for_catchup($standby);
$durable_standby->add(unflushed_calls($primary, $one));
$standby->promote;
$durable_standby->take($standby, 100, 'on the synchronous standby promoted, the clock 30 s back',
	"$one FROM generate_series(1, 100)");
$durable_standby->no_duplicates('no autocommit id of the old primary comes again');
$standby->stop;
$clock->set('+0');

done_testing();
