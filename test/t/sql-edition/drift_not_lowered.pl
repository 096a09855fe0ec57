# max_drift_ms is not lowered below how far the generator runs ahead, nor
# on a copy before its worker id is set.  Setting the worker id where the
# row was last stamped on another server raises the generator past this
# server's clock plus max_drift_ms (restore_floor.pl); a claim's quiet period counts
# max_drift_ms too.  Lowered after ids ran ahead, both counted short (the
# attack on 1.2):
#
# - source lowered: the source (51/0/6/4, max_drift_ms 10000, worker id 5)
#   ran a batch seconds ahead of its clock, then its owner lowered
#   max_drift_ms to 100 (its position stayed ahead), dumped it, stopped it
#   for good; the dump restored elsewhere, given worker id 5, was raised
#   only 102 ms past its clock and issued 1,000 of its source's ids again.
# - copy lowered: the same source dumped with max_drift_ms 10000; the copy's
#   owner lowered max_drift_ms to 100, then set worker id 5: the same.
#
# Both lowerings are now refused (55000), and the copy given its gone
# source's worker id repeats none of its ids.
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

my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('restore_drift'));

sub new_server
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(force_initdb => 1);
	$node->start;
	$node->safe_psql('postgres', q{
		CREATE ROLE app LOGIN;
		CREATE DATABASE appdb OWNER app;
	});
	return $node;
}

sub app
{
	my ($node, $sql) = @_;
	return SnowidSqlEdition::psql_as($node->connstr('appdb') . ' user=app', $sql);
}

my $restored = PostgreSQL::Test::Cluster->new('drift_restored');
$restored->init(force_initdb => 1);
$restored->start;
$restored->safe_psql('postgres', 'CREATE ROLE app LOGIN');

for my $who ('source lowered', 'copy lowered')
{
	my $tag = $who =~ s/ /_/gr;
	my $source = new_server("drift_source_$tag");
	my ($rc, $out, $err) = app($source, 'CREATE EXTENSION snowid_sql');
	die "could not create the extension: $err" if $rc;
	($rc, $out, $err) = app($source, SnowidSqlEdition::issue_ahead_sql(100000, '3 s'));
	is($out, '100000|t', "$who: the source issues ids seconds ahead of its clock") or diag($err);
	if ($who eq 'source lowered')
	{
		($rc, $out, $err) = app($source, 'UPDATE snowid_config SET max_drift_ms = 100');
		like($err, qr/55000: max_drift_ms cannot be lowered below how far the snowid generator runs ahead of the clock/,
			"$who: its owner cannot lower max_drift_ms to 100 while its ids lie ahead");
	}

	my $dump = "$dir/$tag.dump";
	IPC::Run::run([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('appdb') . ' user=app' ],
		'>', \$out, '2>', \$err)
	  or diag($err);
	my $ids = $source->safe_psql('appdb', 'COPY ids TO STDOUT');
	$source->stop;

	$restored->safe_psql('postgres', 'CREATE DATABASE appdb OWNER app');
	IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $restored->connstr('appdb') . ' user=app', $dump ],
		'>', \$out, '2>', \$err)
	  or diag($err);
	($rc, $out, $err) = app($restored, 'CREATE TABLE source_ids (id bigint)');
	IPC::Run::run([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$restored->connstr('appdb') . ' user=app', '-c', 'COPY source_ids FROM STDIN' ],
		'<', \"$ids\n", '>', \$out, '2>', \$err)
	  or diag($err);
	if ($who eq 'copy lowered')
	{
		($rc, $out, $err) = app($restored, 'UPDATE snowid_config SET max_drift_ms = 100');
		like($err, qr/55000: max_drift_ms of a copy cannot be lowered before its worker id is set/,
			"$who: the copy's owner cannot lower max_drift_ms before setting the worker id");
	}
	is($restored->safe_psql('appdb', q{
			SELECT max_drift_ms, worker_server <> snowid_sql_private.snowid_sql_here() FROM snowid_config}),
		'10000|t', "$who: restored, with its source's stamp and max_drift_ms");

	($rc, $out, $err) = app($restored, q{
		UPDATE snowid_config SET worker_id = 5;
		CREATE TABLE new_ids AS SELECT snowid_next() AS id FROM generate_series(1, 1000);
		SELECT count(DISTINCT id) FROM new_ids});
	is($out, '1000', "$who: given its gone source's worker id, the copy takes ids") or diag($err);
	($rc, $out, $err) = app($restored, q{
		SELECT count(*) FROM new_ids n JOIN source_ids s USING (id)});
	is($out, '0', "$who: none of them is one its source issued") or diag($err);
	$restored->safe_psql('postgres', 'DROP DATABASE appdb');
}

$restored->stop;
done_testing();
