# test/t/sql-edition/restore_clock_step_view_default.pl
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
use SnowidSqlEdition qw(psql_as app_url);
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
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), 'UPDATE snowid_config SET worker_id = 5');
if ($err =~ /ERROR:  55000: a column whose default takes ids/)
{
	pass("the owner's step is refused, naming the column");
	$node->stop;
	done_testing();
	exit 0;
}
is($err, '', "the owner's step is taken") or diag($err);
($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	DO $$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '2 s' LOOP
			INSERT INTO v (copy) VALUES (true);
		END LOOP;
	END $$;
	SELECT count(*) FROM t WHERE copy});
cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out ids through the view") or diag($err);

foreach my $name ('t')
{
	my ($first, $largest, $n, $twice) = split /\|/, $node->safe_psql('copy', qq{
		SELECT (SELECT min(id) FROM $name WHERE copy),
			   (SELECT max(id) FROM $name WHERE NOT copy),
			   (SELECT count(*) FROM $name WHERE copy),
			   (SELECT count(*) FROM $name a JOIN $name b ON a.id = b.id AND a.copy AND NOT b.copy)});
	cmp_ok($first, '>', $largest,
		"$name: the copy's first id lies past the largest restored one ("
		  . (($largest >> 22) - ($first >> 22)) . ' ms below it if not)');
	is($twice, '0', "$name: no id of the copy equals a restored one ($twice of $n)");
}

$node->stop;
done_testing();
