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

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
die "libfaketime is required: $libfaketime not found" unless -e $libfaketime;

my $clock_file = "${PostgreSQL::Test::Utils::tmp_check}/022_clock";

# Sets the offset of the servers' clock in seconds, atomically.
sub set_clock
{
	my ($offset) = @_;

	open(my $fh, '>', "$clock_file.tmp") or die "could not write clock: $!";
	print $fh "$offset\n";
	close($fh);
	rename("$clock_file.tmp", $clock_file) or die "could not rename: $!";
	return;
}

# Starts a node with its clock under libfaketime (see 020_clock_steps.pl).
sub start_faked
{
	my ($node) = @_;

	local $ENV{LD_PRELOAD} = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $clock_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
	return;
}

my %seen;
my $duplicates = 0;
my $max_id = 0;

# Runs a query returning ids, and checks they increase and lie above
# every id taken before.
sub take_ids
{
	my ($node, $query, $name) = @_;
	my @ids = split /\n/, $node->safe_psql('postgres', $query);
	my $increasing = 1;

	for my $i (1 .. $#ids)
	{
		$increasing = 0 unless $ids[$i] > $ids[ $i - 1 ];
	}
	ok(@ids > 0, "$name: got ids");
	ok($increasing, "$name: ids increase");
	cmp_ok($ids[0], '>', $max_id, "$name: ids lie above every earlier id");
	for my $id (@ids)
	{
		$duplicates++ if $seen{$id}++;
		$max_id = $id if $id > $max_id;
	}
	return;
}

# Promotes a standby and waits until it is a primary.
sub promote
{
	my ($node) = @_;

	$node->promote;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the standby was not promoted";
	return;
}

my $some_ids = 'SELECT snowid_next() FROM generate_series(1, 200)';

set_clock('+0');

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.datacenter_id = 3
snowid.worker_id = 7
snowid.max_drift_ms = 5000
snowid.max_wait_ms = 500
});
start_faked($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
take_ids($primary, $some_ids, 'primary');

# No database state is written: read-only transactions take ids.
take_ids(
	$primary,
	"SET default_transaction_read_only = on;\n" . $some_ids,
	'primary, default_transaction_read_only');
take_ids(
	$primary,
	"BEGIN READ ONLY;\nSELECT snowid_next_batch(100);\nCOMMIT;",
	'primary, BEGIN READ ONLY');

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
	start_faked($standby);
	push @standbys, $standby;
}
my $standby = $standbys[0];
ok(-e $standby->data_dir . '/snowid_state',
	'the base backup carries the high-water mark');

take_ids($primary, $some_ids, 'primary, with standbys');
$primary->wait_for_catchup($standby);

my ($ret, $stdout, $stderr) = $standby->psql(
	'postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$stderr,
	qr/ERROR:  25006: cannot generate snowids during recovery/,
	'the standby refuses snowid_next()');
like(
	$stderr,
	qr/HINT:  Take ids from the primary, or promote this server first/,
	'and says what to do');
($ret, $stdout, $stderr) =
  $standby->psql('postgres', 'SELECT snowid_next_batch(10)');
like(
	$stderr,
	qr/cannot generate snowids during recovery/,
	'the standby refuses snowid_next_batch()');
is($standby->safe_psql('postgres', 'SELECT ids_issued FROM snowid_status()'),
	'0', 'snowid_status() works on the standby');

# The clock of all servers steps 3 s back; the primary, allowed 5 s of
# drift, goes on issuing ids ahead of it.  Then it fails, and a standby is
# promoted before the clock has caught up: its ids must lie above the
# primary's, although its clock says they are 3 s in the future.
set_clock('-3');
take_ids($primary, $some_ids, 'primary, clock 3 s back');
$primary->stop('immediate');

promote($standby);
take_ids($standby, $some_ids, 'promoted standby, clock 3 s back');
is( $standby->safe_psql(
		'postgres',
		"SELECT count(DISTINCT (datacenter_id, worker_id))"
		  . " FROM unnest('{" . join(',', keys %seen) . "}'::bigint[]) AS id,"
		  . " snowid_decode(id)"),
	'1',
	'both servers issued ids of the same worker id');
$standby->stop('immediate');

# The same failover, but the promoted server is restarted cleanly before it
# issues any id: the restarted server no longer knows it was a standby, so
# the mark written at the clean exit must make the skip.  libfaketime fakes
# no clock inside the postmaster's signal handlers, where a PostgreSQL 15
# postmaster does its work and exits: that mark comes out 3 s further ahead
# than with one clock, and the first call waits for the backends' clock.
$standby = $standbys[1];
$standby->append_conf('postgresql.conf', 'snowid.max_wait_ms = 10000');
$standby->reload;
promote($standby);
$standby->stop('fast');
start_faked($standby);
take_ids($standby, $some_ids,
	'promoted standby, restarted before its first id');
$standby->stop('immediate');

# The same again, but a backend crashes before the first id and the
# postmaster reinitialises shared memory.
$standby = $standbys[2];
promote($standby);
my $psql = $standby->background_psql('postgres');
my $pid = $psql->query_safe('SELECT pg_backend_pid()');
my $log_offset = -s $standby->logfile;
kill 'KILL', $pid or die "could not kill backend $pid";
$standby->wait_for_log(qr/all server processes terminated; reinitializing/,
	$log_offset);
$standby->poll_query_until('postgres', 'SELECT true')
  or die "the server did not come back after the crash";
$psql->quit;
take_ids($standby, $some_ids,
	'promoted standby, crashed before its first id');

set_clock('+0');
take_ids($standby, $some_ids, 'promoted standby, clock right');
$standby->stop;
start_faked($standby);
take_ids($standby, $some_ids, 'promoted standby, restarted');

is($duplicates, 0, 'no id was issued twice in ' . scalar(keys %seen));

$standby->stop;
done_testing();
