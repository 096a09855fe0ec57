# The SQL edition installed through pg_tle, as on Amazon RDS and Aurora or
# Supabase (doc/managed.md): in a server with pg_tle and no snowid library,
# a member of pgtle_admin runs the script that make sql-edition makes
# (snowid_sql-pg_tle.sql), and a database owner who is no superuser
# creates the extension from it, configures it and takes ids.  The update
# from 1.0: the script of the newest version run where that of 1.0 was
# (it registers the update path), ALTER EXTENSION ... UPDATE, the
# configuration, keys and generator kept, and the objects of a fresh
# install of the newest version.  Then issue 56's findings where they
# apply to pg_tle, whose owner owns every object: ownership, a message of
# its own in every transaction that takes ids (also one that had an xid),
# no change as a replica, no lock a stranger can take, a cache on the
# generator's sequence stopping it, public ids under a Turkish collation,
# and a dump restored elsewhere issuing nothing under its source's worker
# id.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('pg_tle'));

# pg_tle comes from test/tools/pgbuild --pg_tle (and, for Debian's
# PostgreSQL, from test/lib.sh as root), which records where it does not
# compile: the test then skips naming why
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
if (!-e "$libdir/pg_tle.so" && -f "$sharedir/.snowid-pg_tle")
{
	my ($why) = (PostgreSQL::Test::Utils::slurp_file("$sharedir/.snowid-pg_tle")
		  =~ /\n(.*)/);
	plan(skip_all => 'pg_tle 1.5.2 does not build against this PostgreSQL: '
		  . ($why // 'see test/tools/pgbuild'));
}
SnowidTest::need_file("$libdir/pg_tle.so",
	'none: test/tools/pgbuild --pg_tle builds it from test/sources.txt');

my $version = SnowidSqlEdition::version();
# The server under test has snowid_sql's files (make install put them
# there), which pg_tle refuses to shadow: the same script is registered
# under another name.  The script of 1.0 alone, as a host ran it before a
# later version came, and the newest.
my $name = 'snowid_sql_tle';
for my $v ('1.0', $version)
{
	system("$src/test/tools/sql-edition pg_tle $src $v $name > $dir/pg_tle-$v.sql")
	  == 0
	  or die "could not make the pg_tle script of $v";
}

my $node = PostgreSQL::Test::Cluster->new('pg_tle');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_tle'\n");
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION pg_tle;
	CREATE ROLE tle_admin LOGIN;
	GRANT pgtle_admin TO tle_admin;
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	CREATE DATABASE appdb OWNER app;
	CREATE DATABASE freshdb OWNER app;
});
$node->safe_psql($_, 'CREATE EXTENSION pg_tle') for ('appdb', 'freshdb');

# psql as a role: (exit code, stdout, stderr)
sub psql_as
{
	my ($db, $user, @args) = @_;
	my ($out, $err) = ('', '');
	my $rc = IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v',
			'VERBOSITY=verbose', '-d', $node->connstr($db) . " user=$user",
			@args
		],
		'<', \undef, '>', \$out, '2>', \$err) ? 0 : $? >> 8;
	chomp $out;
	return ($rc, $out, $err);
}

my ($rc, $out, $err) = psql_as('appdb', 'tle_admin', '-f', "$dir/pg_tle-1.0.sql");
is($rc, 0, 'a member of pgtle_admin registers snowid_sql 1.0 with pg_tle')
  or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c', "CREATE EXTENSION $name");
is($rc, 0, 'a database owner who is no superuser creates it from pg_tle')
  or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c',
	q{UPDATE snowid_config SET worker_id = 12;
	  INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)});
is($rc, 0, 'the owner configures it') or diag($err);

my %seen;
my $dups = 0;
# n ids taken by another role: the lowest and the highest, after checking
# that they are new and of worker id 12
sub take_ids
{
	my ($n) = @_;
	my ($rc, $out, $err) = psql_as('appdb', 'clerk', '-c',
		"SELECT snowid_next() FROM generate_series(1, $n)");
	my @ids = sort { $a <=> $b } split /\n/, $out;
	diag($err) if $rc;
	$dups += grep { $seen{$_}++ } @ids;
	return @ids[ 0, -1 ];
}
my (undef, $last) = take_ids(1000);
($rc, $out, $err) = psql_as(
	'appdb', 'clerk', '-c', q{
	SELECT bool_and((snowid_decode(id)).worker_id = 12)
	FROM (SELECT snowid_next() AS id FROM generate_series(1, 100)) x});
is($out, 't', 'another role takes ids of the configured worker id') or diag($err);
(undef, $last) = take_ids(100);

# The newest script over the older one, then the update
($rc, $out, $err) = psql_as('appdb', 'tle_admin', '-f', "$dir/pg_tle-$version.sql");
is($rc, 0, "the script of $version runs where that of 1.0 ran (it registers the update path)")
  or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c',
	"ALTER EXTENSION $name UPDATE TO '$version'");
is($rc, 0, "the owner updates it to $version") or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c', "\\dx $name");
like($out, qr/^\Q$name\E\|\Q$version\E\|/, "\\dx shows $version")
  or diag($err);
my ($first) = take_ids(1000);
ok($first > $last, 'every id after the update lies above every id before');
is($dups, 0, 'no id twice');
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c',
	'SELECT worker_id, coordinator_reassertions FROM snowid_status()');
is($out, '12|0',
	"the configuration is kept, and snowid_status() has the columns of $version")
  or diag($err);
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c', 'SELECT snowid_public(0)');
is($out, 'K1-5Q6Z9T1XF7HTM3', 'the key is kept: public ids by the specification')
  or diag($err);
($rc, $out, $err) =
  psql_as('appdb', 'clerk', '-c', 'SELECT key FROM snowid_public_keys');
like($err, qr/42501: permission denied for (table|view) snowid_public_keys/,
	'but another role reads no key');

# A fresh install of the newest version, to compare
($rc, $out, $err) = psql_as('freshdb', 'tle_admin', '-f', "$dir/pg_tle-$version.sql");
is($rc, 0, "the script of $version registers it where none was") or diag($err);
($rc, $out, $err) = psql_as('freshdb', 'app', '-c', "CREATE EXTENSION $name");
is($rc, 0, "the owner creates $version from pg_tle") or diag($err);
is(SnowidSqlEdition::objects($node, 'appdb'),
	SnowidSqlEdition::objects($node, 'freshdb'),
	"the objects, owners and privileges of the updated installation are those of a fresh $version");

# ---------------------------------------------------------------------------
# Issue 56's findings through pg_tle, where the owner owns every object
# ---------------------------------------------------------------------------

# Ownership: pg_tle runs the script as the role that creates the
# extension, which owns every object of it (doc/managed.md says so, and
# what follows from it)
is( $node->safe_psql(
		'appdb', qq{
	SELECT string_agg(DISTINCT o::regrole::text, ', ') FROM (
		SELECT p.proowner AS o FROM pg_proc p JOIN pg_depend d
			ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = '$name'
		UNION ALL
		SELECT c.relowner FROM pg_class c JOIN pg_depend d
			ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = '$name') x}),
	'app', 'through pg_tle, the role that created the extension owns every object of it');

# Durability: every transaction that takes ids writes WAL of its own once
# (a transactional logical message), also one that had an xid before,
# so that its commit flushes and waits for a synchronous standby; as the
# owner's function, with the owner's rights
$node->safe_psql('appdb',
	q{SELECT pg_create_logical_replication_slot('snowid_wal', 'test_decoding')});
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c', 'SELECT snowid_next()');
is($rc, 0, 'an autocommit call') or diag($err);
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c',
	'BEGIN; SELECT pg_current_xact_id(); SELECT snowid_next(); SELECT snowid_next(); COMMIT');
is($rc, 0, 'a transaction with an xid takes two ids') or diag($err);
is( $node->safe_psql(
		'appdb', q{
	SELECT count(*) FROM pg_logical_slot_get_changes('snowid_wal', NULL, NULL)
	WHERE data LIKE 'message: transactional: 1 prefix: snowid_sql,%'}),
	'2', 'each transaction wrote one message of its own');
$node->safe_psql('appdb', q{SELECT pg_drop_replication_slot('snowid_wal')});

# A replica's apply changes no row of snowid_config
$node->safe_psql('appdb', q{
	SET session_replication_role = replica;
	UPDATE snowid_config SET worker_id = 30, max_drift_ms = 5000});
is($node->safe_psql('appdb', 'SELECT worker_id, max_drift_ms FROM snowid_config'),
	'12|1000', 'a change as a replica (a subscriber\'s apply) changes nothing');
$node->safe_psql('appdb', q{
	SET session_replication_role = replica;
	DELETE FROM snowid_sql_private.snowid_locks});
is($node->safe_psql('appdb', 'SELECT name FROM snowid_sql_private.snowid_locks'),
	'generator', 'nor of snowid_locks (F8)');

# A writer sends no message to its client while it holds its lock, also
# at debug5 (F6)
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c',
	'SELECT pg_sleep(0.01); SET client_min_messages = debug5; SELECT snowid_next() > 0');
is($rc, 0, 'a writer\'s call at debug5') or diag($err);
unlike($err, qr/SubTransaction/, 'sends nothing while it holds the lock (F6)');

# The locks: none that a role with no grants can take
$node->safe_psql('postgres', 'CREATE ROLE stranger LOGIN');
($rc, $out, $err) = psql_as('appdb', 'stranger', '-c',
	'BEGIN; SELECT name FROM snowid_sql_private.snowid_locks FOR UPDATE');
like($err, qr/42501: permission denied for (table|view) snowid_locks/,
	'a role with no grants cannot lock the rows of snowid_locks');

# The sequences: their owner may alter them, which stops the generator
($rc, $out, $err) = psql_as('appdb', 'app', '-c', 'ALTER SEQUENCE snowid_sql_private.snowid_generation CACHE 3');
is($rc, 0, 'the owner may put a cache on snowid_generation') or diag($err);
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c',
	'SELECT count(snowid_next()) FROM generate_series(1, 100)');
like($err, qr/55000: snowid has no worker id on this server/,
	'then the generator stops');
($rc, $out, $err) = psql_as('appdb', 'app', '-c', 'UPDATE snowid_config SET worker_id = 12');
like($err, qr/55000: the sequences or tables of the snowid generator were altered/,
	'and the worker id is not set again over the cache');
($rc, $out, $err) = psql_as('appdb', 'app', '-c',
	'ALTER SEQUENCE snowid_sql_private.snowid_generation CACHE 1; UPDATE snowid_config SET worker_id = 12');
is($rc, 0, 'with the sequence as it was, the worker id is set again') or diag($err);
(undef, $last) = take_ids(100);
is($dups, 0, 'ids go on, none twice');

# Public ids read under a Turkish collation (the argument's: ICU tr-TR),
# as the C edition reads them: lower-case, with i for 1
my ($read, $tried) = split /\|/, $node->safe_psql(
	'appdb', q{
	SELECT count(*) FILTER (WHERE snowid_from_public(typed COLLATE "tr-TR-x-icu") = id), count(*)
	FROM (SELECT id, split_part(lower(p), '-', 1) || '-'
					 || translate(split_part(lower(p), '-', 2), '1', 'i') AS typed
		  FROM (SELECT g::bigint * 7919 * 1000003 AS id, snowid_public(g::bigint * 7919 * 1000003) AS p
				FROM generate_series(1, 200) g) x
		  WHERE split_part(p, '-', 2) LIKE '%1%') y});
cmp_ok($tried, '>=', 20, "$tried public ids typed in lower case, with i for 1");
is($read, $tried, 'each reads as its id under a Turkish collation');

# A dump restored into another database of a server with pg_tle and the
# extension registered: the restore of the row of snowid_config takes the
# source's configuration but not its worker id, and the first call says
# so.  The dump holds pg_tle's registration too, which is there already:
# pg_restore reports those objects as errors and goes on.
($rc, $out, $err) = psql_as('appdb', 'app', '-c', 'UPDATE snowid_config SET max_drift_ms = 1500');
is($rc, 0, 'the owner changes the configuration before the dump') or diag($err);
my $dump = "$dir/appdb.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('appdb') ],
	'pg_dump dumps the database of a pg_tle install');
$node->safe_psql('postgres', 'CREATE DATABASE copydb OWNER app');
$node->safe_psql('copydb', 'CREATE EXTENSION pg_tle');
($rc, $out, $err) = psql_as('copydb', 'tle_admin', '-f', "$dir/pg_tle-$version.sql");
is($rc, 0, 'a member of pgtle_admin registers snowid_sql where it is restored') or diag($err);
my ($restored, $restore_err) = ('', '');
IPC::Run::run([ 'pg_restore', '-d', $node->connstr('copydb'), $dump ],
	'>', \$restored, '2>', \$restore_err);
($rc, $out, $err) = psql_as('copydb', 'app', '-c',
	'SELECT worker_id IS NULL, max_drift_ms FROM snowid_config');
is($out, 't|1500', 'the restore takes the source\'s configuration but not its worker id')
  or diag("$err\n$restore_err");
($rc, $out, $err) = psql_as('copydb', 'clerk', '-c', 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id on this server\n/,
	'the restored copy issues no id under its source\'s worker id, and says so');

# Operators and functions planted in public (finding A, as
# sql-edition/planted_operators.pl) by the owner: none runs while a member of
# pgtle_admin runs the registration script (it sets its search_path
# first: pg_tle's own functions otherwise ran a planted ~~(name, name)
# as that member), none runs as a superuser, and no function of the
# extension depends on one.  (pg_tle's CREATE EXTENSION, run as the owner,
# runs the owner's ~~(name, name) in a lookup of its own before the
# script: the owner's code as the owner.)
$node->safe_psql('postgres', 'CREATE DATABASE planteddb OWNER app');
$node->safe_psql('planteddb', 'CREATE EXTENSION pg_tle');
($rc, $out, $err) = psql_as('planteddb', 'app', '-c',
	SnowidSqlEdition::plant_sql($node->config_data('--sharedir')));
is($rc, 0, 'the owner plants operators and functions in public') or diag($err);
($rc, $out, $err) = psql_as('planteddb', 'tle_admin', '-f', "$dir/pg_tle-$version.sql");
is($rc, 0, 'a member of pgtle_admin registers snowid_sql among them') or diag($err);
is(SnowidSqlEdition::planted_runs($node, 'planteddb'), '0|0|f',
	'the registration ran no planted operator or function');
($rc, $out, $err) = psql_as('planteddb', 'app', '-c',
	"CREATE EXTENSION $name");
is($rc, 0, 'the owner creates it from pg_tle among them') or diag($err);
note('after create: ' . SnowidSqlEdition::planted_runs($node, 'planteddb')); note(join("\n", (sort { $a cmp $b } (split /\n/, $err))[0..20]));
($rc, $out, $err) = psql_as('planteddb', 'app', '-c', "UPDATE snowid_config SET worker_id = 3");
note('after update: ' . SnowidSqlEdition::planted_runs($node, 'planteddb'));
like(SnowidSqlEdition::planted_runs($node, 'planteddb'), qr/^\d+\|0\|f$/,
	'no planted operator or function ran as a superuser');
is(SnowidSqlEdition::bound_to_planted($node, 'planteddb'), '',
	'and no function of the extension depends on one');
$node->safe_psql('planteddb', 'SET search_path = "$user", public; '
	  . 'SELECT snowid_next(), snowid_decode(snowid_next()), snowid_serial(\'X\')');
like(SnowidSqlEdition::planted_runs($node, 'planteddb'), qr/^\d+\|0\|f$/,
	'a superuser\'s calls ran none as it');

$node->stop;
done_testing();
