# Every other way a server is made from WAL starts above every id in its
# data: a cascading standby (of a synchronous standby) promoted, the old
# primary rewound with pg_rewind, started as a standby of the new one and
# promoted in turn, and a point-in-time restore from the archive promoted at
# its recovery target.  The old primary runs 10 s of drift budget and its
# bursts run it seconds ahead of the clock; the other servers keep the
# default 1 s and wait for their clocks.  All servers share one clock, so
# every id must also lie above every id issued before, on any server.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $ids = SnowidTest::Ledger->new;

# Takes n ids on a server in one batch, storing them with a tag; checks
# that there are n, that they increase and that they lie above every id
# taken before (the insert itself checks the server's stored ids).
sub store_ids
{
	my ($node, $n, $who, $name) = @_;

	return $ids->take($node, $n, $name, qq{
		INSERT INTO ids SELECT id, '$who' FROM snowid_next_batch($n) id
		RETURNING id});
}

# Checks that a server's table holds no row tagged who.
sub has_no_rows
{
	my ($node, $who, $name) = @_;

	is($node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE who = '$who'"),
		'0', $name);
	return;
}

# Checks that the server's high-water mark, replayed from WAL, lies above
# every id in its data.
sub mark_above_data
{
	my ($node, $name) = @_;

	is( $node->safe_psql(
			'postgres', q{
		SELECT (SELECT high_water_time FROM snowid_status())
			> (SELECT (snowid_decode(max(id))).ts FROM ids)}),
		't', $name);
	return;
}

my %standby_settings = ('snowid.max_wait_ms' => 20000);
my $primary = SnowidTest::new_node(
	'primary',
	{
		'snowid.worker_id' => 4,
		'snowid.sequence_bits' => 0,
		'snowid.max_drift_ms' => 10000,
		'snowid.max_wait_ms' => 20000,
		'wal_log_hints' => 'on',
		'wal_keep_size' => '256MB'
	},
	allows_streaming => 1,
	has_archiving => 1);
$primary->start;
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowid; CREATE TABLE ids (id bigint PRIMARY KEY, who text)');
store_ids($primary, 100, 'primary', 'primary');
$primary->backup('backup');

# A synchronous standby, and a standby of it.
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
SnowidTest::set_conf($standby, 'snowid.max_drift_ms' => 1000, %standby_settings);
$standby->start;
$standby->backup('standby_backup');
my $cascade = PostgreSQL::Test::Cluster->new('cascade');
$cascade->init_from_backup($standby, 'standby_backup', has_streaming => 1);
$cascade->start;
SnowidTest::reload_conf($primary, 'synchronous_standby_names' => 'standby');

# A burst, stored; the recovery target; ids stored after it.
store_ids($primary, 3750, 'burst', 'primary, burst');
my $target = $primary->lsn('insert');
store_ids($primary, 100, 'after target', 'primary, after the target');
$standby->wait_for_catchup($cascade, 'replay', $primary->lsn('insert'));

# The standbys are cut off; the primary goes on alone (its commits no
# longer wait for the synchronous standby), then stops cleanly.
SnowidTest::cut_off($standby);
$ids->take(
	$primary, 1250,
	'primary, after its standbys were cut off',
	q{SET synchronous_commit = local;
	  INSERT INTO ids SELECT id, 'diverged' FROM snowid_next_batch(1250) id
	  RETURNING id});
$ids->take($primary, 1250, 'primary, ids handed out at last',
	'SELECT snowid_next_batch(1250)');
my $last_wal = $primary->safe_psql('postgres',
	'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$last_wal' FROM pg_stat_archiver")
  or die 'the archive did not catch up';
$primary->stop;

# The cascading standby takes over.
mark_above_data($cascade, 'the cascading standby\'s mark lies above its data');
SnowidTest::promote($cascade);
has_no_rows($cascade, 'diverged', 'the cascading standby lacks the rows it never received');
store_ids($cascade, 200, 'cascade', 'promoted cascading standby');
$cascade->safe_psql('postgres', 'CHECKPOINT');
$standby->stop;

# The old primary, rewound, follows the new one.
my $conf = slurp_file($primary->data_dir . '/postgresql.conf');
command_ok(
	[
		'pg_rewind', '--target-pgdata', $primary->data_dir,
		'--source-server', $cascade->connstr('postgres')
	],
	'pg_rewind rewinds the old primary');
open(my $fh, '>', $primary->data_dir . '/postgresql.conf') or die $!;
print $fh $conf;
close $fh;
SnowidTest::set_conf($primary,
	'synchronous_standby_names' => '',
	'archive_mode' => 'off',
	'snowid.max_drift_ms' => 1000);
$primary->enable_streaming($cascade);
$primary->start;
store_ids($cascade, 200, 'cascade', 'new primary, old one following it');
$cascade->wait_for_catchup($primary);
has_no_rows($primary, 'diverged', 'the rewound primary lost its diverged rows');
mark_above_data($primary, 'its mark lies above its data');
$cascade->stop('immediate');

SnowidTest::promote($primary);
store_ids($primary, 200, 'rewound', 'rewound old primary, promoted');
$primary->stop;

# A point-in-time restore of the old primary at the target, promoted.
my $restore = PostgreSQL::Test::Cluster->new('restore');
$restore->init_from_backup($primary, 'backup',
	has_restoring => 1, standby => 0);
SnowidTest::set_conf($restore,
	'snowid.max_drift_ms' => 1000,
	'synchronous_standby_names' => '',
	'archive_mode' => 'off',
	'recovery_target_lsn' => $target,
	'recovery_target_timeline' => '1',
	'recovery_target_action' => 'promote',
	%standby_settings);
$restore->start;
$restore->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore was not promoted';
is($restore->safe_psql('postgres', "SELECT count(*) FROM ids WHERE who = 'burst'"),
	'3750', 'the restore has the rows before its target');
has_no_rows($restore, 'after target', 'and none after it');
mark_above_data($restore, 'its mark lies above its data');
store_ids($restore, 200, 'restore', 'point-in-time restore, promoted');

$ids->no_duplicates;
$restore->stop;
done_testing();
