# The SQL edition (doc/managed.md) read from outside (issue 56): what a
# database owner who is no superuser, a role with no grants, a publication
# and a dump could do to it before version 1.2.
#
# - ownership: installed by a database owner, the extension's objects are
#   the superuser's; the owner replaces no function, alters no sequence and
#   drops no trigger of it;
# - locks: a role with no grants holding snowid's former advisory keys
#   stops nothing, and cannot lock the rows of snowid_locks;
# - sequences: in a plain-script install, whose owner may ALTER SEQUENCE,
#   a cache on snowid_generation or snowid_position stops the generator
#   with a clear error, and the worker id is not set again until they are
#   back; nor over an UNLOGGED sequence or table (finding D), across a
#   kill -9;
# - a dump of a plain-script install restored into another database issues
#   no id under its source's worker id, and says so;
# - a logical subscriber of a FOR ALL TABLES publication keeps its own
#   configuration: an UPDATE of snowid_config on the publisher changes
#   neither its worker id nor its layout;
# - public ids read in a database whose collation is Turkish (ICU tr-TR):
#   lower-case ones, with i for 1, as the C edition reads them.
#
# And what a review of 1.2 found (its findings F1 to F8):
# - F1: the owner of the extension's schema neither overloads nor shadows
#   (by renaming the schema) what the superuser's functions call;
# - F2: CREATE EXTENSION gives the superuser no function of the owner's;
# - F3: an install of 1.1 that the owner owns is not updated by the
#   superuser (it is dropped and created again);
# - F4, F7 were the claim's, which 1.3 no longer has;
# - F6: a writer sends no message to its client while it holds the lock;
# - F9: the common path of a call, which sets no search_path, runs none of
#   the operators the owner of schema public plants there;
# - F8, F5: a logical subscriber takes none of the publisher's locks,
#   copies the tables at the start, and (19 and later) refuses to issue
#   from sequences a subscription synchronises; finding B: a generator
#   whose sequences hold another server's values issues nothing until its
#   worker id is set again (on every version, the values set by hand).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $version = SnowidSqlEdition::version();
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sql_outside'));

my $node = PostgreSQL::Test::Cluster->new('sql_outside');
$node->init(allows_streaming => 'logical');
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	CREATE ROLE stranger LOGIN;
	CREATE ROLE admin LOGIN CREATEROLE;
	CREATE DATABASE appdb OWNER app;
});
my $app = $node->connstr('appdb') . ' user=app';
my $clerk = $node->connstr('appdb') . ' user=clerk';
my $stranger = $node->connstr('appdb') . ' user=stranger';

# ---------------------------------------------------------------------------
# Ownership, as pgcrypto has it
# ---------------------------------------------------------------------------

my ($rc, $out, $err) = psql_as($app,
	'CREATE EXTENSION snowid_sql; UPDATE snowid_config SET worker_id = 4');
is($rc, 0, 'a database owner installs and configures the extension') or diag($err);
is( $node->safe_psql(
		'appdb', q{
	SELECT string_agg(x, ', ' ORDER BY x COLLATE "C") FROM (SELECT DISTINCT CASE
		WHEN owner = 10 THEN 'bootstrap superuser'
		ELSE owner::regrole || ' ' || name END AS x
	FROM (SELECT p.proowner AS owner, p.proname::text AS name FROM pg_proc p
		  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
		  UNION ALL
		  SELECT c.relowner, c.relname::text FROM pg_class c
		  JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
		  UNION ALL
		  SELECT t.typowner, t.typname::text FROM pg_type t
		  JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e') o) y}),
	'bootstrap superuser',
	'every object is the bootstrap superuser\'s (1.2 left the owner the functions its claim ran as it)');

($rc, $out, $err) = psql_as($app, q{
	CREATE OR REPLACE FUNCTION snowid_next() RETURNS bigint LANGUAGE sql
	AS 'SELECT 1::bigint'});
like($err, qr/42501: must be owner of function snowid_next/,
	'the owner cannot replace snowid_next()');
($rc, $out, $err) = psql_as($app, 'ALTER SEQUENCE snowid_sql_private.snowid_generation CACHE 3');
like($err, qr/42501: must be owner of sequence snowid_generation/,
	'nor alter the generator\'s sequences');
($rc, $out, $err) = psql_as($app,
	'DROP TRIGGER snowid_config_check ON snowid_sql_private.snowid_config');
like($err, qr/42501: must be owner of (table|relation) snowid_config/,
	'nor drop the trigger that keeps the layout');
($rc, $out, $err) = psql_as($app,
	q{INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)});
is($rc, 0, 'the owner writes the keys of public ids') or diag($err);

# E: a role with no grants calls the API, but no function of
# snowid_sql_private that the API does not call as it
($rc, $out, $err) = psql_as($clerk, q{
	SELECT snowid_sql_version(), (snowid_decode(snowid_from_time(now()))).worker_id,
		snowid_from_public(snowid_public(42)), snowid_from_serial(snowid_serial('X', 42))});
is($rc, 0, 'E: a role with no grants calls the API') or diag($err);
for my $call ('snowid_sql_fixed()', 'snowid_sql_sequences_problem()',
	'snowid_sql_read_public(\'x\')', 'snowid_sql_compose(NULL, 0)', 'snowid_sql_first_key()',
	'snowid_sql_take(1, NULL, 0)', 'snowid_sql_refix()')
{
	($rc, $out, $err) = psql_as($clerk, "SELECT snowid_sql_private.$call");
	like($err, qr/42501: permission denied for function/,
		"E: nor snowid_sql_private.$call");
}
is( $node->safe_psql(
		'appdb', q{
	SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.proname) FROM pg_proc p
	WHERE p.pronamespace = 'snowid_sql_private'::regnamespace AND p.prosecdef
	  AND has_function_privilege('public', p.oid, 'EXECUTE')}),
	'snowid_sql_private.snowid_sql_next(boolean), snowid_sql_private.snowid_sql_next_batch(integer)',
	'E: PUBLIC calls only the SECURITY DEFINER functions that the API calls as it');

# C: the owner of the database dumps it and restores it, as a database of
# pgcrypto or pg_cron: the copy keeps the configuration (not the worker
# id) and the keys of public ids; and restores a superuser's dump alike
$node->safe_psql('appdb', 'UPDATE snowid_config SET max_wait_ms = 1500');
for my $by ('app', 'a superuser')
{
	my $copy = $by eq 'app' ? 'ownercopy' : 'ownercopy_su';
	my $file = "$dir/$copy.dump";
	IPC::Run::run(
		[ 'pg_dump', '-Fc', '-f', $file, '-d', $by eq 'app' ? $app : $node->connstr('appdb') ],
		'>', \$out, '2>', \$err);
	is($? >> 8, 0, "C: $by dumps the database") or diag($err);
	$node->safe_psql('postgres', "CREATE DATABASE $copy OWNER app");
	IPC::Run::run(
		[ 'pg_restore', '--exit-on-error', '-d', $node->connstr($copy) . ' user=app', $file ],
		'>', \$out, '2>', \$err);
	is($? >> 8, 0, "C: the owner restores the dump $by made") or diag($err);
	is( $node->safe_psql(
			$copy, q{
		SELECT worker_id IS NULL, max_wait_ms, (SELECT string_agg(key_id, ',') FROM snowid_public_keys)
		FROM snowid_config}),
		't|1500|K1', "C: the copy keeps the configuration and the keys, not the worker id ($by)");
	($rc, $out, $err) = psql_as($node->connstr($copy) . ' user=app', q{
		UPDATE snowid_config SET worker_id = 9; SELECT count(DISTINCT snowid_next()) FROM generate_series(1, 100)});
	is($out, '100', "C: given a worker id of its own, the copy issues ids ($by)") or diag($err);
}

# F1: what the superuser's functions call lies in snowid_sql_private,
# where the owner of the database cannot create, and is named there
($rc, $out, $err) = psql_as($app, q{
	CREATE FUNCTION snowid_sql_private.snowid_x() RETURNS int LANGUAGE sql AS 'SELECT 1'});
like($err, qr/42501: permission denied for schema snowid_sql_private/,
	'the owner creates nothing in snowid_sql_private');
is( $node->safe_psql(
		'appdb', q{
	SELECT string_agg(p.oid::regprocedure::text, ', ') FROM pg_proc p
	JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	WHERE p.prosrc ~ 'public\.snowid'}),
	'', 'no body of the extension names an object of schema public');

# An overload that a call of snowid_sql_next() matched better (an integer
# literal for a bigint), and the schema renamed with another public made
# in its place, holding functions and a view of the names the bodies
# used: none runs, at the next ids or at a change of the configuration.
($rc, $out, $err) = psql_as($app, q{
	CREATE TABLE pwned (who text);
	CREATE FUNCTION public.snowid_sql_move(low bigint, n integer, high bigint, wait boolean,
		OUT first bigint, OUT got bigint, OUT last bigint)
	LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO pwned VALUES (current_user);
		IF current_user <> 'app' THEN EXECUTE 'ALTER ROLE app SUPERUSER'; END IF;
	END $$;
	SELECT pg_sleep(0.01);
	SELECT count(snowid_next()) FROM generate_series(1, 2000);
	ALTER SCHEMA public RENAME TO pub2;
	CREATE SCHEMA public;
	CREATE FUNCTION public.snowid_sql_here() RETURNS text LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO pub2.pwned VALUES (current_user);
		IF current_user <> 'app' THEN EXECUTE 'ALTER ROLE app SUPERUSER'; END IF;
		RETURN 'x';
	END $$;
	CREATE VIEW public.snowid_config AS SELECT * FROM pub2.snowid_config;
	SELECT count(pub2.snowid_next()) FROM generate_series(1, 2000);
	UPDATE pub2.snowid_config SET max_drift_ms = 1000;
	DROP SCHEMA public CASCADE;
	ALTER SCHEMA pub2 RENAME TO public;
	SELECT count(*) FROM pwned});
is(join(',', grep { $_ ne '' } split /\n/, $out), '2000,2000,0',
	'F1: neither an overload nor a schema renamed and made anew runs as the superuser')
  or diag($err);
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
	'f', 'the owner is no superuser');
$node->safe_psql('appdb', 'DROP TABLE pwned');

# F9: the common path of a call (snowid_sql_next(), which runs as the
# superuser) sets no search_path: it runs in the caller's, so every
# operator in its body names pg_catalog.  The owner of schema public plants
# an operator there for each operator and types the body uses (and a few
# more), which returns what pg_catalog's does and notes that it ran; with
# public before pg_catalog, an unqualified name finds them (shown first),
# yet no call of the owner's, nor of a superuser's, ever runs one: the
# common path, a writer (each call of its own millisecond), and the calls
# that read the table.
my @planted = (
	[ '=', 'text', 'text', 'boolean' ], [ '<>', 'text', 'text', 'boolean' ],
	[ '*', 'double precision', 'integer', 'double precision' ],
	[ '*', 'double precision', 'double precision', 'double precision' ],
	[ '-', 'bigint', 'bigint', 'bigint' ], [ '+', 'bigint', 'bigint', 'bigint' ],
	[ '+', 'bigint', 'integer', 'bigint' ], [ '+', 'integer', 'integer', 'integer' ],
	[ '<<', 'bigint', 'integer', 'bigint' ], [ '>>', 'bigint', 'integer', 'bigint' ],
	[ '&', 'bigint', 'bigint', 'bigint' ], [ '|', 'bigint', 'bigint', 'bigint' ],
	[ '%', 'bigint', 'integer', 'bigint' ], [ '=', 'bigint', 'bigint', 'boolean' ],
	[ '=', 'bigint', 'integer', 'boolean' ], [ '<>', 'bigint', 'bigint', 'boolean' ],
	[ '<', 'bigint', 'bigint', 'boolean' ], [ '<=', 'bigint', 'bigint', 'boolean' ],
	[ '>', 'bigint', 'bigint', 'boolean' ], [ '>=', 'bigint', 'bigint', 'boolean' ],
	[ '=', 'integer', 'integer', 'boolean' ], [ '<', 'integer', 'integer', 'boolean' ],
	[ '#', 'bigint', 'bigint', 'bigint' ], [ '-', 'bigint', 'integer', 'bigint' ]);
my ($plant, $unqualified) = ('CREATE TABLE public.ran (op text); GRANT INSERT ON public.ran TO PUBLIC;', '');
for my $i (0 .. $#planted)
{
	my ($op, $l, $r, $res) = @{ $planted[$i] };
	$plant .= qq{
	CREATE FUNCTION public.planted_$i(a $l, b $r) RETURNS $res LANGUAGE plpgsql AS \$\$
	BEGIN
		INSERT INTO public.ran VALUES ('$l $op $r');
		IF current_user <> 'app' THEN EXECUTE 'ALTER ROLE app SUPERUSER'; END IF;
		RETURN a OPERATOR(pg_catalog.$op) b;
	END \$\$;
	CREATE OPERATOR public.$op (LEFTARG = $l, RIGHTARG = $r, FUNCTION = public.planted_$i);};
	$unqualified .= ($i ? ', ' : '') . "(1::$l $op 1::$r) IS NOT NULL";
}
($rc, $out, $err) = psql_as($app, $plant);
is($rc, 0, 'F9: the owner plants operators in public') or diag($err);
($rc, $out, $err) = psql_as($app, qq{
	SET search_path = public, pg_catalog;
	SELECT $unqualified;
	SELECT count(DISTINCT op) FROM public.ran;
	TRUNCATE public.ran});
like($out, qr/\n${\ scalar @planted}$/, 'F9: unqualified, each operator is the one planted')
  or diag($err);
for my $as ([ 'the owner', $app ], [ 'a superuser', $node->connstr('appdb') ])
{
	my ($who, $connstr) = @$as;
	($rc, $out, $err) = psql_as($connstr, q{
		SET search_path = public, pg_catalog;
		SELECT count(DISTINCT id) FROM (
			SELECT snowid_next() AS id, pg_sleep(0.002) FROM generate_series(1, 20)) x;
		SELECT count(DISTINCT id) FROM (SELECT snowid_next() AS id FROM generate_series(1, 2000)) x;
		SELECT count(*) FROM public.ran});
	is($out, "20\n2000\n0", "F9: no call of ${who}'s runs one: its search_path first") or diag($err);
}
# the calls that read the table (as a standby's: recovery given true)
($rc, $out, $err) = psql_as($app, q{
	SET search_path = public, pg_catalog;
	SELECT count(DISTINCT snowid_sql_private.snowid_sql_next(true)) FROM generate_series(1, 10)});
is($out, '10', 'F9: the calls that read the table give ids') or diag($err);
is($node->safe_psql('appdb', 'SELECT count(*) FROM public.ran'),
	'0', 'F9: and run none of the planted operators');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
	'f', 'F9: the owner is no superuser');
# and its body names no operator nor function but with its schema (its
# comments, literals, := and :: aside, and the sign of a number)
my $body = $node->safe_psql('appdb',
	q{SELECT prosrc FROM pg_proc WHERE oid = 'snowid_sql_private.snowid_sql_next(boolean)'::regprocedure});
$body =~ s/--[^\n]*//g;
$body =~ s/'[^']*'//g;
$body =~ s/:=|:://g;
$body =~ s/OPERATOR\(pg_catalog\.[^)\s]+\)(\s*-(?=\d))?/ /g;
$body =~ s/\b(pg_catalog|snowid_sql_private)\.\w+\(/ (/g;
is(join(' ', $body =~ /([-+*\/<>=~!@#%^&|`?]+|\b\w+\()/g), 'coalesce(',
	'F9: the body of snowid_sql_next() qualifies every operator and function');
($rc, $out, $err) = psql_as($app, 'DROP TABLE public.ran; '
	  . join('', map { "DROP FUNCTION public.planted_$_ CASCADE; " } 0 .. $#planted));
is($rc, 0, 'F9: the planted operators dropped') or diag($err);

# F2: a function of the installing role's, named like the extension's
$node->safe_psql('postgres', 'CREATE DATABASE pwndb OWNER app');
my $pwn = $node->connstr('pwndb') . ' user=app';
($rc, $out, $err) = psql_as($pwn, q{
	CREATE FUNCTION public.snowid_pwn() RETURNS text LANGUAGE sql SECURITY DEFINER
		AS 'SELECT current_user::text';
	CREATE EXTENSION snowid_sql;
	SELECT snowid_pwn()});
is($out, 'app', 'F2: CREATE EXTENSION leaves the installing role\'s own functions its own')
  or diag($err);
# 1.2 moved its functions to snowid_sql_private by name, and refused an
# overload made before of such a name (42723); 1.3 makes them there: the
# overload stays the role's, and no body calls it
($rc, $out, $err) = psql_as($pwn, q{
	DROP EXTENSION snowid_sql;
	CREATE FUNCTION public.snowid_sql_move(low bigint, n integer, high bigint, wait boolean)
		RETURNS void LANGUAGE sql AS '';
	CREATE EXTENSION snowid_sql;
	SELECT proowner::regrole FROM pg_proc WHERE oid = 'public.snowid_sql_move(bigint,integer,bigint,boolean)'::regprocedure});
is($out, 'app', 'and an overload made before of a name its bodies call stays the role\'s') or diag($err);
is( $node->safe_psql(
		'pwndb', q{
	SELECT count(*) FROM pg_depend
	WHERE refobjid = 'public.snowid_sql_move(bigint,integer,bigint,boolean)'::regprocedure}),
	'0', 'which no function of the extension depends on');

# F3: an install of 1.1 as such a role made it (every object its own),
# with a trigger and a function of its own added
$node->safe_psql('postgres', 'CREATE DATABASE olddb OWNER app');
my $old = $node->connstr('olddb') . ' user=app';
($rc, $out, $err) = psql_as($old,
	q{CREATE EXTENSION snowid_sql VERSION '1.1'; UPDATE snowid_config SET worker_id = 3});
is($rc, 0, 'an install of 1.1') or diag($err);
($rc, $out, $err) = psql_as($old, q{
	CREATE FUNCTION app_trg() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF current_user <> 'app' THEN EXECUTE 'ALTER ROLE app SUPERUSER'; END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER zz BEFORE UPDATE ON snowid_holder FOR EACH ROW EXECUTE FUNCTION app_trg();
	CREATE OR REPLACE FUNCTION snowid_sql_unix_ms(ts timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
	BEGIN
		IF current_user <> 'app' THEN EXECUTE 'ALTER ROLE app SUPERUSER'; END IF;
		RETURN floor(extract(epoch FROM ts) * 1000)::bigint;
	END $$;
	ALTER EXTENSION snowid_sql UPDATE});
like(
	$err,
	qr/55000: snowid_sql cannot be updated to 1.2 where a role that is no superuser owns it\nDETAIL:  public.snowid_config belongs to app/,
	'F3: the update of an install the owner owns refuses');
like($err, qr/HINT:  Note its configuration, drop the extension and create it again/,
	'and says what to do');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}),
	'f', 'having run none of the owner\'s code');
($rc, $out, $err) = psql_as($old, q{
	DROP EXTENSION snowid_sql CASCADE;
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 3;
	SELECT snowid_sql_version(), count(snowid_next()) FROM generate_series(1, 10)});
is($out, "$version|10", "dropped and created again, it is $version") or diag($err);

# F4 and F7 were the claim's (the first call claimed only as a role whose
# privileges the owner has; no role with no grants took the claim's
# lock): 1.3 claims nothing.  The error of a copy whose row names no
# worker id names none (and no double space)
($rc, $out, $err) = psql_as($node->connstr('appdb'),
	'SELECT snowid_sql_private.snowid_sql_elsewhere(NULL)');
like($err, qr/DETAIL:  The worker id of snowid_config was set on another server/,
	'the error of a copy without a worker id names none (and no double space)');

# F6: at debug5, xact.c says when a subtransaction ends; a writer's ends
# while it holds the lock, and a client that stops reading would hold it
($rc, $out, $err) = psql_as($app, q{
	SELECT pg_sleep(0.01);
	SET client_min_messages = debug5;
	SELECT snowid_next() > 0});
is($out, "\nt", 'a writer\'s call at debug5') or diag($err);
unlike($err, qr/SubTransaction/,
	'F6: sends no message while it holds the lock of the generator');

# ---------------------------------------------------------------------------
# The locks: none that a role with no grants can hold
# ---------------------------------------------------------------------------

my $hostile = $node->background_psql('appdb', extra_params => [ '-U', 'stranger' ]);
$hostile->query_safe(q{
	SELECT pg_advisory_lock_shared(1936617335, 5460300);
	SELECT pg_advisory_lock_shared(1936617335, 5460301);
	SELECT pg_advisory_lock(1936617335, 5460300 + 2);
});
($rc, $out, $err) = psql_as($clerk, q{
	SET statement_timeout = '60s';
	SELECT count(DISTINCT id) FROM (
		SELECT snowid_next() AS id, pg_sleep(0.002) FROM generate_series(1, 300)) x});
is($out, '300',
	'a role with no grants holding snowid\'s advisory keys stops no call (each of its own millisecond)')
  or diag($err);
$hostile->quit;
($rc, $out, $err) = psql_as($stranger,
	q{BEGIN; SELECT name FROM snowid_sql_private.snowid_locks FOR UPDATE});
like($err, qr/42501: permission denied for table snowid_locks/,
	'and it cannot lock the rows of snowid_locks');

# A writer lets its lock go before it returns: in a transaction that took
# ids (the first of each millisecond a writer), another session takes the
# lock at once.
my $open = $node->background_psql('appdb');
$open->query_safe(q{
	BEGIN;
	SELECT count(snowid_next()) FROM generate_series(1, 3000);
});
is( $node->safe_psql(
		'appdb', q{
	SET lock_timeout = '1s';
	SELECT count(*) FROM (SELECT name FROM snowid_sql_private.snowid_locks FOR UPDATE) l}),
	'1', 'a transaction that took ids holds no lock of snowid_locks');
$open->query_safe('COMMIT');
$open->quit;

# ---------------------------------------------------------------------------
# The plain script: its owner may alter the sequences; the generator stops
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE plaindb OWNER app');
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain.sql") == 0
  or die 'could not make the plain script';
my $plain = $node->connstr('plaindb') . ' user=app';
my $plain_clerk = $node->connstr('plaindb') . ' user=clerk';
IPC::Run::run([ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $plain, '-f', "$dir/plain.sql" ],
	'>', \$out, '2>', \$err)
  or die "the plain script failed: $err";
($rc, $out, $err) = psql_as($plain, q{
	UPDATE snowid_config SET worker_id = 6;
	GRANT USAGE ON SCHEMA public TO clerk;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowid_next(), n int);
	INSERT INTO t (n) SELECT g FROM generate_series(1, 1000) g;
	SELECT count(*) FROM t});
is($out, '1000', 'the plain script issues ids') or diag($err);
($rc, $out, $err) = psql_as($plain_clerk, q{
	SELECT pg_sleep(0.01);
	SET client_min_messages = debug5;
	SELECT snowid_next() > 0});
unlike($err, qr/SubTransaction/,
	'F6: a writer of the plain script sends no message while it holds the lock');
$node->safe_psql('plaindb', q{
	SET session_replication_role = replica;
	DELETE FROM snowid_sql_private.snowid_locks});
is($node->safe_psql('plaindb', 'SELECT count(*) FROM snowid_sql_private.snowid_locks'),
	'1', 'F8: nor does a replica\'s apply change its locks');

for my $seq ('snowid_generation', 'snowid_position')
{
	# (the clock past every position taken first: setting the worker id
	# raised the generator past the clock plus max_drift_ms, and a call
	# whose position lies up to near_ms ahead of the clock ends on the
	# common path, which compares snowid_position's file alone; the next
	# writer finds an altered snowid_generation.  On a loaded machine the
	# 100 calls below fell in those milliseconds, on 15 and 19)
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	until ((psql_as($plain, 'SELECT high_water_time < clock_timestamp() FROM snowid_status()'))[1] eq 't')
	{
		die 'the clock did not pass the generator' if time() > $deadline;
		select(undef, undef, undef, 0.05);
	}
	($rc, $out, $err) = psql_as($plain, "ALTER SEQUENCE snowid_sql_private.$seq CACHE 3");
	is($rc, 0, "the owner of a plain script may put a cache on $seq");
	($rc, $out, $err) = psql_as($plain_clerk, q{
		SELECT count(snowid_next()) FROM generate_series(1, 100)});
	like($err, qr/55000: snowid has no worker id on this server/,
		"then the generator stops ($seq)");
	($rc, $out, $err) = psql_as($plain, 'UPDATE snowid_config SET worker_id = 6');
	like(
		$err,
		qr/55000: the sequences or tables of the snowid generator were altered\nDETAIL:  The sequence $seq has INCREMENT 1, CACHE 3 and NO CYCLE/,
		"and the worker id is not set again over the cache ($seq)");
	($rc, $out, $err) = psql_as($plain,
		"ALTER SEQUENCE snowid_sql_private.$seq CACHE 1; UPDATE snowid_config SET worker_id = 6; SELECT count(snowid_next()) FROM generate_series(1, 10)");
	is($out, '10', "with the sequence as it was, the worker id is set again ($seq)")
	  or diag($err);
}

# D: the owner of a plain script may make the generator's sequences (or
# its tables) UNLOGGED, which a crash empties: the generator would start
# again below the ids it issued.  The worker id is not set over one, and
# across a real crash (kill -9) the generator stays stopped and repeats
# nothing.
$node->safe_psql('plaindb', 'CREATE TABLE public.d_ids (id bigint); GRANT ALL ON public.d_ids TO app');
my $d_take = 'INSERT INTO public.d_ids SELECT snowid_next() FROM generate_series(1, 2000)';
for my $rel ('SEQUENCE snowid_position', 'SEQUENCE snowid_generation', 'TABLE snowid_config')
{
	my ($kind, $name) = split / /, $rel;
	($rc, $out, $err) = psql_as($plain, $d_take);
	is($rc, 0, "D: the generator issues before $name is made UNLOGGED") or diag($err);
	($rc, $out, $err) = psql_as($plain, "ALTER $kind snowid_sql_private.$name SET UNLOGGED");
	is($rc, 0, "D: the owner of a plain script may make $name UNLOGGED") or diag($err);
	($rc, $out, $err) = psql_as($plain, 'UPDATE snowid_config SET worker_id = 6');
	like(
		$err,
		qr/55000: the sequences or tables of the snowid generator were altered\nDETAIL:  The \L$kind\E $name is UNLOGGED/,
		"D: and the worker id is not set again over the UNLOGGED $name");
	if ($kind eq 'SEQUENCE')
	{
		psql_as($plain, $d_take);
		SnowidTest::crash_server($node);
		$node->start;
		psql_as($plain, $d_take);
		is( $node->safe_psql('plaindb',
				'SELECT count(*) - count(DISTINCT id) FROM public.d_ids'),
			'0', "D: after a crash with $name UNLOGGED, no id repeats");
	}
	($rc, $out, $err) = psql_as($plain,
		"ALTER $kind snowid_sql_private.$name SET LOGGED; UPDATE snowid_config SET worker_id = 6");
	is($rc, 0, "D: with $name logged again, the worker id is set again") or diag($err);
}
$node->safe_psql('plaindb', 'DROP TABLE public.d_ids');

# ---------------------------------------------------------------------------
# A dump of a plain-script install, restored
# ---------------------------------------------------------------------------

my $dump = "$dir/plaindb.dump";
SnowidSqlEdition::dump_restore($node, 'plaindb', 'plaincopy', $dump,
	'a database of a plain-script install', 'app');
my $copy = $node->connstr('plaincopy') . ' user=app';
($rc, $out, $err) = psql_as($copy, 'INSERT INTO t (n) VALUES (0)');
like($err, qr/55000: snowid has no worker id on this server/,
	'the restored copy issues no id under its source\'s worker id');
like($err, qr/The worker id 6 of snowid_config was set on another server/,
	'and says why');
($rc, $out, $err) = psql_as($copy, q{
	SELECT count(snowid_next()) FROM generate_series(1, 5000)});
like($err, qr/55000: snowid has no worker id on this server/,
	'nor in the calls that follow');
($rc, $out, $err) = psql_as($copy, q{
	UPDATE snowid_config SET worker_id = 7;
	INSERT INTO t (n) SELECT g FROM generate_series(1, 100) g;
	SELECT count(*), count(DISTINCT id) FROM t});
is($out, '1100|1100', 'given a worker id of its own, the copy issues ids') or diag($err);
is( $node->safe_psql('plaincopy',
		'SELECT count(*) FROM t WHERE (id >> 12) & 31 = 6'),
	'1000', 'none of them under its source\'s worker id');

# ---------------------------------------------------------------------------
# A logical subscriber
# ---------------------------------------------------------------------------

my $sub = PostgreSQL::Test::Cluster->new('sql_subscriber');
$sub->init;
$sub->start;
$sub->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE appdb OWNER app;
});
$sub->safe_psql('appdb', 'CREATE EXTENSION snowid_sql');
$node->safe_psql('appdb', 'CREATE PUBLICATION everything FOR ALL TABLES');
my $pubconn = $node->connstr . ' dbname=appdb';
$sub->safe_psql('appdb',
	"CREATE SUBSCRIPTION everything CONNECTION '$pubconn' PUBLICATION everything");
$sub->wait_for_subscription_sync($node, 'everything', 'appdb');
is($sub->safe_psql('appdb', q{
	SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')}),
	'0', 'F8: the initial copy of the extension\'s tables ends (the subscriber\'s rows kept)');
$node->safe_psql('appdb',
	'UPDATE snowid_config SET max_drift_ms = 5000, datacenter_id = 3');
$node->wait_for_catchup('everything');
is( $sub->safe_psql('appdb',
		'SELECT worker_id IS NULL, max_drift_ms, datacenter_id FROM snowid_config'),
	't|1000|0',
	'an UPDATE of snowid_config on the publisher changes nothing on the subscriber');
($rc, $out, $err) = $sub->psql('appdb', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: snowid has no worker id/,
	'whose first call says it has no worker id');
$sub->safe_psql('appdb', 'UPDATE snowid_config SET worker_id = 9');
$node->safe_psql('appdb', 'UPDATE snowid_config SET worker_id = 5');
$node->wait_for_catchup('everything');
is( $sub->safe_psql('appdb',
		'SELECT worker_id FROM snowid_decode(snowid_next())'),
	'9', 'a worker id set on the publisher does not replace the subscriber\'s');
is($sub->safe_psql('appdb', q{SELECT string_agg(name, ',' ORDER BY name) FROM snowid_sql_private.snowid_locks}),
	'generator', 'F8: nor are its locks taken');

# Passes if database $db of $node, its worker id set again to $worker,
# issues 1,000 distinct ids with it, its generation under its own mark
# (not the mark $token of another server, if given): two tests, $what
# beginning their names
sub issues_under_own_mark
{
	my ($node, $db, $worker, $what, $token) = @_;
	my $not_token = defined $token
	  ? "AND (snowid_sql_private.snowid_sql_fixed()).token <> $token" : '';

	is( $node->safe_psql(
			$db, q{
		SELECT count(*), count(DISTINCT id), min(w), max(w)
		FROM (SELECT id, (snowid_decode(id)).worker_id AS w
			  FROM (SELECT snowid_next() AS id FROM generate_series(1, 1000)) s) t}),
		"1000|1000|$worker|$worker", "${what}the worker id set again, it issues ids with it");
	is( $node->safe_psql(
			$db, qq{
		SELECT pg_sequence_last_value('snowid_sql_private.snowid_generation') >> 40
			= (snowid_sql_private.snowid_sql_fixed()).token $not_token}),
		't', "${what}under its own mark");
	return;
}

# F5: from 19 on, a publication carries sequences, and a subscription sets
# them to the publisher's values in place: the subscriber's generator
# stops, repeating none of its ids, and none of the publisher's
if ($node->pg_version->major >= 19)
{
	$node->safe_psql('appdb', q{
		CREATE PUBLICATION seqs FOR ALL SEQUENCES;
		SELECT count(snowid_next()) FROM generate_series(1, 1000)});
	my $token = $node->safe_psql('appdb',
		'SELECT (snowid_sql_private.snowid_sql_fixed()).token');
	$sub->safe_psql('appdb', 'SELECT count(snowid_next()) FROM generate_series(1, 1000)');
	$sub->safe_psql('appdb', "CREATE SUBSCRIPTION seqs CONNECTION '$pubconn' PUBLICATION seqs");
	$sub->poll_query_until('appdb', qq{
		SELECT pg_sequence_last_value('snowid_sql_private.snowid_generation') >> 40 = $token})
	  or die 'the subscriber did not take the publisher\'s sequences';
	($rc, $out, $err) = psql_as($sub->connstr('appdb'), 'SELECT snowid_next()');
	like($err,
		qr/55000: a subscription synchronises the sequences of the snowid generator\nDETAIL:  pg_subscription_rel lists the sequence snowid_/,
		'F5: with the publisher\'s sequences, the subscriber issues no id');
	$sub->safe_psql('appdb', 'ALTER SUBSCRIPTION seqs REFRESH SEQUENCES');
	($rc, $out, $err) = psql_as($sub->connstr('appdb'),
		'SELECT count(snowid_next()) FROM generate_series(1, 1000)');
	like($err, qr/55000: a subscription synchronises the sequences/,
		'nor after REFRESH SEQUENCES');
	$sub->safe_psql('appdb', 'DROP SUBSCRIPTION seqs');
	# finding B: the subscription gone, the sequences keep the publisher's
	# values (its position may lie below ids the subscriber issued): the
	# worker id set before does not hold, until set again
	($rc, $out, $err) = psql_as($sub->connstr('appdb'),
		'SELECT count(snowid_next()) FROM generate_series(1, 1000)');
	like($err,
		qr/55000: the sequences of the snowid generator hold another server's values\nDETAIL:  snowid_generation carries another server's mark.*\nHINT:  As the role that installed snowid_sql \(the owner of the extension, or the one that ran its plain script\): UPDATE snowid_config SET worker_id = N/s,
		'B: after the subscription, the subscriber issues no id with the publisher\'s sequences');
	# (another change than the worker id: max_wait_ms, since the position
	# synchronised, the publisher's, may lie up to its max_drift_ms (5000)
	# ahead once its change of datacenter id raised it, and max_drift_ms is
	# not lowered below that)
	$sub->safe_psql('appdb', 'UPDATE snowid_config SET max_wait_ms = max_wait_ms + 1');
	($rc, $out, $err) = psql_as($sub->connstr('appdb'), 'SELECT snowid_next()');
	like($err, qr/55000: the sequences of the snowid generator hold another server's values/,
		'nor after another change of its configuration');
	# (with the publisher's max_drift_ms, 5000, as far as the position it
	# synchronised may lie ahead)
	$sub->safe_psql('appdb', 'UPDATE snowid_config SET worker_id = 10, max_drift_ms = 5000');
	issues_under_own_mark($sub, 'appdb', 10, '', $token);
}
$sub->safe_psql('appdb', 'DROP SUBSCRIPTION everything');
$sub->stop;

# Finding B on every version: the generation set to another server's
# values (as a synchronisation sets them, here by setval() as the
# superuser): the worker id set before does not hold, in the common path
# and in a writer that waits, until it is set again
$node->safe_psql('postgres', 'CREATE DATABASE gencopy');
$node->safe_psql('gencopy', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 3});
is($node->safe_psql('gencopy', 'SELECT (snowid_decode(snowid_next())).worker_id'),
	'3', 'B: a worker id set issues ids');
$node->safe_psql('gencopy', q{
	SELECT setval('snowid_sql_private.snowid_generation',
		((((snowid_sql_private.snowid_sql_fixed()).token % 4194304) + 1) << 40) + 10)});
($rc, $out, $err) = $node->psql('gencopy', 'SELECT count(snowid_next()) FROM generate_series(1, 100)');
like($err, qr/ERROR:  the sequences of the snowid generator hold another server's values/,
	'B: with another server\'s generation, no call issues');
($rc, $out, $err) = $node->psql('gencopy', 'SELECT count(*) FROM snowid_next_batch(5)');
like($err, qr/ERROR:  the sequences of the snowid generator hold another server's values/,
	'B: nor a writer that waits (several ids)');
$node->safe_psql('gencopy', 'UPDATE snowid_config SET worker_id = 4');
issues_under_own_mark($node, 'gencopy', 4, 'B: ');

# ---------------------------------------------------------------------------
# Public ids under a Turkish collation
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', q{
	CREATE DATABASE trdb OWNER app TEMPLATE template0 ENCODING 'UTF8'
		LOCALE_PROVIDER icu ICU_LOCALE 'tr-TR' LOCALE 'C.UTF-8'});
is($node->safe_psql('trdb', q{SELECT upper('i') = 'I'}),
	'f', 'in a Turkish collation upper(\'i\') is no ASCII I');
my $tr = $node->connstr('trdb') . ' user=app';
($rc, $out, $err) = psql_as($tr, q{
	CREATE EXTENSION snowid_sql;
	INSERT INTO snowid_public_keys VALUES ('k1', '\x000102030405060708090a0b0c0d0e0f', 1);
	SELECT key_id FROM snowid_public_keys});
is($out, 'K1', 'a key id is folded to ASCII capitals') or diag($err);
my @pairs = split /\n/, $node->safe_psql('trdb', q{
	SELECT g::bigint * 7919 * 1000003, snowid_public(g::bigint * 7919 * 1000003)
	FROM generate_series(1, 200) g});
my ($read, $tried) = (0, 0);
for my $pair (@pairs)
{
	my ($id, $public) = split /\|/, $pair;
	next unless $public =~ /-.*1/;
	(my $typed = lc $public) =~ s/(?<=-)(.*)/ $1 =~ tr{1}{i}r /e;
	$tried++;
	$read++
	  if $node->safe_psql('trdb', "SELECT snowid_from_public('$typed') = $id") eq 't'
	  && $node->safe_psql('trdb', "SELECT snowid_public_is_valid('$typed')") eq 't';
}
cmp_ok($tried, '>=', 20, "$tried public ids typed in lower case, with i for 1");
is($read, $tried, 'each reads as its id, as the C edition reads it');

$node->stop;
done_testing();
