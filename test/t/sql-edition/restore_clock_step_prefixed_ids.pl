# test/t/sql-edition/restore_clock_step_prefixed_ids.pl
#
# A restored dump given its gone source's worker id (doc/managed.md, "Dumps
# and restores": restore, then set the worker id): setting it raises the
# generator past this server's clock plus max_drift_ms, reading no table,
# so that the ids its source issued lie below every new one, whatever the
# application made of them, where this server's clock is no earlier than
# the source's was when it last issued (the owner adds a margin by raising
# max_drift_ms in the same UPDATE).  The usual texts made of an id: an
# order's reference with a prefix of the application's own (DEFAULT 'ORD-'
# || snowid_next()) or the id padded to a fixed width (DEFAULT
# lpad(snowid_next()::text, 20, '0')).  Before 1.4's last fixes the raise
# read the columns a search found, read such texts as no id (6,722 of
# 131,045 references came again on 19, the copy's clock behind its
# source's), and then refused the step for them.
#
# - One server (one clock), the source database issuing into both columns
#   for 12 s with the clock 10 s fast, then the clock stepped back to the
#   right time (NTP): the source fails, as it should.
# - Its dump restored into a new database, the source dropped, the copy
#   given its worker id with max_drift_ms raised by those 10 s in the same
#   UPDATE, which is taken; the copy issues into both for 2 s.
# - The copy's first id (read from its first reference) lies past the
#   largest restored one; no reference of the copy equals a restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('restore_clock_step_prefixed_ids');
my $node = SnowidSqlEdition::fast_server('restore_clock_step_prefixed_ids', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE TABLE t (ref text DEFAULT 'ORD-' || snowid_next(), copy boolean DEFAULT false);
	CREATE TABLE p (ref text DEFAULT lpad(snowid_next()::text, 20, '0'), copy boolean DEFAULT false);},
	'INSERT INTO t DEFAULT VALUES; INSERT INTO p DEFAULT VALUES;', 't', ' into each table');

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'),
	SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()) . ";\nSELECT worker_id FROM snowid_config");
is($out, '5', "the owner's step is taken, max_drift_ms raised by the source's 10 s in it") or diag($err);
SnowidSqlEdition::copy_issues_past($node, 'copy',
	'INSERT INTO t (copy) VALUES (true); INSERT INTO p (copy) VALUES (true);', 't', ' into each',
	[ 't', 'substr(ref, 5)::bigint', 'ref', "'ORD-' || id" ],
	[ 'p', 'ref::bigint', 'ref', 'lpad(id::text, 20, 0)' ]);

$node->stop;
done_testing();
