# Several writable servers: what goes wrong, and what snowid does about it.
#
# - Two servers configured with the same worker id, both registering it in
#   Redis: the second is refused, naming both.
# - A copy of the publisher's data directory (a standby, promoted while the
#   publisher runs) that claims from Redis: it claims a worker id of its
#   own.  (Configured without Redis, it shares the publisher's system
#   identifier and cannot be told from a failover.)
# - A copy that became a cluster of its own, with a new system identifier:
#   the mark file names the cluster and worker id it was copied with, so a
#   fresh cluster given a standby's mark file, and on 17 and later a
#   standby turned into a logical subscriber by pg_createsubscriber, refuse
#   to issue ids with the worker id they were copied with, across restarts,
#   until they get one of their own: another snowid.worker_id, or a claim
#   from Redis.  With the publisher's settings, Redis refuses the worker id
#   first: the subscriber registers it under its new identity.  Then they issue ids, and both servers write without a key
#   conflict.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $redis = SnowidRedis->new;
my $key = SnowidRedis::owners_key(0);

# The publisher: worker id 1 from snowid.worker_id, registered in Redis.
my $publisher = $redis->new_node('publisher', { 'snowid.worker_id' => 1 },
	allows_streaming => 'logical');
$publisher->start;
$publisher->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	INSERT INTO orders (who) SELECT 'publisher' FROM generate_series(1, 100)});
my $publisher_identity = SnowidRedis::identity($publisher, 0);
my $publisher_sysid = $publisher->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');

# Another server configured with the same worker id: refused.
my $twin = $redis->new_node('twin', { 'snowid.worker_id' => 1 });
$twin->start;
$twin->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($twin, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55006: worker id 1 of datacenter 0 is held by another server\n/,
	'same snowid.worker_id on two servers registering in Redis: the second is refused');
like($err, qr/Redis has worker id 1 registered to "\Q$publisher_identity\E"/,
	'the error names the server that holds it');
$twin->stop;

# A standby of the publisher, promoted while the publisher runs, as a
# copy made to become a second writable server: with a claim from Redis
# it claims a worker id of its own.
$publisher->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($publisher, 'copy', has_streaming => 1);
$copy->append_conf('postgresql.conf', "snowid.worker_id = -1\n");
$copy->start;
$publisher->wait_for_catchup($copy);
$copy->promote;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy was not promoted';
my $copy_max = $copy->safe_psql('postgres',
	q{INSERT INTO orders (who) SELECT 'copy' FROM generate_series(1, 100);
	  SELECT max(id) FROM orders WHERE who = 'copy'});
my ($copy_worker, $copy_source) = split /\|/, SnowidRedis::worker($copy);
is($copy_source, 'redis', 'a promoted copy claiming from Redis: claimed');
isnt($copy_worker, '1', 'a worker id other than the publisher\'s');
is($copy->safe_psql('postgres', "SELECT worker_id FROM snowid_decode($copy_max)"),
	$copy_worker, 'its ids carry the worker id it claimed');

$copy->stop;

# A standby's mark file asks for a takeover and names the cluster it was
# copied from, and the worker id.
$publisher->backup('standby');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($publisher, 'standby', has_streaming => 1);
$standby->start;
$publisher->wait_for_catchup($standby);
my $standby_mark = slurp_file($standby->data_dir . '/snowid_state');
like($standby_mark,
	qr/ system_identifier=$publisher_sysid node=0\/1 takeover=1\n\z/,
	'a standby\'s mark names the publisher\'s cluster and worker id');

# A fresh cluster (another system identifier) given that mark file, with
# the same snowid.worker_id: refused, across a restart; with another, it
# issues ids.
my $fresh = SnowidTest::new_node('fresh', { 'snowid.worker_id' => 1 });
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
	qr/ERROR:  55000: snowid will not issue ids with worker id 1 of datacenter 0 in a copy of another cluster\n/,
	'a copied mark in another cluster, same worker id: refused with SQLSTATE 55000');
like($err,
	qr/DETAIL:  This data directory was copied from the cluster with system identifier $publisher_sysid .* with system identifier $fresh_sysid, /,
	'the detail names both system identifiers');
like($err,
	qr/HINT:  Set snowid\.worker_id to a worker id that no other server of datacenter 0 uses, or claim one through snowid\.redis_url, and restart the server\./,
	'the hint says what to do');
$fresh->restart;
like(SnowidTest::psql_error($fresh, 'SELECT snowid_next_batch(10)'),
	qr/55000: snowid will not issue ids with worker id 1 /,
	'still refused after a restart');
like(slurp_file($fresh->data_dir . '/snowid_state'),
	qr/ system_identifier=$publisher_sysid node=0\/1 takeover=1\n\z/,
	'the mark file still names the cluster it was copied from');
SnowidTest::set_conf($fresh, 'snowid.worker_id' => 3);
$fresh->restart;
my $fresh_id = $fresh->safe_psql('postgres', 'SELECT snowid_next()');
is($fresh->safe_psql('postgres', "SELECT worker_id FROM snowid_decode($fresh_id)"),
	'3', 'with a worker id of its own it issues ids');
like(slurp_file($fresh->logfile),
	qr/LOG:  snowid takes over the high-water mark of a copy of another cluster with worker id 3 of datacenter 0/,
	'and logs the takeover');
$fresh->stop;
like(slurp_file($fresh->data_dir . '/snowid_state'),
	qr/ system_identifier=$fresh_sysid node=0\/3 takeover=0\n\z/,
	'its mark file now names its own cluster and worker id');

SKIP:
{
	skip 'pg_createsubscriber comes with PostgreSQL 17', 15
	  unless $publisher->safe_psql('postgres', 'SHOW server_version_num') >= 170000;

	# Two standbys of the publisher, each turned into a logical subscriber:
	# a new system identifier, the publisher's settings and mark file.
	my %sub;
	for my $name ('sub_config', 'sub_redis')
	{
		$publisher->backup($name);
		my $node = PostgreSQL::Test::Cluster->new($name);
		$node->init_from_backup($publisher, $name, has_streaming => 1);
		$node->start;
		$publisher->wait_for_catchup($node);
		$node->stop;
		command_ok(
			[
				'pg_createsubscriber',
				'--pgdata' => $node->data_dir,
				'--publisher-server' => $publisher->connstr('postgres'),
				'--socketdir' => $node->host,
				'--subscriber-port' => $node->port,
				'--database' => 'postgres',
				'--publication' => "pub_$name",
				'--subscription' => $name,
				'--recovery-timeout' => $PostgreSQL::Test::Utils::timeout_default
			],
			"pg_createsubscriber turns a standby into $name");
		$node->start;
		$sub{$name} = $node;
	}
	my $sub = $sub{sub_config};
	isnt($sub->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
		$publisher_sysid, 'the subscriber has a new system identifier');

	# With the publisher's settings, Redis refuses its worker id; without
	# Redis, snowid does: across a restart, while logical replication
	# brings the publisher's rows.
	like(SnowidTest::psql_error($sub, 'SELECT snowid_next()'),
		qr/ERROR:  55006: worker id 1 of datacenter 0 is held by another server\n/,
		'pg_createsubscriber, the publisher\'s settings: Redis refuses the worker id');
	SnowidTest::set_conf($sub, 'snowid.redis_url' => '');
	$sub->restart;
	$err = SnowidTest::psql_error($sub, 'SELECT snowid_next()');
	like($err,
		qr/ERROR:  55000: snowid will not issue ids with worker id 1 of datacenter 0 in a copy of another cluster\n/,
		'pg_createsubscriber, same worker id: refused');
	like($err, qr/system identifier $publisher_sysid .* as pg_createsubscriber makes it/,
		'the detail says where the copy came from');
	$sub->restart;
	like(SnowidTest::psql_error($sub, q{INSERT INTO orders (who) VALUES ('sub')}),
		qr/55000: snowid will not issue ids with worker id 1 /,
		'still refused after a restart, also as a column default');
	$publisher->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'after' FROM generate_series(1, 100)});
	$publisher->wait_for_catchup('sub_config');
	is($sub->safe_psql('postgres', q{SELECT count(*) FROM orders WHERE who = 'after'}),
		'100', 'the subscription brings the publisher\'s rows meanwhile');

	# With a worker id of its own it writes, next to the publisher.
	SnowidTest::set_conf($sub, 'snowid.worker_id' => 5);
	$sub->restart;
	$sub->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'sub' FROM generate_series(1, 100)});
	is($sub->safe_psql('postgres', q{
			SELECT count(*) FROM orders, snowid_decode(id) d
			WHERE who = 'sub' AND d.worker_id = 5}),
		'100', 'with snowid.worker_id = 5 it issues ids with worker id 5');

	# The one from Redis claims anew, under its new system identifier.
	my $sub_r = $sub{sub_redis};
	SnowidTest::set_conf($sub_r, 'snowid.worker_id' => -1);
	$sub_r->restart;
	$sub_r->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'sub_redis' FROM generate_series(1, 100)});
	my ($r_worker, $r_source) = split /\|/, SnowidRedis::worker($sub_r);
	is($r_source, 'redis', 'the other subscriber claims from Redis');
	ok($r_worker ne '1' && $r_worker ne $copy_worker,
		'a worker id that no server registered in Redis holds');

	# Both subscribers keep receiving the publisher's rows: no key conflict.
	$publisher->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'last' FROM generate_series(1, 100)});
	for my $name ('sub_config', 'sub_redis')
	{
		$publisher->wait_for_catchup($name);
		is( $sub{$name}->safe_psql('postgres', q{
				SELECT count(*) FROM orders WHERE who = 'last'}),
			'100', "$name: the publisher's later rows arrive");
		is( $sub{$name}->safe_psql('postgres', q{
				SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats}),
			'0', "$name: no subscription error");
	}
	$_->stop for values %sub;
}

$standby->stop;
$publisher->stop;
done_testing();
