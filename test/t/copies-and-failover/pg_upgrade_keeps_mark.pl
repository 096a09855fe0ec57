# pg_upgrade: with the old cluster's snowid_state copied over, as the
# README says, the new cluster starts above every id of the old one.
#
# pg_upgrade carries tables over but not $PGDATA/snowid_state.  The old
# server issues one id per millisecond (snowid.sequence_bits = 0) with a
# 700 s drift budget, and a burst of 600000 ids runs it about 10 minutes
# ahead of the clock, so that the new server starts while the old ids still
# lie ahead of its clock, however slow the machine: only the copied mark
# keeps it above them.  The last 90000 ids sit in a primary key that
# pg_upgrade carries over, so that a repeated id fails the insert.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my %settings = (
	'snowid.worker_id' => 2,
	'snowid.sequence_bits' => 0,
	'snowid.max_drift_ms' => 700000,
	'snowid.max_wait_ms' => 1000);

my $old = SnowidTest::new_node('old', \%settings);
$old->start;
$old->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	DO $$ BEGIN
		FOR i IN 1..51 LOOP PERFORM FROM snowid_next_batch(10000); END LOOP;
	END $$;
	INSERT INTO ids SELECT id, 'old' FROM snowid_next_batch(90000) id});
my $old_max = $old->safe_psql('postgres', 'SELECT max(id) FROM ids');
$old->stop;

my $new = SnowidTest::new_node('new', \%settings);

# pg_upgrade writes its logs below the new data directory and reads the
# current directory; run it where the test may write.
chdir $PostgreSQL::Test::Utils::tmp_check;
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'--old-datadir' => $old->data_dir,
		'--new-datadir' => $new->data_dir,
		'--old-bindir' => $old->config_data('--bindir'),
		'--new-bindir' => $new->config_data('--bindir'),
		'--socketdir' => $new->host,
		'--old-port' => $old->port,
		'--new-port' => $new->port
	],
	'pg_upgrade with snowid installed');
ok(!-e $new->data_dir . '/snowid_state',
	'pg_upgrade does not carry snowid_state over');

copy($old->data_dir . '/snowid_state', $new->data_dir . '/snowid_state')
  or die "could not copy snowid_state: $!";
chmod(0600, $new->data_dir . '/snowid_state')
  or die "could not chmod snowid_state: $!";
$new->start;

my ($clock_id, $ahead_s) = split /\|/, $new->safe_psql('postgres', qq{
	SELECT snowid_from_time(clock_timestamp()),
		extract(epoch FROM (snowid_decode($old_max)).ts - clock_timestamp())});
note(sprintf('the old ids lie %.1f s ahead of the new server\'s clock', $ahead_s));
cmp_ok($clock_id, '<', $old_max,
	'the old ids still lie ahead of the new server\'s clock');

is( $new->safe_psql(
		'postgres', q{
		INSERT INTO ids (who) SELECT 'new' FROM generate_series(1, 1000);
		SELECT count(*) FROM ids WHERE who = 'new'}),
	'1000',
	'1000 inserts after the upgrade: none repeats a carried-over id');
cmp_ok($new->safe_psql('postgres', "SELECT min(id) FROM ids WHERE who = 'new'"),
	'>', $old_max, 'the new ids lie above every id of the old server');

$new->stop;
done_testing();
