# test/t/sql-edition/restore_clock_step_view_default.pl
#
# The owner of a restored dump sets its gone source's worker id, as
# doc/managed.md ("Dumps and restores") tells: the step must raise the
# generator past every id of the new node the tables hold, each column read
# as its default made it, or be refused (55000) naming the column it cannot
# read ("The configuration").
#
# An updatable view over a table may carry the default instead (ALTER VIEW
# ... ALTER COLUMN id SET DEFAULT snowid_next(), as an API schema of views
# over the tables does): the ids land in the table's column, which has no
# default of its own.  snowid_sql_id_columns() reads tables alone ("views
# ... whose reading would run other code", managed.md, "The layout and the
# epoch"), and not the table under the view: the owner's step is neither
# refused nor raised past its ids, and the copy, started at its clock plus
# max_drift_ms, issues again the ids its source issued with its clock 10 s
# fast.
#
# - One server (one clock), the source inserting through the view v over
#   the table t for 12 s with the clock 10 s fast, then the clock stepped
#   back (NTP): the source fails, as it should.
# - Its dump restored into a new database by the owner, the source dropped,
#   the copy given its worker id: it must be refused (55000, naming the
#   column), or raised past the restored ids.
# - The copy inserts through the view for 2 s; no id of the copy may equal
#   a restored one.
# On main (0b4bcd5, snowid_sql 1.4, PostgreSQL 19): the step was taken, the
# copy's first id 5.1 s below the largest restored one, 2,752 of its 38,673
# ids equal restored ones.  On 15 (Debian's 15.20): 992 of 55,725, 3.5 s
# below.
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
my $dir = PostgreSQL::Test::Utils::tempdir('restore_clock_step_view_default');
my $node = SnowidSqlEdition::fast_server('restore_clock_step_view_default', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE TABLE t (id bigint, copy boolean);
	CREATE VIEW v AS SELECT * FROM t;
	ALTER VIEW v ALTER id SET DEFAULT snowid_next();
	ALTER VIEW v ALTER copy SET DEFAULT false;},
	'INSERT INTO v DEFAULT VALUES;', 't', ' through the view');

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
SnowidSqlEdition::worker_set_on_copy($node, 'copy', "naming the column", 'INSERT INTO v (copy) VALUES (true);', 't',
	' through the view', [ 't', 'id', 'id', 't' ]);

$node->stop;
done_testing();
