# The SQL edition installed through pg_tle, as on Amazon RDS and Aurora or
# Supabase (doc/managed.md): in a server with pg_tle and no snowid library,
# a member of pgtle_admin runs the script that make sql-edition makes
# (snowid_sql-pg_tle.sql), and a database owner who is no superuser
# creates the extension from it, configures it and takes ids.  The update
# from 1.0: the script of the newest version run where that of 1.0 was
# (it registers the update path), ALTER EXTENSION ... UPDATE, the
# configuration, keys and generator kept, and the objects of a fresh
# install of the newest version.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
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
	'none: test/tools/pgbuild --pg_tle builds it from test/sources.txt');

my ($version) = slurp_file("$src/snowid_sql.control") =~ /^default_version = '(.*)'$/m;
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
like($err, qr/42501: permission denied for table snowid_public_keys/,
	'but another role reads no key');

# A fresh install of the newest version, to compare
($rc, $out, $err) = psql_as('freshdb', 'tle_admin', '-f', "$dir/pg_tle-$version.sql");
is($rc, 0, "the script of $version registers it where none was") or diag($err);
($rc, $out, $err) = psql_as('freshdb', 'app', '-c', "CREATE EXTENSION $name");
is($rc, 0, "the owner creates $version from pg_tle") or diag($err);
is(SnowidSqlEdition::objects($node, 'appdb'),
	SnowidSqlEdition::objects($node, 'freshdb'),
	"the objects, owners and privileges of the updated installation are those of a fresh $version");

$node->stop;
done_testing();
