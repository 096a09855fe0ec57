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
use SnowidSqlEdition qw(psql_as);
use Test::More;

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my $node = PostgreSQL::Test::Cluster->new('update_claim_owned_invoker');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	GRANT pg_read_all_stats TO app;
	CREATE DATABASE appdb OWNER app;
});
$node->safe_psql('appdb', 'CREATE EXTENSION dblink');
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
	  . SnowidSqlEdition::claim_config($conninfo, $password));
is($rc, 0, 'app installs 1.2 and has it claim its worker id') or diag($err);
($rc, $out, $err) = psql_as($app, 'SELECT (snowid_decode(snowid_next())).worker_id');
like($out, qr/^\d+$/, "it claims worker id $out") or diag($err);

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
is($node->safe_psql('appdb', q{SELECT count(*) FROM ran WHERE super}), '0',
	'the update ran none of the owner\'s code as a superuser');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}), 'f',
	'app is still no superuser');

$node->stop;
done_testing();
