# test/t/sql-edition/restore_clock_step_plpgsql_default.pl
#
# A restored dump given its gone source's worker id (doc/managed.md, "Dumps
# and restores": restore, then set the worker id): setting it raises the
# generator "past the largest id of the new node its tables hold, however
# they came back, each column read as its default made it (or the step
# refused, naming it)"; "a column whose default makes anything else of the
# id ('ORD-' || snowid_next(), lpad(...), a function of the
# application's) ... refuses the UPDATE with 55000 while it holds a value"
# (managed.md, "The configuration").
#
# The usual function of the application's is written in PL/pgSQL (or in
# SQL with a string body): CREATE FUNCTION app_id() ... LANGUAGE plpgsql
# AS $$ BEGIN RETURN snowid_next(); END $$, a column DEFAULT app_id().
# pg_depend records nothing of such a body, so snowid_sql_id_columns()
# does not list the column: the owner's step is neither refused nor raised
# past its ids, and the copy, started at its clock plus max_drift_ms,
# issues again the ids its source issued with its clock 10 s fast.
#
# - One server (one clock), the source issuing into t (a PL/pgSQL default)
#   and s (an SQL function with a string body, which names the edition's
#   schema: pg_restore runs with an empty search_path, and 16's COPY FROM
#   inlines the column's default, failing the restore of s) for 12 s with
#   the clock 10 s fast, then the clock stepped back (NTP): the source fails, as it should.
# - Its dump restored into a new database by the owner, the source dropped,
#   the copy given its worker id: it must be refused (55000, naming the
#   column), or raised past the restored ids.
# - The copy issues for 2 s; no id of the copy may equal a restored one.
# On main (0b4bcd5, snowid_sql 1.4, PostgreSQL 19): the step was taken, the
# copy's first id 5.1 s below the largest restored one, and 487 (PL/pgSQL)
# and 490 (SQL) of 13,225 ids of the copy equalled restored ones.  On 15
# (Debian's 15.20): 528 and 530 of 20,310, 5.1 s below.
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
SnowidSqlEdition::worker_set_on_copy($node, 'copy', "naming a column whose default is a function of the application's",
	'INSERT INTO t (copy) VALUES (true); INSERT INTO s (copy) VALUES (true);', 't', ' into each',
	[ 't', 'id', 'id', 't' ], [ 's', 'id', 'id', 's' ]);

$node->stop;
done_testing();
