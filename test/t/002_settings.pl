# Settings and loading: what happens without shared_preload_libraries,
# without a worker id, with out-of-range values and with another epoch (one
# without a time zone is UTC; 'now' is refused).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

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

# Out-of-range values stop the server with a message naming the setting.
sub fails_to_start
{
	my ($setting, $pattern, $name) = @_;

	$node->stop;
	my $conf = $node->data_dir . '/postgresql.conf';
	$node->append_conf('postgresql.conf', "$setting\n");
	SnowidTest::fails_to_start($node, $name, $pattern);

	# take the bad line out again
	my $text = slurp_file($conf);
	$text =~ s/^\Q$setting\E\n//m;
	open(my $fh, '>', $conf) or die $!;
	print $fh $text;
	close $fh;
	$node->start;
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
done_testing();
