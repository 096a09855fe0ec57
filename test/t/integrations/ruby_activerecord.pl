# The Ruby recipe of doc/adopting.md, run as the page shows it, with
# Debian's ruby-activerecord (6.1) and ruby-pg: orders of 1, 3 and 5 lines
# saved with insert_all, keys taken first from the helper's KeyPool
# (snowid_next_batch()), read back through the models by
# test/clients/frameworks/check_activerecord.rb.  The server logs every
# statement: per order one INSERT for the order and one for all its lines,
# one batch of keys, no RETURNING.  Then Snowid.decode and
# Snowid.public_id_checks? against snowid_decode() and
# snowid_public_is_valid() on 10,000 ids and texts.  Without ruby or the
# libraries this test skips itself, naming the package (a failure under
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

my $ruby = SnowidTest::need_program('ruby', 'ruby');
SnowidTest::need_ruby_library('pg', 'ruby-pg');
SnowidTest::need_ruby_library('active_record', 'ruby-activerecord');

my $driver = "$SnowidClients::drivers/check_activerecord.rb";
my $recipes = SnowidClients::write_recipes(PostgreSQL::Test::Utils::tempdir('recipes'),
	qw(snowid_keys.rb orders_activerecord.rb run-activerecord.sh));
my $node = SnowidClients::new_framework_node('activerecord', 6, 29);

SnowidClients::check_orders($node, 'ActiveRecord', 'activerecord',
	[ $ruby, $driver, $recipes, 'orders' ]);

# the page's lines that run the recipe: an order of three lines
SnowidClients::run_page_program($node, 'ActiveRecord', 'run-activerecord.sh',
	qr/^(\d+)$/m, dbname => 'activerecord', dir => $recipes);

my $samples = SnowidClients::id_samples($node, PostgreSQL::Test::Utils::tempdir('ids'));
SnowidClients::check_id_reader($node, 'Ruby',
	[ $ruby, $driver, $recipes, 'ids' ], $samples);

$node->stop;
done_testing();
