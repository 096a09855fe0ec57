# The layout and epoch guard (and the copy's floor) read the application's
# tables as the bootstrap superuser, and since 1.4's fifth fixes refuse a
# table whose index, statistics, constraint, partition key or generated
# column uses "a function, operator, domain or range type of a role that
# is no superuser" (snowid_sql_runs_code(), from pg_depend).  A function a
# superuser owns may still run a role's code: a trusted extension that a
# database owner installs (hstore: trusted = true, its objects the
# bootstrap superuser's) has populate_record(anyelement, hstore), IMMUTABLE,
# which reads its hstore into a record by the input functions of the
# record's columns, and the input function of a domain runs the domain's
# CHECK.  An index expression over populate_record(NULL::comp,
# 'a=>1'::hstore), comp a composite type whose column is of a domain whose
# CHECK calls the role's function, depends (pg_depend) only on
# populate_record() and hstore (the superuser's) and on comp (a composite
# type: not looked at); the domain is no dependency of the index at all.
# The planner folds the call when it loads the index (an immutable
# function of constant arguments, RelationGetIndexExpressions()), as the
# current user: the superuser.
#
# - owner8, no superuser, owns its database: installs snowid_sql and hstore
#   (both trusted), makes a function that runs ALTER ROLE owner8 SUPERUSER
#   where it can, the domain over it, comp, a table t whose bigint column
#   takes ids by its default, and the index; then, in a new session,
#   UPDATE snowid_config SET epoch = ... (the guard reads t).
# - lesser, granted nothing of the edition, with a schema of its own in a
#   database whose owner installed hstore: the same with its own table; the
#   owner's routine epoch set, before the first id, reads it.
# - lesser2, the same in a database whose owner set the worker id and then
#   restored a dump (the install's steps): lesser2's own first call after
#   the restore (snowid_sql_raise_restored() read every table as the
#   superuser) needed no step of the owner's.  Since issue 68's redesign no
#   call reads the tables (the restore clears the worker id, and the call
#   fails): the owner's step that ends the documented restore, setting the
#   worker id, reads them, and is checked too.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1 and 17beta2, hstore
# built from its contrib): the UPDATE succeeds, the function noted that it
# ran as postgres with rolsuper on, and owner8 is a superuser after; so is
# lesser after the owner's UPDATE, and lesser2 after its own snowid_next().
# The plain script's install reads as its owner: there the same makes a
# role granted nothing run its code as the owner.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
SnowidTest::need_file("$sharedir/extension/hstore.control",
	'postgresql-NN, or contrib/hstore of a source build');

my $node = PostgreSQL::Test::Cluster->new('guard_trusted_extension_superuser');
$node->init;
$node->start;

# $role's function, domain, type, table of ids and index, in $schema
sub plant
{
	my ($role, $schema) = @_;

	return qq{
	SET search_path = $schema, public;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab(integer) RETURNS boolean LANGUAGE plpgsql AS \$\$
	BEGIN
} . SnowidSqlEdition::ran_escalates_sql($schema, $role) . qq{
		RETURN true;
	END \$\$;
	CREATE DOMAIN d AS integer CHECK ($schema.grab(VALUE));
	CREATE TYPE comp AS (a d);
	CREATE TABLE t (id bigint DEFAULT public.snowid_next(), x int);
	CREATE INDEX ON t ((x + pg_catalog.num_nonnulls(public.populate_record(NULL::$schema.comp, 'a=>1'::public.hstore))));
	SELECT rolsuper FROM pg_roles WHERE rolname = '$role'};
}

$node->safe_psql('postgres', 'CREATE ROLE owner8 LOGIN; CREATE DATABASE db8 OWNER owner8');
my $url = $node->connstr('db8') . ' user=owner8';
my ($rc, $out, $err) = psql_as($url, 'CREATE EXTENSION snowid_sql; CREATE EXTENSION hstore; ' . plant('owner8', 'public'));
like($out, qr/^f/, 'owner8, no superuser, installs the edition and hstore, and makes its function, domain, type, table and index')
  or diag($err);
($rc, $out, $err) = psql_as($url, q{UPDATE snowid_config SET epoch = '2020-01-01'});
note("owner8's epoch: rc $rc $err");
SnowidSqlEdition::no_superuser_ran($node, 'db8',
	'the epoch moved: the edition ran none of owner8\'s functions as a superuser', 'owner8');

$node->safe_psql('postgres', 'CREATE ROLE owner9 LOGIN; CREATE ROLE lesser LOGIN; CREATE DATABASE db9 OWNER owner9');
($rc, $out, $err) = psql_as($node->connstr('db9') . ' user=owner9',
	'CREATE EXTENSION snowid_sql; CREATE EXTENSION hstore; SELECT 1');
is($out, '1', 'owner9 installs the edition and hstore') or diag($err);
$node->safe_psql('db9', 'CREATE SCHEMA s AUTHORIZATION lesser');
($rc, $out, $err) = psql_as($node->connstr('db9') . ' user=lesser', plant('lesser', 's'));
like($out, qr/^f/, 'lesser, granted nothing of the edition, makes the same in its schema') or diag($err);
($rc, $out, $err) = psql_as($node->connstr('db9') . ' user=owner9', q{UPDATE snowid_config SET epoch = '2020-01-01'});
note("owner9's epoch: rc $rc $err");
SnowidSqlEdition::no_superuser_ran($node, 'db9',
	'the owner\'s epoch set ran none of lesser\'s functions as a superuser', 'lesser', 's.ran');

# And without the owner's step: after a dump restored into a database with
# a worker id (the install's steps), the first call, whoever makes it, sets
# the worker id again and reads every table for its largest id
# (snowid_sql_raise_restored()): lesser2 calls snowid_next() itself
$node->safe_psql('postgres', q{
	CREATE ROLE owner10 LOGIN; CREATE ROLE lesser2 LOGIN;
	CREATE DATABASE source10 OWNER owner10; CREATE DATABASE db10 OWNER owner10});
($rc, $out, $err) = psql_as($node->connstr('source10') . ' user=owner10', q{
	CREATE EXTENSION snowid_sql; UPDATE snowid_config SET worker_id = 5;
	CREATE TABLE ev (id bigint DEFAULT snowid_next()); INSERT INTO ev DEFAULT VALUES; SELECT 1});
is($out, '1', 'owner10 has a source database that issued') or diag($err);
($rc, $out, $err) = psql_as($node->connstr('db10') . ' user=owner10',
	'CREATE EXTENSION snowid_sql; CREATE EXTENSION hstore; UPDATE snowid_config SET worker_id = 6; SELECT 1');
is($out, '1', 'owner10 installs the edition and hstore, and sets the worker id') or diag($err);
$node->safe_psql('db10', 'CREATE SCHEMA s AUTHORIZATION lesser2');
($rc, $out, $err) = psql_as($node->connstr('db10') . ' user=lesser2', plant('lesser2', 's'));
like($out, qr/^f/, 'lesser2, granted nothing of the edition, makes the same in its schema') or diag($err);
my $dir = PostgreSQL::Test::Utils::tempdir('guard_trusted_extension_superuser');
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source10.dump", '-d', $node->connstr('source10') . ' user=owner10' ],
	'owner10 dumps its source');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('db10') . ' user=owner10', "$dir/source10.dump" ],
	'and restores it into db10');
($rc, $out, $err) = psql_as($node->connstr('db10') . ' user=lesser2', 'SELECT snowid_next() IS NOT NULL');
note("lesser2's first call after the restore: rc $rc $out $err");
is($node->safe_psql('db10', q{SELECT count(*) FROM s.ran WHERE super}), '0',
	'lesser2\'s own call after the restore ran none of its functions as a superuser');
($rc, $out, $err) = psql_as($node->connstr('db10') . ' user=owner10', 'UPDATE snowid_config SET worker_id = 6');
like($err, qr/42501: snowid_sql cannot read s\.\w+ for the ids it holds/,
	'the owner\'s step after the restore, setting the worker id, refuses to read lesser2\'s table');
SnowidSqlEdition::no_superuser_ran($node, 'db10',
	'nor the owner\'s step ran any of its functions as a superuser', 'lesser2', 's.ran');

$node->stop;
done_testing();
