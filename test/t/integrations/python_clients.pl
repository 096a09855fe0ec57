# Python clients against a real server, under Debian's /usr/bin/python3
# with Debian's python3-psycopg2 and python3-sqlalchemy: psycopg2 itself
# (test/clients/orders_psycopg2.py) and SQLAlchemy's ORM with models keyed
# by server_default snowid_next() and an order-to-lines relationship
# (test/clients/orders_sqlalchemy.py).  Each takes the keys of an order and
# its lines with snowid_next_batch(), inserts them in one transaction and
# reads them back; Python's int holds every id exactly.  Without python3 or
# the modules this test skips itself, naming the packages (a failure under
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

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_python_module('psycopg2', 'python3-psycopg2');
SnowidTest::need_python_module('sqlalchemy', 'python3-sqlalchemy');

my $python = '/usr/bin/python3';

# -- the clients' runtime is there ----------------------------------------

my ($rc, $out, $err) = (1, '', '');
my $ran = eval {
	IPC::Run::run(
		[
			$python, '-c',
			'import psycopg2, sqlalchemy; print(psycopg2.__version__.split()[0], sqlalchemy.__version__)'
		],
		'<', \undef, '>', \$out, '2>', \$err);
};
ok($ran, "$python imports psycopg2 and sqlalchemy")
  or diag($@ || $err);
note("psycopg2 and SQLAlchemy versions: $out");

my $node = SnowidTest::new_node('python',
	{ 'snowid.datacenter_id' => 4, 'snowid.worker_id' => 21 });
$node->start;
SnowidTest::create_orders($node);

SnowidClients::run_order_client($node, 'psycopg2',
	[ $python, "$SnowidClients::dir/orders_psycopg2.py" ]);
SnowidClients::run_order_client($node, 'SQLAlchemy ORM',
	[ $python, "$SnowidClients::dir/orders_sqlalchemy.py" ]);

# psycopg2's order and lines, SQLAlchemy's two orders and their five lines:
# every key unique, from this server, taken moments ago
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*), count(DISTINCT id),
		count(*) FILTER (WHERE (snowid_decode(id)).datacenter_id = 4
						 AND (snowid_decode(id)).worker_id = 21
						 AND id >= snowid_from_time(now() - interval '10 minutes'))
	FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
	'11|11|11',
	'11 keys, unique, all from this server');

$node->stop;
done_testing();
