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
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('worker_set_forged', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, SnowidSqlEdition::batch_ahead_sql(3, 10000, 'second', 20000));
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
($rc, $out, $err) = psql_as($app, SnowidSqlEdition::marked_batch_sql('second', 20000));
like($err, qr/55000: the sequences of the snowid generator hold another server's values/,
	'after the owner\'s SET snowid_sql.worker_set and a change of the row, it still refuses');
my ($twice) = SnowidSqlEdition::marked_twice($node, 'appdb', 'second');
is($twice, '0', 'no id twice (' . $twice . ' of ' . ($out || 0) . ' issued after)');

$node->stop;
done_testing();
