# A promoted standby whose postmaster crashes before it issues its first id
# must still skip past every id its old primary issued.  The skip is pending
# from the start as a standby until the first mark written after it; it is
# recorded in the mark file, because the standby's signal file is gone after
# the promotion and a crash loses shared memory.
#
# With one id per millisecond (snowid.sequence_bits = 0) a batch runs the
# primary far ahead of the clock, within a large drift budget, so its last
# ids lie well beyond anything the standby's stale copy of the mark covers.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.worker_id = 1
snowid.sequence_bits = 0
snowid.max_drift_ms = 60000
snowid.max_wait_ms = 60000
restart_after_crash = on
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
$primary->safe_psql('postgres', 'SELECT count(snowid_next()) FROM generate_series(1, 10)');

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;
like(slurp_file($standby->data_dir . '/snowid_state'), qr/ takeover=1\n/,
	'a standby records in its mark that it must skip when promoted');

# The primary runs 20 s ahead of its clock, then stops.
my $primary_max = $primary->safe_psql('postgres',
	'SELECT max(id) FROM snowid_next_batch(20000) id');
$primary->wait_for_catchup($standby);
$primary->stop;

# Promote, then crash the whole server before its first id.
$standby->promote;
my $pid = $standby->{_pid};
my @children = split ' ', `ps -o pid= --ppid $pid`;
$standby->kill9;
kill 'KILL', @children;
for my $p ($pid, @children)
{
	usleep(10_000) while kill 0, $p;
}
$standby->start;

my $ids = $standby->safe_psql('postgres', q{
	SELECT count(*), min(id), count(DISTINCT id) FROM snowid_next_batch(200) id});
my ($count, $min, $distinct) = split /\|/, $ids;
is($count, 200, 'the promoted server issues ids after the crash');
is($distinct, 200, 'no duplicate among them');
cmp_ok($min, '>', $primary_max,
	'they all lie above every id the old primary issued');
like(slurp_file($standby->data_dir . '/snowid_state'), qr/ takeover=0\n/,
	'the mark written after the skip no longer asks for one');

$standby->stop;
done_testing();
