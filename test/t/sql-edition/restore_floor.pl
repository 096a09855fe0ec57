# Issue 56's third attack, without managed.md's wait (restore_waits_for_worker_id.pl waits):
# a database restored from a dump and given its gone source's worker id
# at once.  The source issued ids up to max_drift_ms ahead of its clock (a
# batch), so a copy that started at its clock issued them again (1,000 of
# 1,000).  Setting the worker id where the row was last stamped for another
# server now raises the generator past this server's clock plus
# max_drift_ms (doc/managed.md, "The configuration").
#
# Through each way of installing (CREATE EXTENSION, pg_tle, the plain
# script), on servers of their own (each its own system identifier): the
# source (51/0/6/4, max_drift_ms 10000, worker id 5) runs a batch ahead of
# its clock and is dumped; the dump is restored on another server while
# the source goes on with another batch (the ids after the dump are in no
# dump), then the source stops for good and the copy is given worker id 5
# at once and takes 1,000 ids: none may be one the source issued.
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
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('restore_floor'));
my $version = SnowidSqlEdition::version();

# pg_tle where it is built (test/tools/pgbuild --pg_tle records where it
# does not compile: 19, whose path is then skipped, saying so)
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
my $tle_missing = SnowidSqlEdition::pg_tle_missing($libdir, $sharedir);

# The scripts: pg_tle's under another name (the server has snowid_sql's
# files, which pg_tle does not shadow), and the plain one
my $tle_name = 'snowid_sql_tle';
if (!defined $tle_missing)
{
	system("$src/test/tools/sql-edition pg_tle $src $version $tle_name > $dir/pg_tle.sql") == 0
	  or die 'could not make the pg_tle script';
}
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain.sql") == 0
  or die 'could not make the plain script';

# A server with the roles app, which owns appdb as it makes it, and
# tle_admin, a member of pgtle_admin, with pg_tle preloaded where it is built
sub new_server { return SnowidSqlEdition::tle_server($_[0], $tle_missing); }

# A new database appdb of app's on a server, ready for an installation
# (pg_tle: the extension registered, as its member of pgtle_admin does)
sub new_database
{
	my ($node, $how) = @_;
	$node->safe_psql('postgres', 'CREATE DATABASE appdb OWNER app');
	return if $how ne 'pg_tle';
	$node->safe_psql('appdb', 'CREATE EXTENSION pg_tle');
	my ($rc, $out, $err) = SnowidSqlEdition::psql_as($node->connstr('appdb') . ' user=tle_admin',
		"\\i $dir/pg_tle.sql");
	die "could not register snowid_sql with pg_tle: $err" if $rc;
}

# psql as app on appdb of a server: (exit code, stdout, stderr)
sub app
{
	my ($node, $sql) = @_;
	return SnowidSqlEdition::psql_as($node->connstr('appdb') . ' user=app', $sql);
}

my $restored = new_server('floor_restored');

for my $how ('extension', 'pg_tle', 'plain script')
{
  SKIP:
	{
		skip("$how: $tle_missing", 7) if $how eq 'pg_tle' && defined $tle_missing;
		my $tag = $how =~ s/ /_/gr;
		my $source = new_server("floor_source_$tag");
		new_database($source, $how);

		my ($rc, $out, $err);
		if ($how eq 'plain script')
		{
			IPC::Run::run([ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d',
					$source->connstr('appdb') . ' user=app', '-f', "$dir/plain.sql" ],
				'<', \undef, '>', \$out, '2>', \$err)
			  or die "the plain script failed: $err";
		}
		else
		{
			($rc, $out, $err) = app($source,
				'CREATE EXTENSION ' . ($how eq 'pg_tle' ? $tle_name : 'snowid_sql'));
			die "could not create the extension: $err" if $rc;
		}
		($rc, $out, $err) = app($source, SnowidSqlEdition::issue_ahead_sql(40000));
		is($out, '40000|t', "$how: the source issues ids ahead of its clock") or diag($err);

		my $dump = "$dir/$tag.dump";
		IPC::Run::run([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('appdb') . ' user=app' ],
			'>', \$out, '2>', \$err)
		  or diag($err);
		is($? >> 8, 0, "$how: the owner dumps it");

		# restored on another server, by the owner (pg_tle's registration
		# is in the dump and there already: pg_restore reports it as errors
		# and goes on), the plain script's by a superuser
		new_database($restored, $how);
		IPC::Run::run(
			[
				'pg_restore', ($how eq 'pg_tle' ? () : ('--exit-on-error')),
				'-d', $restored->connstr('appdb') . ($how eq 'plain script' ? '' : ' user=app'), $dump
			],
			'>', \$out, '2>', \$err);
		is( $restored->safe_psql('appdb', q{
				SELECT max_drift_ms, worker_bits, worker_server <> snowid_sql_private.snowid_sql_here()
				FROM snowid_config}),
			'10000|6|t',
			"$how: the dump is restored on another server, with its source's stamp");

		# the source goes on, running seconds ahead of its clock, then stops
		# for good: what it issued is kept here, on the restored server
		($rc, $out, $err) = app($source, q{
			INSERT INTO ids SELECT snowid_next_batch(100000);
			SELECT count(*) FROM ids});
		is($out, '140000', "$how: the source goes on after the dump") or diag($err);
		my $ids = $source->safe_psql('appdb', 'COPY ids TO STDOUT');
		$source->stop;
		($rc, $out, $err) = app($restored, 'CREATE TABLE source_ids (id bigint)');
		IPC::Run::run([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
				$restored->connstr('appdb') . ' user=app', '-c', 'COPY source_ids FROM STDIN' ],
			'<', \"$ids\n", '>', \$out, '2>', \$err)
		  or diag($err);

		# given the gone source's worker id at once
		($rc, $out, $err) = app($restored, q{
			UPDATE snowid_config SET worker_id = 5;
			CREATE TABLE new_ids AS SELECT snowid_next() AS id FROM generate_series(1, 1000);
			SELECT count(DISTINCT id), bool_and((snowid_decode(id)).worker_id = 5) FROM new_ids});
		is($out, '1000|t', "$how: given its gone source's worker id at once, the copy takes ids")
		  or diag($err);
		($rc, $out, $err) = app($restored, q{
			SELECT (SELECT count(*) FROM source_ids), count(*) FROM new_ids n JOIN source_ids s USING (id)});
		is($out, '140000|0', "$how: none of them is one its source issued") or diag($err);
		($rc, $out, $err) = app($restored, q{
			SELECT (SELECT min(id) FROM new_ids) > (SELECT max(id) FROM source_ids)});
		is($out, 't', "$how: they lie above every id of its source") or diag($err);

		$restored->safe_psql('postgres', 'DROP DATABASE appdb');
	}
}

$restored->stop;
done_testing();
