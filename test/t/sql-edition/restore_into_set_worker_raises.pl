# A dump restored into a database whose worker id was set first (the
# install's steps, doc/managed.md: CREATE EXTENSION, then set the worker
# id; then the data comes).  The restore of the row (an insert where the
# row is, snowid_sql_config_restore()) brings the source's layout, epoch
# and max_drift_ms, and carries the source's stamp only into a row without
# a worker id: here the row keeps this server's stamp, so nothing raises
# the generator past what the source issued ahead of its clock
# (snowid_sql_config_floor() runs where a worker id is set over another
# server's stamp).  Given the source's worker id before the restore (the
# source gone for good after its dump, as the page allows), the copy
# starts at its clock, below the ids its source issued up to max_drift_ms
# ahead of it.
#
# - The source (51/0/6/4, worker id 5, max_drift_ms 10000) issues 150,000
#   ids in two batches, which run ahead of its clock; its owner dumps it.
# - The new database: CREATE EXTENSION, worker id 5, then pg_restore.
# - 5,000 new ids: none may equal a restored one.
# - Restored as well into a fresh install whose owner then clears the
#   stamp the restore carried (UPDATE snowid_config SET worker_server =
#   NULL, which the stamp's trigger takes) and sets worker id 5: the row
#   looks never stamped, nothing raises the generator, and 5,000 new ids
#   must still equal no restored one.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), the
# restore of the row clears the worker id the new database had: it lies
# outside what the edition guarantees to restore into a database that has
# a worker id (doc/managed.md, "Dumps and restores": restore, then set the
# worker id), and this test now follows that step: a call fails after the
# restore, the owner sets worker id 5 (which raises past the clock plus
# max_drift_ms), and 5,000 new ids
# must equal no restored one.
#
# Since fix68i (issue 68) every worker id set raises the generator, a first
# install's first too, after which the guard refuses another layout or
# epoch, the restore's among them (55000: the database's own ids, if any,
# were made under its own): the new database sets the dump's layout with
# its worker id, as the install's steps now say (the layout and the epoch
# before the first worker id, or with it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_after_worker');

my $node = SnowidSqlEdition::new_server('restore_after_worker', ['app'], [qw(source target cleared)]);
my %as = map { $_ => app_url($node, $_) } qw(source target cleared);
psql_as($as{cleared}, 'CREATE EXTENSION snowid_sql');

my ($rc, $out, $err) = psql_as($as{target}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4, worker_id = 5});
is($rc, 0, 'the new database is installed and given worker id 5, with the layout of the dump to come') or diag($err);

($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4, worker_id = 5,
		max_drift_ms = 10000;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO t (id, n) SELECT snowid_next_batch(100000), 1;
	INSERT INTO t (id, n) SELECT snowid_next_batch(50000), 1;
	SELECT count(*) FROM t});
is($out, '150000', 'the source issues 150,000 ids in batches') or diag($err);
SnowidSqlEdition::dump_to($as{source}, "$dir/source.dump");
$node->safe_psql('postgres', 'DROP DATABASE source');
($rc, $err) = SnowidSqlEdition::restore_into($as{target}, "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'its dump is restored into the new database, the source gone') or diag($err);
($rc, $err) = SnowidSqlEdition::restore_into($as{cleared}, "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'and into another, a fresh install') or diag($err);

# 5,000 new ids in t of a database (n = 2), after $sql if given: (how
# many, psql's stderr, how many of them equal an id of the restored table)
sub new_ids
{
	my ($db, $sql) = @_;
	my ($rc, $out, $err) = psql_as($as{$db}, ($sql // '') . q{
	INSERT INTO t (n) SELECT 2 FROM generate_series(1, 5000);
	SELECT count(*) FROM t WHERE n = 2});

	return ($out, $err, $node->safe_psql($db, q{
	SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.n = 1 AND b.n = 2}));
}

my ($n, $equal);
SnowidSqlEdition::worker_set_after_restore($node, 'target', 1);
($n, $err, $equal) = new_ids('target');
is($n, '5000', 'the new database issues 5,000 ids') or diag($err);
is($equal, '0', 'none of them equals an id of the restored table');

# The other: its owner clears the stamp the restore carried (the column
# worker_server, which the message of a copy names), then gives it the
# source's worker id
($n, $err, $equal) = new_ids('cleared', q{
	UPDATE snowid_config SET worker_server = NULL;
	UPDATE snowid_config SET worker_id = 5;});
is($n, '5000', 'the other, its stamp cleared and given worker id 5, issues 5,000 ids') or diag($err);
is($equal, '0', 'none of them equals an id of the restored table');

$node->stop;
done_testing();
