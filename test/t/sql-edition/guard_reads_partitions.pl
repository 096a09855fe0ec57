# The layout and epoch guard of the SQL edition (snowid_sql_config_check(),
# doc/managed.md "The layout and the epoch") misses the ids of a
# partitioned table: it reads only plain tables (relkind 'r') whose own
# column has a default that takes ids, and a partitioned table's rows lie
# in its partitions, which have no default of their own where they were
# attached (CREATE TABLE ... (LIKE parent), then ATTACH PARTITION, as
# partition managers do).  The page promises the change refused where "a
# column of a table of the database whose default ... calls snowid_next()"
# holds a value; the parent's column is one.
#
# - The source issues 5,000 ids into a partitioned table whose parent's
#   default takes ids, its partition attached (51/0/6/4, worker id 5).
# - The tables alone are dumped and restored beside a fresh install (as in
#   test 149, where a plain table's ids refuse the change): the epoch moved
#   later, by as much as makes the copy's first ids fall among the
#   source's (a fresh install's worker id set raises nothing), should be
#   refused (55000).
# - If accepted, the source gone and its worker id given to the copy, none
#   of 5,000 new ids should equal a restored one.
# - A default through an SQL-standard function that calls
#   snowid_next_batch(1): the guard follows snowid_next() and
#   snowid_serial() in pg_depend, not the batch, and takes the change.
# - The owner's SET snowid_sql.restoring = on (the setting the restore of
#   the row sets for its update): the guard reads no table.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('guard_partitions');
my $refused = qr/55000: snowid layout or epoch cannot change once ids are issued/;

my $node = SnowidSqlEdition::new_server('guard_partitions', ['app'], [qw(source tables)]);
my %as = map { $_ => app_url($node, $_) } qw(source tables);

my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4, worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int) PARTITION BY RANGE (n);
	CREATE TABLE t_1 (LIKE t);
	ALTER TABLE t ATTACH PARTITION t_1 FOR VALUES FROM (0) TO (1000000);
	DO $$ BEGIN FOR i IN 1 .. 5000 LOOP INSERT INTO t (n) VALUES (i); END LOOP; END $$;
	SELECT count(*) FROM t});
is($out, '5000', 'the source issues 5,000 ids into a partitioned table') or diag($err);

# the tables alone, beside a fresh install of the same layout
psql_as($as{tables}, 'CREATE EXTENSION snowid_sql; ' . SnowidSqlEdition::layout_sql());
SnowidSqlEdition::dump_to($as{source}, "$dir/t.dump", '-t', 't', '-t', 't_1');
($rc, $err) = SnowidSqlEdition::restore_into($as{tables}, "$dir/t.dump", '--exit-on-error');
is($rc, 0, 'the tables alone, dumped and restored beside a fresh install') or diag($err);
$node->safe_psql('postgres', 'DROP DATABASE source');
is($node->safe_psql('tables', 'SELECT count(*) FROM t'), '5000', 'the copy holds the 5,000 ids');

($rc, $out, $err) = psql_as($as{tables}, q{
	UPDATE snowid_config
	SET epoch = epoch + (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
						 - floor(extract(epoch FROM (SELECT snowid_time(min(id)) FROM t)) * 1000)::bigint)
					   * interval '1 ms'});
like($err, $refused, 'the epoch cannot move later beside a partitioned table holding ids');

($rc, $out, $err) = psql_as($as{tables}, q{
	UPDATE snowid_config SET worker_id = 5;
	DO $$ BEGIN FOR i IN 5001 .. 10000 LOOP INSERT INTO t (n) VALUES (i); END LOOP; END $$;
	SELECT count(*) FROM t WHERE n > 5000});
is($out, '5000', 'given its gone source\'s worker id, the copy issues 5,000 ids') or diag($err);
my $again = $node->safe_psql(
	'tables', q{
	SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.n <= 5000 AND b.n > 5000});
is($again, '0', 'none of them equals an id of the restored table');

# A default through an SQL-standard function of the application's that
# takes its id from snowid_next_batch(1) (not from snowid_next(), which the
# guard follows in pg_depend), in a fresh install beside ids loaded into
# its table (the change in a transaction rolled back)
$node->safe_psql('postgres', 'CREATE DATABASE batch OWNER app');
($rc, $out, $err) = psql_as(app_url($node, 'batch'), q{
	CREATE EXTENSION snowid_sql;
	CREATE FUNCTION app_id() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT snowid_next_batch(1); END;
	CREATE TABLE b (id bigint DEFAULT app_id());
	INSERT INTO b VALUES (2126664446041403392);
	BEGIN;
	UPDATE snowid_config SET epoch = epoch + interval '30 s';
	ROLLBACK});
like($err, qr/$refused.*\nDETAIL:  The column id of public\.b takes ids by its default/s,
	'nor beside a default that takes its id from snowid_next_batch() through a function');

# The restore's setting, set by the owner (a session's, or a database's
# default): the guard then reads no table (the row's restore is to set the
# layout its tables' ids were made under), and the change goes through
# beside the table of ids
# (the block above ran as one transaction, psql -c's, which its BEGIN made
# explicit: its ROLLBACK took CREATE EXTENSION with it)
($rc, $out, $err) = psql_as(app_url($node, 'batch'), q{
	CREATE EXTENSION IF NOT EXISTS snowid_sql;
	CREATE TABLE c (id bigint DEFAULT snowid_next());
	INSERT INTO c VALUES (2126664446041403392);
	BEGIN;
	SET LOCAL snowid_sql.restoring = on;
	UPDATE snowid_config SET epoch = epoch + interval '30 s';
	ROLLBACK});
like($err, $refused, 'nor where the owner sets the restore\'s setting snowid_sql.restoring');

$node->stop;
done_testing();
