# The raise of a copy's generator when its worker id is set
# (snowid_sql_config_floor(), an AFTER trigger) reads the session setting
# snowid_sql.copy_drift_ms that the BEFORE trigger snowid_config_stamp set
# for the statement.  An UPDATE's RETURNING runs between the two: the
# owner's UPDATE snowid_config SET worker_id = N RETURNING
# set_config('snowid_sql.copy_drift_ms', '', true) leaves the floor trigger
# nothing to read, and the copy starts at its clock, below the ids its
# source issued ahead of it.  doc/security.md: "the floor trigger reads no
# more of the session setting snowid_sql.copy_drift_ms than the row's
# max_drift_ms.  The settings a session may set count for nothing where
# they would loosen a check".
#
# - The source (layout 0/6/2, worker id 5, max_drift_ms 10000) issues a
#   batch of 20,000 ids, 5 s ahead of its clock; the owner dumps it and
#   restores it into a new database, and the source is dropped.
# - The owner sets the copy's worker id to its gone source's with that
#   RETURNING, and the copy issues 20,000 ids at once: none may equal a
#   restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('copy_drift_returning');
my $node = PostgreSQL::Test::Cluster->new('copy_drift_returning');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE source OWNER app; CREATE DATABASE copy OWNER app');
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source copy);

my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = 5,
		max_drift_ms = 10000;
	CREATE TABLE t (id bigint, copy boolean DEFAULT false);
	INSERT INTO t SELECT snowid_next_batch(20000);
	SELECT count(*) FROM t});
is($out, '20000', 'the source issues a batch of 20,000 ids, ahead of its clock') or diag($err);
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $as{source} ], 'the owner dumps it');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $as{copy}, "$dir/source.dump" ],
	'and restores it into a new database');
$node->safe_psql('postgres', 'DROP DATABASE source');

($rc, $out, $err) = psql_as($as{copy}, q{
	UPDATE snowid_config SET worker_id = 5 RETURNING set_config('snowid_sql.copy_drift_ms', '', true)});
is($rc, 0, 'the owner sets its gone source\'s worker id, with a RETURNING') or diag($err);
($rc, $out, $err) = psql_as($as{copy}, q{
	INSERT INTO t (id, copy) SELECT snowid_next_batch(20000), true;
	SELECT count(*) FROM t WHERE copy});
my $twice = $node->safe_psql('copy',
	'SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND NOT a.copy AND b.copy');
is($twice, '0', "no id of the copy equals a restored one ($twice of " . ($out || 0) . ')');

$node->stop;
done_testing();
