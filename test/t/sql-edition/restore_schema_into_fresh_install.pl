# test/t/sql-edition/restore_schema_into_fresh_install.pl
#
# The documented restore (doc/managed.md, "Dumps and restores"): "in a
# database that has no worker id (a new one: CREATE EXTENSION snowid_sql),
# pg_restore in any form [...], -n of the application's schemas, [...] and
# once it is over, as the owner, UPDATE snowid_config SET datacenter_id = D,
# worker_id = N"; "setting the worker id raises the generator past this
# server's clock plus max_drift_ms and past the largest id of the new node
# its tables hold".  But pg_restore -n of the application's schema leaves
# out the row of snowid_config (it lies in snowid_sql_private), so the row
# of the new database was never stamped, and its first worker id is taken
# as "a first install's first worker id" (snowid_sql_config_stamp(): drift
# 0), which raises past the tables alone, not past the clock plus
# max_drift_ms.  The source's ids that lie ahead of the clock and are not
# in the restored schema (a batch handed to clients, rows of another
# schema) come again.
#
# - One server.  source: the dump's layout (0/6/1, 2 ids a millisecond),
#   max_drift_ms 60000, worker id 5; 10 rows in store.orders, then a batch
#   of 100,000 ids (50 s ahead of the clock) kept in public.t, out of the
#   schema the operator restores.  pg_dump -Fc, and the source stops.
# - target: a new database; the owner creates the edition, sets the dump's
#   layout and max_drift_ms first (the guard's hint: "set them to the
#   dump's before restoring its tables") and the schema store, pg_restore
#   -n store, then sets worker id 5 and issues a batch of 36,000.
# - whole: a new database, the same dump restored whole, worker id 5, the
#   same batch (this holds: the row restored is stamped elsewhere).
# - No id of target or whole may equal one of the source's.
# The same holds for pg_restore -t, and for a dump made with pg_dump -n or
# -t (which holds no extension, nor its row).
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): with layout 0/6/2 and
# a batch of 36,000 (9 s ahead), target's batch repeated 30,870 of them
# (whole: 0); on 15 (Debian's 15.20), 30,090 and 26,621.  As now (a batch
# 50 s ahead, so that a loaded machine's slower restores do not let the
# clock pass it): 36,000 of 36,000.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_schema_into_fresh_install');
my $node = SnowidSqlEdition::new_server('restore_schema_into_fresh_install', ['app'], [qw(source target whole)]);
my $layout = 'datacenter_bits = 0, worker_bits = 6, sequence_bits = 1, max_drift_ms = 60000';

SnowidSqlEdition::install($node, 'target', "UPDATE snowid_config SET $layout; CREATE SCHEMA store;");
SnowidSqlEdition::install($node, 'whole');

my ($rc, $out, $err) = psql_as(app_url($node, 'source'), qq{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET $layout, worker_id = 5;
	CREATE SCHEMA store;
	CREATE TABLE store.orders (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO store.orders (n) SELECT g FROM generate_series(1, 10) g;
	CREATE TABLE t (id bigint);
	INSERT INTO t SELECT snowid_next_batch(100000);
	SELECT count(*) FILTER (WHERE snowid_time(id) > clock_timestamp() + interval '30 s') FROM t});
cmp_ok($out, '>', 0, "the source hands out a batch, $out of its ids more than 30 s ahead of the clock")
  or diag($err);
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/source.dump");

($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'target'), "$dir/source.dump", '--exit-on-error', '-n', 'store');
is($rc, 0, 'pg_restore -n store restores the application\'s schema into a new install') or diag($err);
($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'whole'), "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'pg_restore restores the whole dump into another new install') or diag($err);

for my $db (qw(target whole))
{
	($rc, $out, $err) = psql_as(app_url($node, $db), 'UPDATE snowid_config SET worker_id = 5');
	diag($err) if $rc;
	($rc, $out, $err) = psql_as(app_url($node, $db), q{
	CREATE TABLE IF NOT EXISTS t (id bigint);
	DELETE FROM t;
	INSERT INTO t SELECT snowid_next_batch(36000);
	SELECT count(*) FROM t});
	is($out, '36000', "$db: the restore over, the owner sets the gone source's worker id and takes a batch")
	  or diag($err);
	my ($twice, $total) = SnowidSqlEdition::ids_twice([ $node, 'source' ], [ $node, $db ]);
	is($twice, 0, "$db: no id equals one the source issued ($twice of $total)");
}

$node->stop;
done_testing();
