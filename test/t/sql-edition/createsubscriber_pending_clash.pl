# A pg_createsubscriber copy (PostgreSQL 17 and later) subscribes to its
# source through a publication FOR ALL TABLES, which pg_createsubscriber
# makes: it carries the edition's tables, among them
# snowid_sql_private.snowid_config_pending (1.4: a row per transaction
# that set the worker id, keyed by its transaction id), which no trigger
# of a replica keeps out, as snowid_config's and snowid_locks' do
# (doc/managed.md, "The configuration": "A replica's apply ... changes no
# row of snowid_config ... Nor of snowid_locks").  The copy's transaction
# ids go on from its source's at the conversion, and the two count each on
# its own: the source's worker id set again in a transaction of the id
# the copy's owner set the copy's worker id in (as doc/managed.md tells
# for such a copy) meets the copy's row of that key, and the subscription
# stops at it, its every later change held back.
#
# - A source (worker id 4) and its standby, turned into a subscriber by
#   pg_createsubscriber; the copy's owner sets worker id 5 there.
# - The source's worker id is set again in a transaction of the same id,
#   then the source inserts 1,000 rows: they must reach the copy, with no
#   apply error.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;

my $source = PostgreSQL::Test::Cluster->new('clash_source');
$source->init(allows_streaming => 'logical');
$source->start;
if ($source->safe_psql('postgres', 'SHOW server_version_num') < 170000)
{
	$source->stop;
	plan skip_all => 'pg_createsubscriber comes with PostgreSQL 17';
}
$source->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app');
my ($rc, $out, $err) = SnowidSqlEdition::psql_as($source->connstr('appdb') . ' user=app', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 4;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	INSERT INTO orders (who) SELECT 'source' FROM generate_series(1, 100)});
is($rc, 0, 'the source issues ids with worker id 4') or diag($err);

$source->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('clash_copy');
$copy->init_from_backup($source, 'copy', has_streaming => 1);
$copy->start;
$source->wait_for_catchup($copy);
$copy->stop;
SnowidTest::create_subscriber($copy, $source, 'appdb', 'copy_pub', 'copy_sub',
	'pg_createsubscriber turns a standby of the source into a subscriber');
$copy->start;

# the copy's owner gives it a worker id of its own, its transaction ids
# some way ahead of its source's
$copy->safe_psql('appdb', q{
	DO $$ BEGIN FOR i IN 1 .. 300 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$});
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy->connstr('appdb') . ' user=app', q{
	UPDATE snowid_config SET datacenter_id = 1, worker_id = 5;
	SELECT xact FROM snowid_sql_private.snowid_config_pending WHERE worker_set});
like($out, qr/^\d+$/, "the owner gives the copy a worker id of its own, in transaction $out") or diag($err);
my $xact = $out;

# the source's worker id set again, in a transaction of that id
SnowidSqlEdition::in_transaction($source, $xact, 'UPDATE snowid_config SET worker_id = 4');
is($source->safe_psql('appdb', 'SELECT xact FROM snowid_sql_private.snowid_config_pending WHERE worker_set'),
	$xact, 'the source\'s worker id is set again, in a transaction of the same id');
$source->safe_psql('appdb', q{INSERT INTO orders (who) SELECT 'after' FROM generate_series(1, 1000)});

my $arrived = SnowidSqlEdition::answer_within($copy, q{SELECT count(*) FROM orders WHERE who = 'after'}, '1000');
is($arrived, '1000', 'the source\'s later rows reach the copy');
is($copy->safe_psql('appdb', 'SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats'),
	'0', 'without an apply error');

$copy->stop;
$source->stop;
done_testing();
