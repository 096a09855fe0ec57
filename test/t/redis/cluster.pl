# Worker ids claimed from a real Redis Cluster of three masters: datacenters
# whose keys live on different masters; claims sent to a master that does
# not own the datacenter's slot (-MOVED, followed); claims while the slot
# migrates from one master to another, with the claims already moved by
# MIGRATE and before the datacenter has any claim (-ASK, followed with
# ASKING); restarts keep their ids, before, during and after a migration;
# every server gets its own worker id in its datacenter and the ids of all
# servers are unique.  The servers log in as a Redis user with the minimal
# ACL of the README; users without +hset or +asking fail clearly during a
# migration.  The forms of the address in -MOVED: an IP address, none (the
# same host) and a host name.  With a master down, a server that claimed
# before and restarts waits for it to confirm its cached id.
#
# With SNOWID_REDIS_SERVER and SNOWID_REDIS_CLI (test/run --redis valkey)
# this runs against Valkey's cluster mode.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidRedisCluster;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

# Markers that must never show up in a log or an error
my $admin_password = 'pw-Admin-5k0q';
my $password = 'pw-Clm-8q3w';

my $cluster = SnowidRedisCluster->new(password => $admin_password);
my @masters = $cluster->masters;
my $ids = SnowidTest::Ledger->new;
note(join ' ', $masters[0]->cli('INFO', 'server') =~ /^((?:redis|valkey)_version:\S+)/mg);

# The minimal ACL for a cluster: the claim's commands on its keys, ASKING
# to follow -ASK, INFO for the eviction check.  It is set on every
# master, which do not share ACLs.
$cluster->acl_setuser('snowid', 'on', ">$password", '~{snowid:dc:*}:*',
	'+fcall', '+hgetall', '+hget', '+hset', '+hdel', '+time', '+asking', '+info');
$cluster->acl_setuser('noasking', 'on', ">$password", '~{snowid:dc:*}:*',
	'+fcall', '+hgetall', '+hget', '+hset', '+hdel', '+time', '+info');
$cluster->acl_setuser('nohset', 'on', ">$password", '~{snowid:dc:*}:*',
	'+fcall', '+hgetall', '+hget', '+hdel', '+time', '+asking', '+info');

# snowid.redis_url naming a master, over TCP as the snowid user.
sub url
{
	my ($master, $user) = @_;

	return 'redis://' . ($user // 'snowid') . ":$password\@127.0.0.1:"
	  . $master->port;
}

# The index of the master that owns a datacenter's slot.
sub master_of_dc
{
	my $dc = shift;
	my $owner = $cluster->owner($cluster->keyslot(SnowidRedis::owners_key($dc)));

	return (grep { $masters[$_] == $owner } 0 .. $#masters)[0];
}

# Datacenters whose keys live on each master, in the order found.
my @dcs_on = ([], [], []);
for my $dc (0 .. 31)
{
	push @{ $dcs_on[ master_of_dc($dc) ] }, $dc;
}
for my $i (0 .. 2)
{
	die "no two datacenters on master $i" unless @{ $dcs_on[$i] } >= 2;
}
my @dc = map { $dcs_on[$_][0] } 0 .. 2;    # one datacenter per master
my $dc_new = $dcs_on[1][1];    # another of master 1, with no claim yet
my $slot_1 = $cluster->keyslot(SnowidRedis::owners_key($dc[1]));
my $slot_new = $cluster->keyslot(SnowidRedis::owners_key($dc_new));
die 'the two datacenters of master 1 share a slot' if $slot_1 == $slot_new;

# A server of a datacenter, claiming through the given URL.
my %dc_of;
sub new_server
{
	my ($name, $dc, $url, %more) = @_;
	# the masters listen on other ports of the URL's host: listed, as a
	# host's other ports are followed only where the setting says; the
	# servers share one machine and its clock (a clock margin of a second:
	# a claim after a migration waits for a quiet period and its floor)
	my $node = SnowidTest::new_node($name,
		{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $url,
		  'snowid.redis_redirect_hosts' => '127.0.0.1',
		  'snowid.clock_margin' => '1s', %more });

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$dc_of{$name} = $dc;
	return $node;
}

# Takes ids from a server (which claims on its first call) and returns its
# worker id; checks that it came from Redis and that the ids carry it.
sub claim
{
	my ($node, $name) = @_;
	my @taken = $ids->collect($node, 1000);
	my ($worker_id, $source) = split /\|/, SnowidRedis::worker($node);

	is($source, 'redis', "$name: claimed from redis");
	is(scalar(grep { (($_ >> 12) & 31) != $worker_id } @taken), 0,
		"$name: the ids carry worker id $worker_id");
	return $worker_id;
}

# The claims of a datacenter, read from the master that owns its slot.
sub owners
{
	my $dc = shift;

	return $masters[ master_of_dc($dc) ]->owners($dc);
}

# Whether the server's log says it claimed its worker id at that master.
sub claimed_at
{
	my ($node, $master, $log_offset) = @_;

	return $node->log_contains(
		qr/snowid claimed worker id \d+ of datacenter \d+ in redis at \Q127.0.0.1:@{[$master->port]}\E\n/,
		$log_offset // 0);
}

# 1. Datacenters on different masters, claimed directly and through -MOVED.
isnt(master_of_dc($dc[0]), master_of_dc($dc[1]),
	'datacenters on different masters (0 and 1)');
isnt(master_of_dc($dc[1]), master_of_dc($dc[2]),
	'datacenters on different masters (1 and 2)');

my $a_node = new_server('cluster_a', $dc[0], url($masters[0]));
my $b_node = new_server('cluster_b', $dc[1], url($masters[0]));
my $c_node = new_server('cluster_c', $dc[1], url($masters[2]));
# a unix socket URL: the -MOVED names a TCP address, which no URL names, so
# snowid.redis_redirect_hosts must list it (doc/redis.md, where the
# password goes)
my $d_node = new_server('cluster_d', $dc[2],
	"unix://snowid:$password\@" . $masters[0]->socket,
	'snowid.redis_redirect_hosts' => '127.0.0.0/8');

my %worker;
$worker{a} = claim($a_node, 'a (the URL names the owner)');
$worker{b} = claim($b_node, 'b (MOVED from master 0 to master 1)');
$worker{c} = claim($c_node, 'c (MOVED from master 2 to master 1)');
$worker{d} = claim($d_node, 'd (MOVED from a unix socket to master 2)');

ok(claimed_at($a_node, $masters[0]), 'a: claimed at master 0');
ok(claimed_at($b_node, $masters[1]), 'b: claimed at master 1, where MOVED pointed');
ok(claimed_at($c_node, $masters[1]), 'c: claimed at master 1, where MOVED pointed');
ok(claimed_at($d_node, $masters[2]), 'd: claimed at master 2, where MOVED pointed');

is_deeply(owners($dc[0]),
	{ $worker{a} => SnowidRedis::identity($a_node, $dc[0]) },
	'the owner of datacenter 0\'s slot holds a\'s claim');
is_deeply(owners($dc[1]),
	{
		$worker{b} => SnowidRedis::identity($b_node, $dc[1]),
		$worker{c} => SnowidRedis::identity($c_node, $dc[1])
	},
	'the owner of datacenter 1\'s slot holds the claims of b and c');
is_deeply(owners($dc[2]),
	{ $worker{d} => SnowidRedis::identity($d_node, $dc[2]) },
	'the owner of datacenter 2\'s slot holds d\'s claim');
isnt($worker{b}, $worker{c},
	'two servers of one datacenter, through different masters: different worker ids');
my $stray = 0;
for my $dc (@dc)
{
	my $slot = $cluster->keyslot(SnowidRedis::owners_key($dc));
	$stray += $cluster->keys_in_slot($_, $slot)
	  for grep { $_ != $masters[ master_of_dc($dc) ] } @masters;
}
is($stray, 0, 'the masters that answered MOVED hold no claim');

# A restart claims again through -MOVED and keeps its id.
$b_node->restart;
is(claim($b_node, 'b restarted'), $worker{b}, 'b: a restart keeps the worker id');

# 2. -ASK, the claims already moved: datacenter 1's slot migrates from
# master 1 to master 2, and MIGRATE has moved its hash.  Master 1 answers
# -ASK, master 2 accepts the claim after ASKING (and without it answers
# -MOVED back to master 1).
$cluster->start_migration($slot_1, $masters[1], $masters[2]);
is($cluster->migrate_keys($slot_1, $masters[1], $masters[2]), 3,
	'MIGRATE moved the claims of datacenter 1 to master 2, with its leases and fences hashes');
my $asking = $cluster->calls($masters[2], 'asking');

my $log_offset = -s $c_node->logfile;
$c_node->restart;
is(claim($c_node, 'c restarted while the slot migrates'), $worker{c},
	'c: a restart during the migration keeps the worker id');
ok(claimed_at($c_node, $masters[2], $log_offset),
	'c: claimed at master 2, where ASK pointed');

my $e_node = new_server('cluster_e', $dc[1], url($masters[0]));
$worker{e} = claim($e_node, 'e (MOVED to master 1, then ASK to master 2)');
ok(claimed_at($e_node, $masters[2]), 'e: claimed at master 2, where ASK pointed');
# The claims moved to master 2 with a state record written on master 1,
# another server (the forgetting rule): e waits for the quiet period and
# its floor and asks again, through ASKING each time, and c's check-ins may
# come by ASK.
cmp_ok($cluster->calls($masters[2], 'asking'), '>=', $asking + 2,
	'master 2 received ASKING before each of the two claims');
ok($worker{e} ne $worker{b} && $worker{e} ne $worker{c},
	'e: a worker id that b and c do not hold');

$cluster->finish_migration($slot_1, $masters[1], $masters[2]);
is(master_of_dc($dc[1]), 2, 'datacenter 1 now lives on master 2');
is(scalar keys %{ owners($dc[1]) }, 3,
	'master 2 holds the three claims of datacenter 1');
is($cluster->keys_in_slot($masters[1], $slot_1), 0,
	'master 1 holds nothing of datacenter 1');
$log_offset = -s $b_node->logfile;
$b_node->restart;
is(claim($b_node, 'b restarted after the migration'), $worker{b},
	'b: a restart after the migration keeps the worker id');
ok(claimed_at($b_node, $masters[2], $log_offset),
	'b: claimed at master 2, the new owner');

# 3. A datacenter without claims whose slot migrates from master 1 to
# master 0.  A claim reads and writes the datacenter's three keys at once;
# master 1 has none of them and answers -ASK, and master 0, which has none
# either, answers TRYAGAIN (Redis serves a command on several keys of an
# importing slot only once it holds them all).  The claim sends it again
# until its deadline, then fails with Redis' words and claims nothing; the
# next call after the migration claims.
$cluster->start_migration($slot_new, $masters[1], $masters[0]);

# A Redis user without +asking cannot follow -ASK: a clear error.
my $f_node = new_server('cluster_f', $dc_new, url($masters[2], 'noasking'));
my $err = SnowidTest::psql_error($f_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  42501: redis user may not claim a worker id at \Q127.0.0.1:@{[$masters[0]->port]}\E\n/,
	'no +asking: SQLSTATE 42501, naming the master ASK pointed to');
like($err, qr/DETAIL:  Redis replied to ASKING: NOPERM .*'asking' command/i,
	'no +asking: the detail names ASKING');
like($err, qr/HINT:  Allow the Redis user .* and ASKING on a Redis Cluster\./,
	'no +asking: the hint names ASKING');
unlike($err, qr/\Q$password\E/, 'no +asking: no password in the error');
is(SnowidRedis::worker($f_node), '|none', 'no +asking: no worker id');

SnowidTest::set_conf($f_node, 'snowid.redis_url' => url($masters[2]));
$f_node->restart;
$asking = $cluster->calls($masters[0], 'asking');
$err = SnowidTest::psql_error($f_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  08006: redis server at \Q127.0.0.1:@{[$masters[0]->port]}\E did not complete the worker id claim\nDETAIL:  Redis replied: TRYAGAIN/,
	'a claim while the keys cannot be served together: TRYAGAIN until the deadline, a clear error');
cmp_ok($cluster->calls($masters[0], 'asking'), '>', $asking + 1,
	'the claim was sent again, after ASKING each time');
is(SnowidRedis::worker($f_node), '|none', 'and no worker id');
is($cluster->keys_in_slot($masters[1], $slot_new), 0,
	'the migrating master 1 did not create the keys');

$cluster->finish_migration($slot_new, $masters[1], $masters[0]);
$worker{f} = claim($f_node, 'f, the migration over');
ok(claimed_at($f_node, $masters[0]), 'f: claimed at master 0, the new owner');
is_deeply(owners($dc_new),
	{ $worker{f} => SnowidRedis::identity($f_node, $dc_new) },
	'after the migration, master 0 holds f\'s claim');

# A Redis user whose ACL lacks a command of the script: a clear error from
# the master that owns the slot.
my $g_node = new_server('cluster_g', $dc_new, url($masters[2], 'nohset'));
$err = SnowidTest::psql_error($g_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  42501: redis user may not claim a worker id at \Q127.0.0.1:@{[$masters[0]->port]}\E\n/,
	'no +hset: SQLSTATE 42501, naming the master MOVED pointed to');
like($err, qr/DETAIL:  Redis replied: .*script/,
	'no +hset: the detail says the script was refused');
$g_node->stop;

$log_offset = -s $f_node->logfile;
$f_node->restart;
is(claim($f_node, 'f restarted after the migration'), $worker{f},
	'f: a restart after the migration keeps the worker id');
ok(claimed_at($f_node, $masters[0], $log_offset),
	'f: claimed at master 0, the new owner');

# 4. The endpoint in -MOVED as the masters announce it
# (cluster-preferred-endpoint-type): no host ("MOVED 123 :6379") means the
# host the claim used, a host name is used as given.  a now names master
# 1, which does not own its slot.
sub set_all
{
	$_->cli('CONFIG', 'SET', @_) for @masters;
}
set_all('cluster-preferred-endpoint-type', 'unknown-endpoint');
SnowidTest::set_conf($a_node, 'snowid.redis_url' => url($masters[1]));
$log_offset = -s $a_node->logfile;
$a_node->restart;
is(claim($a_node, 'a, MOVED without a host'), $worker{a},
	'a: MOVED without a host: the worker id is kept');
ok(claimed_at($a_node, $masters[0], $log_offset),
	'a: MOVED without a host: claimed at master 0 on the same host');

# from a unix socket there is no host to reuse: a clear error
$log_offset = -s $d_node->logfile;
$d_node->restart;
$err = SnowidTest::psql_error($d_node, 'SELECT snowid_next()');
like($err, qr/ERROR:  58000: redis server at \Qunix:@{[$masters[0]->socket]}\E refused the worker id claim\nDETAIL:  Redis replied: MOVED \d+ :@{[$masters[2]->port]}/,
	'd: MOVED without a host to a unix socket URL: SQLSTATE 58000, naming the reply');

$cluster->announce_hostname('localhost');
set_all('cluster-preferred-endpoint-type', 'hostname');
$log_offset = -s $a_node->logfile;
# a redirection to a name is followed only if that name is listed: the URL
# names 127.0.0.1, and a name is never resolved to match an address
SnowidTest::set_conf($a_node, 'snowid.redis_redirect_hosts' => 'localhost, 127.0.0.1');
$a_node->restart;
is(claim($a_node, 'a, MOVED to a host name'), $worker{a},
	'a: MOVED to a host name: the worker id is kept');
ok($a_node->log_contains(
		qr/snowid claimed worker id $worker{a} of datacenter $dc[0] in redis at \Qlocalhost:@{[$masters[0]->port]}\E\n/,
		$log_offset),
	'a: MOVED to a host name: claimed at localhost, master 0');
set_all('cluster-preferred-endpoint-type', 'ip');
$d_node->restart;
is(claim($d_node, 'd restarted'), $worker{d}, 'd: the worker id is kept');

# Every server holds its own worker id in its datacenter.
my @servers = (
	[ a => $a_node ], [ b => $b_node ], [ c => $c_node ],
	[ d => $d_node ], [ e => $e_node ], [ f => $f_node ]);
my %holders;
for my $s (@servers)
{
	my ($name, $node) = @$s;
	my $dc = $dc_of{ $node->name };
	is(owners($dc)->{ $worker{$name} }, SnowidRedis::identity($node, $dc),
		"$name: the cluster has worker id $worker{$name} of datacenter $dc under its identity");
	$holders{"$dc/$worker{$name}"}++;
}
is(scalar keys %holders, scalar @servers,
	'no two servers share a worker id in a datacenter');

# Ids from all servers at once are unique.
my @runs = map {
	SnowidTest::start_psql($_->[1],
		'SELECT snowid_next() FROM generate_series(1, 20000)')
} @servers;
for my $run (@runs)
{
	is($run->finish, 0, 'ids taken concurrently') or diag($run->stderr);
	$ids->add(split /\n/, $run->stdout);
}

# 5. A master fails (here master 2, which holds the claims of b's
# datacenter): the cluster answers CLUSTERDOWN, and a server that claimed
# before and restarts issues no id until the cluster confirms the worker id
# in its cache, as when a lone Redis is down.
$masters[2]->stop;
$cluster->poll_state($masters[0], 'fail')
  or die 'master 0 did not notice that master 2 failed';
$b_node->restart;
my $down_err = SnowidTest::psql_error($b_node, 'SELECT snowid_next()');
like($down_err,
	qr/WARNING:  08006: redis server at \Q127.0.0.1:@{[$masters[0]->port]}\E did not complete the worker id claim\n[^\n]*DETAIL:  Redis replied: CLUSTERDOWN/,
	'cluster down: the CLUSTERDOWN reply is a WARNING');
like($down_err,
	qr/ERROR:  08006: snowid cannot confirm worker id $worker{b} of datacenter \d+ in redis\n/,
	'cluster down: b does not use its cached worker id unconfirmed');
$ids->no_duplicates;

my $logs = join '', map { slurp_file($_->[1]->logfile) } @servers;
unlike($logs, qr/\Q$password\E|\Q$admin_password\E/,
	'no password in any server log');
$_->[1]->stop for @servers;
done_testing();
