# The SQL edition (doc/managed.md) read from outside (issue 56): what a
# database owner who is no superuser, a role with no grants, a publication
# and a dump could do to it before version 1.2.
#
# - ownership: installed by a database owner, the extension's objects are
#   the superuser's but for the claim's functions; the owner replaces no
#   function, alters no sequence and drops no trigger of it;
# - locks: a role with no grants holding snowid's former advisory keys
#   stops nothing, and cannot lock the rows of snowid_locks;
# - sequences: in a plain-script install, whose owner may ALTER SEQUENCE,
#   a cache on snowid_generation or snowid_position stops the generator
#   with a clear error, and the worker id is not set again until they are
#   back;
# - a dump of a plain-script install restored into another database issues
#   no id under its source's worker id, and says so;
# - a logical subscriber of a FOR ALL TABLES publication keeps its own
#   configuration: an UPDATE of snowid_config on the publisher changes
#   neither its worker id nor its layout;
# - public ids read in a database whose collation is Turkish (ICU tr-TR):
#   lower-case ones, with i for 1, as the C edition reads them.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sql_outside'));

sub psql_as { return SnowidSqlEdition::psql_as(@_); }

my $node = PostgreSQL::Test::Cluster->new('sql_outside');
$node->init(allows_streaming => 'logical');
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	CREATE ROLE stranger LOGIN;
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
	'app snowid_claim, app snowid_new_holder, app snowid_sql_claim_now, app snowid_sql_claim_once, app snowid_sql_connstr, app snowid_sql_holder_renew, bootstrap superuser',
	'every object is the bootstrap superuser\'s but the functions the claim runs as the owner');

($rc, $out, $err) = psql_as($app, q{
	CREATE OR REPLACE FUNCTION snowid_next() RETURNS bigint LANGUAGE sql
	AS 'SELECT 1::bigint'});
like($err, qr/42501: must be owner of function snowid_next/,
	'the owner cannot replace snowid_next()');
($rc, $out, $err) = psql_as($app, 'ALTER SEQUENCE snowid_generation CACHE 3');
like($err, qr/42501: must be owner of sequence snowid_generation/,
	'nor alter the generator\'s sequences');
($rc, $out, $err) = psql_as($app, 'DROP TRIGGER snowid_config_check ON snowid_config');
like($err, qr/42501: must be owner of (table|relation) snowid_config/,
	'nor drop the trigger that keeps the layout');
($rc, $out, $err) = psql_as($app,
	q{INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)});
is($rc, 0, 'the owner writes the keys of public ids') or diag($err);

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
	q{BEGIN; SELECT name FROM snowid_locks FOR UPDATE});
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
	SELECT count(*) FROM (SELECT name FROM snowid_locks FOR UPDATE) l}),
	'2', 'a transaction that took ids holds no lock of snowid_locks');
$open->query_safe('COMMIT');
$open->quit;

# ---------------------------------------------------------------------------
# The plain script: its owner may alter the sequences; the generator stops
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE plaindb OWNER app');
system("$src/test/tools/sql-edition plain $src 1.2 public > $dir/plain.sql") == 0
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

for my $seq ('snowid_generation', 'snowid_position')
{
	($rc, $out, $err) = psql_as($plain, "ALTER SEQUENCE $seq CACHE 3");
	is($rc, 0, "the owner of a plain script may put a cache on $seq");
	($rc, $out, $err) = psql_as($plain_clerk, q{
		SELECT count(snowid_next()) FROM generate_series(1, 100)});
	like($err, qr/55000: snowid has no worker id on this server/,
		"then the generator stops ($seq)");
	($rc, $out, $err) = psql_as($plain, 'UPDATE snowid_config SET worker_id = 6');
	like(
		$err,
		qr/55000: the sequences of the snowid generator were altered\nDETAIL:  The sequence $seq has INCREMENT 1, CACHE 3 and NO CYCLE/,
		"and the worker id is not set again over the cache ($seq)");
	($rc, $out, $err) = psql_as($plain,
		"ALTER SEQUENCE $seq CACHE 1; UPDATE snowid_config SET worker_id = 6; SELECT count(snowid_next()) FROM generate_series(1, 10)");
	is($out, '10', "with the sequence as it was, the worker id is set again ($seq)")
	  or diag($err);
}

# ---------------------------------------------------------------------------
# A dump of a plain-script install, restored
# ---------------------------------------------------------------------------

my $dump = "$dir/plaindb.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('plaindb') ],
	'pg_dump dumps a database of a plain-script install');
$node->safe_psql('postgres', 'CREATE DATABASE plaincopy OWNER app');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('plaincopy'), $dump ],
	'pg_restore restores it');
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
	"CREATE SUBSCRIPTION everything CONNECTION '$pubconn' PUBLICATION everything WITH (copy_data = false)"
);
$sub->wait_for_subscription_sync($node, 'everything', 'appdb');
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
$sub->safe_psql('appdb', 'DROP SUBSCRIPTION everything');
$sub->stop;

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
