# The JavaScript recipes of doc/adopting.md, run as the page shows them,
# with node-postgres, Knex, TypeORM and Drizzle from npm (pinned in
# test/clients/package-lock.json; node_modules from test/run's npm ci, as
# for node_postgres.pl): through test/clients/frameworks/check.js each saves orders of
# 1, 3 and 5 lines, keys taken first from the helper's KeyPool
# (snowid_next_batch()), and reads them back through the framework as
# strings or BigInts, never Numbers; then an order whose key is 2^53 + 1,
# exact through the framework and JSON.  The server logs every statement:
# per order one INSERT for the order and one for all its lines.  Then
# decode and publicIdChecks against snowid_decode() and
# snowid_public_is_valid() on 10,000 ids and texts.  Without node or a
# package this test skips itself, naming it (a failure under
# SNOWID_REQUIRE_TOOLS=1, as test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidTest;
use Test::More;

my $node_path = $ENV{SNOWID_NODE_PATH} // "$SnowidClients::dir/node_modules";

SnowidTest::need_program('node', 'nodejs');
SnowidTest::need_node_module($_, $node_path, 'npm ci in test/clients')
  for qw(pg knex typeorm drizzle-orm);

my $driver = "$SnowidClients::drivers/check.js";
my $recipes = SnowidClients::write_recipes(PostgreSQL::Test::Utils::tempdir('recipes'),
	qw(snowid-keys.js orders-pg.js orders-knex.js orders-typeorm.js orders-drizzle.js order.js));
my $node = SnowidClients::new_framework_node('node_frameworks', 9, 2);

for my $framework (qw(pg knex typeorm drizzle))
{
	my $db = "node_$framework";

	SnowidClients::create_database($node, $db);
	my $offset = -s $node->logfile;
	SnowidClients::run_order_client($node, $framework,
		[ 'node', $driver, $recipes, $framework ],
		dbname => $db,
		app => "snowid-$framework",
		node_path => $node_path);

	# the three orders, and the one past 2^53 with its line
	SnowidClients::count_statements($node, $framework, "snowid-$framework",
		$offset, [ 1, 3, 5, 1 ]);
	is( $node->safe_psql(
			$db, q{
		SELECT count(*), count(DISTINCT id),
			count(*) FILTER (WHERE (snowid_decode(id)).datacenter_id = 9
							 AND (snowid_decode(id)).worker_id = 2),
			string_agg(id::text, ',' ORDER BY id) FILTER (WHERE id < 2^60)
		FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
		'14|14|12|9007199254740993,9007199254740994',
		"$framework: 3 orders and 9 lines from this server, unique; 2^53 + 1 and + 2 exact"
	);
}

# the page's program that runs a recipe (order.js): an order of three lines
for my $framework (qw(pg knex typeorm drizzle))
{
	SnowidClients::run_page_program($node, $framework,
		[ 'node', "$recipes/order.js", "./orders-$framework" ],
		qr/^(\d+)$/m, dbname => "node_$framework", node_path => $node_path);
}

my $samples = SnowidClients::id_samples($node, PostgreSQL::Test::Utils::tempdir('ids'));
SnowidClients::check_id_reader($node, 'JavaScript',
	[ 'node', $driver, $recipes, 'ids' ], $samples, node_path => $node_path);

$node->stop;
done_testing();
