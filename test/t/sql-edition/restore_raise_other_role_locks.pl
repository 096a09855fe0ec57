# A dump restored into a database whose worker id was set first (the
# install's steps, doc/managed.md): the first call after it, whoever makes
# it, raises the generator past the ids the tables hold
# (snowid_sql_raise_restored()), reading every table whose column takes ids
# by its default, each locked first in SHARE UPDATE EXCLUSIVE mode
# (snowid_sql_lock_read(), lock_timeout 10 s).  Since 1.4's sixth fixes
# "a role granted nothing that leaves that transaction open, or prepares
# it, holds nothing another call or the owner's UPDATE waits for"
# (doc/security.md), and what stays after a restore is said there: a table
# of such a role that the reader refuses, a column of a type it does not
# read, an id of this node far ahead.  But any role with CREATE on a schema
# may make a table whose column takes ids by its default, and lock it: a
# role granted nothing of the edition (LOGIN, CREATE on a schema of its
# own) holds ACCESS EXCLUSIVE on its own table in a transaction it leaves
# open (or prepares, with max_prepared_transactions > 0, across restarts):
# after a restore every call of every role waits 10 s and fails (55P03),
# until that role ends it; the owner, no superuser on a managed cloud,
# cannot end it.
#
# - One server; app owns source (worker id 5, a table of 100 ids) and
#   target (worker id 6); lesser has LOGIN and a schema of its own in
#   target, with a table whose id takes snowid_next() by its default, which
#   it locks in a transaction left open.
# - source dumped (pg_dump -Fc) and restored into target (pg_restore).
# - app's call (statement_timeout 30 s) must give an id.
# On main (1891eaa, snowid_sql 1.4, PostgreSQL 15 and 19beta1): app's call
# fails after 10 s with 55P03 (canceling statement due to lock timeout, on
# LOCK TABLE ONLY mine.t in snowid_sql_lock_read()), twice on 15, once on
# 19.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: the restore of the row clears the worker id
# the target had, and the owner's setting of the worker id once the
# restore is over (doc/managed.md, "Dumps and restores": restore, then set
# the worker id) reads the tables, each locked as before.  What this test
# found stays in part, moved from every call of every role to the owner's
# one step: while lesser holds its lock, that step is refused after 10 s
# (55P03, naming the table and lesser's process, with a hint), and no id
# is issued meanwhile (fail-safe); once lesser's transaction ends (or the
# owner, where it may signal lesser, ends it), the step passes and app's
# calls issue.  It asserts that, not the call beside the lock it asked for
# first (doc/security.md says what a role granted nothing can still stop).
#
# Since 1.4's last fixes the owner's step reads no table (it raises past
# the clock plus max_drift_ms): lesser's lock holds it up no more, and the
# test asserts that the step passes, and app takes an id, while lesser
# still holds its table locked.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_other_role_locks');
my $node = SnowidSqlEdition::new_server('restore_raise_other_role_locks', [qw(app lesser)],
	[qw(source target)]);
my %as = (target => $node->connstr('target') . ' user=app', lesser => $node->connstr('target') . ' user=lesser');

my $file = SnowidSqlEdition::hundred_dumped($node, "$dir/source.dump");
my ($rc, $out, $err) = psql_as($as{target}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 6;
	SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'snowid_sql'});
is($out, '1', 'target: installed, worker id 6') or diag($err);
$node->safe_psql('target', 'CREATE SCHEMA mine AUTHORIZATION lesser');
($rc, $out, $err) = psql_as($as{lesser}, q{
	CREATE TABLE mine.t (id bigint DEFAULT snowid_next());
	SELECT 1});
is($out, '1', 'lesser, granted nothing of the edition, makes a table of its own taking ids') or diag($err);

my $lesser = $node->background_psql('target', extra_params => [ '-U', 'lesser' ]);
$lesser->query_safe('BEGIN');
$lesser->query_safe('LOCK TABLE mine.t IN ACCESS EXCLUSIVE MODE');

$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $as{target}, $file ],
	"target: pg_restore restores the source's dump");

($rc, $out, $err) = psql_as($as{target}, q{SET statement_timeout = '30s'; SELECT snowid_next()});
like($err, qr/ERROR:  55000: snowid has no worker id/, 'after the restore, app takes no id: the worker id cleared');
SnowidSqlEdition::worker_set_after_restore($node, 'target', 0, 6);
($rc, $out, $err) = psql_as($as{target}, q{SET statement_timeout = '30s'; SELECT snowid_next() IS NOT NULL});
is($out, 't', 'while lesser holds its own table locked, the step passes and app takes an id') or diag($err);
$lesser->query_safe('COMMIT');
$lesser->quit;
$node->stop;
done_testing();
