# The layout and epoch guard of the SQL edition reads the application's
# tables as the bootstrap superuser (snowid_sql_config_check() is SECURITY
# DEFINER): for each column whose default takes ids it formats the table's
# name (col.tab, a regclass) into "SELECT EXISTS (SELECT FROM ONLY t WHERE
# id IS NOT NULL)" and EXECUTEs it, waiting up to its lock_timeout (10 s)
# for the table's lock.  The name is looked up again once the lock is
# granted (PostgreSQL's RangeVarGetRelidExtended() retries where the name
# changed meanwhile): the session that held the lock may have renamed the
# table away and a view of its own to that name, and the guard then reads
# the view, whose functions run as the caller, the superuser.  Neither
# 1.4's fix of guard_cast_superuser (a bound compared with bigint columns
# alone) nor a check of the table's indexes reaches this.
#
# - The owner app makes a function that runs ALTER ROLE app SUPERUSER and
#   returns NULL (so that the guard finds no id and lets the update
#   commit), a table t whose column takes its default from snowid_next(),
#   and a view v with a column id of that function.
# - Session B locks t; session A (app) runs UPDATE snowid_config SET epoch
#   = ..., whose guard waits for t; once it waits, B renames t to t_old
#   and v to t, and commits.
# - The function should not run as a superuser, and app should stay a role
#   without superuser.
# - The same by a role granted nothing of the edition, with CREATE on a
#   schema of its own, while the owner sets the epoch.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the UPDATE commits, the
# function noted that it ran as postgres with rolsuper on, and app is
# superuser (by hand and in this test: 1 run of 1 each; the same on 18), and
# so is lesser after owner2's epoch set.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = SnowidSqlEdition::new_server('guard_renamed_while_waiting', ['app'], ['appdb']);
my $app = SnowidSqlEdition::app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab() RETURNS bigint LANGUAGE plpgsql AS $$
	BEGIN
} . SnowidSqlEdition::ran_escalates_sql() . q{
		RETURN NULL;
	END $$;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	CREATE VIEW v AS SELECT public.grab() AS id;
	SELECT rolsuper FROM pg_roles WHERE rolname = 'app'});
is($out, 'f', 'app, no superuser, installs the edition and makes its function, table and view')
  or diag($err);

my $b = $node->background_psql('appdb', extra_params => [ '-U', 'app' ]);
$b->query_safe('BEGIN');
$b->query_safe('LOCK TABLE t IN ACCESS EXCLUSIVE MODE');

my ($aout, $aerr) = ('', '');
my $a = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $app, '-c', q{UPDATE snowid_config SET epoch = '2020-01-01'} ],
	'<', \undef, '>', \$aout, '2>', \$aerr);
ok( $node->poll_query_until('appdb', q{
	SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
				   WHERE c.relname = 't' AND NOT l.granted)}),
	'the guard of app\'s UPDATE waits for t');
$b->query_safe('ALTER TABLE t RENAME TO t_old');
$b->query_safe('ALTER VIEW v RENAME TO t');
$b->query_safe('COMMIT');
$b->quit;
$a->finish;
note("the epoch's update: $aerr");

SnowidSqlEdition::no_superuser_ran($node, 'appdb',
	'the guard ran none of the owner\'s functions as a superuser');

# The same by a role granted nothing of the edition, with CREATE on a
# schema of its own (its table's default calls snowid_next(), PUBLIC's),
# while the owner runs its routine step: the epoch set before the first id
$node->safe_psql('postgres', 'CREATE ROLE owner2 LOGIN; CREATE ROLE lesser LOGIN; CREATE DATABASE db2 OWNER owner2');
psql_as($node->connstr('db2') . ' user=owner2', 'CREATE EXTENSION snowid_sql');
$node->safe_psql('db2', 'CREATE SCHEMA s AUTHORIZATION lesser');
my $lesser = $node->connstr('db2') . ' user=lesser';
($rc, $out, $err) = psql_as($lesser, q{
	SET search_path = s;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab() RETURNS bigint LANGUAGE plpgsql AS $$
	BEGIN
} . SnowidSqlEdition::ran_escalates_sql('s', 'lesser') . q{
		RETURN NULL;
	END $$;
	CREATE TABLE t (id bigint DEFAULT public.snowid_next());
	CREATE VIEW v AS SELECT s.grab() AS id;
	SELECT 1});
is($out, '1', 'lesser, granted nothing of the edition, makes its function, table and view') or diag($err);
my $l = $node->background_psql('db2', extra_params => [ '-U', 'lesser' ]);
$l->query_safe('BEGIN');
$l->query_safe('LOCK TABLE s.t IN ACCESS EXCLUSIVE MODE');
($aout, $aerr) = ('', '');
$a = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('db2') . ' user=owner2', '-c',
	  q{UPDATE snowid_config SET epoch = '2020-01-01'} ],
	'<', \undef, '>', \$aout, '2>', \$aerr);
ok( $node->poll_query_until('db2', q{
	SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
				   WHERE c.relname = 't' AND NOT l.granted)}),
	'the guard of owner2\'s UPDATE waits for s.t');
$l->query_safe('ALTER TABLE s.t RENAME TO t_old');
$l->query_safe('ALTER VIEW s.v RENAME TO t');
$l->query_safe('COMMIT');
$l->quit;
$a->finish;
note("owner2's epoch: $aerr");
SnowidSqlEdition::no_superuser_ran($node, 'db2',
	'the owner\'s guard ran none of lesser\'s functions as a superuser', 'lesser', 's.ran');

$node->stop;
done_testing();
