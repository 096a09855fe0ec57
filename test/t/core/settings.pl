# Settings and loading: what happens without shared_preload_libraries,
# without a worker id, with out-of-range values (at start, at a reload, in
# ALTER SYSTEM) and with another epoch (one without a time zone is UTC;
# 'now' is refused); a session cannot change the settings fixed at start,
# loaded early or late.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# Not preloaded: snowid_next() and snowid_status() fail clearly,
# snowid_decode() and snowid_from_time() still work.
my $node = PostgreSQL::Test::Cluster->new('settings');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'snowid_next() fails when not preloaded');
like($err, qr/55000: snowid must be loaded via shared_preload_libraries/,
	'not preloaded: message and SQLSTATE');
like($err, qr/HINT:  Add snowid to shared_preload_libraries/,
	'not preloaded: hint');

($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM snowid_status()');
like($err, qr/snowid must be loaded via shared_preload_libraries/,
	'snowid_status() fails when not preloaded');

is( $node->safe_psql(
		'postgres',
		"SELECT datacenter_id, worker_id, sequence FROM snowid_decode((1::bigint << 22) | (3 << 17) | (7 << 12) | 42)"),
	'3|7|42', 'snowid_decode() works when not preloaded');
is($node->safe_psql('postgres',
		"SELECT snowid_from_time('2010-11-04 01:42:54.658+00')"),
	'4194304', 'snowid_from_time() works when not preloaded');

# Preloaded without a worker id: snowid_next() names the setting, the server
# keeps running and decoding works.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowid'\n");
$node->restart;
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: snowid has no worker id/, 'no worker id: error');
like($err, qr/HINT:  Set snowid.worker_id in postgresql.conf/,
	'no worker id: hint names the setting');
is($node->safe_psql('postgres',
		'SELECT worker_id IS NULL, worker_source FROM snowid_status()'),
	't|none', 'snowid_status() shows no worker id');

# Takes a line appended to postgresql.conf out again.
sub remove_conf
{
	my ($line) = @_;
	my $conf = $node->data_dir . '/postgresql.conf';
	my $text = slurp_file($conf);

	$text =~ s/^\Q$line\E\n//m;
	open(my $fh, '>', $conf) or die $!;
	print $fh $text;
	close $fh;
}

# Out-of-range values stop the server with a message naming the setting.
sub fails_to_start
{
	my ($setting, $pattern, $name) = @_;

	$node->stop;
	$node->append_conf('postgresql.conf', "$setting\n");
	SnowidTest::fails_to_start($node, $name, $pattern);
	remove_conf($setting);
	$node->start;
}

# A bad value put in postgresql.conf and reloaded: the server keeps running
# with the old value, and the log names the setting.  Or, before the date
# parser could no longer raise an error in the postmaster, the server stops
# (then the log says why).
sub reload_refused
{
	my ($setting, $show, $pattern, $name) = @_;
	my $log_offset = -s $node->logfile;
	my $before = $node->safe_psql('postgres', "SHOW $show");

	$node->append_conf('postgresql.conf', "$setting\n");
	$node->reload;
	$node->wait_for_log(
		qr/contains errors|FATAL|terminated by signal/, $log_offset);
	ok($node->log_contains($pattern, $log_offset), "$name: the log names it");
	my ($ret, $out) = $node->psql('postgres', "SHOW $show");
	is($out, $before, "$name: the server runs on with the old value");
	remove_conf($setting);
	$node->reload;
}

fails_to_start('snowid.worker_id = 32',
	qr/invalid value for parameter "snowid.worker_id": "32"/,
	'worker id 32');
fails_to_start('snowid.datacenter_id = -1',
	qr/invalid value for parameter "snowid.datacenter_id": "-1"/,
	'datacenter id -1');
fails_to_start('snowid.worker_id = seven',
	qr/invalid value for parameter "snowid.worker_id": "seven"/,
	'worker id not a number');
fails_to_start("snowid.epoch = 'yesterday-ish'",
	qr/invalid value for parameter "snowid.epoch"/,
	'malformed epoch');
fails_to_start("snowid.epoch = 'now'",
	qr/invalid value for parameter "snowid.epoch": "now"\n.*DETAIL:  snowid.epoch must be a fixed time/,
	'epoch now');
fails_to_start("snowid.epoch = '10000-01-01 00:00:00+00'",
	qr/"snowid.epoch": "10000-01-01 00:00:00\+00"\n.*DETAIL:  snowid.epoch must lie before the year 10000/,
	'epoch in year 10000');
fails_to_start("snowid.epoch = '1969-12-31 23:59:59+00'",
	qr/"snowid.epoch": "1969-12-31 23:59:59\+00"\n.*DETAIL:  snowid.epoch must not lie before 1970-01-01 00:00:00 UTC/,
	'epoch before 1970');
fails_to_start("snowid.epoch = '2020-01-01 00:00 Europe/Nowhere'",
	qr/invalid value for parameter "snowid.epoch": "2020-01-01 00:00 Europe\/Nowhere"\n.*DETAIL:  The time zone/,
	'epoch in an unknown time zone');

# The reloadable settings, too, stop the server when out of range at start.
for my $setting ('snowid.max_drift_ms', 'snowid.max_wait_ms')
{
	for my $value ('-1', '3600001', 'abc', '2h')
	{
		fails_to_start("$setting = '$value'",
			qr/invalid value for parameter "\Q$setting\E": "\Q$value\E"/,
			"$setting = '$value'");
	}
}

# A reload never stops the server: a bad value leaves the old one in force.
reload_refused("snowid.epoch = '2020-01-01 00:00 Europe/Nowhere'",
	'snowid.epoch', qr/invalid value for parameter "snowid.epoch"/,
	'reload of an epoch in an unknown time zone');
ok($node->safe_psql('postgres', 'SELECT true'), 'the server still runs');
reload_refused("snowid.max_wait_ms = 'abc'", 'snowid.max_wait_ms',
	qr/invalid value for parameter "snowid.max_wait_ms": "abc"/,
	'reload of max_wait_ms = abc');
reload_refused("snowid.max_drift_ms = '2h'", 'snowid.max_drift_ms',
	qr/7200000 ms is outside the valid range for parameter "snowid.max_drift_ms"/,
	'reload of max_drift_ms = 2h');

# ALTER SYSTEM refuses what the next start would refuse.
like(
	SnowidTest::psql_error($node,
		"ALTER SYSTEM SET snowid.epoch = '2020-01-01 00:00 Europe/Nowhere'"),
	qr/22023: invalid value for parameter "snowid.epoch": "2020-01-01 00:00 Europe\/Nowhere"/,
	'ALTER SYSTEM: epoch in an unknown time zone');
like(
	SnowidTest::psql_error($node,
		"ALTER SYSTEM SET snowid.epoch = '1969-12-31 00:00:00+00'"),
	qr/DETAIL:  snowid.epoch must not lie before 1970-01-01 00:00:00 UTC/,
	'ALTER SYSTEM: epoch before 1970');
like(
	SnowidTest::psql_error($node,
		"ALTER SYSTEM SET snowid.epoch = '10000-01-01 00:00:00+00'"),
	qr/DETAIL:  snowid.epoch must lie before the year 10000/,
	'ALTER SYSTEM: epoch in year 10000');
like(
	SnowidTest::psql_error($node, 'ALTER SYSTEM SET snowid.worker_id = 40'),
	qr/22023: invalid value for parameter "snowid.worker_id": "?40"?\n.*DETAIL:  With snowid.worker_bits = 5, worker ids run from 0 to 31/,
	'ALTER SYSTEM: worker id beyond the worker bits in force');
like(
	SnowidTest::psql_error($node,
		'ALTER SYSTEM SET snowid.datacenter_id = 40'),
	qr/22023: invalid value for parameter "snowid.datacenter_id": "?40"?\n.*DETAIL:  With snowid.datacenter_bits = 5, datacenter ids run from 0 to 31/,
	'ALTER SYSTEM: datacenter id beyond the datacenter bits in force');
unlike(slurp_file($node->data_dir . '/postgresql.auto.conf'),
	qr/snowid/, 'none of them reached postgresql.auto.conf');
$node->safe_psql('postgres', 'ALTER SYSTEM SET snowid.worker_id = 31');
like(slurp_file($node->data_dir . '/postgresql.auto.conf'),
	qr/snowid.worker_id = '31'/, 'ALTER SYSTEM: a worker id that fits');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET snowid.worker_id');

# Another epoch, given as a timestamp or as Unix milliseconds.
$node->append_conf('postgresql.conf', qq{
snowid.worker_id = 9
snowid.datacenter_id = 30
snowid.epoch = '2024-01-01 00:00:00+00'
});
$node->restart;
is( $node->safe_psql(
		'postgres', q{
	SELECT datacenter_id, worker_id,
		abs(extract(epoch FROM ts - clock_timestamp())) < 5
	FROM snowid_decode(snowid_next())}),
	'30|9|t', 'custom epoch: fields and time decode');
is($node->safe_psql('postgres',
		"SELECT snowid_from_time('2024-01-01 00:00:00.001+00')"),
	'4194304', 'custom epoch: snowid_from_time() counts from it');
my $small = $node->safe_psql('postgres', 'SELECT snowid_next()');
cmp_ok($small, '<', '1000000000000000000',
	'ids of a recent epoch are smaller than with Twitter\'s');

# A changed epoch over ids issued with the old one refuses to generate.
$node->stop;
$node->append_conf('postgresql.conf', "snowid.epoch = '1704067200001'\n");
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()');
like($err, qr/snowid layout or epoch changed since ids were last issued/,
	'changed epoch: refused');
$node->append_conf('postgresql.conf', "snowid.epoch = '1704067200000'\n");
$node->restart;
cmp_ok($node->safe_psql('postgres', 'SELECT snowid_next()'), '>', $small,
	'epoch given as Unix ms, same as before: ids continue');

$node->stop;

# An epoch without a time zone is UTC, whatever the TimeZone of the server
# or of the session that loads snowid.
my $tz = PostgreSQL::Test::Cluster->new('timezone');
$tz->init;
$tz->append_conf('postgresql.conf', qq{
timezone = 'Asia/Tokyo'
snowid.epoch = '2024-01-01 00:00:00'
});
$tz->start;
$tz->safe_psql('postgres', 'CREATE EXTENSION snowid');

# The id of the first millisecond after 2024-01-01 00:00:00 UTC.
sub first_ms_id
{
	my ($ret, $out, $err) = $tz->psql('postgres',
		q{SELECT snowid_from_time('2024-01-01 00:00:00.001+00')});

	return $ret == 0 ? $out : $err;
}
{
	local $ENV{PGTZ} = 'America/New_York';
	is(first_ms_id(), '4194304',
		'epoch without a time zone, not preloaded: UTC, not the session zone');
}
$tz->append_conf('postgresql.conf',
	"shared_preload_libraries = 'snowid'\nsnowid.worker_id = 1\n");
$tz->restart;
is(first_ms_id(), '4194304',
	'epoch without a time zone, preloaded: UTC, not the server zone');
$tz->stop;

# Not preloaded, snowid_decode() follows the configured epoch and layout,
# whatever a session sets before the library loads.
my $late = PostgreSQL::Test::Cluster->new('late');
$late->init;
$late->append_conf('postgresql.conf', qq{
snowid.epoch = '2024-01-01 00:00:00+00'
snowid.sequence_bits = 10
});
$late->start;
$late->safe_psql('postgres', 'CREATE EXTENSION snowid; CREATE ROLE plain LOGIN');
my $plain = $late->connstr('postgres') . ' user=plain';

# 1 s after the epoch, datacenter 3, worker 7, sequence 42 in 43/5/5/10
my $id = (1000 << 20) | (3 << 15) | (7 << 10) | 42;
my $decode = "SELECT ts = '2024-01-01 00:00:01+00', datacenter_id,"
  . " worker_id, sequence FROM snowid_decode($id)";
is($late->safe_psql('postgres', $decode, connstr => $plain),
	't|3|7|42', 'not preloaded: decode follows the configured settings');
is( $late->safe_psql(
		'postgres',
		"SET snowid.epoch = '2000-01-01'; SET snowid.sequence_bits = 0;\n"
		  . "SET snowid.datacenter_bits = 3;\n"
		  . $decode,
		connstr => $plain),
	't|3|7|42',
	'not preloaded: a plain user\'s SET before loading changes nothing');
is( $late->safe_psql(
		'postgres',
		"SELECT count(*) FROM snowid_decode(1);\n"
		  . "SET snowid.epoch = '2000-01-01'; SET snowid.sequence_bits = 0;\n"
		  . $decode,
		connstr => $plain),
	"1\nt|3|7|42",
	'not preloaded: nor does a SET after loading');
{
	local $ENV{PGOPTIONS} = '-c snowid.epoch=2000-01-01';
	my ($ret, $out, $err) = $late->psql(
		'postgres', $decode,
		connstr => $plain,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like(
		$err,
		qr/55P02: parameter "snowid.epoch" cannot be changed without restarting the server/,
		'not preloaded: an epoch given as a connection option is refused');
}

# An epoch in the future: no id can be issued yet, and none drifted.
$late->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowid'
snowid.worker_id = 1
snowid.epoch = '2100-01-01 00:00:00+00'
});
$late->restart;
is($late->safe_psql('postgres',
		'SELECT drift_ms, last_time IS NULL FROM snowid_status()'),
	'0|t', 'epoch in the future: drift_ms is 0 before the first id');
($ret, $out, $err) = $late->psql('postgres', 'SELECT snowid_next()');
like($err, qr/the clock is outside the range of snowid timestamps/,
	'epoch in the future: no id yet');
is($late->safe_psql('postgres', 'SELECT drift_ms FROM snowid_status()'),
	'0', 'epoch in the future: drift_ms still 0 after a refused call');
$late->stop;
done_testing();
