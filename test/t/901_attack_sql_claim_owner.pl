# Attack (issue 56, item 4: ownership as pgcrypto has it): installed by a
# database owner with CREATE EXTENSION (trusted, run as the bootstrap
# superuser), snowid_sql leaves two functions of its API to that owner:
# snowid_claim() and snowid_new_holder().  The owner may CREATE OR REPLACE
# them (any body) and make them SECURITY INVOKER; a superuser who then calls
# either (managed.md has snowid_claim() run at start and on a schedule, and
# by hand after a copy) runs the owner's code as the superuser, and the
# owner becomes superuser.  security.md and managed.md say this can happen
# only through pg_tle and the plain script; the first call's claim refuses
# a superuser's session for this very reason, but these two do not.
#
# Expected (what a fix makes pass): the superuser's calls run none of the
# owner's code, and app stays no superuser.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('att_claim_owner');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE appdb OWNER app;
});
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 4;
	SELECT count(snowid_next()) FROM generate_series(1, 10)});
is($out, '10', 'app installs the extension and takes ids') or diag($err);

for my $fn ('snowid_claim', 'snowid_new_holder')
{
	$node->safe_psql('postgres', 'ALTER ROLE app NOSUPERUSER');
	my $replace = $fn eq 'snowid_claim'
	  ? q{CREATE OR REPLACE FUNCTION public.snowid_claim(
			OUT datacenter_id integer, OUT worker_id integer,
			OUT floor_time timestamptz, OUT holder text)
		LANGUAGE plpgsql SECURITY INVOKER AS $b$
		BEGIN
			IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
				EXECUTE 'ALTER ROLE app SUPERUSER';
			END IF;
			datacenter_id := 0; worker_id := 4; holder := 'pwned';
		END $b$}
	  : q{CREATE OR REPLACE FUNCTION public.snowid_new_holder() RETURNS text
		LANGUAGE plpgsql SECURITY INVOKER AS $b$
		BEGIN
			IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
				EXECUTE 'ALTER ROLE app SUPERUSER';
			END IF;
			RETURN 'pwned';
		END $b$};
	($rc, $out, $err) = SnowidSqlEdition::psql_as($app, $replace);
	is($rc, 0, "app (no superuser) replaces $fn(), a member of the extension, and makes it SECURITY INVOKER")
	  or diag($err);
	is( $node->safe_psql(
			'appdb', qq{
		SELECT p.proowner::regrole || ' ' || p.prosecdef || ' ' ||
			EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
					AND d.objid = p.oid AND d.deptype = 'e')
		FROM pg_proc p WHERE p.oid = 'public.$fn'::regproc}),
		'app false true', "$fn() stays a member of the extension, app's, as its caller");

	# the superuser calls it, as the page says to (at start, on a schedule,
	# after a copy)
	$node->psql('appdb', "SELECT $fn()");
	is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
		'f', "a superuser's SELECT $fn() runs none of app's code (app stays no superuser)");
}

$node->stop;
done_testing();
