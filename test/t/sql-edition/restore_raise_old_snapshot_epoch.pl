# As restore_raise_old_snapshot: the first call after a restore raises the
# generator (snowid_sql_raise_restored()) with the caller's snapshot, and a
# role granted nothing may make it.  Its snapshot also gives it the row of
# snowid_config as it was before the restore: a restore into a database
# whose worker id was set first "takes the dump's layout, epoch and bounds"
# (doc/managed.md), and the raise computes the position it sets under the
# old row's epoch (snowid_sql_raise_floor() reads snowid_sql_config()),
# while every later call reads that position under the dump's.  Where the
# dump's epoch lies later than the install's default (2010-11-04), the
# position lies as much ahead: with an epoch of 2024-01-01, some 13 years.
# Every call then fails ("the system clock is ... ms behind the snowid
# generator") until the clock gets there; the owner cannot set the position
# back (only dropping the extension, and the defaults with it, does).
#
# - One server; app owns source (epoch 2024-01-01, worker id 5, a table of
#   100 ids), dumped (pg_dump -Fc), and target (the edition installed,
#   worker id 5 set first, the default epoch).
# - other (LOGIN only) begins a REPEATABLE READ transaction in the target
#   and takes its snapshot; pg_restore restores the dump; other calls
#   snowid_next() once, and commits.
# - app's calls and batches (statement_timeout 10 s) must issue ids.
# On main (1891eaa, snowid_sql 1.4, PostgreSQL 15 and 19beta1): other's
# call gives an id; then every call and batch fails with 55000, "the system
# clock is 415232221753 ms behind the snowid generator": snowid_status()
# shows the high-water mark at 2040-01-26.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: a restore into a database that has a worker
# id lies outside what the edition guarantees (doc/managed.md, "Dumps and
# restores": restore, then set the worker id), and this test now follows
# that step: the target installed without a worker id; other's call with
# its snapshot from before the restore must fail (the row of its snapshot
# has no worker id), and once the owner sets worker id 5, calls and
# batches must issue ids.  (Outside that step, a target whose worker id
# was set first still lets such a call take a position under the row of
# its snapshot, the old epoch, which every later call reads under the
# dump's: years ahead, every call fails; no id repeats.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_old_snapshot_epoch');
my $node = SnowidSqlEdition::new_server('restore_raise_old_snapshot_epoch', [qw(app other)],
	[qw(source target)]);
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source target);
my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET epoch = '2024-01-01 00:00:00+00', worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO t (n) SELECT g FROM generate_series(1, 100) g;
	SELECT count(DISTINCT id) FROM t});
is($out, '100', 'the source, epoch 2024-01-01, issues 100 ids') or diag($err);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $as{source} ], 'pg_dump dumps it');

SnowidSqlEdition::target_installed_bare($node);

# other's snapshot, taken before the restore
my $other = $node->background_psql('target', on_error_stop => 0, extra_params => [ '-U', 'other' ]);
$other->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$other->query_safe('SELECT count(*) FROM pg_class');

$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $as{target}, "$dir/source.dump" ],
	"target: pg_restore restores the source's dump");
is($node->safe_psql('target', 'SELECT epoch = \'2024-01-01 00:00:00+00\' FROM snowid_config'), 't',
	'target: the restore took the dump\'s epoch');

# (its snapshot's row, the install's, is not the one the generator runs
# under since the restore: refused as such, with a hint to retry, since
# 1.4's check of the row against snowid_sql_fixed(); before, the row of
# its snapshot had no worker id: "snowid has no worker id")
$other->query('SELECT snowid_next()');
like($other->{stderr}, qr/ERROR:  snowid_config as this transaction reads it is not what the generator runs under\n(?:.*\n)*HINT:  Retry in a new transaction\./,
	'other, granted nothing, in its transaction begun before the restore: no id, and a hint to retry');
$other->{stderr} = '';
$other->query('COMMIT');
$other->quit;
SnowidSqlEdition::worker_set_after_restore($node, 'target', 0);

SnowidSqlEdition::target_issues_in_10s($node);

$node->stop;
done_testing();
