# A restored dump given its gone source's worker id at once (doc/managed.md,
# "Dumps and restores"): setting it raises the generator past this
# server's clock plus max_drift_ms, reading no table, where this server's
# clock is no earlier than the source's was when it last issued (the owner
# adds a margin by raising max_drift_ms in the same UPDATE).  A partitioned
# table with a foreign partition (an archive on another server beside the
# live partitions): before 1.4's last fixes the raise read the columns a
# search found, skipped such a table whole, then refused for it (20,013 of
# 222,637 ids came again on 16, the copy's clock behind its source's).
#
# - One server (one clock), the source database: a table ev partitioned by
#   range of its id (DEFAULT snowid_next()), ids from 0 in a local
#   partition made apart and attached (so its own column has no default:
#   only ev's counts), those below 0 in a foreign table (a foreign data
#   wrapper and server the superuser made; nothing reads it); it issues
#   into ev for 12 s with the clock 10 s fast, then the clock steps back to
#   the right time (NTP): the source fails, as it should.
# - Its dump restored (by the superuser, who makes the wrapper and the
#   server again) into a new database of app's, the source dropped, the
#   copy given its worker id with max_drift_ms raised by those 10 s in the
#   same UPDATE; the copy issues until its clock has passed the source's
#   last id.
# - No id of the copy may equal one of the source's restored ids.
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
my $dir = PostgreSQL::Test::Utils::tempdir('restore_foreign_partition_raise');
my $node = SnowidSqlEdition::fast_server('restore_foreign_partition_raise', $clock, 'source');
$node->safe_psql('source', q{
	CREATE FOREIGN DATA WRAPPER archive_fdw;
	CREATE SERVER archive FOREIGN DATA WRAPPER archive_fdw;
	GRANT USAGE ON FOREIGN SERVER archive TO app});

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE TABLE ev (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false) PARTITION BY RANGE (id);
	CREATE TABLE ev_live (id bigint, copy boolean DEFAULT false);
	ALTER TABLE ev ATTACH PARTITION ev_live FOR VALUES FROM (0) TO (MAXVALUE);
	CREATE FOREIGN TABLE ev_archive PARTITION OF ev FOR VALUES FROM (MINVALUE) TO (0) SERVER archive;},
	'INSERT INTO ev DEFAULT VALUES;', 'ev_live', ' into ev');

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $node->connstr('source') ],
	'the source is dumped');
$node->safe_psql('postgres', 'CREATE DATABASE copy OWNER app');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('copy'), "$dir/source.dump" ],
	'and restored into a new database');
$node->safe_psql('postgres', 'DROP DATABASE source');
# (the superuser's restore made the extension the superuser's: it sets the
# worker id, app issues)
$node->safe_psql('copy', SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()));
my ($rc, $out, $err) = psql_as($node->connstr('copy') . ' user=app',
	SnowidSqlEdition::past_restored_sql('ev_live', 'INSERT INTO ev (copy) VALUES (true);', 'ev_live WHERE copy'));
cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out ids") or diag($err);

my ($twice, $n) = SnowidSqlEdition::marked_twice($node, 'copy', 'copy', 'ev_live');
is($twice, '0', "no id of the copy equals a restored one ($twice of $n)");

$node->stop;
done_testing();
