# test/t/sql-edition/restore_clock_step_plpgsql_default.pl
#
# A restored dump given its gone source's worker id (doc/managed.md, "Dumps
# and restores": restore, then set the worker id): setting it raises the
# generator past this server's clock plus max_drift_ms, reading no table,
# and the ids the source issued lie below that where this server's clock
# is no earlier than the source's was when it last issued; where the
# source's clock ran ahead, the owner adds that margin by raising
# max_drift_ms in the same UPDATE.
#
# The usual function of the application's is written in PL/pgSQL (or in
# SQL with a string body): CREATE FUNCTION app_id() ... LANGUAGE plpgsql
# AS $$ BEGIN RETURN snowid_next(); END $$, a column DEFAULT app_id().
# Before 1.4's last fixes the raise searched the catalog for the columns
# whose default reached snowid_next() and read their largest id: pg_depend
# records nothing of such a body, the search missed it, and a copy whose
# clock lay behind its source's issued its ids again (487 and 490 of
# 13,225 on 19).  The raise reads no column now: within the assumption,
# no id repeats, whatever the default.
#
# - One server (one clock), the source issuing into t (a PL/pgSQL default)
#   and s (an SQL function with a string body, which names the edition's
#   schema: pg_restore runs with an empty search_path, and 16's COPY FROM
#   inlines the column's default, failing the restore of s) for 12 s with
#   the clock 10 s fast, then the clock stepped back (NTP): the source
#   fails, as it should.
# - Its dump restored into a new database by the owner, the source
#   dropped, the copy given its worker id with max_drift_ms raised by
#   those 10 s in the same UPDATE.
# - The copy issues for 2 s; its first id lies past every restored one,
#   and no id of the copy equals a restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition ();
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('restore_clock_step_plpgsql_default');
my $node = SnowidSqlEdition::fast_server('restore_clock_step_plpgsql_default', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE FUNCTION app_id() RETURNS bigint LANGUAGE plpgsql AS $f$ BEGIN RETURN snowid_next(); END $f$;
	CREATE FUNCTION app_sql_id() RETURNS bigint LANGUAGE sql AS 'SELECT public.snowid_next()';
	CREATE TABLE t (id bigint DEFAULT app_id(), copy boolean DEFAULT false);
	CREATE TABLE s (id bigint DEFAULT app_sql_id(), copy boolean DEFAULT false);},
	'INSERT INTO t DEFAULT VALUES; INSERT INTO s DEFAULT VALUES;', 't', ' into each table');

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
SnowidSqlEdition::worker_set_on_copy($node, 'copy', SnowidSqlEdition::fast_margin_ms(),
	'INSERT INTO t (copy) VALUES (true); INSERT INTO s (copy) VALUES (true);', 't', ' into each',
	[ 't', 'id', 'id', 't' ], [ 's', 'id', 'id', 's' ]);

$node->stop;
done_testing();
