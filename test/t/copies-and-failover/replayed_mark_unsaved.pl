# A high-water mark replayed on a standby whose mark file cannot be
# written: replay moves the generator up to the mark and warns; once
# promoted, the server used to issue ids below a mark that was not on disk
# (after a crash its file would hold an older one).  Now it retries the
# save before its first id and refuses ids, with a clear error, until the
# save succeeds; then the file holds the replayed mark.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.worker_id = 1
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# The mark of a data directory, in Unix ms
sub read_mark
{
	my ($node) = @_;
	my $line = slurp_file($node->data_dir . '/snowid_state');

	$line =~ /high_water_ms=(\d+)/ or die "no mark in \"$line\"";
	return $1;
}

# The standby's mark file cannot be replaced: its temporary file is a
# directory.
my $blocker = $standby->data_dir . '/snowid_state.tmp';
mkdir $blocker or die "mkdir $blocker: $!";
my $offset = -s $standby->logfile;

# The primary moves its mark on a few times.
for (1 .. 3)
{
	$primary->safe_psql('postgres', 'SELECT snowid_next()');
	Time::HiRes::sleep(1.1);
}
$primary->safe_psql('postgres', 'SELECT snowid_next()');
$primary->wait_for_replay_catchup($standby)
  if $primary->can('wait_for_replay_catchup');
$primary->wait_for_catchup($standby, 'replay')
  unless $primary->can('wait_for_replay_catchup');
my $primary_mark = read_mark($primary);
ok($standby->log_contains(qr/could not create file "snowid_state.tmp"/, $offset),
	'replay could not save the mark');
cmp_ok(read_mark($standby), '<', $primary_mark, 'the standby\'s file holds an older mark');

$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'not promoted';
my ($ret, $out, $err) = $standby->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'no id while the replayed mark is not on disk');
like($err,
	qr/58030: could not save the snowid high-water mark replayed from WAL.*DETAIL:  The mark file "snowid_state" must cover the marks replayed/s,
	'with a clear error');
cmp_ok(read_mark($standby), '<', $primary_mark, 'nothing issued, nothing saved yet');

rmdir $blocker or die "rmdir $blocker: $!";
my $id = $standby->safe_psql('postgres', 'SELECT snowid_next()');
ok($id > 0, 'once the file can be written, ids are issued');
cmp_ok(read_mark($standby), '>=', $primary_mark,
	'and the mark file covers the replayed mark');

done_testing();
