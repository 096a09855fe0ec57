# Standbys and failover.
#
# A streaming standby refuses to generate ids (it shares its primary's
# worker id); read-only transactions on a primary do generate them.  After a
# failover the promoted standby issues ids above every id of its old
# primary, even when that primary was running ahead of the clock (here
# after a step back of the clock that all servers share, within the drift
# budget), and also when it restarts or crashes before its first id; three
# standbys of one primary are promoted in turn to try each case.  Every id
# is kept and the whole set checked for duplicates.
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

my $primary = SnowidTest::new_node(
	'primary',
	{
		'snowid.datacenter_id' => 3,
		'snowid.worker_id' => 7,
		'snowid.max_drift_ms' => 5000,
		'snowid.max_wait_ms' => 500
	},
	allows_streaming => 1);
$clock->start_node($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
$ids->take($primary, 200, 'primary');

# Taking an id writes the mark into WAL: a read-only transaction on the
# primary is refused as nextval() refuses it (25006), and takes nothing.
like(
	SnowidTest::psql_error(
		$primary,
		"SET default_transaction_read_only = on;\n"
		  . 'SELECT snowid_next() FROM generate_series(1, 200)'),
	qr/ERROR:  25006: cannot execute snowid_next\(\) in a read-only transaction/,
	'primary, default_transaction_read_only: snowid_next() is refused');
like(
	SnowidTest::psql_error($primary,
		"BEGIN READ ONLY;\nSELECT snowid_next_batch(100);\nCOMMIT;"),
	qr/ERROR:  25006: cannot execute snowid_next_batch\(\) in a read-only transaction/,
	'primary, BEGIN READ ONLY: snowid_next_batch() is refused');
$ids->take($primary, 100, 'primary, after the read-only transactions');

$primary->backup('backup');

# Three standbys of the primary, promoted one after the other below.
my @standbys;
for my $name ('standby', 'standby_restarted', 'standby_crashed')
{
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, 'backup', has_streaming => 1);
	# set before the start: a reload reaches the postmaster asynchronously,
	# and the crash test below must not race it
	$standby->append_conf('postgresql.conf', 'restart_after_crash = on');
	$clock->start_node($standby);
	push @standbys, $standby;
}
my $standby = $standbys[0];
ok(-e $standby->data_dir . '/snowid_state',
	'the base backup carries the high-water mark');

$ids->take($primary, 200, 'primary, with standbys');
$primary->wait_for_catchup($standby);

my $stderr = SnowidTest::psql_error($standby, 'SELECT snowid_next()');
like(
	$stderr,
	qr/ERROR:  25006: cannot generate snowids during recovery/,
	'the standby refuses snowid_next()');
like(
	$stderr,
	qr/HINT:  Take ids from the primary, or promote this server first/,
	'and says what to do');
like(
	SnowidTest::psql_error($standby, 'SELECT snowid_next_batch(10)'),
	qr/cannot generate snowids during recovery/,
	'the standby refuses snowid_next_batch()');
is($standby->safe_psql('postgres', 'SELECT ids_issued FROM snowid_status()'),
	'0', 'snowid_status() works on the standby');

# The clock of all servers steps 3 s back; the primary, allowed 5 s of
# drift, goes on issuing ids ahead of it.  Then it fails, and a standby is
# promoted before the clock has caught up: its ids must lie above the
# primary's, although its clock says they are 3 s in the future.
$clock->set('-3');
$ids->take($primary, 200, 'primary, clock 3 s back');
$primary->stop('immediate');

SnowidTest::promote($standby);
$ids->take($standby, 200, 'promoted standby, clock 3 s back');
is( $standby->safe_psql(
		'postgres',
		"SELECT count(DISTINCT (datacenter_id, worker_id))"
		  . " FROM unnest('{" . join(',', $ids->all) . "}'::bigint[]) AS id,"
		  . " snowid_decode(id)"),
	'1',
	'both servers issued ids of the same worker id');
$standby->stop('immediate');

# The same failover, but the promoted server is restarted cleanly before it
# issues any id: the restarted server no longer knows it was a standby, so
# the mark written at the clean exit must make the skip.  (max_wait_ms is
# raised from when the clock was libfaketime's, which faked no clock inside
# the postmaster's signal handlers, where a PostgreSQL 15 postmaster does
# its work and exits: that mark came out 3 s further ahead than with one
# clock, and the first call waited for the backends' clock.
# SnowidTest::Clock moves the clock in signal handlers too.)
$standby = $standbys[1];
$standby->append_conf('postgresql.conf', 'snowid.max_wait_ms = 10000');
$standby->reload;
SnowidTest::promote($standby);
$standby->stop('fast');
$clock->start_node($standby);
$ids->take($standby, 200, 'promoted standby, restarted before its first id');
$standby->stop('immediate');

# The same again, but a backend crashes before the first id and the
# postmaster reinitialises shared memory.
$standby = $standbys[2];
SnowidTest::promote($standby);
SnowidTest::crash_backend($standby, $standby->background_psql('postgres'));
$ids->take($standby, 200, 'promoted standby, crashed before its first id');

$clock->set('+0');
$ids->take($standby, 200, 'promoted standby, clock right');
$standby->stop;
$clock->start_node($standby);
$ids->take($standby, 200, 'promoted standby, restarted');

$ids->no_duplicates;

$standby->stop;
done_testing();
