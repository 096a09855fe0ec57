# Restarts and crashes with the clock behind.
#
# The high-water mark in $PGDATA/snowid_state must keep a restarted
# generator above every id issued before, whatever the clock says: after an
# immediate shutdown, after a backend killed with SIGKILL (the postmaster
# then reinitialises shared memory) and after a clean restart.  The server
# runs under SnowidTest::Clock so that each start can find the clock seconds
# behind.  Every id is kept and the whole set checked for duplicates.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $ids = SnowidTest::Ledger->new;

# The persisted mark, in Unix ms
sub read_mark
{
	my ($node) = @_;
	my $line = slurp_file($node->data_dir . '/snowid_state');

	$line =~ /high_water_ms=(\d+)/ or die "no mark in \"$line\"";
	return $1;
}

# The Unix ms of the largest id taken so far
sub max_id_ms
{
	my ($node) = @_;
	my $max = $ids->max;

	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (snowid_decode($max)).ts) * 1000)::bigint");
}

# Checks that snowid_next() fails because the clock is behind.
sub fails_behind
{
	my ($node, $name) = @_;

	like(
		SnowidTest::psql_error($node, 'SELECT snowid_next()'),
		qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
		"$name: snowid_next() fails, the clock being behind");
	return;
}

# Reloads the drift and wait settings.
sub set_budget
{
	my ($node, $drift, $wait) = @_;

	SnowidTest::reload_conf($node,
		'snowid.max_drift_ms' => $drift,
		'snowid.max_wait_ms' => $wait);
	return;
}

my $node = $clock->new_server(
	'crash',
	{
		'snowid.datacenter_id' => 3,
		'snowid.worker_id' => 7,
		'snowid.max_drift_ms' => 200,
		'snowid.max_wait_ms' => 500,
		'restart_after_crash' => 'on'
	});

# After a stop or a crash with the clock 30 s back ($what): the next call
# fails, the clock being behind; ids come again with a drift budget of a
# minute, and with the clock right again ($right) and the budget back
sub comes_back
{
	my ($what, $right) = @_;

	fails_behind($node, $what);
	set_budget($node, 60000, 500);
	$ids->take($node, 500, $what);
	$clock->set('+0');
	set_budget($node, 200, 3000);
	$ids->take($node, 500, $right);
	return;
}

$ids->take($node, 500, 'first start');
$ids->take($node, 50000, 'first start, batch',
	'SELECT snowid_next_batch(50000)');

cmp_ok(read_mark($node), '>', max_id_ms($node),
	'the mark lies above every id issued');

# Immediate shutdown, then a start with the clock 30 s behind.  The generator
# must not start below the mark: with 0.2 s of drift it fails, and with a
# budget of 60 s it issues ids above all earlier ones.  (30 s, so that a
# restart on a loaded machine cannot outlast the step.)
$node->stop('immediate');
$clock->set('-30');
$clock->start_node($node);
comes_back('after an immediate shutdown, clock 30 s back',
	'clock right after the immediate shutdown');

# A backend killed with SIGKILL: the postmaster kills every other backend
# and reinitialises shared memory; meanwhile the clock goes 30 s back.
set_budget($node, 200, 500);
my $psql = $node->background_psql('postgres');
$ids->take($psql, 10, 'the backend about to be killed');
$clock->set('-30');
SnowidTest::crash_backend($node, $psql);

is( $node->safe_psql('postgres',
		'SELECT ids_issued FROM snowid_status()'),
	'0',
	'the generator was reinitialised');
comes_back('after a backend crash, clock 30 s back',
	'clock right after the backend crash');

# A clean restart lowers the mark to just above the last id, so that the
# restarted generator need not wait out the lease; it still starts above
# every id issued.
$ids->take($node, 50000, 'before a clean restart, batch',
	'SELECT snowid_next_batch(50000)');
my $last_ms = max_id_ms($node);
$node->stop('fast');
cmp_ok(read_mark($node), '>', $last_ms,
	'after a clean stop the mark still lies above every id issued');
$clock->start_node($node);
$ids->take($node, 500, 'after a clean restart');

$ids->no_duplicates;

$node->stop;
done_testing();
