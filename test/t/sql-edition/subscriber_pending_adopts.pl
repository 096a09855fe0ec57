# The note that a transaction set the worker id (snowid_config_pending,
# worker_set, keyed by the transaction's id) is read by snowid_sql_refix()
# at every change of snowid_config: where it says so, the generation the
# sequences hold is adopted as this server's (doc/managed.md: "The
# generation held when the worker id is set again ... is adopted; another
# change of the configuration adopts nothing").  A publication FOR ALL
# TABLES carries the publisher's notes into the subscriber's table (no
# trigger of a replica stops them there, as for snowid_config and
# snowid_locks), under the publisher's transaction ids: the subscriber's
# own transaction of that id, which changes only max_wait_ms, finds the
# publisher's note as its own, and adopts sequences that hold another
# server's values.
#
# - Two servers install the edition; the subscriber (layout 0/6/2, worker
#   id 2, max_drift_ms 10000) issues a batch of 20,000 ids, 5 s ahead of
#   its clock; the publisher, its transaction ids some way ahead, sets its
#   worker id, and publishes FOR ALL TABLES; the subscriber subscribes.
# - The subscriber's sequences are set to another server's values, its
#   position to its clock (as a synchronisation of sequences sets them,
#   PostgreSQL 19: here by setval() as the superuser): no call issues.
# - The owner changes max_wait_ms in the transaction of the publisher's
#   note's id: calls must still refuse (as they do after such a change in
#   another transaction), and no id may equal an earlier one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my ($pub, $sub) = SnowidSqlEdition::logical_pair('adopts');
my %as = (publisher => $pub->connstr('appdb') . ' user=app', subscriber => $sub->connstr('appdb') . ' user=app');

my ($rc, $out, $err) = psql_as($as{subscriber}, q{
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = 2,
		max_drift_ms = 10000;
	CREATE TABLE own (id bigint, later boolean DEFAULT false);
	INSERT INTO own SELECT snowid_next_batch(20000);
	SELECT count(*) FROM own});
is($out, '20000', 'the subscriber issues a batch of 20,000 ids, ahead of its clock') or diag($err);

$pub->safe_psql('appdb', q{
	DO $$ BEGIN FOR i IN 1 .. 5000 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$});
($rc, $out, $err) = psql_as($as{publisher}, q{
	UPDATE snowid_config SET worker_id = 1;
	SELECT xact FROM snowid_sql_private.snowid_config_pending WHERE worker_set});
like($out, qr/^\d+$/, "the publisher sets its worker id, in transaction $out") or diag($err);
my $xact = $out;

$pub->safe_psql('appdb', 'CREATE PUBLICATION everything FOR ALL TABLES');
my $pubconn = 'host=' . $pub->host . ' port=' . $pub->port . ' dbname=appdb';
$sub->safe_psql('appdb', "CREATE SUBSCRIPTION everything CONNECTION '$pubconn' PUBLICATION everything");
$sub->wait_for_subscription_sync($pub, 'everything', 'appdb');
diag('the subscriber\'s notes: '
	  . $sub->safe_psql('appdb', 'SELECT string_agg(xact || \' \' || worker_set, \', \') FROM snowid_sql_private.snowid_config_pending'));

# another server's values, as a synchronisation sets them
$sub->safe_psql('appdb', q{
	SELECT setval('snowid_sql_private.snowid_generation',
		((((snowid_sql_private.snowid_sql_fixed()).token % 4194304) + 1) << 40) + 10);
	SELECT setval('snowid_sql_private.snowid_position',
		(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
		 - (snowid_sql_private.snowid_sql_fixed()).epoch_ms) << 2)});
($rc, $out, $err) = psql_as($as{subscriber}, 'SELECT count(*) FROM snowid_next_batch(5)');
like($err, qr/the sequences of the snowid generator hold another server's values/,
	'with another server\'s values, no call issues');

# a change of max_wait_ms in a transaction of another id adopts nothing
($rc, $out, $err) = psql_as($as{subscriber}, q{
	UPDATE snowid_config SET max_wait_ms = 2400;
	SELECT count(*) FROM snowid_next_batch(5)});
like($err, qr/the sequences of the snowid generator hold another server's values/,
	'after a change of max_wait_ms in another transaction, no call issues');

# the owner's change of max_wait_ms, in the transaction of that id
SnowidSqlEdition::in_transaction($sub, $xact, 'UPDATE snowid_config SET max_wait_ms = 2500');
($rc, $out, $err) = psql_as($as{subscriber}, q{
	INSERT INTO own SELECT snowid_next_batch(10000), true;
	SELECT count(*) FROM own WHERE later});
like($err, qr/the sequences of the snowid generator hold another server's values/,
	'after a change of max_wait_ms alone, still no call issues') or diag("it issued $out ids");
my $twice = $sub->safe_psql('appdb', 'SELECT count(*) FROM own a JOIN own b ON a.id = b.id AND a.later AND NOT b.later');
is($twice, '0', "no later id equals an earlier one ($twice)");

$sub->safe_psql('appdb', 'DROP SUBSCRIPTION everything');
$sub->stop;
$pub->stop;
done_testing();
