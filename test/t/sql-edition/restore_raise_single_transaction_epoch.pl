# As restore_raise_single_transaction (a dump restored in one transaction
# into a database whose worker id was set first; a call made meanwhile), with
# a dump of another epoch, which the restore takes ("takes the dump's
# layout, epoch and bounds", doc/managed.md).  The restore of the row of
# snowid_config marks it by setval() of snowid_sql_dumped, which every
# session sees at once, while the row and snowid_sql_fixed() it changes are
# seen only at the COMMIT: a call made meanwhile raises the generator
# (snowid_sql_raise_restored()) to a position computed under the old epoch,
# which every call reads under the dump's once the restore commits.  With
# the dump's epoch of 2024-01-01, 13 years after the install's default, the
# position lies some 13 years ahead, and every call fails ("the system clock
# is ... ms behind the snowid generator") until the clock gets there; the
# owner cannot set the position back (only dropping the extension, and the
# defaults with it, does).  No clock step, no role but the owner's
# application.
#
# - One server; app owns source (epoch 2024-01-01, worker id 5, a table
#   store.t of 100 ids and a table store.big of 300,000 rows with an index,
#   so that the restore lasts), dumped (pg_dump -Fc), and target (the
#   edition installed, worker id 5 set first, the default epoch).
# - pg_restore --single-transaction into the target; once the restore of
#   the row has marked it (snowid_sql_dumped holds another number than the
#   target's, read as the superuser every 20 ms), a session of the target
#   calls snowid_next() once (a call before would have moved the generator,
#   and the restore of another epoch been refused).
# - After the restore, app's calls and batches (statement_timeout 10 s)
#   must issue ids.
# On main (1891eaa, snowid_sql 1.4, PostgreSQL 15 and 19beta1): the call
# gives an id, the restore commits with the dump's epoch, and every call and
# batch fails with 55000, "the system clock is 415232220892 ms behind the
# snowid generator": snowid_status() shows the high-water mark at
# 2040-01-26.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: a restore into a database that has a worker
# id lies outside what the edition guarantees (doc/managed.md, "Dumps and
# restores": restore, then set the worker id), and this test now follows
# that step: the target installed without a worker id, the restore in one
# transaction with calls every 20 ms meanwhile (each fails: no worker id),
# then the owner sets worker id 5, and calls and batches must issue ids.
# (Outside that step, a target whose worker id was set first and whose
# application issues while the restore of another epoch runs ends with its
# generator read under the dump's epoch, years ahead: every call fails;
# the layout guard cannot see calls made after it checked the restore.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_single_transaction_epoch');
my $node = SnowidSqlEdition::new_server('restore_raise_single_transaction_epoch', [qw(app)],
	[qw(source target)]);
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source target);
my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET epoch = '2024-01-01 00:00:00+00', worker_id = 5;
	CREATE SCHEMA store;
	CREATE TABLE store.t (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO store.t (n) SELECT g FROM generate_series(1, 100) g;
	CREATE TABLE store.big (n int, pad text);
	INSERT INTO store.big SELECT g, md5(g::text) FROM generate_series(1, 300000) g;
	CREATE INDEX big_pad ON store.big (pad);
	SELECT count(DISTINCT id) FROM store.t});
is($out, '100', 'the source, epoch 2024-01-01, issues 100 ids') or diag($err);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $as{source} ], 'pg_dump dumps it');

SnowidSqlEdition::target_installed_bare($node);

# the restore in one transaction, and calls meanwhile
my ($calls, $failed) = SnowidSqlEdition::restore_while_calling($node, "$dir/source.dump",
	'--single-transaction');
is($failed, $calls, 'every call while the restore ran failed: no worker id');
is($node->safe_psql('target', 'SELECT epoch = \'2024-01-01 00:00:00+00\' FROM snowid_config'), 't',
	'target: the restore took the dump\'s epoch');
SnowidSqlEdition::worker_set_after_restore($node, 'target', 0);

SnowidSqlEdition::target_issues_in_10s($node);

$node->stop;
done_testing();
