# A dump restored where its source is gone, given the source's worker id:
# the raise counts the restored row's max_drift_ms, but the row is the
# dump's, as it was when the dump was taken.  A source that raised
# max_drift_ms after its dump (as the page allows at any time) issued ids
# further ahead than the restored row says, and the position, which knew,
# is not dumped: the restore of last night's dump over the database itself
# (pg_restore --clean, after a migration went wrong) is the common case.
# The edition cannot see those ids (kept outside its tables, sent on), so
# doc/managed.md ("The configuration") gives the step: set the largest
# max_drift_ms the source used with the worker id.  This test follows it.
# (The third attack of issue 68 found the case with the worker id set
# alone: 26,060 of 30,000 new ids equal ids of the batch, on 16.)
#
# - The database (layout 0/6/2, worker id 5, max_drift_ms 1000) is dumped;
#   then max_drift_ms is raised to 10000 and a batch of 30,000 ids runs
#   7.5 s ahead of the clock (kept aside: the application sent them on).
# - The dump is restored over it (--clean --if-exists), the worker id set
#   again with the largest max_drift_ms, and 30,000 ids issued at once:
#   none may equal one of the batch.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_older_drift');
my $node = SnowidSqlEdition::new_server('restore_older_drift', ['app'], ['appdb']);
$node->safe_psql('postgres', 'CREATE DATABASE aside');
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = 5,
		max_drift_ms = 1000;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO t SELECT snowid_next_batch(2000), 1;
	SELECT count(*) FROM t});
is($out, '2000', 'the database issues 2,000 ids') or diag($err);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/appdb.dump", '-d', $app ], 'the owner dumps it');

($rc, $out, $err) = psql_as($app, q{
	UPDATE snowid_config SET max_drift_ms = 10000;
	SELECT snowid_next_batch(30000)});
my @batch = split /\n/, $out;
is(scalar(@batch), 30000, 'max_drift_ms raised, a batch of 30,000 ids runs ahead') or diag($err);
$node->safe_psql('aside', 'CREATE TABLE sent (id bigint); INSERT INTO sent VALUES (' . join('), (', @batch) . ')');

$node->command_ok(
	[ 'pg_restore', '--clean', '--if-exists', '-d', $app, "$dir/appdb.dump" ],
	'the dump restored over the database');
($rc, $out, $err) = psql_as($app, q{
	UPDATE snowid_config SET max_drift_ms = 10000, worker_id = 5;
	SELECT snowid_next_batch(30000)});
my %new = map { $_ => 1 } split /\n/, $out;
my $twice = grep { $new{$_} } @batch;
is($twice, 0, 'no new id equals one of the batch (' . $twice . ' of ' . scalar(keys %new) . ')') or diag($err);

$node->stop;
done_testing();
