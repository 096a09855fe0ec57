# test/t/sql-edition/restore_schema_drift_untold.pl
#
# doc/managed.md, "Dumps and restores": no id repeats across "the
# documented restore: restore, then set the worker id", in any form, "-n of
# the application's schemas" among them; "where the restore left it out
# [the row of snowid_config], set the dump's layout and epoch before
# restoring".  Setting the worker id raises past the clock plus the row's
# max_drift_ms, and the row of such a restore is the new install's (1000),
# not the dump's: a source that ran with a larger max_drift_ms (60000,
# batches) left ids up to a minute ahead of the one clock, and the copy
# issues them again.  The steps the docs give for it name the layout and
# the epoch only; "Set the largest max_drift_ms the source used with the
# worker id" (the configuration) is said of a source that "raised
# max_drift_ms after the dump", where "the row is the dump's".  The
# assumption holds: one server, one clock.
#
# - One server.  source: layout 0/6/1 (2 ids a millisecond), worker id 5,
#   then max_drift_ms 60000 and a batch of 100,000 ids in t (50 s ahead of
#   the clock), a row in store.orders.  pg_dump -Fc.
# - target: a new install given the dump's layout (the epoch is the
#   default, the dump's) and max_drift_ms, as the docs now say, and the
#   schema store; pg_restore -n store; the owner sets the gone source's
#   worker id 5 and takes a batch of 4,000: none may equal an id of the
#   source.
# On fix68l (53f9cb0, snowid_sql 1.4, Debian's 15.20), with the docs'
# steps of then (the layout and the epoch alone): 4,000 of 4,000.  The
# edition cannot see the source's max_drift_ms where its row is not
# restored; the docs name it since.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_schema_drift_untold');
my $node = SnowidSqlEdition::new_server('restore_schema_drift_untold', ['app'], [qw(source target)]);
my $layout = 'datacenter_bits = 0, worker_bits = 6, sequence_bits = 1';

SnowidSqlEdition::install($node, 'target', "UPDATE snowid_config SET $layout, max_drift_ms = 60000; CREATE SCHEMA store;");

# the source: its batch kept in public.t, out of the schema restored
my ($rc, $out, $err) = psql_as(app_url($node, 'source'), qq{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET $layout, worker_id = 5;
	UPDATE snowid_config SET max_drift_ms = 60000;
	CREATE SCHEMA store;
	CREATE TABLE store.orders AS SELECT snowid_next() AS id, 1 AS n;
	CREATE TABLE t AS SELECT snowid_next_batch(100000) AS id;
	SELECT count(*) FROM t WHERE snowid_time(id) > clock_timestamp() + interval '30 s'});
cmp_ok($out, '>', 0, "the source hands out 100,000 ids, $out of them more than 30 s ahead of the clock")
  or diag($err);
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/source.dump");

($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'target'), "$dir/source.dump", '--exit-on-error', '-n', 'store');
is($rc, 0, 'pg_restore -n store restores the application\'s schema into a new install given the dump\'s layout and max_drift_ms')
  or diag($err);
($rc, $out, $err) = psql_as(app_url($node, 'target'), q{
	UPDATE snowid_config SET worker_id = 5;
	CREATE TABLE t (id bigint);
	INSERT INTO t SELECT snowid_next_batch(4000);
	SELECT count(*) FROM t});
is($out, '4000', 'the restore over, the owner sets the gone source\'s worker id and takes a batch') or diag($err);
my ($twice, $total) = SnowidSqlEdition::ids_twice([ $node, 'source' ], [ $node, 'target' ]);
is($twice, 0, "no id of the copy equals one the source issued ($twice of $total)");

$node->stop;
done_testing();
