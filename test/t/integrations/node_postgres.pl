# node-postgres (the npm "pg" package) against real servers: the client in
# test/clients/orders.js takes the keys of an order and its lines with
# snowid_next_batch(), inserts them in one transaction and reads them back.
#
# With the default layout, ids lie above 2^53: read as strings (pg's
# default) and as BigInt they come back exact, and JSON carries them as
# text; the BigInt program of doc/adopting.md (orders-bigint.js) runs as
# the page shows it and ends.  With a layout that keeps ids below 2^53 (no
# datacenter bits, 6 worker bits, 6 sequence bits), they are read as
# Numbers and stay exact through JSON.stringify and JSON.parse;
# snowid_status() says until when.
#
# node_modules comes from test/run (npm ci of test/clients/package-lock.json
# into a cache, passed as SNOWID_NODE_PATH) or from an npm ci in
# test/clients.  Without node or node-postgres this test skips itself,
# naming the package (a failure under SNOWID_REQUIRE_TOOLS=1, as test/run
# sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidTest;
use Test::More;

my $node_path = $ENV{SNOWID_NODE_PATH}
  // "$SnowidClients::dir/node_modules";
my $script = "$SnowidClients::dir/orders.js";

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_program('node', 'nodejs');
SnowidTest::need_node_module('pg', $node_path, 'npm ci in test/clients');

# -- the client's runtime is there ----------------------------------------

my ($version, $version_err) = ('', '');
my $ran = eval {
	IPC::Run::run([ 'node', '--version' ],
		'<', \undef, '>', \$version, '2>', \$version_err);
};
ok($ran && $version =~ /^v\d+/, 'node runs')
  or diag("node --version: " . ($@ || $version_err));
ok(-f "$node_path/pg/package.json",
	"node-postgres is installed in $node_path")
  or diag('run test/run, or npm ci in test/clients');

# -- the default layout: ids above 2^53 -----------------------------------

my $node = SnowidTest::new_node('node_default',
	{ 'snowid.datacenter_id' => 2, 'snowid.worker_id' => 9 });
$node->start;
SnowidTest::create_orders($node);

my @orders;
for my $mode (qw(string bigint))
{
	my $summary = SnowidClients::run_order_client($node, "pg, $mode",
		[ 'node', $script, $mode ], node_path => $node_path);

	push @orders, $summary->{order};
}

# the BigInt program of doc/adopting.md, run as the page shows it
my $recipes = SnowidClients::write_recipes(PostgreSQL::Test::Utils::tempdir('recipes'),
	'orders-bigint.js');
SnowidClients::run_page_program($node, 'BigInt', [ 'node', "$recipes/orders-bigint.js" ],
	qr/^\{"id":"(\d+)"\}$/m, node_path => $node_path);

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*), count(*) FILTER (WHERE id > 9007199254740991),
		count(*) FILTER (WHERE (snowid_decode(id)).worker_id = 9)
	FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
	'12|12|12',
	'default layout: 12 keys, all above 2^53, all from this server');
is($node->safe_psql('postgres',
		'SELECT js_safe_until IS NULL FROM snowid_status()'),
	't', 'default layout: snowid_status() says ids do not stay below 2^53');
$node->stop;

# -- a JavaScript-safe layout: 51/0/6/6 ------------------------------------

my $safe = SnowidTest::new_node(
	'node_safe',
	{
		'snowid.datacenter_bits' => 0,
		'snowid.worker_bits' => 6,
		'snowid.sequence_bits' => 6,
		'snowid.datacenter_id' => 0,
		'snowid.worker_id' => 37
	});
$safe->start;
SnowidTest::create_orders($safe);

# until epoch + 2^41 ms: the ids of every earlier millisecond stay below
# 2^53 (41 bits of milliseconds and 12 of worker and sequence)
is( $safe->safe_psql(
		'postgres', q{
	SELECT layout, js_safe_until = epoch + 2199023255552 * interval '1 millisecond',
		to_char(js_safe_until AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
		snowid_from_time(js_safe_until - interval '1 millisecond') + 4095 = 9007199254740991
	FROM snowid_status()}),
	'51/0/6/6|t|2080-07-10|t',
	'51/0/6/6: ids stay below 2^53 until 2080-07-10, the last millisecond ends at 2^53 - 1'
);

my $summary = SnowidClients::run_order_client($safe, 'pg, number',
	[ 'node', $script, 'number' ], node_path => $node_path);

# a batch larger than one millisecond's 64 ids: borrowed milliseconds,
# still below 2^53 and unique
is( $safe->safe_psql(
		'postgres', q{
	SELECT count(*), count(DISTINCT id), max(id) <= 9007199254740991,
		count(*) FILTER (WHERE (snowid_decode(id)).worker_id <> 37)
	FROM snowid_next_batch(5000) id}),
	'5000|5000|t|0',
	'51/0/6/6: 5000 ids at once, unique, below 2^53, worker 37');
is( $safe->safe_psql(
		'postgres', q{
	SELECT count(*) FILTER (WHERE id > 9007199254740991)
	FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
	'0',
	'51/0/6/6: every key the client wrote lies below 2^53');
$safe->stop;

done_testing();
