# The layout and epoch guard of the SQL edition reads the application's
# tables as the bootstrap superuser: snowid_sql_config_check() is SECURITY
# DEFINER, and snowid_sql_ids_held() runs, for a restore's update, "SELECT
# EXISTS (SELECT FROM t WHERE id IS NOT NULL AND ($1 IS NULL OR id >= $1))"
# with a bigint bound.  The installing role (any role with CREATE on the
# database: the extension is trusted) owns the column's type, and so may
# make an implicit cast from it to bigint WITH FUNCTION of its own; the
# comparison then runs that function, as the superuser.
#
# - The owner makes a composite type, an implicit cast of it to bigint
#   with a function that runs ALTER ROLE app SUPERUSER, a table whose
#   column of that type takes its default from snowid_next(), and one row.
# - It inserts the row of snowid_config with another epoch (as a restore
#   does, which it is granted): the guard's update reads the table.
# - The function should not run as a superuser, and app should stay a
#   role without superuser (on main: it runs as the bootstrap superuser,
#   and app is superuser after one INSERT).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('guard_cast_superuser', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	CREATE TYPE boxed AS (v bigint);
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION unbox(boxed) RETURNS bigint LANGUAGE plpgsql AS $$
	BEGIN
} . SnowidSqlEdition::ran_escalates_sql() . q{
		RETURN ($1).v;
	END $$;
	CREATE FUNCTION box(bigint) RETURNS boxed LANGUAGE sql RETURN ROW($1)::boxed;
	CREATE CAST (boxed AS bigint) WITH FUNCTION unbox(boxed) AS IMPLICIT;
	CREATE CAST (bigint AS boxed) WITH FUNCTION box(bigint);
	CREATE TABLE t (id boxed DEFAULT snowid_next()::boxed);
	INSERT INTO t VALUES (ROW(1));
	SELECT rolsuper FROM pg_roles WHERE rolname = 'app'});
is($out, 'f', 'app, no superuser, installs the edition and makes its type, cast and table') or diag($err);

($rc, $out, $err) = psql_as($app, q{INSERT INTO snowid_config (epoch) VALUES ('2020-01-01')});
note("the restore's insert: rc $rc $err");
SnowidSqlEdition::no_superuser_ran($node, 'appdb',
	'the guard ran none of the owner\'s functions as a superuser');

$node->stop;
done_testing();
