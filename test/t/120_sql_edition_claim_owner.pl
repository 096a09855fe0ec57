# Issue 56's attack (item 4: ownership as pgcrypto has it): installed by a
# database owner with CREATE EXTENSION (trusted, run as the bootstrap
# superuser), snowid_sql 1.2 left two functions of its API to that owner:
# snowid_claim() and snowid_new_holder().  The owner could CREATE OR
# REPLACE them (any body) and make them SECURITY INVOKER; a superuser who
# then called either (managed.md has snowid_claim() run at start and on a
# schedule, and snowid_new_holder() by hand after a copy) ran the owner's
# code as the superuser, and the owner became superuser.
#
# Now both are the extension's: the owner cannot replace them, and may call
# them.  The claim's own functions stay the owner's (they connect as it),
# and snowid_claim() runs them only in a session whose role the owner has
# the privileges of: a superuser's call is refused, also after the owner
# replaced one of them, and runs none of its code.
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
	like($err, qr/ERROR:  42501: must be owner of function $fn/,
		"app (no superuser) cannot replace $fn()");
	is( $node->safe_psql(
			'appdb', qq{
		SELECT (p.proowner = 10) || ' ' ||
			EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
					AND d.objid = p.oid AND d.deptype = 'e') || ' ' ||
			has_function_privilege('app', p.oid, 'EXECUTE') || ' ' ||
			has_function_privilege('public', p.oid, 'EXECUTE')
		FROM pg_proc p WHERE p.oid = 'public.$fn'::regproc}),
		'true true true false',
		"$fn() is the bootstrap superuser's, a member of the extension, for app (not PUBLIC) to call");

	# the superuser calls it, as the page says to (at start, on a schedule,
	# after a copy)
	$node->psql('appdb', "SELECT $fn()");
	is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
		'f', "a superuser's SELECT $fn() runs none of app's code (app stays no superuser)");
}

# The claim's own function, the owner's, made SECURITY INVOKER by it (it
# may alter it, and set its search_path to a schema of its own): a
# superuser's snowid_claim() runs none of it
($rc, $out, $err) = SnowidSqlEdition::psql_as($app,
	'ALTER FUNCTION snowid_sql_private.snowid_sql_claim_owned() SECURITY INVOKER');
is($rc, 0, 'app makes the claim\'s own function, which is its own, SECURITY INVOKER')
  or diag($err);
($rc, $out, $err) = $node->psql('appdb', 'SELECT snowid_claim()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: snowid_sql does not claim its worker id in a superuser's session\n.*HINT:  Run SELECT snowid_claim\(\) as the owner of the extension/s,
	'a superuser\'s snowid_claim() is refused, saying to run it as the owner');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
	'f', 'and runs none of app\'s code (app stays no superuser)');
($rc, $out, $err) = SnowidSqlEdition::psql_as($app, 'SELECT holder FROM snowid_claim()');
like($err, qr/55000: snowid_sql does not claim its worker id\nDETAIL:  claim_worker_id of snowid_config is off/,
	'app\'s own snowid_claim() runs the claim (here: none configured)');
($rc, $out, $err) = SnowidSqlEdition::psql_as($app, 'SELECT snowid_new_holder() IS NOT NULL');
is($out, 't', 'app calls snowid_new_holder()') or diag($err);

$node->stop;
done_testing();
