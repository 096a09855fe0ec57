# The SQL edition installed through pg_tle, as on Amazon RDS and Aurora or
# Supabase (doc/managed.md): in a server with pg_tle and no snowid library,
# a member of pgtle_admin runs the script that make sql-edition makes
# (snowid_sql-pg_tle.sql), and a database owner who is no superuser
# creates the extension from it, configures it and takes ids; the update
# path of every version is registered and taken.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../..");
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
	'none: test/tools/pgbuild --pg_tle builds it from ../shared/pg_tle');

my $version = `sed -n "s/^default_version *= *'\\(.*\\)'/\\1/p" $src/snowid_sql.control`;
chomp $version;
# The server under test has snowid_sql's files (make install put them
# there), which pg_tle refuses to shadow: the same script is registered
# under another name.
my $name = 'snowid_sql_tle';
system("$src/test/tools/sql-edition pg_tle $src $version $name > $dir/pg_tle.sql")
  == 0
  or die 'could not make the pg_tle script';

my $node = PostgreSQL::Test::Cluster->new('pg_tle');
$node->init;
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
});
$node->safe_psql('appdb', 'CREATE EXTENSION pg_tle');

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

my ($rc, $out, $err) = psql_as('appdb', 'tle_admin', '-f', "$dir/pg_tle.sql");
is($rc, 0, 'a member of pgtle_admin registers snowid_sql with pg_tle')
  or diag($err);
($rc, $out, $err) =
  psql_as('appdb', 'app', '-c', "CREATE EXTENSION $name VERSION '1.0'");
is($rc, 0, 'a database owner who is no superuser creates it from pg_tle')
  or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c',
	"ALTER EXTENSION $name UPDATE; SELECT extversion FROM pg_extension WHERE extname = '$name'"
);
is($out, $version, "it is updated to $version") or diag($err);
($rc, $out, $err) = psql_as('appdb', 'app', '-c',
	q{UPDATE snowid_config SET worker_id = 12;
	  INSERT INTO snowid_public_keys VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1)});
is($rc, 0, 'the owner configures it') or diag($err);
($rc, $out, $err) = psql_as(
	'appdb', 'clerk', '-c', q{
	SELECT count(DISTINCT id) = 1000
		AND bool_and((snowid_decode(id)).worker_id = 12)
	FROM (SELECT snowid_next() AS id FROM generate_series(1, 1000)) x});
is($out, 't', 'another role takes ids') or diag($err);
($rc, $out, $err) = psql_as('appdb', 'clerk', '-c', 'SELECT snowid_public(0)');
is($out, 'K1-5Q6Z9T1XF7HTM3', 'and public ids by the specification')
  or diag($err);
($rc, $out, $err) =
  psql_as('appdb', 'clerk', '-c', 'SELECT key FROM snowid_public_keys');
like($err, qr/42501: permission denied for table snowid_public_keys/,
	'but reads no key');

$node->stop;
done_testing();
