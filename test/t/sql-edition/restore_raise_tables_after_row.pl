# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the source's clock ran 10 s ahead
# here, a margin the owner adds to max_drift_ms in the same UPDATE:
# doc/managed.md, "Dumps and restores".)
#
# A dump restored into a database whose worker id was set first (the
# install's steps, doc/managed.md: CREATE EXTENSION, the worker id, then
# the data): the restore of the row (snowid_sql_config_restore()) raises
# the generator at once, past the clock plus max_drift_ms and, since 1.4's
# fixes, past the largest id the tables hold (snowid_sql_largest_held()),
# "the tables of a dump come back before the row" (config.sql).  They do
# not all: pg_dump orders the data of tables by schema, and the row of
# snowid_sql_private.snowid_config comes before the data of every schema
# whose name sorts after it (store, tenant, web, ...).  The raise reads
# those tables empty, and a source whose clock stepped back left ids
# further ahead than max_drift_ms (restore_after_clock_step): the copy,
# given its gone source's worker id, issues them again.
#
# - One server (one clock): the target database installed and given worker
#   id 5 first; the source database, worker id 5, issuing into store.t
#   for 12 s with the clock 10 s fast, then the clock stepped back to the
#   right time (NTP): the source fails, as it should.
# - Its dump (pg_dump -Fc, pg_restore --exit-on-error; pg_restore -l lists
#   the data of snowid_config before that of store.t) restored into the
#   target, the source dropped; the target issues into store.t until its
#   clock has passed the source's last id.
# - No id of the target may equal one of the source's restored ids.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the source issued 472,167
# ids; 18,229 of the target's 245,265 equal restored ones (on 18: 8,896 of
# 157,855).
#
# Since issue 68's redesign (1.4 tells no restore on the call path), the
# restore of the row clears the worker id the target had (calls fail until
# its owner sets one), and setting the worker id raises the generator: this
# test follows the
# documented restore (doc/managed.md, "Dumps and restores": restore, then
# set the worker id), here into a database that had a worker id, and
# asserts that a call fails in between and that no id repeats.
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
my ($node, $dump) = SnowidSqlEdition::store_source_dumped('restore_raise_tables_after_row', $clock);
my $target = SnowidSqlEdition::app_url($node, 'target');
my ($rc, $out, $err);
my $list = `pg_restore -l $dump`;
like($list, qr/TABLE DATA snowid_sql_private snowid_config.*TABLE DATA store t/s,
	'the dump restores the row of snowid_config before the data of store.t');
$node->safe_psql('postgres', 'DROP DATABASE source');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $target, $dump ],
	'and restores it into the target');
SnowidSqlEdition::worker_set_after_restore($node, 'target', 1, undef,
	SnowidSqlEdition::fast_margin_ms());
($rc, $out, $err) = psql_as($target,
	SnowidSqlEdition::past_restored_sql('store.t', 'INSERT INTO store.t (copy) VALUES (true);', 'store.t WHERE copy'));
cmp_ok($out, '>', 0, "the target, with its gone source's worker id, issues $out ids") or diag($err);

my ($twice, $n) = SnowidSqlEdition::marked_twice($node, 'target', 'copy', 'store.t');
is($twice, '0', "no id of the target equals a restored one ($twice of $n)");

$node->stop;
done_testing();
