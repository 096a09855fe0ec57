# The worker-id claim against Valkey (valkey-server, Valkey 8 from Debian
# 12's backports, fetched by test/tools/pgbuild valkey): the essential scenarios
# of the Redis tests, on every PostgreSQL version.  Two servers of one
# datacenter claim different ids, once each; a restart keeps the id; a
# configured id that another server holds is refused; a full datacenter is
# refused until an id is freed; a wrong password and an ACL without the
# script's commands fail clearly; an allkeys-* eviction policy is warned
# about; and in Valkey's cluster mode claims follow -MOVED and -ASK.  The
# servers log in as a Valkey user with the minimal ACL of the README.
#
# test/run --redis valkey runs all the Redis tests against Valkey too.
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

my %valkey = SnowidRedis::valkey();
# Valkey's programs, from SNOWID_VALKEY_BIN or PATH: a skip naming the
# package where they are missing (a failure under SNOWID_REQUIRE_TOOLS=1)
SnowidTest::missing_tool('needs valkey-server and valkey-cli (Debian package'
	  . ' valkey-server, in bookworm-backports; or test/tools/pgbuild valkey,'
	  . ' then SNOWID_VALKEY_BIN=its bin directory)')
  unless %valkey;

my $dc = 9;
my $key = SnowidRedis::owners_key($dc);
# Markers that must never show up in a log or an error
my $admin_password = 'pw-Valkey-Admin-2w7k';
my $password = 'pw-Valkey-Clm-9k1w';
my $wrong = 'pw-Valkey-Wrong-6d05';

my $valkey = SnowidRedis->new(%valkey, password => $admin_password);
like($valkey->cli('INFO', 'server'), qr/^valkey_version:8\./m,
	'the server is Valkey 8');

# The minimal ACL of the README, and one without HSET.
$valkey->cli('ACL', 'SETUSER', 'snowid', 'on', ">$password",
	'~{snowid:dc:*}:*', '+fcall', '+hgetall', '+hget', '+hset', '+hdel', '+time',
	'+select', '+info');
$valkey->cli('ACL', 'SETUSER', 'nohset', 'on', ">$password",
	'~{snowid:dc:*}:*', '+fcall', '+hgetall', '+hget', '+hdel', '+time');

sub url
{
	my ($server, $user, $pw) = @_;

	return 'unix://' . ($user // 'snowid') . ':' . ($pw // $password) . '@'
	  . $server->socket;
}

my $ids = SnowidTest::Ledger->new;
# (the cluster's masters listen on other ports of 127.0.0.1: listed; the
# servers share one machine and its clock, a clock margin of a second: a
# claim after a restart of the store waits for a quiet period and its floor)
my %settings = ('snowid.datacenter_id' => $dc, 'snowid.redis_url' => url($valkey),
	'snowid.redis_redirect_hosts' => '127.0.0.1', 'snowid.clock_margin' => '1s');
my @nodes = map { SnowidTest::new_node("valkey_$_", \%settings) } qw(a b c);
my ($a_node, $b_node, $c_node) = @nodes;
for my $node (@nodes)
{
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
}

# Two servers of one datacenter: one claim each, different ids.
$ids->collect($_, 1000) for ($a_node, $b_node);
my ($worker_a, $source_a) = split /\|/, SnowidRedis::worker($a_node);
my ($worker_b, $source_b) = split /\|/, SnowidRedis::worker($b_node);
is("$source_a $source_b", 'redis redis', 'both servers claimed from Valkey');
isnt($worker_a, $worker_b, 'the second server got a different worker id');
is_deeply(
	$valkey->owners($dc),
	{
		$worker_a => SnowidRedis::identity($a_node, $dc),
		$worker_b => SnowidRedis::identity($b_node, $dc)
	},
	'Valkey holds both claims under the servers\' identities');
# each server's first call registers its holder key (answered
# SNOWID_REGISTER), then claims: two calls, one claim
is($valkey->command_calls->{fcall}, 2 * 2, 'one claim per server, with its registration');

# A restart keeps the id.
$a_node->restart;
$ids->collect($a_node, 1000);
is(SnowidRedis::worker($a_node), "$worker_a|redis", 'a restart keeps the worker id');
is($valkey->command_calls->{fcall}, 2 * 2 + 1, 'the restart claimed once (its key registered already)');

# A wrong password.
SnowidTest::set_conf($c_node, 'snowid.redis_url' => url($valkey, 'snowid', $wrong));
$c_node->restart;
my $err = SnowidTest::psql_error($c_node, 'SELECT snowid_next()');
like($err, qr/ERROR:  28P01: authentication to redis server at \Qunix:@{[$valkey->socket]}\E failed/,
	'wrong password: SQLSTATE 28P01');

# A user whose ACL lacks a command of the script.
SnowidTest::set_conf($c_node, 'snowid.redis_url' => url($valkey, 'nohset'));
$c_node->restart;
$err = SnowidTest::psql_error($c_node, 'SELECT snowid_next()');
like($err, qr/ERROR:  42501: redis user may not claim a worker id at /,
	'ACL without HSET: SQLSTATE 42501');
like($err, qr/DETAIL:  Redis replied: .*'hset'/,
	'ACL without HSET: the detail names the command');
is(SnowidRedis::worker($c_node), '|none', 'ACL without HSET: no worker id');

# A configured id that another server holds.
SnowidTest::set_conf($c_node, 'snowid.redis_url' => url($valkey),
	'snowid.worker_id' => $worker_a);
$c_node->restart;
$err = SnowidTest::psql_error($c_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55006: worker id $worker_a of datacenter $dc is held by another server\n/,
	'configured id held by another server: SQLSTATE 55006');
like($err, qr/DETAIL:  .*Redis has worker id $worker_a registered to "\Q@{[SnowidRedis::identity($a_node, $dc)]}\E"/,
	'the error names the holder');

# A full datacenter: every other id is held by servers elsewhere.
SnowidTest::set_conf($c_node, 'snowid.worker_id' => -1);
$c_node->restart;
for my $id (grep { $_ != $worker_a && $_ != $worker_b } 0 .. 31)
{
	$valkey->cli('HSET', $key, $id, "dc=$dc host=elsewhere port=$id sysid=1");
}
$err = SnowidTest::psql_error($c_node, 'SELECT snowid_next()');
like($err, qr/ERROR:  53400: all 32 worker ids of datacenter $dc are held\n/,
	'full datacenter: SQLSTATE 53400');
my $freed = $worker_a == 17 || $worker_b == 17 ? 18 : 17;
ok($valkey->free($dc, $freed, 0) > 0,
	'the library\'s snowid_3_free frees an id on Valkey');
$ids->collect($c_node, 1000);
is(SnowidRedis::worker($c_node), "$freed|redis",
	'the next call claims the freed id, without a restart');

# An eviction policy that may drop the claims is warned about.
$valkey->cli('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
my $log_offset = -s $b_node->logfile;
$b_node->restart;
$ids->collect($b_node, 1000);
is(SnowidRedis::worker($b_node), "$worker_b|redis", 'b: a restart keeps the worker id');
ok($b_node->log_contains(
		qr/WARNING:  redis server at \Qunix:@{[$valkey->socket]}\E may evict snowid's worker id claims/,
		$log_offset),
	'allkeys-lru: a WARNING');
$valkey->stop;

# Valkey's cluster mode: three masters; a and b move to datacenters that
# live in it (and claim anew there, as new servers would).
my $cluster = SnowidRedisCluster->new(%valkey, password => $admin_password);
my @masters = $cluster->masters;
$cluster->acl_setuser('snowid', 'on', ">$password", '~{snowid:dc:*}:*',
	'+fcall', '+hgetall', '+hget', '+hset', '+hdel', '+time', '+asking', '+info');

# Two datacenters of the same master, 0.
my @dc0;
for my $d (0 .. 31)
{
	my $slot = $cluster->keyslot(SnowidRedis::owners_key($d));
	push @dc0, [ $d, $slot ] if $cluster->owner($slot) == $masters[0];
}
my ($moved_dc, $ask_dc) = @dc0[ 0, 1 ];
die 'no two datacenters on master 0' unless $ask_dc && $moved_dc->[1] != $ask_dc->[1];

sub claimed_at
{
	my ($node, $master, $offset) = @_;

	return $node->log_contains(
		qr/snowid claimed worker id \d+ of datacenter \d+ in redis at \Q127.0.0.1:@{[$master->port]}\E\n/,
		$offset);
}

# -MOVED: a names master 1, which does not own its datacenter's slot.
SnowidTest::set_conf($a_node,
	'snowid.datacenter_id' => $moved_dc->[0],
	'snowid.redis_url' => "redis://snowid:$password\@127.0.0.1:" . $masters[1]->port);
$log_offset = -s $a_node->logfile;
$a_node->restart;
$ids->collect($a_node, 1000);
like(SnowidRedis::worker($a_node), qr/^\d+\|redis$/, 'cluster: a claimed');
ok(claimed_at($a_node, $masters[0], $log_offset),
	'cluster: a followed MOVED to master 0');

# -ASK: b claims in its datacenter on master 0, then the slot migrates to
# master 2 and its keys (owners, leases and fences: the claim reads them
# together) move there; b, restarted, follows MOVED to master 0, then ASK
# to master 2.
SnowidTest::set_conf($b_node,
	'snowid.datacenter_id' => $ask_dc->[0],
	'snowid.redis_url' => "redis://snowid:$password\@127.0.0.1:" . $masters[1]->port);
$b_node->restart;
$ids->collect($b_node, 1000);
my ($worker_ask) = split /\|/, SnowidRedis::worker($b_node);
like(SnowidRedis::worker($b_node), qr/^\d+\|redis$/, 'cluster: b claimed');
$cluster->start_migration($ask_dc->[1], $masters[0], $masters[2]);
is($cluster->migrate_keys($ask_dc->[1], $masters[0], $masters[2]), 3,
	'cluster: the three keys of b\'s datacenter move to master 2');
$log_offset = -s $b_node->logfile;
$b_node->restart;
$ids->collect($b_node, 1000);
is(SnowidRedis::worker($b_node), "$worker_ask|redis",
	'cluster: b, restarted during the migration, keeps its worker id');
ok(claimed_at($b_node, $masters[2], $log_offset),
	'cluster: b followed MOVED to master 0, then ASK to master 2');
# b's check-ins may come by ASK too
cmp_ok($cluster->calls($masters[2], 'asking'), '>=', 1,
	'cluster: master 2 received ASKING');
$cluster->finish_migration($ask_dc->[1], $masters[0], $masters[2]);
is_deeply($masters[2]->owners($ask_dc->[0]),
	{ $worker_ask => SnowidRedis::identity($b_node, $ask_dc->[0]) },
	'cluster: after the migration, master 2 holds b\'s claim');
$b_node->restart;
$ids->collect($b_node, 1000);
is(SnowidRedis::worker($b_node), "$worker_ask|redis",
	'cluster: a restart after the migration keeps the worker id');

$ids->no_duplicates;
$_->stop for @nodes;
my $logs = join '', map { slurp_file($_->logfile) } @nodes;
unlike($logs, qr/\Q$password\E|\Q$admin_password\E|\Q$wrong\E/,
	'no password in any server log');
done_testing();
