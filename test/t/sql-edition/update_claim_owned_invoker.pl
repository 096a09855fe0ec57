# The update of a claiming 1.2 database to 1.4 (sql/snowid_sql/1.2--1.4/
# claim.sql) re-asserts the claim through 1.2's
# snowid_sql_private.snowid_sql_claim_owned(), in a DO block that runs as
# the bootstrap superuser.  1.2 made that function (and four more the
# claim ran as it) the installing role's, SECURITY DEFINER.  Its owner
# cannot replace its body (the schema is the superuser's), but ALTER
# FUNCTION needs only ownership: SECURITY INVOKER and SET search_path =
# public, pg_catalog, with an operator = (text, text) of its own in public
# (its database's schema).  The update then runs the body as the superuser,
# and its "l.name = 'claim'" runs the owner's operator.
#
# - app, no superuser, installs 1.2 as an extension and claims a worker id
#   (a fleet's coordination database), then alters the function and plants
#   the operator, which runs ALTER ROLE app SUPERUSER where it can.
# - app updates the extension (a trusted extension's update runs as the
#   bootstrap superuser): the operator should not run as a superuser, and
#   app should stay no superuser (on main it becomes one).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my $node = SnowidSqlEdition::claiming_server('update_claim_owned_invoker', 'appdb');
my $app = app_url($node, 'appdb');

my ($w, $err) = SnowidSqlEdition::install_claiming_12($app, $conninfo, $password, who => 'app');
like($w, qr/^\d+$/, "it claims worker id $w") or diag($err);

my ($rc, $out);
($rc, $out, $err) = psql_as($app, q{
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION public.text_eq(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO public.ran SELECT current_user, r.rolsuper FROM pg_catalog.pg_roles r
		WHERE r.rolname OPERATOR(pg_catalog.=) current_user;
		BEGIN
			EXECUTE 'ALTER ROLE app SUPERUSER';
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
		RETURN a OPERATOR(pg_catalog.=) b;
	END $$;
	CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.text_eq);
	ALTER FUNCTION snowid_sql_private.snowid_sql_claim_owned() SECURITY INVOKER
		SET search_path = public, pg_catalog;
	SELECT rolsuper FROM pg_roles WHERE rolname = 'app'});
is($out, 'f', 'app, the owner of snowid_sql_claim_owned(), alters it and plants an operator') or diag($err);

($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
note("the update: exit code $rc: $err");
SnowidSqlEdition::no_superuser_ran($node, 'appdb',
	'the update ran none of the owner\'s code as a superuser');

$node->stop;
done_testing();
