# Custom bit layouts: snowid.datacenter_bits, snowid.worker_bits and
# snowid.sequence_bits.
#
# A server with a 43/3/9/8 layout issues ids, serials and from_time bounds
# of that layout; layouts that leave the timestamp fewer than 39 bits, or
# ids that do not fit their fields, stop the server with a message naming
# the settings; a restart with another layout over ids of the old one
# refuses to generate until the old layout is back (or the state file is
# removed on purpose).  A second server shows a 62-bit timestamp, which ids
# still end at year 9999.  A server that does not preload snowid decodes by
# the configured layout too.  Every id is kept and the whole set checked for
# duplicates.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $ids = SnowidTest::Ledger->new;

my %layout = (
	'snowid.datacenter_bits' => 3,
	'snowid.worker_bits' => 9,
	'snowid.sequence_bits' => 8,
	'snowid.datacenter_id' => 5,
	'snowid.worker_id' => 300);

my $node = SnowidTest::new_server('layout', \%layout);

# -- the layout in force --------------------------------------------------

is( $node->safe_psql(
		'postgres', q{
	SELECT layout, ceiling_ids_per_s,
		exhausted_at = epoch + 8796093022208 * interval '1 millisecond'
	FROM snowid_status()}),
	'43/3/9/8|256000|t',
	'snowid_status(): layout 43/3/9/8, 256 ids per ms, 2^43 ms long');

# Fresh ids in bulk, one by one, and as serials.
my @batch = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowid_next_batch(20000)');
my @single = split /\n/, $node->safe_psql('postgres',
	'SELECT snowid_next() FROM generate_series(1, 2000)');
my @serials = split /\n/, $node->safe_psql('postgres',
	"SELECT snowid_serial('T') FROM generate_series(1, 2000)");
is(scalar(@batch) + scalar(@single) + scalar(@serials),
	24000, 'took 24000 ids');

my @serial_ids = split /\n/, $node->safe_psql('postgres',
	"SELECT snowid_from_serial(s) FROM unnest('{"
	  . join(',', @serials)
	  . "}'::text[]) s");
$ids->add(@batch, @single, @serial_ids);

# The fields sit where the layout puts them: sequence 8 bits, worker 9,
# datacenter 3, timestamp above.
my $misplaced = grep { (($_ >> 17) & 7) != 5 || (($_ >> 8) & 511) != 300 }
  (@batch, @single, @serial_ids);
is($misplaced, 0, 'every id carries datacenter 5 and worker 300 in place');

is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FILTER (WHERE d.datacenter_id <> 5 OR d.worker_id <> 300
							OR d.sequence > 255
							OR d.ts < now() - interval '5 minutes'
							OR d.ts > clock_timestamp() + interval '2 seconds')
	FROM unnest('{@{[ join(',', @batch[0 .. 99], @single[0 .. 99]) ]}}'::bigint[]) id,
		snowid_decode(id) d}),
	'0', 'snowid_decode() takes ids apart by the layout');
is( $node->safe_psql(
		'postgres',
		'SELECT datacenter_id, worker_id, sequence FROM snowid_decode((5::bigint << 20) | (5 << 17) | (300 << 8) | 200)'
	),
	'5|300|200',
	'snowid_decode() of a composed id');

# Serials: prefix, 17 time digits, then 1, 3 and 3 digits (7, 511, 255).
my $bad_serials =
  grep { !/^T\d{17}5300\d{3}$/ } @serials;
is($bad_serials, 0, 'serials are T + 17 + 1 + 3 + 3 digits, fields in place');
is_deeply(
	[ sort @serials ],
	\@serials, 'serials of one prefix sort in the order taken');
my $s = $serials[0];
is($node->safe_psql('postgres',
		"SELECT snowid_serial('T', snowid_from_serial('$s'))"),
	$s, 'a serial reads back into the id it was printed from');
is( $node->safe_psql(
		'postgres', q{
	SELECT snowid_serial('T', (5::bigint << 20) | (5 << 17) | (300 << 8) | 200)}
	),
	'T201011040142546625300200',
	'serial of a composed id');
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT snowid_from_serial('T2024022912345678x0300200')");
like($err, qr/invalid snowid serial/, 'a malformed serial is refused');
like($err, qr/A serial ends in 24 digits \(17 for the time, then 1, 3 and 3/,
	'... and the detail gives this layout\'s width');

# from_time follows the layout: the millisecond shifted past 20 bits.
is( $node->safe_psql(
		'postgres', q{
	SELECT snowid_from_time(t) = ((extract(epoch FROM t) * 1000)::bigint - 1288834974657) << 20,
		(snowid_decode(snowid_from_time(t))).ts = t
	FROM (VALUES ('2024-02-29 12:34:56.789+00'::timestamptz)) v(t)}),
	't|t',
	'snowid_from_time() shifts by the layout');
is( $node->safe_psql(
		'postgres', q{
	SELECT snowid_from_time(exhausted_at - interval '1 millisecond') > 0
	FROM snowid_status()}),
	't', 'snowid_from_time() reaches the last millisecond of 43 bits');
($ret, $out, $err) = $node->psql('postgres',
	'SELECT snowid_from_time(exhausted_at) FROM snowid_status()');
like($err, qr/timestamp out of range for snowid/,
	'snowid_from_time() refuses the first millisecond past 43 bits');
like($err, qr/to 2289-/, '... and 43 bits last into 2289');

# -- layouts that cannot work stop the server -----------------------------

# Starts the node with extra settings, expecting it to fail with every
# pattern in the log; then puts the working layout back.
sub fails_to_start
{
	my ($name, $settings, @patterns) = @_;

	$node->stop;
	SnowidTest::set_conf($node, %$settings);
	SnowidTest::fails_to_start($node, $name, @patterns);
	SnowidTest::set_conf($node, %layout);
	$node->start;
	return;
}

fails_to_start(
	'timestamp of 35 bits',
	{ 'snowid.sequence_bits' => 16 },
	qr/snowid\.datacenter_bits \+ snowid\.worker_bits \+ snowid\.sequence_bits is 28, more than 24/,
	qr/leaves the timestamp field 35 of the 63 bits of an id; it needs at least 39/);
fails_to_start(
	'worker id too wide',
	{ 'snowid.worker_bits' => 5 },
	qr/invalid value for parameter "snowid\.worker_id": "300"/,
	qr/With snowid\.worker_bits = 5, worker ids run from 0 to 31/);
fails_to_start(
	'datacenter id too wide',
	{ 'snowid.datacenter_bits' => 2 },
	qr/invalid value for parameter "snowid\.datacenter_id": "5"/,
	qr/With snowid\.datacenter_bits = 2, datacenter ids run from 0 to 3/);
fails_to_start(
	'field wider than 24 bits',
	{ 'snowid.sequence_bits' => 25 },
	qr/invalid value for parameter "snowid\.sequence_bits": "25"/);
fails_to_start(
	'bits not a number',
	{ 'snowid.worker_bits' => 'eight' },
	qr/invalid value for parameter "snowid\.worker_bits": "eight"/);

is($node->safe_psql('postgres', 'SELECT layout FROM snowid_status()'),
	'43/3/9/8', 'the working layout is back after the failed starts');
$ids->add(SnowidTest::query_ids($node, 'SELECT snowid_next_batch(1000)'));

# -- another layout over ids of this one ----------------------------------

my %other_layout = (
	'snowid.datacenter_bits' => 5,
	'snowid.worker_bits' => 9,
	'snowid.sequence_bits' => 8);
my $state_file = $node->data_dir . '/snowid_state';
like(slurp_file($state_file), qr/ layout=43\/3\/9\/8 /,
	'the state file records the layout');

$node->stop;
SnowidTest::set_conf($node, %other_layout);
$node->start;
for my $query ('SELECT snowid_next()', 'SELECT snowid_next_batch(10)',
	"SELECT snowid_serial('T')")
{
	$err = SnowidTest::psql_error($node, $query);
	like($err, qr/55000: snowid layout or epoch changed since ids were last issued/,
		"other layout: $query refused");
}
like($err,
	qr/DETAIL:  Ids were issued with snowid\.datacenter_bits = 3, snowid\.worker_bits = 9, snowid\.sequence_bits = 8 and snowid\.epoch = '[^']+'; the server now runs with snowid\.datacenter_bits = 5, snowid\.worker_bits = 9, snowid\.sequence_bits = 8 /,
	'other layout: detail names the old and the new settings');
like($err, qr/new ids could collide with old ones/,
	'other layout: detail says why');
like($err, qr/HINT:  To go on issuing ids, put the old settings back and restart\./,
	'other layout: hint says how to go back');
like($err, qr/remove "snowid_state" from the data directory/,
	'other layout: hint says how to switch deliberately');
my ($bound) = $err =~ /old ids lie below (\d+)/;
ok(defined $bound && $bound > $ids->max,
	'other layout: the hint gives a bound above every old id');
is( $node->safe_psql(
		'postgres',
		'SELECT layout, datacenter_id, worker_id FROM snowid_status()'),
	'41/5/9/8|5|300',
	'other layout: snowid_status() still reports');
$node->stop;
like(slurp_file($state_file), qr/ layout=43\/3\/9\/8 /,
	'other layout: the state file keeps the old layout');

# Back to the old layout: ids continue above all earlier ones.
SnowidTest::set_conf($node, %layout);
$node->start;
my @after = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowid_next_batch(5000)');
cmp_ok($after[0], '>', $ids->max,
	'old layout back: ids continue above the old ones');
$ids->add(@after);

# Switching on purpose: remove the state file, start with the new layout.
$node->stop;
unlink($state_file) or die "could not remove $state_file: $!";
SnowidTest::set_conf($node, %other_layout);
$node->start;
my @switched = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowid_next_batch(5000)');
is($node->safe_psql('postgres', 'SELECT layout FROM snowid_status()'),
	'41/5/9/8', 'switched on purpose: the new layout is in force');
cmp_ok($switched[0], '>', $ids->max,
	'switched on purpose: new ids lie above every old id');
is( $node->safe_psql(
		'postgres',
		"SELECT datacenter_id, worker_id FROM snowid_decode($switched[0])"),
	'5|300',
	'switched on purpose: ids decode by the new layout');
$ids->add(@switched);
$node->stop;
like(slurp_file($state_file), qr/ layout=41\/5\/9\/8 /,
	'switched on purpose: the state file records the new layout');

$ids->no_duplicates(
	'no duplicate among the ' . $ids->count . ' ids of the first server');

# -- a 62-bit timestamp ends at year 9999 ---------------------------------

my $wide = SnowidTest::new_server(
	'wide',
	{
		'snowid.datacenter_bits' => 0,
		'snowid.worker_bits' => 0,
		'snowid.sequence_bits' => 1,
		'snowid.worker_id' => 0
	});
is( $wide->safe_psql(
		'postgres', q{
	SET timezone = 'UTC';
	SELECT layout, ceiling_ids_per_s, exhausted_at FROM snowid_status()}),
	'62/0/0/1|2000|10000-01-01 00:00:00+00',
	'62-bit timestamp: ids end with year 9999');
is( $wide->safe_psql(
		'postgres', q{
	SELECT js_safe_until, snowid_from_time(exhausted_at - interval '1 millisecond') + 1 < 2 ^ 53
	FROM snowid_status()}),
	'infinity|t',
	'62-bit timestamp: every id stays below 2^53, js_safe_until is infinity');
is( $wide->safe_psql(
		'postgres', q{
	SELECT snowid_serial('X', snowid_from_time('9999-12-31 23:59:59.999+00') | 1)}),
	'X99991231235959999001',
	'62-bit timestamp: the last id prints with one digit per field');
($ret, $out, $err) = $wide->psql('postgres',
	"SELECT snowid_from_time('10000-01-01 00:00:00+00')");
like($err, qr/timestamp out of range for snowid/,
	'62-bit timestamp: no ids after year 9999');
($ret, $out, $err) =
  $wide->psql('postgres', 'SELECT snowid_decode(9223372036854775807)');
like($err, qr/invalid snowid 9223372036854775807.*\n.*after 9999-12-31/,
	'62-bit timestamp: ids past year 9999 do not decode');

my $wide_ids = SnowidTest::Ledger->new;
$wide_ids->collect($wide, 3000);
my @wide_serials = split /\n/, $wide->safe_psql('postgres',
	"SELECT snowid_serial('X') FROM generate_series(1, 500)");
$wide_ids->add(SnowidTest::query_ids($wide,
	"SELECT snowid_from_serial(s) FROM unnest('{"
	  . join(',', @wide_serials)
	  . "}'::text[]) s"));
is($wide_ids->count, 3500, '62-bit timestamp: took 3500 ids');
$wide_ids->no_duplicates('62-bit timestamp: no duplicates');
is((grep { !/^X\d{17}00[01]$/ } @wide_serials), 0,
	'62-bit timestamp: serials are X + 17 + 1 + 1 + 1 digits');
$wide->stop;

# -- without shared_preload_libraries -------------------------------------

# The functions that need no shared memory follow the configured layout,
# and a layout that cannot work is refused there as well, on every call.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
SnowidTest::set_conf($plain, %layout);
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowid');
is( $plain->safe_psql(
		'postgres',
		'SELECT datacenter_id, worker_id, sequence FROM snowid_decode((5::bigint << 20) | (5 << 17) | (300 << 8) | 200)'
	),
	'5|300|200',
	'not preloaded: snowid_decode() takes ids apart by the layout');
is( $plain->safe_psql(
		'postgres', q{
	SELECT snowid_from_time(t) = ((extract(epoch FROM t) * 1000)::bigint - 1288834974657) << 20
	FROM (VALUES ('2024-02-29 12:34:56.789+00'::timestamptz)) v(t)}),
	't', 'not preloaded: snowid_from_time() shifts by the layout');
SnowidTest::set_conf($plain, 'snowid.sequence_bits' => 16);
$plain->restart;
($ret, $out, $err) = $plain->psql('postgres',
	'SELECT snowid_decode(1); SELECT snowid_decode(1);',
	on_error_stop => 0);
like($err,
	qr/snowid\.sequence_bits is 28, more than 24.*\n(.*\n)*.*snowid\.sequence_bits is 28, more than 24/,
	'not preloaded: a layout of 35 timestamp bits is refused, call after call');
$plain->stop;

done_testing();
