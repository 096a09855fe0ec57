# Issue 56's attack (managed.md "The configuration"): a database restored
# from a dump issues no id until its owner gives it a worker id.  The page
# said it could be given its source's "if the source's is gone for good",
# and "then starts from its clock"; but the source may have issued ids up
# to max_drift_ms ahead of its clock before it went (a batch; a clock
# stepped back), and the restored copy, given the source's worker id at
# once, started at its clock, below them, and issued them again (1,000 of
# 1,000).  The page now says to wait max_drift_ms after the source stopped
# (and as much as the clocks may differ: none here, one machine).
#
# Here the source (51/0/6/4, max_drift_ms 10000, worker id 5) runs a batch
# 6 s ahead, is dumped and stopped for good; its dump is restored by the
# owner into another server, which the page's wait later is given worker
# id 5 and takes 1,000 ids.  None may have been issued by the source.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('att_reuse');
my ($rc, $out, $err);

my @nodes;
for my $name ('source', 'restored')
{
	my $node = PostgreSQL::Test::Cluster->new("att_$name");
	$node->init;
	$node->start;
	$node->safe_psql('postgres', q{
		CREATE ROLE app LOGIN;
		CREATE DATABASE appdb OWNER app;
	});
	push @nodes, $node;
}
my ($source, $restored) = @nodes;

($rc, $out, $err) = SnowidSqlEdition::psql_as($source->connstr('appdb') . ' user=app', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4,
		max_drift_ms = 10000, worker_id = 5;
	CREATE TABLE ids (id bigint);
	INSERT INTO ids SELECT snowid_next_batch(100000);
	SELECT count(*), round(extract(epoch FROM snowid_time(max(id)) - clock_timestamp()), 1) > 2 FROM ids});
is($out, '100000|t', 'the source issued 100,000 ids, running seconds ahead of its clock') or diag($err);

IPC::Run::run([ 'pg_dump', '-Fc', '-f', "$dir/app.dump", '-d', $source->connstr('appdb') . ' user=app' ],
	'>', \$out, '2>', \$err) or diag($err);
$source->stop;    # gone for good
my $source_stopped = Time::HiRes::time();

IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $restored->connstr('appdb') . ' user=app',
		"$dir/app.dump" ], '>', \$out, '2>', \$err);
is($? >> 8, 0, 'the owner restores the dump on another server') or diag($err);
# the page's wait: max_drift_ms after the source stopped
my $wait = $source_stopped + 10.001 - Time::HiRes::time();
Time::HiRes::sleep($wait) if $wait > 0;
($rc, $out, $err) = SnowidSqlEdition::psql_as($restored->connstr('appdb') . ' user=app', q{
	UPDATE snowid_config SET worker_id = 5;
	CREATE TABLE new_ids AS SELECT snowid_next() AS id FROM generate_series(1, 1000);
	SELECT count(*) FROM new_ids n JOIN ids o USING (id)});
is($out, '0', 'given its gone source\'s worker id, the copy issues none of the source\'s ids') or diag($err);

$restored->stop;
done_testing();
