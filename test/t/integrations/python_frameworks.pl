# The Python recipes of doc/adopting.md, run as the page shows them (the
# test writes its "<!-- file NAME -->" blocks out), with Debian's
# python3-psycopg (psycopg 3), python3-sqlalchemy (1.4, its ORM over
# psycopg2) and python3-django (3.2): each saves orders of 1, 3 and 5
# lines, its keys taken first with snowid_next_batch(), through
# test/clients/frameworks/check_python.py, which reads them back (Django
# set up by the page's shop.py, which the test also runs as a program).  The
# server logs every statement: per order one INSERT for the order and one
# statement for all its lines, keys in one batch for many orders (one a
# flush for SQLAlchemy), no RETURNING.  Then the helper's decode() and
# public_id_checks() against snowid_decode() and snowid_public_is_valid()
# on 10,000 ids and texts.  Without python3 or a module this test skips
# itself, naming the package (a failure under SNOWID_REQUIRE_TOOLS=1, as
# test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidTest;
use Test::More;

SnowidTest::need_python_module('psycopg', 'python3-psycopg');
SnowidTest::need_python_module('psycopg2', 'python3-psycopg2');
SnowidTest::need_python_module('sqlalchemy', 'python3-sqlalchemy');
SnowidTest::need_python_module('django', 'python3-django');

my $python = '/usr/bin/python3';
my $driver = "$SnowidClients::drivers/check_python.py";
my $recipes = SnowidClients::write_recipes(PostgreSQL::Test::Utils::tempdir('recipes'),
	qw(snowid_keys.py orders_psycopg.py orders_sqlalchemy_keys.py shop_models.py shop.py
	  run-psycopg.sh run-sqlalchemy.sh));
my $node = SnowidClients::new_framework_node('python_frameworks', 5, 23);

SnowidClients::check_orders($node, $_, $_, [ $python, $driver, $recipes, $_ ])
  for qw(psycopg sqlalchemy django);

# the page's Django program (shop.py: its settings, django.setup(), an
# order of three lines), run as a reader would
SnowidClients::run_page_program($node, 'Django', [ $python, "$recipes/shop.py" ],
	qr/^(\d+)$/m, dbname => 'django');
{
	# the page's lines run python3: Debian's, as above
	local $ENV{PATH} = "/usr/bin:$ENV{PATH}";

	SnowidClients::run_page_program($node, $_, "run-$_.sh", qr/^(\d+)$/m,
		dbname => $_, dir => $recipes)
	  for qw(psycopg sqlalchemy);
}

my $samples = SnowidClients::id_samples($node, PostgreSQL::Test::Utils::tempdir('ids'));
SnowidClients::check_id_reader($node, 'Python',
	[ $python, $driver, $recipes, 'ids' ], $samples);

$node->stop;
done_testing();
