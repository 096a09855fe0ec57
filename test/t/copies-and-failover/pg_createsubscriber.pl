# pg_createsubscriber (PostgreSQL 17 and later) turns a physical standby
# into a logical subscriber that writes too: a second writable server with
# its original's settings, worker id and mark file, and a new system
# identifier.
#
# A standby of publisher P (worker id 2 of datacenter 4 from
# snowid.worker_id, no Redis) turned into a subscriber refuses to issue
# ids with P's worker id, across restarts, while logical replication
# brings P's rows; with a worker id of its own it writes.  A standby of
# server R (worker id 1 registered in Redis) turned into a subscriber is
# refused R's worker id by Redis, and by snowid once Redis is taken out of
# its settings; set to claim, it claims one of its own.  Both subscribers
# keep receiving their publisher's rows without a key conflict.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $orders = q{
	CREATE EXTENSION snowid;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	INSERT INTO orders (who) SELECT 'publisher' FROM generate_series(1, 100)};

# Clusters of their own (force_initdb: not copies of the tests' initdb
# template), each with its own system identifier.
my $publisher = SnowidTest::new_node('publisher',
	{ 'snowid.datacenter_id' => 4, 'snowid.worker_id' => 2 },
	allows_streaming => 'logical', force_initdb => 1);
$publisher->start;
if ($publisher->safe_psql('postgres', 'SHOW server_version_num') < 170000)
{
	$publisher->stop;
	plan skip_all => 'pg_createsubscriber comes with PostgreSQL 17';
}
# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();
$publisher->safe_psql('postgres', $orders);
my $publisher_sysid = $publisher->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');

my $redis = SnowidRedis->new;
my $r_node = $redis->new_node('redis_publisher', { 'snowid.worker_id' => 1 },
	allows_streaming => 'logical', force_initdb => 1);
$r_node->start;
$r_node->safe_psql('postgres', $orders);
my $err;

# A standby of P and one of R, each turned into a logical subscriber:
# a new system identifier, its original's settings and mark file.  Two
# more standbys of P: sub_own runs with a worker id of its own (6) from its
# first start, sub_switched starts with 7 and is set to P's worker id
# before it becomes a subscriber.  The copy check compares with the worker
# id the copied cluster issued under, which the mark keeps naming while the
# takeover is pending; it used to record the standby's own id instead,
# refusing sub_own (a false alarm) and letting sub_switched issue P's ids.
my %original = (sub_config => $publisher, sub_redis => $r_node,
	sub_own => $publisher, sub_switched => $publisher);
my %first_worker = (sub_own => 6, sub_switched => 7);
my %sub;
for my $name ('sub_config', 'sub_redis', 'sub_own', 'sub_switched')
{
	my $from = $original{$name};

	$from->backup($name);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($from, $name, has_streaming => 1);
	SnowidTest::set_conf($node, 'snowid.worker_id' => $first_worker{$name})
	  if $first_worker{$name};
	$node->start;
	$from->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'during' FROM generate_series(1, 10)});
	$from->wait_for_catchup($node);
	$node->stop;
	SnowidTest::set_conf($node, 'snowid.worker_id' => 2)
	  if $name eq 'sub_switched';
	command_ok(
		[
			'pg_createsubscriber',
			'--pgdata' => $node->data_dir,
			'--publisher-server' => $from->connstr('postgres'),
			# -s: --socketdir since 17beta3, --socket-directory before
			'-s' => $node->host,
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

# P's snowid.worker_id: refused, across a restart, while logical
# replication brings P's rows.
$err = SnowidTest::psql_error($sub, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55000: snowid will not issue ids with worker id 2 of datacenter 4 in a copy of another cluster\n/,
	'pg_createsubscriber, the publisher\'s worker id: refused');
like($err, qr/system identifier $publisher_sysid .* as pg_createsubscriber makes it/,
	'the detail says where the copy came from');
$sub->restart;
like(SnowidTest::psql_error($sub, q{INSERT INTO orders (who) VALUES ('sub')}),
	qr/55000: snowid will not issue ids with worker id 2 /,
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

# R's copy: Redis refuses R's worker id to the new identity; set to
# claim, it claims anew under its new system identifier.
my $sub_r = $sub{sub_redis};
like(SnowidTest::psql_error($sub_r, 'SELECT snowid_next()'),
	qr/ERROR:  55006: worker id 1 of datacenter 0 is held by another server\n/,
	'pg_createsubscriber of a server registered in Redis: Redis refuses its worker id');
SnowidTest::set_conf($sub_r, 'snowid.redis_url' => '');
$sub_r->restart;
like(SnowidTest::psql_error($sub_r, 'SELECT snowid_next()'),
	qr/ERROR:  55000: snowid will not issue ids with worker id 1 of datacenter 0 in a copy of another cluster\n/,
	'and without Redis, snowid refuses it: the mark names R\'s worker id');
SnowidTest::set_conf($sub_r, 'snowid.redis_url' => $redis->url,
	'snowid.worker_id' => -1);
$sub_r->restart;
$sub_r->safe_psql('postgres',
	q{INSERT INTO orders (who) SELECT 'sub_redis' FROM generate_series(1, 100)});
my ($r_worker, $r_source) = split /\|/, SnowidRedis::worker($sub_r);
is($r_source, 'redis', 'set to claim, it claims from Redis');
isnt($r_worker, '1', 'a worker id other than R\'s');

# sub_own: its own worker id is not the publisher's, and it writes.
is($sub{sub_own}->safe_psql('postgres',
		'SELECT worker_id FROM snowid_decode(snowid_next())'),
	'6', 'a standby with a worker id of its own from its first start writes as a subscriber');
# sub_switched: the publisher's worker id, whatever it ran with before.
like(SnowidTest::psql_error($sub{sub_switched}, 'SELECT snowid_next()'),
	qr/ERROR:  55000: snowid will not issue ids with worker id 2 of datacenter 4 in a copy of another cluster\n/,
	'a standby switched to the publisher\'s worker id before it became a subscriber is refused');
$sub{$_}->stop for 'sub_own', 'sub_switched';

# Both subscribers keep receiving their publisher's rows: no key
# conflict.
for my $name ('sub_config', 'sub_redis')
{
	my $from = $original{$name};

	$from->safe_psql('postgres',
		q{INSERT INTO orders (who) SELECT 'last' FROM generate_series(1, 100)});
	$from->wait_for_catchup($name);
	is( $sub{$name}->safe_psql('postgres', q{
			SELECT count(*) FROM orders WHERE who = 'last'}),
		'100', "$name: the publisher's later rows arrive");
	is( $sub{$name}->safe_psql('postgres', q{
			SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats}),
		'0', "$name: no subscription error");
}
$sub{$_}->stop for 'sub_config', 'sub_redis';

$publisher->stop;
$r_node->stop;
done_testing();
