# Restarts and crashes with the clock behind.
#
# The high-water mark in $PGDATA/snowid_state must keep a restarted
# generator above every id issued before, whatever the clock says: after an
# immediate shutdown, after a backend killed with SIGKILL (the postmaster
# then reinitialises shared memory) and after a clean restart.  The server
# runs under libfaketime so that each start can find the clock seconds
# behind.  Every id is kept and the whole set checked for duplicates.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
die "libfaketime is required: $libfaketime not found" unless -e $libfaketime;

my $clock_file = "${PostgreSQL::Test::Utils::tmp_check}/021_clock";

# Sets the offset of the server's clock in seconds, atomically.
sub set_clock
{
	my ($offset) = @_;

	open(my $fh, '>', "$clock_file.tmp") or die "could not write clock: $!";
	print $fh "$offset\n";
	close($fh);
	rename("$clock_file.tmp", $clock_file) or die "could not rename: $!";
	return;
}

# Starts the node with its clock under libfaketime (see 020_clock_steps.pl).
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

# Records ids taken elsewhere, checking they lie above all earlier ones.
sub record_ids
{
	my ($name, @ids) = @_;
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

# Takes n ids, one call each (or in one batch), and records them.
sub take_ids
{
	my ($node, $n, $name, $batch) = @_;
	my $query =
	  $batch
	  ? "SELECT snowid_next_batch($n)"
	  : "SELECT snowid_next() FROM generate_series(1, $n)";

	record_ids($name, split(/\n/, $node->safe_psql('postgres', $query)));
	return;
}

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

	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (snowid_decode($max_id)).ts) * 1000)::bigint"
	);
}

# Checks that snowid_next() fails because the clock is behind.
sub fails_behind
{
	my ($node, $name) = @_;
	my ($ret, $stdout, $stderr) = $node->psql(
		'postgres', 'SELECT snowid_next()',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	like(
		$stderr,
		qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
		"$name: snowid_next() fails, the clock being behind");
	return;
}

# Reloads the drift and wait settings and waits until a backend sees them.
sub set_budget
{
	my ($node, $drift, $wait) = @_;

	$node->append_conf('postgresql.conf',
		"snowid.max_drift_ms = $drift\nsnowid.max_wait_ms = $wait\n");
	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT current_setting('snowid.max_drift_ms')::interval = '$drift ms'"
		  . " AND current_setting('snowid.max_wait_ms')::interval = '$wait ms'"
	) or die "settings were not reloaded";
	return;
}

set_clock('+0');

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'snowid'
snowid.datacenter_id = 3
snowid.worker_id = 7
snowid.max_drift_ms = 200
snowid.max_wait_ms = 500
restart_after_crash = on
});
start_faked($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

take_ids($node, 500, 'first start');
take_ids($node, 50000, 'first start, batch', 1);

cmp_ok(read_mark($node), '>', max_id_ms($node),
	'the mark lies above every id issued');

# Immediate shutdown, then a start with the clock 5 s behind.  The generator
# must not start below the mark: with 0.2 s of drift it fails, and with a
# budget of 20 s it issues ids above all earlier ones.
$node->stop('immediate');
set_clock('-5');
start_faked($node);
fails_behind($node, 'after an immediate shutdown, clock 5 s back');
set_budget($node, 20000, 500);
take_ids($node, 500, 'after an immediate shutdown, clock 5 s back');

set_clock('+0');
set_budget($node, 200, 3000);
take_ids($node, 500, 'clock right after the immediate shutdown');

# A backend killed with SIGKILL: the postmaster kills every other backend
# and reinitialises shared memory; meanwhile the clock goes 5 s back.
set_budget($node, 200, 500);
my $psql = $node->background_psql('postgres');
my $pid = $psql->query_safe('SELECT pg_backend_pid()');
record_ids('the backend about to be killed',
	split(/\n/,
		$psql->query_safe('SELECT snowid_next() FROM generate_series(1, 10)'))
);
set_clock('-5');
my $log_offset = -s $node->logfile;
kill 'KILL', $pid or die "could not kill backend $pid";
$node->wait_for_log(qr/all server processes terminated; reinitializing/,
	$log_offset);
$node->poll_query_until('postgres', 'SELECT true')
  or die "the server did not come back after the crash";
$psql->quit;

is( $node->safe_psql('postgres',
		'SELECT ids_issued FROM snowid_status()'),
	'0',
	'the generator was reinitialised');
fails_behind($node, 'after a backend crash, clock 5 s back');
set_budget($node, 20000, 500);
take_ids($node, 500, 'after a backend crash, clock 5 s back');

set_clock('+0');
set_budget($node, 200, 3000);
take_ids($node, 500, 'clock right after the backend crash');

# A clean restart lowers the mark to just above the last id, so that the
# restarted generator need not wait out the lease; it still starts above
# every id issued.
take_ids($node, 50000, 'before a clean restart, batch', 1);
my $last_ms = max_id_ms($node);
$node->stop('fast');
cmp_ok(read_mark($node), '>', $last_ms,
	'after a clean stop the mark still lies above every id issued');
start_faked($node);
take_ids($node, 500, 'after a clean restart');

is($duplicates, 0, 'no id was issued twice in ' . scalar(keys %seen));

$node->stop;
done_testing();
