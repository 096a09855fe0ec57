# Issue 56, item 2, for dumps of the versions before 1.2: a dump of
# snowid_sql 1.0 or 1.1 names no version, so its restore makes 1.2 (the
# default), then copies the rows of 1.0's tables (snowid_config,
# snowid_public_keys) and sets 1.0's snowid_position, which 1.2 keeps in
# snowid_sql_private behind views.  Before, each of them failed: the
# restored database had neither configuration nor keys, and nothing raised
# its generator when it was given a worker id (managed.md told to restore
# such a dump where the old version is installed).
#
# Through each way of installing whose dump names the extension (CREATE
# EXTENSION, pg_tle), from 1.0 and from 1.1, on servers of their own (each
# its own system identifier): the source (51/0/6/4, max_drift_ms 10000,
# worker id 5, a key of public ids), installed by the owner of the
# database, runs a batch ahead of its clock and is dumped by that owner
# (custom format); the dump is restored by the owner into a database of
# another server where CREATE EXTENSION makes 1.2, with pg_restore
# stopping at the first error.  The copy keeps the layout, the bounds and
# the key, has no worker id and says so at its first call (55000, naming
# the restore); the source goes on (ids after the dump are in no dump) and
# stops for good; the copy is given worker id 5 at once and takes 1,000
# ids: none may be one the source issued.  And from 1.1 through CREATE
# EXTENSION, the dump as a script restored with psql in one transaction,
# and its data alone (pg_dump --data-only) restored into a database that
# has 1.2 (and the source's table) already.
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
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('old_dump'));
my $version = SnowidSqlEdition::version();

# pg_tle where it is built (as restore_floor.pl)
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
my $tle_missing = SnowidSqlEdition::pg_tle_missing($libdir, $sharedir);

# pg_tle's scripts, under another name (the server has snowid_sql's files,
# which pg_tle does not shadow): of each version a source is made of, as
# its host ran it then (1.0 and the update paths up to it), and of the
# newest, which registers its own install script where none was
my $tle_name = 'snowid_sql_tle';
if (!defined $tle_missing)
{
	for my $v ('1.0', '1.1', $version)
	{
		system("$src/test/tools/sql-edition pg_tle $src $v $tle_name > $dir/pg_tle-$v.sql") == 0
		  or die "could not make the pg_tle script of $v";
	}
}

# A server with the roles app, which owns appdb as it makes it, and
# tle_admin, a member of pgtle_admin, with pg_tle preloaded where it is built
sub new_server { return SnowidSqlEdition::tle_server($_[0], $tle_missing); }

# A new database of app's on a server (pg_tle: the extension registered,
# by the script of version $v or else the newest, as its member of
# pgtle_admin does)
sub new_database
{
	my ($node, $db, $how, $v) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	return if $how ne 'pg_tle';
	$node->safe_psql($db, 'CREATE EXTENSION pg_tle');
	my ($rc, $out, $err) = SnowidSqlEdition::psql_as($node->connstr($db) . ' user=tle_admin',
		"\\i $dir/pg_tle-" . ($v // $version) . '.sql');
	die "could not register snowid_sql with pg_tle: $err" if $rc;
}

# psql as app on a database of a server: (exit code, stdout, stderr)
sub app
{
	my ($node, $db, $sql) = @_;
	return SnowidSqlEdition::psql_as($node->connstr($db) . ' user=app', $sql);
}

# What a restored database must keep of its source: the layout, the
# bounds, the claim's switch and the keys of public ids (their ids, ranks
# and a digest of each)
my $kept_sql = q{
	SELECT datacenter_id, datacenter_bits, worker_bits, sequence_bits, max_drift_ms, max_wait_ms,
		   claim_worker_id, (SELECT string_agg(key_id || ':' || rank || ':' || md5(key), ',' ORDER BY rank)
							 FROM snowid_public_keys)
	FROM snowid_config};

my $restored = new_server('old_dump_restored');
my $n = 0;

# A source of version $from installed $how, configured, ahead of its clock;
# returns (server, the ids it issued before the dump's end)
sub new_source
{
	my ($from, $how) = @_;
	my $source = new_server('old_dump_source_' . ++$n);
	new_database($source, 'appdb', $how, $from);
	my ($rc, $out, $err) = app($source, 'appdb',
		'CREATE EXTENSION ' . ($how eq 'pg_tle' ? $tle_name : 'snowid_sql') . " VERSION '$from'");
	die "could not create $from: $err" if $rc;
	($rc, $out, $err) = app($source, 'appdb', q{
		UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4,
			max_drift_ms = 10000, max_wait_ms = 3000, worker_id = 5;
		INSERT INTO snowid_public_keys (key_id, key, rank)
		VALUES ('K1', '\x000102030405060708090a0b0c0d0e0f', 1);
		CREATE TABLE ids (id bigint);
		INSERT INTO ids SELECT snowid_next_batch(40000);
		SELECT snowid_sql_version(), count(*), snowid_time(max(id)) > clock_timestamp() FROM ids});
	is($out, "$from|40000|t", "$how $from: the source issues ids ahead of its clock") or diag($err);
	return $source;
}

# The source goes on, then stops for good; its ids copied to the restored
# database $db, which is given worker id 5 at once and takes 1,000 ids:
# none of them may be one the source issued
sub source_stops_copy_takes
{
	my ($source, $db, $what) = @_;
	my ($rc, $out, $err) = app($source, 'appdb', q{
		INSERT INTO ids SELECT snowid_next_batch(100000);
		SELECT count(*) FROM ids});
	is($out, '140000', "$what: the source goes on after the dump") or diag($err);
	my $ids = $source->safe_psql('appdb', 'COPY ids TO STDOUT');
	$source->stop;
	($rc, $out, $err) = app($restored, $db, 'CREATE TABLE source_ids (id bigint)');
	IPC::Run::run([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$restored->connstr($db) . ' user=app', '-c', 'COPY source_ids FROM STDIN' ],
		'<', \"$ids\n", '>', \$out, '2>', \$err)
	  or diag($err);
	($rc, $out, $err) = app($restored, $db, q{
		UPDATE snowid_config SET worker_id = 5;
		CREATE TABLE new_ids AS SELECT snowid_next() AS id FROM generate_series(1, 1000);
		SELECT count(DISTINCT id), bool_and((snowid_decode(id)).worker_id = 5) FROM new_ids});
	is($out, '1000|t', "$what: given its gone source's worker id at once, the copy takes ids")
	  or diag($err);
	($rc, $out, $err) = app($restored, $db, q{
		SELECT (SELECT count(*) FROM source_ids), count(*) FROM new_ids n JOIN source_ids s USING (id)});
	is($out, '140000|0', "$what: none of them is one its source issued") or diag($err);
	($rc, $out, $err) = app($restored, $db, q{
		SELECT (SELECT min(id) FROM new_ids) > (SELECT max(id) FROM source_ids)});
	is($out, 't', "$what: they lie above every id of its source") or diag($err);
	return;
}

# What the restored database $db must be: 1.2, its source's configuration
# and keys, no worker id, saying so at its first call
sub check_restored
{
	my ($db, $what, $kept) = @_;
	my ($rc, $out, $err) = app($restored, $db, 'SELECT snowid_sql_version()');
	is($out, $version, "$what: the restored database has $version") or diag($err);
	($rc, $out, $err) = app($restored, $db, $kept_sql);
	is($out, $kept, "$what: with its source's layout, bounds and key") or diag($err);
	($rc, $out, $err) = app($restored, $db, q{
		SELECT worker_id IS NULL, worker_server <> snowid_sql_private.snowid_sql_here() FROM snowid_config});
	is($out, 't|t', "$what: without its source's worker id, stamped as another server's")
	  or diag($err);
	($rc, $out, $err) = app($restored, $db, 'SELECT snowid_next()');
	like($err, qr/ERROR:  55000: snowid has no worker id on this server\n/,
		"$what: its first call says it has no worker id");
	like($err, qr/DETAIL:  The row of snowid_config was last stamped on another server.*a restored dump carries its source's stamp but not its worker id.*\.\nHINT:  As the role that installed snowid_sql \(the owner of the extension, or the one that ran its plain script\): UPDATE snowid_config SET datacenter_id = D, worker_id = N.*\.\n/s,
		"$what: naming the restore, and what to do");
	return;
}

for my $from ('1.0', '1.1')
{
	for my $how ('extension', 'pg_tle')
	{
	  SKIP:
		{
			skip("$how: $tle_missing", 12) if $how eq 'pg_tle' && defined $tle_missing;
			my $what = "$how $from";
			my $source = new_source($from, $how);
			my $kept = $source->safe_psql('appdb', $kept_sql);

			my ($out, $err) = ('', '');
			my $dump = "$dir/$n.dump";
			IPC::Run::run([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('appdb') . ' user=app' ],
				'>', \$out, '2>', \$err)
			  or diag($err);
			is($? >> 8, 0, "$what: the owner dumps it");

			# pg_tle's registration is in the dump and in the restored
			# database already (pg_restore reports it and goes on, as in
			# restore_floor.pl): no other error may be reported
			my $db = "db$n";
			new_database($restored, $db, $how);
			IPC::Run::run(
				[
					'pg_restore', ($how eq 'pg_tle' ? () : ('--exit-on-error')),
					'-d', $restored->connstr($db) . ' user=app', $dump
				],
				'>', \$out, '2>', \$err);
			if ($how eq 'pg_tle')
			{
				my @failed = grep { /error:/ && !/pgtle|pg_tle/ } split(/^(?=pg_restore: )/m, $err);
				is(join("\n", @failed), '', "$what: the owner restores it on another server")
				  or diag($err);
			}
			else
			{
				is($? >> 8, 0, "$what: the owner restores it on another server") or diag($err);
			}
			check_restored($db, $what, $kept);
			source_stops_copy_takes($source, $db, $what);
		}
	}
}

# From 1.1 through CREATE EXTENSION: the dump as a script, restored by psql
# in one transaction, stopping at the first error; and its data alone,
# restored into a database where the owner installed 1.2 (and made the
# source's table) before
my $source = new_source('1.1', 'extension');
my $kept = $source->safe_psql('appdb', $kept_sql);
my ($rc, $out, $err);
for my $format ('script', 'data only')
{
	my @args = $format eq 'script' ? () : ('--data-only');
	IPC::Run::run([ 'pg_dump', @args, '-f', "$dir/$n.sql", '-d', $source->connstr('appdb') . ' user=app' ],
		'>', \$out, '2>', \$err)
	  or diag($err);
	my $db = $format eq 'script' ? 'script' : 'dataonly';
	new_database($restored, $db, 'extension');
	if ($format eq 'data only')
	{
		($rc, $out, $err) = app($restored, $db, 'CREATE EXTENSION snowid_sql; CREATE TABLE ids (id bigint)');
		die "could not create the extension: $err" if $rc;
	}
	IPC::Run::run([ 'psql', '-Xq', '-1', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/$n.sql",
			'-d', $restored->connstr($db) . ' user=app' ],
		'<', \undef, '>', \$out, '2>', \$err);
	is($? >> 8, 0, "extension 1.1, $format: the owner restores it with psql in one transaction")
	  or diag($err);
	check_restored($db, "extension 1.1, $format", $kept);
}
source_stops_copy_takes($source, 'script', 'extension 1.1, script');

# No function of the edition names the sequence that takes the old dumps'
# setval() (public.snowid_position), which is not the generator's
is( $restored->safe_psql('script', q{
		SELECT string_agg(p.oid::regprocedure::text, ', ') FROM pg_proc p
		WHERE p.proname LIKE 'snowid%' AND p.prosrc ~ 'public\.snowid_position'}),
	'', 'no function of the edition names public.snowid_position');
is( $restored->safe_psql('script', q{
		SELECT count(*) FROM pg_depend d
		WHERE d.refobjid = 'public.snowid_position'::regclass AND d.classid = 'pg_proc'::regclass}),
	'0', 'nor depends on it');

$restored->stop;
done_testing();
