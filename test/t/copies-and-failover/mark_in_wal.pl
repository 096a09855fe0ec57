# The high-water mark in WAL: a promoted standby never repeats an id of its
# old primary, whatever the standby's own settings say.
#
# The primary raises snowid.max_drift_ms to 10 s with ALTER SYSTEM, which
# no standby receives; then a burst runs it about 7 s ahead of the clock
# (one id per millisecond with snowid.sequence_bits = 0: 7500 ids span
# 7.5 s).  Its standbys
# keep the default 1 s.  One standby received the burst's WAL and starts
# above its marks; another was cut off before the burst and starts above
# its clock plus the 10 s it learnt from an earlier mark.  The ids stored
# on the primary sit in a primary key, so that an insert of a repeated id
# fails.  The mark records are readable in pg_walinspect and listed by
# pg_waldump; a standby without snowid preloaded stops at the first one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes qw(usleep);

my $ids = SnowidTest::Ledger->new;

# Takes n ids on a promoted server and stores them in its table; checks
# that they all lie above every id of the old primary (the insert itself
# checks that none repeats a stored one).
sub continues_above
{
	my ($node, $primary_max, $name) = @_;
	my @new = $ids->add(
		SnowidTest::query_ids(
			$node, q{
		INSERT INTO ids SELECT id, 'promoted' FROM snowid_next_batch(200) id
		RETURNING id}));

	is(scalar(@new), 200, "$name: ids stored, none repeats a stored one");
	cmp_ok((sort { $a <=> $b } @new)[0],
		'>', $primary_max, "$name: all lie above the old primary's ids");
	return;
}

my $primary = SnowidTest::new_node(
	'primary',
	{
		'snowid.worker_id' => 1,
		'snowid.sequence_bits' => 0,
		'snowid.max_wait_ms' => 20000
	},
	allows_streaming => 1);
$primary->start;
$primary->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE ids (id bigint PRIMARY KEY, who text);
	INSERT INTO ids SELECT id, 'primary' FROM snowid_next_batch(100) id});

$primary->backup('backup');
my %standby;
for my $name ('connected', 'cut_off', 'not_preloaded', 'other_layout')
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($primary, 'backup', has_streaming => 1);
	$standby{$name} = $node;
}
$standby{connected}->start;
$standby{cut_off}->start;

# A standby misconfigured with another layout, and without a mark file of
# its own to show it: replay brings it one.
SnowidTest::set_conf($standby{other_layout}, 'snowid.sequence_bits' => 2);
unlink($standby{other_layout}->data_dir . '/snowid_state')
  or die "could not remove snowid_state: $!";
$standby{other_layout}->start;
like(
	slurp_file($standby{connected}->data_dir . '/snowid_state'),
	qr/ max_drift_ms=1000 system_identifier=\d+ node=\d+\/-?\d+ instance=[0-9a-f]+ takeover=1\n/,
	'the standby starts with the drift budget of its copied mark');

# The operator raises the primary's drift budget; a standby sees only the
# marks written after that.
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET snowid.max_drift_ms = '10s'; SELECT pg_reload_conf()");
$primary->poll_query_until('postgres',
	"SELECT current_setting('snowid.max_drift_ms') = '10s'")
  or die 'the primary did not reload';
my $lsn_before = $primary->lsn('insert');
$primary->safe_psql('postgres',
	q{INSERT INTO ids SELECT id, 'primary' FROM snowid_next_batch(1250) id});
$primary->wait_for_catchup($standby{cut_off});
$primary->wait_for_catchup($standby{other_layout});
like(
	slurp_file($standby{other_layout}->data_dir . '/snowid_state'),
	qr/ layout=53\/5\/5\/0 high_water_ms=\d+ max_drift_ms=10000 system_identifier=\d+ node=\d+\/-?\d+ instance=[0-9a-f]+ takeover=1\n/,
	'replay writes a mark of another layout as it is');
like(
	slurp_file($standby{cut_off}->data_dir . '/snowid_state'),
	qr/ max_drift_ms=10000 system_identifier=\d+ node=\d+\/-?\d+ instance=[0-9a-f]+ takeover=1\n/,
	'replay writes the primary\'s drift budget into the standby\'s mark');
SnowidTest::cut_off($standby{cut_off});

# The records, readable where snowid is loaded.
my $lsn_after = $primary->lsn('flush');
# pg_walinspect comes with Debian's PostgreSQL 15 and with every build of
# test/tools/pgbuild: missing, it is a failure, not a skip.
is( $primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_walinspect'"),
	'1',
	'pg_walinspect is installed');
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
my $records = $primary->safe_psql(
	'postgres', qq{
	SELECT record_type || ' ' || description
	FROM pg_get_wal_records_info('$lsn_before', '$lsn_after')
	WHERE resource_manager = 'snowid'});
like($records,
	qr/^MARK high_water_ms=\d+ epoch_ms=1288834974657 layout=53\/5\/5\/0 max_drift_ms=10000 node=\d+\/\d+$/m,
	'pg_walinspect shows the mark records');
is( $primary->safe_psql(
		'postgres',
		"SELECT rm_id || ' ' || rm_builtin::int FROM pg_get_wal_resource_managers()"
		  . " WHERE rm_name = 'snowid'"),
	'219 0',
	'the resource manager is registered with its id');
my ($stdout, $stderr);
IPC::Run::run(
	[
		'pg_waldump', '--path', $primary->data_dir . '/pg_wal',
		'--start', $lsn_before, '--end', $lsn_after
	],
	'>', \$stdout, '2>', \$stderr);
like($stdout, qr/^rmgr: custom219 .* desc: UNKNOWN \(10\) rmid: 219$/m,
	'pg_waldump lists the records by the resource manager id');

# A standby without snowid preloaded stops at the first mark record.
my $bare = $standby{not_preloaded};
$bare->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
# pg_ctl itself, not waiting: the server may stop at the first mark before
# $bare->start could read its pid file (which that takes for a crash).
# The log file is made first, for wait_for_log to read at once.
append_to_file($bare->logfile, '');
system_or_bail('pg_ctl', '--no-wait', '--pgdata', $bare->data_dir,
	'--log', $bare->logfile, 'start');
$bare->wait_for_log(qr/resource manager with ID 219 not registered/);
ok( $bare->log_contains(
		qr/FATAL:  resource manager with ID 219 not registered/),
	'a standby without snowid preloaded stops replay with a clear message');
ok( $bare->log_contains(
		qr/HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?\./
	),
	'and a hint');
my $pidfile = $bare->data_dir . '/postmaster.pid';
for (my $i = 0; -e $pidfile && $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	usleep(100_000);
}
ok(!-e $pidfile, 'and the server stops');
$bare->append_conf('postgresql.conf',
	"shared_preload_libraries = 'snowid'\n");
$bare->start;
$primary->wait_for_catchup($bare);
is( $bare->safe_psql('postgres',
		"SELECT pg_last_wal_replay_lsn() >= '$lsn_after'::pg_lsn"),
	't',
	'with snowid preloaded it replays past the mark records');
like(
	slurp_file($bare->data_dir . '/snowid_state'),
	qr/ max_drift_ms=10000 system_identifier=\d+ node=\d+\/-?\d+ instance=[0-9a-f]+ takeover=1\n/,
	'and writes the primary\'s marks into its own');
$bare->stop;

# The burst, right before the primary fails: ids stored, then ids only
# handed out, the last and largest of the primary.  How far ahead of its
# clock that left the primary is read in the statement of the last ids,
# once they are taken (the subquery runs as the result is formed), so that
# no later call's latency counts against it.
$primary->safe_psql('postgres',
	q{INSERT INTO ids SELECT id, 'burst' FROM snowid_next_batch(3750) id});
my ($primary_max, $drift_ms) = split /\|/, $primary->safe_psql('postgres',
	'SELECT max(id), (SELECT drift_ms FROM snowid_status())'
	  . ' FROM snowid_next_batch(3750) id');
note("the burst left the primary $drift_ms ms ahead of its clock");
cmp_ok($drift_ms, '>', 1000,
	'the burst ran the primary further ahead of its clock than the standbys\' budget');
$primary->wait_for_catchup($standby{connected});
$primary->stop('immediate');

# The standby cut off before the burst has no mark of it: it skips the
# primary's 10 s ahead of its clock, and waits for its clock (its own
# budget is 1 s).
SnowidTest::promote($standby{cut_off});
continues_above($standby{cut_off}, $primary_max,
	'promoted standby cut off before the burst');
$standby{cut_off}->stop('immediate');

# The standby of another layout refuses ids once promoted.
SnowidTest::promote($standby{other_layout});
like(
	SnowidTest::psql_error($standby{other_layout}, 'SELECT snowid_next()'),
	qr/ERROR:  55000: snowid layout or epoch changed since ids were last issued/,
	'a promoted standby that replayed marks of another layout refuses ids');
$standby{other_layout}->stop;

# The standby that received the burst starts above its marks.
SnowidTest::promote($standby{connected});
continues_above($standby{connected}, $primary_max,
	'promoted standby that received the burst');
is( $standby{connected}->safe_psql(
		'postgres', "SELECT count(*) FROM ids WHERE who = 'burst'"),
	'3750',
	'it has the burst\'s rows');

$ids->no_duplicates('no duplicate among the promoted servers\' ids');
$standby{connected}->stop;
done_testing();
