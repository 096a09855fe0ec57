# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the source's clock ran 10 s ahead
# here, a margin the owner adds to max_drift_ms in the same UPDATE:
# doc/managed.md, "Dumps and restores".)
#
# As restore_raise_parallel_restore, with a whole dump: pg_restore -j wraps
# the COPY of a table it created in this run in a transaction with a
# TRUNCATE, whose lock the raise waits for (so that a whole restore holds),
# but not where the dump loads a partition's data through its root
# (pg_dump --load-via-partition-root, which newer releases of pg_dump also
# choose by themselves for a table hashed on an enum): the COPY then takes
# no such lock, and a call made while it runs, after the SEQUENCE SET of
# snowid_sql_dumped (restored by another worker, depending on nothing but
# its sequence), raises past the partitions read empty and sets the number
# back: nothing raises again, and the calls after the restore issue their
# ids again.
#
# - One server (one clock); the target installed and given worker id 5
#   first; the source, worker id 5, issues into store.t (partitioned by
#   hash of its id, two partitions; each row with 400 bytes of padding, so
#   that its COPY lasts) for 12 s with the clock 10 s fast, then the clock
#   steps back (NTP): the source fails, as it should; it is dumped
#   (pg_dump -Fc --load-via-partition-root) and dropped.
# - pg_restore -j 4 (whole) into the target, while another session of the
#   target calls snowid_next() every 20 ms (its ids kept nowhere: only the
#   ids issued after the restore count).
# - After the restore, the target issues into store.t until its clock has
#   passed the source's last id: no such id may equal a restored one.
# On main (1891eaa, snowid_sql 1.4): on PostgreSQL 15, 3,362 of 57,054 and
# 6,135 of 79,687 ids after the restore equalled restored ones; on
# 19beta1, 5,108 of 82,729.
#
# Since issue 68's redesign, this test follows the step doc/managed.md
# gives after a restore with calls meanwhile (see
# SnowidSqlEdition::restore_while_calling): the owner sets the worker id
# once pg_restore -j 4 is over.
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
my $file = PostgreSQL::Test::Utils::tempdir('restore_raise_parallel_partition_root') . '/source.dump';
my $node = SnowidSqlEdition::fast_server('restore_raise_parallel_partition_root', $clock, qw(source target));

my $tables = q{CREATE SCHEMA store;
	CREATE TABLE store.t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false, pad text)
		PARTITION BY HASH (id);
	CREATE TABLE store.t0 PARTITION OF store.t FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	CREATE TABLE store.t1 PARTITION OF store.t FOR VALUES WITH (MODULUS 2, REMAINDER 1);};

SnowidSqlEdition::first_installed($node, 'target', undef, 'the target is installed and given worker id 5 first');
SnowidSqlEdition::store_dumped($node, $clock, $file, $tables,
	q{INSERT INTO store.t (pad) VALUES (repeat('x', 400));}, '-Z0', '--load-via-partition-root');
$node->safe_psql('postgres', 'DROP DATABASE source');

# the restore in parallel, and meanwhile a session of the target calling
SnowidSqlEdition::restore_while_calling($node, $file, '-j', '4');
SnowidSqlEdition::worker_set_after_restore($node, 'target', 1, undef,
	SnowidSqlEdition::fast_margin_ms());

SnowidSqlEdition::target_issues_past_restored($node);

$node->stop;
done_testing();
