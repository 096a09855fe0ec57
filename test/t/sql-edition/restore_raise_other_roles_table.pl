# A dump restored into a database whose worker id was set first: since
# 1.4's fifth fixes the first call after it, whoever makes it, sets the
# worker id again and raises the generator past the largest id "the
# tables" hold (snowid_sql_raise_restored(), snowid_sql_config_floor(),
# snowid_sql_largest_held()): every table of the database with a column
# whose default calls a function of the edition, also one of a role
# granted nothing of the edition (PUBLIC may call snowid_next() and
# snowid_serial(), and reference them in a default).  What that role puts
# in its own table decides whether anyone gets an id:
# - a value that is no id (a text 'not an id' in a column DEFAULT
#   snowid_serial('X-')) refuses the raise (55000, "holds values snowid_sql
#   cannot read as ids"), and every call after the restore fails, until
#   that role (or a superuser: not the owner on a managed cloud) corrects
#   its table;
# - an id 50 minutes ahead of the clock (snowid_from_time()) makes the
#   raise wait for the clock, up to an hour, holding the row of
#   snowid_config: every call waits that long (a call cancelled leaves the
#   mark, and the next call waits again).
# A role granted nothing of the edition thus stops the database's ids
# after each restore, with one row of its own table.
#
# - One server; app owns source (worker id 5, a table of 100 ids), target
#   and target2 (worker id 6); lesser, granted nothing of the edition, has
#   a schema of its own in target and target2, and a table there of one
#   row; source dumped (pg_dump -Fc) and restored into each.
# - app's calls (statement_timeout 10 s) must issue ids.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): in target every
# call fails with 55000 ("a column whose default takes ids holds values
# snowid_sql cannot read as ids", naming s.junk); in target2 every call is
# cancelled by the statement timeout after 10 s, sleeping in
# snowid_sql_config_floor().
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: the restore of the row clears the worker id
# the target had, and the owner's setting of the worker id once the
# restore is over (doc/managed.md, "Dumps and restores": restore, then set
# the worker id) raised, until 1.4's last fixes, past the ids of its node the tables held, reading
# lesser's tables as before.  This test now follows that step: the owner's step must pass beside lesser's
# values, and calls and batches issue after it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_other_roles_table');
my $node = SnowidSqlEdition::new_server('restore_raise_other_roles_table', [qw(app lesser)],
	[qw(source target target2)]);

my $file = SnowidSqlEdition::hundred_dumped($node, "$dir/source.dump");

# the target installed and given its worker id, lesser's table of one row
# made, then the dump restored; app's calls within 10 s
sub restored_beside
{
	my ($db, $table, $what) = @_;

	SnowidSqlEdition::restored_beside_lesser($node, $db, $file, $table, $what);
	SnowidSqlEdition::calls_and_batches_in_10s($node, $db, "$db: beside $what, the owner's calls issue ids");
	return;
}

restored_beside('target', q{
	CREATE TABLE junk (x text DEFAULT public.snowid_serial('X-'));
	INSERT INTO junk VALUES ('not an id')}, 'a table holding a text that is no id');
restored_beside('target2', q{
	CREATE TABLE ahead (id bigint DEFAULT public.snowid_next());
	INSERT INTO ahead VALUES (public.snowid_from_time(clock_timestamp() + interval '50 minutes'))},
	'a table holding an id 50 minutes ahead');

$node->stop;
done_testing();
