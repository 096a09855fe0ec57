# test/t/sql-edition/restore_clock_step_view_default.pl
#
# The owner of a restored dump sets its gone source's worker id, as
# doc/managed.md ("Dumps and restores") tells: the step raises the
# generator past this server's clock plus max_drift_ms, reading no table,
# and the ids the source issued lie below that where this server's clock
# is no earlier than the source's was when it last issued (the owner adds
# a margin by raising max_drift_ms in the same UPDATE).
#
# An updatable view over a table may carry the default instead (ALTER VIEW
# ... ALTER COLUMN id SET DEFAULT snowid_next(), as an API schema of views
# over the tables does): the ids land in the table's column, which has no
# default of its own.  Before 1.4's last fixes the raise read the largest
# id of the columns a search of the catalog found, which read tables
# alone: a copy whose clock lay behind its source's issued its ids again
# (2,752 of 38,673 on 19).  Within the assumption no id repeats.
#
# - One server (one clock), the source inserting through the view v over
#   the table t for 12 s with the clock 10 s fast, then the clock stepped
#   back (NTP): the source fails, as it should.
# - Its dump restored into a new database by the owner, the source
#   dropped, the copy given its worker id with max_drift_ms raised by
#   those 10 s in the same UPDATE.
# - The copy inserts through the view for 2 s; its first id lies past
#   every restored one, and no id of the copy equals a restored one.
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
SnowidSqlEdition::worker_set_on_copy($node, 'copy', SnowidSqlEdition::fast_margin_ms(), 'INSERT INTO v (copy) VALUES (true);', 't',
	' through the view', [ 't', 'id', 'id', 't' ]);

$node->stop;
done_testing();
