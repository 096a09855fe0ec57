# As restore_raise_other_roles_table, whose first case 1.4's sixth fixes
# closed: after a restore the first call reads every table with a column
# whose default takes ids, also one of a role granted nothing of the
# edition, and "ignores values that are no id" (CHANGELOG.md: a text 'not
# an id' no longer stops every call), counting "only ids and serials of the
# database's own datacenter and worker id".  A text column is read as
# serials by its last digits: a value whose last 25 characters are digits
# with this node's datacenter and worker id where a serial has them is read
# back by snowid_from_serial(), and one that is no serial after all (its
# month 13) refuses the raise (55000, "holds values snowid_sql cannot read
# as ids"): one row of such a role's own table stops every call after each
# restore, until it (or a superuser: not the owner on a managed cloud)
# corrects it.  It is no id of this node far ahead (security.md's "what
# stays"): no id at all.
#
# - One server; app owns source (worker id 5, a table of 100 ids) and
#   target (worker id 6); lesser, granted nothing of the edition, has a
#   schema of its own in target, and a table there DEFAULT
#   snowid_serial('X-') holding one text, X- then 2026-13-01 12:00:00.000,
#   datacenter 00, worker 06, sequence 0000; source dumped (pg_dump -Fc)
#   and restored into target.
# - app's calls and batches (statement_timeout 10 s) must issue ids.
# On main (1891eaa, snowid_sql 1.4, PostgreSQL 15 and 19beta1): every call
# and batch fails with 55000 ("a column whose default takes ids holds
# values snowid_sql cannot read as ids", naming s.junk).
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: the restore of the row clears the worker id
# the target had, and the owner's setting of the worker id once the
# restore is over (doc/managed.md, "Dumps and restores": restore, then set
# the worker id) raised, until 1.4's last fixes, past the ids of its node the tables held, reading
# lesser's column of text, where the largest text that reads
# back as a serial of the node counts since (one that does not is no id).  This test now follows that step: the owner's step must pass beside lesser's
# text, and calls and batches issue after it.
#
# Since 1.4's last fixes the owner's step reads no table (it raises past
# the clock plus max_drift_ms): lesser's text is neither read nor counted.
# (Before, lesser's table also held a true serial of worker id 6 lying 3 s
# ahead, past which the step had to raise: a value no database issued,
# which the invariant does not cover; that assertion went with the read.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition ();
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_other_roles_serial');
my $node = SnowidSqlEdition::new_server('restore_raise_other_roles_serial', [qw(app lesser)],
	[qw(source target)]);

my $file = SnowidSqlEdition::hundred_dumped($node, "$dir/source.dump");
SnowidSqlEdition::restored_beside_lesser($node, 'target', $file, q{
	CREATE TABLE junk (x text DEFAULT public.snowid_serial('X-'));
	INSERT INTO junk VALUES ('X-' || '20261301120000000' || '00' || '06' || '0000')},
	'a table holding a text shaped as a serial of worker id 6');
SnowidSqlEdition::calls_and_batches_in_10s($node, 'target', "target: beside lesser's text, the owner's calls issue ids");

$node->stop;
done_testing();
