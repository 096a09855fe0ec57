# The layout and epoch guard of the SQL edition, and the copy's floor, read
# the application's tables as the bootstrap superuser (the triggers of
# snowid_config are SECURITY DEFINER): snowid_sql_ids_held() runs "SELECT
# EXISTS (SELECT FROM ONLY t WHERE id IS NOT NULL)", snowid_sql_largest_held()
# "SELECT max(id) FROM ONLY t".  Planning either opens the table's indexes,
# and PostgreSQL folds each index's predicate and expressions
# (RelationGetIndexPredicate(), RelationGetIndexExpressions():
# eval_const_expressions()), which runs an immutable function of constant
# arguments as the current user: the superuser.  The installing role (any
# role with CREATE on the database: the extension is trusted) owns the
# table and makes the index, so the function is its own.  1.4's fix of
# guard_cast_superuser (a bound compared with bigint columns alone) does
# not reach this: the column is a plain bigint.
#
# - appdb: app makes an immutable function that runs ALTER ROLE app
#   SUPERUSER through a volatile one (a non-volatile PL/pgSQL function runs
#   no ALTER itself, but may call a volatile one), a table whose bigint
#   column takes its default from snowid_next(), and a partial index whose
#   predicate calls it; then, in a new session (the relation cache folds a
#   predicate once per session), UPDATE snowid_config SET epoch = ...
#   (the guard reads the table).
# - appdb2, as app2: the same through an expression index, and the floor:
#   the owner marks the row as stamped elsewhere (worker_server, which it may
#   write while no worker id is set), then sets the worker id, and the floor
#   reads the table for its largest id.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): both roles are
# superuser after their one UPDATE, and the function noted that it ran as
# postgres with rolsuper on.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('guard_index_superuser');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE app2 LOGIN;
	CREATE DATABASE appdb OWNER app;
	CREATE DATABASE appdb2 OWNER app2});

# what each owner plants: $role's functions, a table of ids and $index
sub plant
{
	my ($role, $index) = @_;

	return qq{
	CREATE EXTENSION snowid_sql;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab() RETURNS void LANGUAGE plpgsql AS \$\$
	BEGIN
		INSERT INTO public.ran SELECT current_user, r.rolsuper FROM pg_roles r WHERE r.rolname = current_user;
		BEGIN
			EXECUTE 'ALTER ROLE $role SUPERUSER';
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
	END \$\$;
	CREATE FUNCTION folded(integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		PERFORM public.grab();
		RETURN \$1;
	END \$\$;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	$index;
	SELECT rolsuper FROM pg_roles WHERE rolname = '$role'};
}

my $app = $node->connstr('appdb') . ' user=app';
my ($rc, $out, $err) = psql_as($app, plant('app', 'CREATE INDEX ON t (id) WHERE folded(1) = 1'));
is($out, 'f', 'app, no superuser, installs the edition and makes its function, table and partial index')
  or diag($err);
# a new session: its relation cache has not folded the predicate yet
($rc, $out, $err) = psql_as($app, q{UPDATE snowid_config SET epoch = '2020-01-01'});
note("the epoch's update: rc $rc $err");
is($node->safe_psql('appdb', q{SELECT count(*) FROM ran WHERE super}), '0',
	'the guard ran none of the owner\'s functions as a superuser');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}), 'f',
	'app is still no superuser');

my $app2 = $node->connstr('appdb2') . ' user=app2';
($rc, $out, $err) = psql_as($app2,
	plant('app2', 'CREATE INDEX ON t ((id + folded(1)))')
	  . q{; UPDATE snowid_config SET worker_server = 'a server elsewhere'});
like($out, qr/^f/, 'app2 makes its expression index and marks the row as stamped elsewhere')
  or diag($err);
($rc, $out, $err) = psql_as($app2, q{UPDATE snowid_config SET worker_id = 1});
note("the worker id set: rc $rc $err");
is($node->safe_psql('appdb2', q{SELECT count(*) FROM ran WHERE super}), '0',
	'the floor ran none of the owner\'s functions as a superuser');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app2'}), 'f',
	'app2 is still no superuser');

$node->stop;
done_testing();
