# pg_dump and pg_restore of a database that uses snowid, into another
# server with its own worker id.
#
# The source has tables keyed by DEFAULT snowid_next(), one of them a
# bigserial table converted with snowid_convert_column(), and rows taken
# one by one and in batches.  After pg_dump -Fc and pg_restore into a new
# database on the second server: the extension and every DEFAULT
# snowid_next() are back, the rows are identical, new rows on the second
# server take ids of its own worker that collide with no restored id (nor
# with the source's new ids), and snowid_from_time() ranges taken on the
# source still find exactly the old rows.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $source = SnowidTest::new_node('dump_source',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_id' => 3 });
my $target = SnowidTest::new_node('dump_target',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_id' => 4 });
$source->start;
$target->start;

# -- a database that uses snowid ------------------------------------------

$source->safe_psql('postgres', 'CREATE DATABASE shop');
# orders and their lines, keyed by DEFAULT snowid_next()
SnowidTest::create_orders($source, 'shop');
my $start = $source->safe_psql('shop', q{
	CREATE TABLE legacy (id bigserial PRIMARY KEY, note text);
	INSERT INTO legacy (note) SELECT 'before ' || g FROM generate_series(1, 100) g;
	SELECT clock_timestamp();
});

# the bigserial table converted, then rows everywhere: orders one by one,
# lines in batches
$source->safe_psql('shop', q{
	SET client_min_messages = warning;
	SELECT snowid_convert_column('legacy', 'id');
	INSERT INTO legacy (note) SELECT 'after ' || g FROM generate_series(1, 100) g;
	INSERT INTO orders (customer) SELECT 'customer ' || g FROM generate_series(1, 500) g;
	INSERT INTO order_lines (id, order_id, product)
	SELECT b.id, o.id, 'product'
	FROM (SELECT id, row_number() OVER () AS n FROM snowid_next_batch(1500) id) b
	JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM orders) o
		ON o.n = (b.n - 1) / 3 + 1;
});

# a bound above every id the source has issued
my $end = $source->safe_psql('shop', q{
	SELECT greatest(clock_timestamp(), last_time + interval '1 millisecond')
	FROM snowid_status()});

# What defines the database: the extension and its version, the column
# defaults, and a digest of every row.
my %describe = (
	extension => q{SELECT extname || ' ' || extversion FROM pg_extension
		WHERE extname = 'snowid'},
	defaults => q{
		SELECT string_agg(format('%s.%s %s', c.relname, a.attname,
								 pg_get_expr(d.adbin, d.adrelid)), ', '
						  ORDER BY c.relname, a.attname)
		FROM pg_attrdef d
		JOIN pg_class c ON c.oid = d.adrelid
		JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE c.relnamespace = 'public'::regnamespace},
	sequences => q{SELECT count(*) FROM pg_class WHERE relkind = 'S'},
	rows => q{
		SELECT (SELECT count(*) FROM orders) || ' ' ||
			(SELECT count(*) FROM order_lines) || ' ' ||
			(SELECT count(*) FROM legacy) || ' ' ||
			md5((SELECT string_agg(id || customer, ',' ORDER BY id) FROM orders) ||
				(SELECT string_agg(id || ':' || order_id || product, ',' ORDER BY id) FROM order_lines) ||
				(SELECT string_agg(id || note, ',' ORDER BY id) FROM legacy))});

my %before =
  map { $_ => $source->safe_psql('shop', $describe{$_}) } keys %describe;
is($before{defaults},
	'legacy.id snowid_next(), order_lines.id snowid_next(), orders.id snowid_next()',
	'source: three keys default to snowid_next(), the converted one too');
is($before{sequences}, '0', 'source: the converted table\'s sequence is gone');
like($before{rows}, qr/^500 1500 200 /, 'source: 500 orders, 1500 lines, 200 legacy rows');

# -- dump, restore into the other server -----------------------------------

my $dump = PostgreSQL::Test::Utils::tempdir() . '/shop.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('shop') ],
	'pg_dump -Fc');
$target->safe_psql('postgres', 'CREATE DATABASE shop');
command_ok(
	[
		'pg_restore', '--exit-on-error', '-d', $target->connstr('shop'),
		$dump
	],
	'pg_restore into the other server');

for my $what (sort keys %describe)
{
	is($target->safe_psql('shop', $describe{$what}),
		$before{$what}, "restored: the same $what");
}

# -- new ids on both servers -------------------------------------------------

$target->safe_psql('shop', q{
	INSERT INTO orders (customer) SELECT 'restored ' || g FROM generate_series(1, 500) g;
	INSERT INTO order_lines (order_id, product)
	SELECT id, 'restored' FROM orders WHERE customer LIKE 'restored %';
	INSERT INTO legacy (note) SELECT 'restored ' || g FROM generate_series(1, 100) g;
});
$source->safe_psql('shop', q{
	INSERT INTO orders (customer) SELECT 'source ' || g FROM generate_series(1, 500) g;
});

is( $target->safe_psql(
		'shop', q{
	SELECT count(*), count(DISTINCT id),
		count(*) FILTER (WHERE (snowid_decode(id)).worker_id = 4)
	FROM (SELECT id FROM orders WHERE customer LIKE 'restored %'
		  UNION ALL SELECT id FROM order_lines WHERE product = 'restored'
		  UNION ALL SELECT id FROM legacy WHERE note LIKE 'restored %') k}),
	'1100|1100|1100',
	'target: 1100 new ids, unique, all of its own worker (4)');

# every id of both servers, old and new, once
my $ids = SnowidTest::Ledger->new;
$ids->add(split /\n/, $target->safe_psql('shop',
	'SELECT id FROM orders UNION ALL SELECT id FROM order_lines'));
$ids->add(split /\n/, $source->safe_psql('shop',
	"SELECT id FROM orders WHERE customer LIKE 'source %'"));
is($ids->count, 500 + 1500 + 500 + 500 + 500,
	'all ids of both servers collected');
$ids->no_duplicates('no id of the target collides with a restored one or with the source\'s new ones');

# -- time ranges on the key --------------------------------------------------

is( $target->safe_psql(
		'shop', qq{
	SELECT (SELECT count(*) FROM orders
			WHERE id >= snowid_from_time('$start') AND id < snowid_from_time('$end')),
		(SELECT count(*) FROM order_lines
			WHERE id >= snowid_from_time('$start') AND id < snowid_from_time('$end')),
		(SELECT count(*) FROM legacy
			WHERE id >= snowid_from_time('$start') AND id < snowid_from_time('$end')),
		(SELECT count(*) FROM orders WHERE id >= snowid_from_time('$end'))}),
	'500|1500|100|500',
	'target: the source\'s time range finds exactly the restored rows, the new ones lie after it'
);
is( $target->safe_psql(
		'shop', qq{
	SELECT count(*) FROM orders
	WHERE (snowid_decode(id)).ts >= '$start' AND (snowid_decode(id)).ts < '$end'
		AND (snowid_decode(id)).worker_id = 3}),
	'500', 'target: restored ids decode to the source\'s worker and time');

$source->stop;
$target->stop;
done_testing();
