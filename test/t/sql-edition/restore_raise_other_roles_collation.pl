# As restore_raise_other_roles_collation: after a restore the first call
# reads every table with a column whose default takes ids, also one of a
# role granted nothing of the edition, and "ignores values that are no id"
# (1.4's sixth fixes).  A text column is read as serials by regular
# expressions under the column's collation; any role with CREATE on a
# schema may make a nondeterministic collation (CREATE COLLATION ...
# deterministic = false, ICU), under which PostgreSQL refuses regular
# expressions (0A000): the raise fails on the role's column whatever it
# holds, and every call after each restore fails, until that role (or a
# superuser: not the owner on a managed cloud) drops it.  No code of the
# role runs: snowid_sql_runs_code() looks at functions, operators and types,
# and a collation is none of them.
#
# - One server; app owns source (worker id 5, a table of 100 ids) and
#   target (worker id 6); lesser, granted nothing of the edition, has a
#   schema of its own in target, with a nondeterministic ICU collation and
#   a table whose text column of that collation is DEFAULT
#   snowid_serial('X-'), holding one serial; source dumped (pg_dump -Fc)
#   and restored into target.
# - app's calls and batches (statement_timeout 10 s) must issue ids.
# On main (1891eaa, snowid_sql 1.4, PostgreSQL 15 and 19beta1): every call
# and batch fails with 0A000 ("nondeterministic collations are not
# supported for regular expressions").
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: the restore of the row clears the worker id
# the target had, and the owner's setting of the worker id once the
# restore is over (doc/managed.md, "Dumps and restores": restore, then set
# the worker id) raised, until 1.4's last fixes, past the ids of its node the tables held, reading
# lesser's column of text under the collation "C" since (a
# nondeterministic collation refuses regular expressions).  This test now follows that step: the owner's step must pass beside lesser's
# table, and calls and batches issue after it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_other_roles_collation');
my $node = SnowidSqlEdition::new_server('restore_raise_other_roles_collation', [qw(app lesser)],
	[qw(source target)]);

my $file = SnowidSqlEdition::hundred_dumped($node, "$dir/source.dump");
SnowidSqlEdition::restored_beside_lesser($node, 'target', $file, q{
	CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
	CREATE TABLE junk (x text COLLATE ci DEFAULT public.snowid_serial('X-'));
	INSERT INTO junk DEFAULT VALUES}, 'a table of serials in a nondeterministic collation');
SnowidSqlEdition::calls_and_batches_in_10s($node, 'target', "target: beside lesser's table, the owner's calls issue ids");

$node->stop;
done_testing();
