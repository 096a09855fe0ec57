# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the source's clock ran 10 s ahead
# here, a margin the owner adds to max_drift_ms in the same UPDATE:
# doc/managed.md, "Dumps and restores".)
#
# A dump restored data-only with pg_restore -j into a database that has
# the edition, its worker id set, and the tables (doc/managed.md: "pg_restore
# of any format ... or --data-only into a database that has it").  Since
# 1.4's sixth fixes what says a restore came is a number in the sequence
# snowid_sql_dumped, "which pg_dump dumps (whole or --data-only) and the
# restore sets to its source's by setval(), at the end of the data", and "a
# call made while the restore runs raises too early only until it comes":
# the first call after the number raises the generator past the ids the
# tables hold, and sets the number back.  pg_restore -j restores the data
# in parallel, each item once what it depends on is restored: the SEQUENCE
# SET of snowid_sql_dumped (and the row of snowid_config) depend on nothing
# else, and a second worker restores them while the first still copies a
# large table.  (A whole restore happens to hold: pg_restore -j truncates a
# table it created in the COPY's transaction, and the raise's lock waits
# for it; a data-only restore copies without one.)  A call made then (the
# application, a health check, a scheduled job already connected) raises
# past the tables as they are, reading the table whose COPY has not
# committed as empty, and sets the number back: nothing raises again, and
# the calls after the restore issue the table's ids again.
#
# - One server (one clock); the target installed, given worker id 5 and
#   the table store.t first; the source, worker id 5, issues into store.t
#   (each row with 400 bytes of padding, so that its COPY lasts) for 12 s
#   with the clock 10 s fast, then the clock steps back (NTP): the source
#   fails, as it should; it is dumped (pg_dump -Fc) and dropped.
# - pg_restore --data-only -j 2 into the target, while another session of
#   the target calls snowid_next() every 20 ms (its ids kept nowhere: only
#   the ids issued after the restore count).
# - After the restore, the target issues into store.t until its clock has
#   passed the source's last id: no such id may equal a restored one.
# On main (1891eaa, snowid_sql 1.4): on PostgreSQL 15, 14,387 of 99,874, 38,104
# of 245,433 and 11,726 of 120,341 ids after the restore equalled restored
# ones (76 to 99 calls during the restore, none failed); without -j (the
# same steps, pg_restore --data-only alone) 0 of 47,824; on 19beta1, 8,392
# of 156,722.
#
# Since issue 68's redesign, this test follows the step doc/managed.md
# gives after a restore with calls meanwhile (see
# SnowidSqlEdition::restore_while_calling): the owner sets the worker id
# once pg_restore --data-only -j 2 is over.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $file = PostgreSQL::Test::Utils::tempdir('restore_raise_parallel_restore') . '/source.dump';
my $node = SnowidSqlEdition::fast_server('restore_raise_parallel_restore', $clock, qw(source target));

my $tables = q{CREATE SCHEMA store;
	CREATE TABLE store.t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false, pad text);};

SnowidSqlEdition::first_installed($node, 'target', $tables,
	'the target is installed and given worker id 5 and store.t first');
SnowidSqlEdition::store_dumped($node, $clock, $file, $tables,
	q{INSERT INTO store.t (pad) VALUES (repeat('x', 400));}, '-Z0');
$node->safe_psql('postgres', 'DROP DATABASE source');

# the restore in parallel, and meanwhile a session of the target calling
SnowidSqlEdition::restore_while_calling($node, $file, '--data-only', '-j', '2');
SnowidSqlEdition::worker_set_after_restore($node, 'target', 1, undef,
	SnowidSqlEdition::fast_margin_ms());

SnowidSqlEdition::target_issues_past_restored($node);

$node->stop;
done_testing();
