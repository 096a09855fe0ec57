# The edges of a takeover (a server that starts as a copy of another and
# goes on with its worker id):
#  - the skip after recovery goes a millisecond past the old primary's last
#    possible millisecond, its clock plus its drift budget, that
#    millisecond included (it used to land on it);
#  - a base backup restored without a signal file (crash recovery from its
#    backup_label) skips too (it used to get no skip at all);
#  - the skip uses the largest drift budget the replayed marks were written
#    with, not the last one's;
#  - a worker id claimed on lease before the skip gets a fence past where
#    the skip puts the generator (with a lease no longer than the drift
#    budget, every call used to fail with "lease ran out" until the first
#    renewal).
# One id a millisecond (snowid.sequence_bits = 0), so that a batch runs a
# server far ahead of its clock within its drift budget.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my %common = (
	'snowid.worker_id' => 1,
	'snowid.sequence_bits' => 0,
	'snowid.max_wait_ms' => 60000);

# How far ahead of its clock a promoted server said it continues, from the
# log after offset; dies if it did not say.
sub skipped_ms
{
	my ($node, $offset) = @_;

	$node->wait_for_log(qr/snowid continues \d+ ms ahead of the clock after recovery/,
		$offset);
	my $log = slurp_file($node->logfile, $offset);

	$log =~ /snowid continues (\d+) ms ahead of the clock after recovery/
	  or die 'no skip logged';
	return $1;
}

# The Unix ms of the clock, as a server reads it
sub clock_ms
{
	my ($node) = @_;

	return $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint');
}

# The Unix ms of an id
sub id_ms
{
	my ($node, $id) = @_;

	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (snowid_decode($id)).ts) * 1000)::bigint");
}

# -- the skip's last millisecond ------------------------------------------

my $primary = SnowidTest::new_server('primary',
	{ %common, 'snowid.max_drift_ms' => 3000 }, allows_streaming => 1);
SnowidTest::next_ids($primary, 10);
my $standby = SnowidTest::standby_of($primary, 'standby', 'backup');
$primary->stop;
my $offset = -s $standby->logfile;
SnowidTest::promote($standby);
my $before = clock_ms($standby);
my $first = $standby->safe_psql('postgres', 'SELECT snowid_next()');
is(skipped_ms($standby, $offset), 3001,
	'the skip goes a millisecond past the clock plus the drift budget');
cmp_ok(id_ms($standby, $first), '>', $before + 3000,
	'the first id lies past the old primary\'s last possible millisecond');
$standby->stop;

# -- a base backup restored with crash recovery ---------------------------

$primary = SnowidTest::new_server('primary2',
	{ %common, 'snowid.max_drift_ms' => 20000 }, allows_streaming => 1);
SnowidTest::next_ids($primary, 10);
$primary->backup('backup2');

# The primary runs 15 s ahead of its clock, then is lost.
my $primary_max = $primary->safe_psql('postgres',
	'SELECT max(id) FROM snowid_next_batch(15000) id');
$primary->stop('immediate');
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'backup2');
ok(-e $restored->data_dir . '/backup_label',
	'the restored backup has its backup_label and no signal file');
$restored->start;
ok($restored->safe_psql('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'it comes up as a primary after crash recovery');
$first = $restored->safe_psql('postgres', 'SELECT snowid_next()');
cmp_ok($first, '>', $primary_max,
	'its first id lies above every id the lost primary issued after the backup');
$restored->stop;

# -- the largest drift budget replayed ------------------------------------

$primary = SnowidTest::new_server('primary3',
	{ %common, 'snowid.max_drift_ms' => 5000 }, allows_streaming => 1);
$primary->backup('backup3');
$standby = PostgreSQL::Test::Cluster->new('standby3');
$standby->init_from_backup($primary, 'backup3', has_streaming => 1);
$standby->append_conf('postgresql.conf', "snowid.max_drift_ms = 100\n");
$standby->start;

# marks written with 5000, then, after a reload, with 1000
SnowidTest::next_ids($primary, 10);
Time::HiRes::sleep(1.1);
SnowidTest::next_ids($primary, 10);
SnowidTest::reload_conf($primary, 'snowid.max_drift_ms' => 1000);
for (1 .. 3)
{
	Time::HiRes::sleep(1.1);
	SnowidTest::next_ids($primary, 10);
}
$primary->wait_for_catchup($standby);
$primary->stop;
$offset = -s $standby->logfile;
SnowidTest::promote($standby);
$standby->safe_psql('postgres', 'SELECT snowid_next()');
cmp_ok(skipped_ms($standby, $offset), '>=', 5001,
	'the skip uses the largest drift budget the old primary wrote marks with');
$standby->stop;

# -- a lease claimed before the skip --------------------------------------

my $redis = SnowidRedis->new;
$primary = SnowidTest::new_server('primary4',
	{ %common, 'snowid.max_drift_ms' => 20000 }, allows_streaming => 1);
$primary->backup('backup4');
$standby = PostgreSQL::Test::Cluster->new('standby4');
$standby->init_from_backup($primary, 'backup4', has_streaming => 1);
SnowidTest::set_conf($standby,
	'snowid.worker_id' => -1,
	'snowid.redis_url' => $redis->url,
	'snowid.worker_lease' => '15s');
$standby->start;
$primary->wait_for_catchup($standby);
$primary->stop;
SnowidTest::promote($standby);
SnowidLease::wait_lease($standby);

# no renewal from here on: only the claim's fence counts
is($redis->cli('CLIENT', 'PAUSE', '30000', 'WRITE'), 'OK', 'redis holds renewals');
my ($ret, $out, $err) = $standby->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, 'the first call after the skip gets an id')
  or diag($err);
$redis->cli('CLIENT', 'UNPAUSE');
$standby->stop;

done_testing();
