# A restored dump given its gone source's worker id at once (doc/managed.md,
# "Dumps and restores"): setting it raises the generator past this
# server's clock plus max_drift_ms (the larger of the row's before and
# after), and reads no table of the application's.  Within the one
# assumption it rests on (this server's clock, when the worker id is set,
# no earlier than the source's when it last issued; here one server, one
# clock), no id of the copy equals one its source issued, whatever way a
# column's default reaches snowid_next().  Before 1.4's last fixes the
# raise searched the catalog for such columns and read their largest id:
# attacks found defaults the search missed, each of which this file takes
# ids through:
# - a view a function reads (CREATE VIEW next_v AS SELECT snowid_next(), a
#   function SELECT id FROM next_v, the column's default that function);
# - an operator (a prefix operator whose function returns snowid_next()
#   plus its argument, the default OPERATOR(public.@#@) 0);
# - a call written with a Unicode escape, U&"snowid\005fnext"(), in a
#   PL/pgSQL function's body;
# - a function inside an extension of the application's (pg_tle's, where
#   pg_tle is built: the application's extension registered in the target
#   before the restore, as its package is installed on a new server).
#
# - The source (app's): layout 0/6/2 (4 ids a millisecond), max_drift_ms
#   60 s, worker id 5; 15,000 ids into each table in one statement (15 s
#   of ids), so that its last ids lie seconds ahead of its clock however
#   slow the machine (a batch runs ahead).
# - Dumped by the superuser, restored into a new database of app's (the
#   application's extension registered there first), the source dropped;
#   the copy given worker id 5 at once.
# - The copy issues into each table for 2 s: its first id lies past every
#   restored one, and no id of the copy equals a restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
my $tle_missing = -e "$libdir/pg_tle.so" ? undef : 'pg_tle is not built for this PostgreSQL';
my $dir = PostgreSQL::Test::Utils::tempdir('restore_defaults_unseen');
my $node = SnowidSqlEdition::tle_server('restore_defaults_unseen', $tle_missing);
my @tables = ('a', 'o', 'u', defined $tle_missing ? () : 'e');

# the application's extension, registered in each database it is to be
# created in (pg_tle's, per database)
my $register = q{SELECT pgtle.install_extension('app_ids', '1.0', 'the ids of the application',
	$x$CREATE FUNCTION ext_next() RETURNS bigint LANGUAGE plpgsql
	   AS $f$ BEGIN RETURN public.snowid_next(); END $f$;$x$, '{snowid_sql}')};
for my $db (qw(source copy))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	next if defined $tle_missing;
	$node->safe_psql($db, 'CREATE EXTENSION pg_tle');
	my ($rc, $out, $err) = psql_as($node->connstr($db) . ' user=tle_admin', $register);
	is($rc, 0, "the application's extension is registered in $db") or diag($err);
}

my ($rc, $out, $err) = psql_as(app_url($node, 'source'), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2,
		max_drift_ms = 60000, worker_id = 5;
	CREATE VIEW next_v AS SELECT snowid_next() AS id;
	CREATE FUNCTION via_view() RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT id FROM public.next_v';
	CREATE TABLE a (id bigint DEFAULT via_view(), copy boolean DEFAULT false);
	CREATE FUNCTION plus_next(bigint) RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT public.snowid_next() + $1';
	CREATE OPERATOR @#@ (RIGHTARG = bigint, FUNCTION = plus_next);
	CREATE TABLE o (id bigint DEFAULT (OPERATOR(public.@#@) 0::bigint), copy boolean DEFAULT false);
	CREATE FUNCTION u_next() RETURNS bigint LANGUAGE plpgsql
		AS $f$ BEGIN RETURN public.U&"snowid\005fnext"(); END $f$;
	CREATE TABLE u (id bigint DEFAULT u_next(), copy boolean DEFAULT false);}
	  . (defined $tle_missing ? '' : q{
	CREATE EXTENSION app_ids;
	CREATE TABLE e (id bigint DEFAULT ext_next(), copy boolean DEFAULT false);})
	  . join('', map { "\n\tINSERT INTO $_ SELECT FROM generate_series(1, 15000);" } @tables) . q{
	SELECT round(EXTRACT(epoch FROM snowid_time(max(id)) - clock_timestamp()))
	FROM (SELECT id FROM a UNION ALL SELECT id FROM o UNION ALL SELECT id FROM u) x});
cmp_ok($out, '>', 0, "the source issues 15,000 ids into each table, its last $out s ahead of its clock")
  or diag($err);
SKIP:
{
	skip $tle_missing, 1 if defined $tle_missing;
	is($node->safe_psql('source', q{
		SELECT count(*) FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
		WHERE d.objid = 'ext_next()'::regprocedure AND d.deptype = 'e' AND x.extname = 'app_ids'}),
		'1', "ext_next() is a member of the application's extension");
}

# the superuser's dump, restored into the copy as app (what pg_tle keeps
# of the application's extension is registered there already)
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $node->connstr('source') ],
	'the source is dumped');
my $list = "$dir/source.list";
my $items = `pg_restore -l "$dir/source.dump"`;
PostgreSQL::Test::Utils::append_to_file($list,
	join("\n", grep { !/ pg_tle| pgtle / } split /\n/, $items) . "\n");
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-L', $list, '-d', app_url($node, 'copy'), "$dir/source.dump" ],
	'and restored by app into a new database');
$node->safe_psql('postgres', 'DROP DATABASE source');

SnowidSqlEdition::worker_set_on_copy($node, 'copy', undef,
	join(' ', map { "INSERT INTO $_ (copy) VALUES (true);" } @tables), 'a', ' into each table',
	map { [ $_, 'id', 'id', $_ ] } @tables);

$node->stop;
done_testing();
