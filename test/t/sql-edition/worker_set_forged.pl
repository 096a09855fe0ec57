# The generation of the snowid generator carries another server's mark
# after a subscription synchronised the sequences (PostgreSQL 19: FOR ALL
# SEQUENCES, REFRESH SEQUENCES; here set by hand as the superuser, as test
# other_roles_and_dumps.pl does on every version): the position may lie
# below ids this server issued, and a writer refuses until the owner sets
# the worker id again, "an N this server has not used"; "another change of
# the configuration adopts nothing" (doc/managed.md).  But what adopts is
# the session setting snowid_sql.worker_set, which the trigger of a worker
# id sets and snowid_sql_refix() reads: the owner's own SET of it, then any
# change of the row, adopts the other server's generation, and the
# generator goes on with the same worker id from the position it was set
# back to.  doc/security.md: "The settings a session may set count for
# nothing where they would loosen a check".
#
# - app: worker id 3, layout 0/6/2 (4 ids a millisecond), max_drift_ms
#   10000; a batch of 20,000 ids runs 5 s ahead of the clock.
# - The superuser sets the generation to another server's mark and the
#   position back to the clock (as a synchronisation from a publisher on
#   time would); the next call is refused, as it should.
# - app: SET snowid_sql.worker_set = on, UPDATE snowid_config SET
#   max_wait_ms = max_wait_ms (no worker id set): the generator should
#   still refuse; no id may come twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_set_forged');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app');
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = 3,
		max_drift_ms = 10000;
	CREATE TABLE t (id bigint, second boolean DEFAULT false);
	INSERT INTO t SELECT snowid_next_batch(20000);
	SELECT count(*) FROM t});
is($out, '20000', 'a batch of 20,000 ids, ahead of the clock') or diag($err);

$node->safe_psql('appdb', q{
	SELECT setval('snowid_sql_private.snowid_generation',
		((((snowid_sql_private.snowid_sql_fixed()).token % 4194304) + 1) << 40) + 10),
		setval('snowid_sql_private.snowid_position',
		(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
		 - (snowid_sql_private.snowid_sql_fixed()).epoch_ms) << 2)});
($rc, $out, $err) = psql_as($app, 'SELECT snowid_next()');
like($err, qr/55000: the sequences of the snowid generator hold another server's values/,
	'with another server\'s sequences, the generator refuses');

($rc, $out, $err) = psql_as($app, q{
	SET snowid_sql.worker_set = on;
	UPDATE snowid_config SET max_wait_ms = max_wait_ms});
($rc, $out, $err) = psql_as($app, q{
	INSERT INTO t (id, second) SELECT snowid_next_batch(20000), true;
	SELECT count(*) FROM t WHERE second});
like($err, qr/55000: the sequences of the snowid generator hold another server's values/,
	'after the owner\'s SET snowid_sql.worker_set and a change of the row, it still refuses');
my $twice = $node->safe_psql('appdb',
	'SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND NOT a.second AND b.second');
is($twice, '0', 'no id twice (' . $twice . ' of ' . ($out || 0) . ' issued after)');

$node->stop;
done_testing();
