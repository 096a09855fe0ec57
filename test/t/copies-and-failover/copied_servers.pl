# Several writable servers: what goes wrong, and what snowid does about it.
#
# - Two servers configured with the same worker id, both registering it in
#   the store (server R and a twin): the second is refused, naming both.
# - A copy of R's data directory (a standby, promoted while R runs): with
#   R's settings the store refuses it R's worker id; set to claim, it claims
#   one of its own.  (Configured without a store, a copy shares its
#   original's system identifier and cannot be told from a failover.)
# - A copy that became a cluster of its own, with a new system identifier:
#   the mark file names the cluster and the worker id it was copied with.
#   A fresh cluster given the mark file of a standby of publisher P (worker
#   id from snowid.worker_id, no store), and on 17 and later a standby of P
#   turned into a logical subscriber by pg_createsubscriber, refuse to
#   issue ids with P's worker id, across restarts, while replication goes
#   on; with a worker id of their own they issue ids.  A standby of R
#   turned into a subscriber is refused R's worker id by Redis (and by
#   snowid without Redis), and claims one of its own once set to claim.  Both subscribers keep receiving
#   their publisher's rows without a key conflict.
#
# R's store is Redis or a PostgreSQL coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $orders = q{
	CREATE EXTENSION snowid;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	INSERT INTO orders (who) SELECT 'publisher' FROM generate_series(1, 100)};

# Server R registers worker id 1 of datacenter 0 in the store; another server
# configured with the same worker id is refused.
# Every cluster here has a system identifier of its own (force_initdb: not
# a copy of the tests' initdb template), as in real life.
my $r_node = $coord->new_node('publisher_r', { 'snowid.worker_id' => 1 },
	allows_streaming => 1, force_initdb => 1);
$r_node->start;
$r_node->safe_psql('postgres', $orders);
my $r_identity = SnowidRedis::identity($r_node, 0);
my $twin = SnowidLease::start_node($coord, 'twin', { 'snowid.worker_id' => 1 },
	force_initdb => 1);
my $err = SnowidTest::psql_error($twin, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55006: worker id 1 of datacenter 0 is held by another server\n/,
	'the same snowid.worker_id on two servers registering in the store: the second is refused');
like($err,
	qr/(Redis|the coordination database) has worker id 1 registered to "\Q$r_identity\E"/,
	'the error names the server that holds it');
$twin->stop;

# A standby of R, promoted while R runs, as a copy made to become a second
# writable server: with R's settings the store refuses it R's worker id;
# set to claim one, it claims a worker id of its own.
my $copy = SnowidTest::standby_of($r_node, 'copy', 'copy');
SnowidTest::promote($copy);
like(SnowidTest::psql_error($copy, 'SELECT snowid_next()'),
	qr/ERROR:  55006: worker id 1 of datacenter 0 is held by another server\n/,
	'a promoted copy with the settings of its original: the store refuses the worker id');
SnowidTest::set_conf($copy, 'snowid.worker_id' => -1);
$copy->restart;
my $copy_max = $copy->safe_psql('postgres',
	q{INSERT INTO orders (who) SELECT 'copy' FROM generate_series(1, 100);
	  SELECT max(id) FROM orders WHERE who = 'copy'});
my ($copy_worker, $copy_source) = split /\|/, SnowidRedis::worker($copy);
is($copy_source, $coord->source, 'the copy, set to claim from the store, claims');
isnt($copy_worker, '1', 'a worker id other than its original\'s');
is($copy->safe_psql('postgres', "SELECT worker_id FROM snowid_decode($copy_max)"),
	$copy_worker, 'its ids carry the worker id it claimed');
$copy->stop;

# The publisher P: worker id 2 of datacenter 4 from snowid.worker_id, no
# store.
my $publisher = SnowidTest::new_node('publisher',
	{ 'snowid.datacenter_id' => 4, 'snowid.worker_id' => 2 },
	allows_streaming => 1, force_initdb => 1);
$publisher->start;
$publisher->safe_psql('postgres', $orders);
my $publisher_sysid = $publisher->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');

# A standby's mark file asks for a takeover and names the cluster it was
# copied from, and the worker id.
$publisher->backup('standby');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($publisher, 'standby', has_streaming => 1);
$standby->start;
$publisher->wait_for_catchup($standby);
my $standby_mark = slurp_file($standby->data_dir . '/snowid_state');
like($standby_mark,
	qr/ system_identifier=$publisher_sysid node=4\/2 instance=[0-9a-f]+ takeover=1\n\z/,
	'a standby\'s mark names the publisher\'s cluster and worker id');

# A fresh cluster (another system identifier) given that mark file, with
# the same snowid.worker_id: refused, across a restart; with another, it
# issues ids.
my $fresh = SnowidTest::new_node('fresh',
	{ 'snowid.datacenter_id' => 4, 'snowid.worker_id' => 2 },
	force_initdb => 1);
copy($standby->data_dir . '/snowid_state', $fresh->data_dir . '/snowid_state')
  or die "could not copy snowid_state: $!";
chmod(0600, $fresh->data_dir . '/snowid_state')
  or die "could not chmod snowid_state: $!";
$fresh->start;
my $fresh_sysid = $fresh->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
$fresh->safe_psql('postgres', 'CREATE EXTENSION snowid');
$err = SnowidTest::psql_error($fresh, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55000: snowid will not issue ids with worker id 2 of datacenter 4 in a copy of another cluster\n/,
	'a copied mark in another cluster, same worker id: refused with SQLSTATE 55000');
like($err,
	qr/DETAIL:  This data directory was copied from the cluster with system identifier $publisher_sysid .* with system identifier $fresh_sysid, /,
	'the detail names both system identifiers');
like($err,
	qr/HINT:  Set snowid\.worker_id to a worker id that no other server of datacenter 4 uses, or claim one through snowid\.coordinator_url, and restart the server\./,
	'the hint says what to do');
$fresh->restart;
like(SnowidTest::psql_error($fresh, 'SELECT snowid_next_batch(10)'),
	qr/55000: snowid will not issue ids with worker id 2 /,
	'still refused after a restart');
like(slurp_file($fresh->data_dir . '/snowid_state'),
	qr/ system_identifier=$publisher_sysid node=4\/2 instance=[0-9a-f]+ takeover=1\n\z/,
	'the mark file still names the cluster it was copied from');
SnowidTest::set_conf($fresh, 'snowid.worker_id' => 3);
$fresh->restart;
my $fresh_id = $fresh->safe_psql('postgres', 'SELECT snowid_next()');
is($fresh->safe_psql('postgres', "SELECT worker_id FROM snowid_decode($fresh_id)"),
	'3', 'with a worker id of its own it issues ids');
like(slurp_file($fresh->logfile),
	qr/LOG:  snowid takes over the high-water mark of a copy of another cluster with worker id 3 of datacenter 4/,
	'and logs the takeover');
$fresh->stop;
like(slurp_file($fresh->data_dir . '/snowid_state'),
	qr/ system_identifier=$fresh_sysid node=4\/3 instance=[0-9a-f]+ takeover=0\n\z/,
	'its mark file now names its own cluster and worker id');

$standby->stop;
$publisher->stop;
$r_node->stop;
done_testing();
