# Redis Sentinel (redis-sentinel:// URLs): three sentinels, a master and a
# replica.  Servers claim through the sentinels before a failover; after
# SENTINEL FAILOVER, and after the master is killed, servers started later
# claim from the new master and see every earlier claim.  With
# snowid.redis_min_replicas = 1, a claim followed at once by a failover is
# never handed out twice.  Each failure says what happened: no sentinel
# reachable, no master by that name, a "master" that is a replica, too few
# replicas acknowledging.  The sentinels' password may come from
# snowid.redis_sentinel_password_file rather than the URL.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidFakeRedis;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(usleep);

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 9;
my $master = SnowidRedis->new(tcp => 1, args => [ '--appendonly', 'yes' ]);
my $replica = SnowidRedis->new(tcp => 1,
	args => [ '--replicaof', '127.0.0.1', $master->port ]);
my @sentinels =
  map { SnowidRedis::Sentinel->new(master_port => $master->port) } 1 .. 3;
my $url = 'redis-sentinel://'
  . join(',', map { '127.0.0.1:' . $_->port } @sentinels) . '/mymaster';
my $ids = SnowidTest::Ledger->new;

# Waits until every sentinel knows the replica and the other sentinels, so
# that a failover can happen.
sub wait_for_sentinels
{
	for (1 .. 3000)
	{
		my $ready = 1;
		for my $s (@sentinels)
		{
			my $info = $s->try_cli('INFO', 'sentinel') // '';
			$ready = 0 unless $info =~ /status=ok,address=[^,]+,slaves=1,sentinels=3/;
		}
		return if $ready;
		usleep(20_000);
	}
	die 'the sentinels did not see the replica and each other';
}

# Waits until every sentinel names the server on $port as master and that
# server says it is one.
sub wait_for_master
{
	my ($port) = @_;

	for (1 .. 3000)
	{
		return
		  if !grep({ $_->master_port ne $port } @sentinels)
		  && (SnowidRedis::Sentinel::try_cli_port($port, 'ROLE') // '') =~ /^master/;
		usleep(20_000);
	}
	die "the sentinels did not make $port the master";
}

# Waits until the master on $port has a replica online.
sub wait_for_replica
{
	my ($port) = @_;

	for (1 .. 3000)
	{
		return
		  if (SnowidRedis::Sentinel::try_cli_port($port, 'INFO', 'replication') // '') =~
		  /slave0:.*state=online/;
		usleep(20_000);
	}
	die "no replica came online for $port";
}

# A server of datacenter $dc claiming through the sentinels, started.
my $n = 0;

sub claiming_node
{
	my (%settings) = @_;
	# the masters listen on other ports of the sentinels' host: listed, as
	# a host's other ports are followed only where the setting says; the
	# servers share one machine and its clock (a clock margin of a second:
	# a claim after a failover waits for a quiet period and its floor)
	my $node = SnowidTest::new_node('sentinel' . $n++,
		{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $url,
		  'snowid.redis_timeout_ms' => 3000, 'snowid.clock_margin' => '1s',
		  'snowid.redis_redirect_hosts' => '127.0.0.1', %settings });

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

wait_for_replica($master->port);
wait_for_sentinels();

# Before a failover.
my $pa = claiming_node('snowid.redis_min_replicas' => 1);
$ids->collect($pa, 1000);
is(SnowidRedis::worker($pa), '0|redis', 'through the sentinels: claimed');
is_deeply($master->owners($dc), { 0 => SnowidRedis::identity($pa, $dc) },
	'the claim is on the master');
is_deeply($replica->owners($dc), { 0 => SnowidRedis::identity($pa, $dc) },
	'min_replicas = 1: the replica has it when the id is used');
ok($pa->log_contains(qr/snowid claimed worker id 0 of datacenter $dc in redis at 127\.0\.0\.1:@{[$master->port]}/),
	'the log names the master claimed from');
my $pb = claiming_node();
$ids->collect($pb, 1000);
is(SnowidRedis::worker($pb), '1|redis', 'a second server: the next id');

# SENTINEL FAILOVER: the replica becomes master.
$sentinels[0]->cli('SENTINEL', 'FAILOVER', 'mymaster');
wait_for_master($replica->port);
wait_for_replica($replica->port);
my $pc = claiming_node('snowid.redis_min_replicas' => 1);
$ids->collect($pc, 1000);
is(SnowidRedis::worker($pc), '2|redis',
	'after SENTINEL FAILOVER: a new server sees the earlier claims');
is(scalar(keys %{ $replica->owners($dc) }), 3,
	'after SENTINEL FAILOVER: the new master has all three claims');

# Kill the new master: the sentinels promote the old one, which followed
# it as a replica.
wait_for_sentinels();
$replica->stop;
wait_for_master($master->port);
my $pd = claiming_node('snowid.redis_min_replicas' => 0);
$ids->collect($pd, 1000);
is(SnowidRedis::worker($pd), '3|redis',
	'after the master was killed: a new server sees every earlier claim');
$pb->restart;
$ids->collect($pb, 1000);
is(SnowidRedis::worker($pb), '1|redis',
	'after two failovers: a restarted server gets its own id back');

# The killed master comes back as a replica; a claim with min_replicas = 1
# followed at once by a failover is on the new master.
$replica->start;
wait_for_replica($master->port);
wait_for_sentinels();
my $pe = claiming_node('snowid.redis_min_replicas' => 1);
$ids->collect($pe, 1000);
$sentinels[1]->cli('SENTINEL', 'FAILOVER', 'mymaster');
wait_for_master($replica->port);
my $pf = claiming_node();
$ids->collect($pf, 1000);
my %held;
$held{ SnowidRedis::worker($_) =~ s/\|.*//r }++ for ($pa, $pb, $pc, $pd, $pe, $pf);
is(scalar(keys %held), 6,
	'claim followed at once by a failover: six servers, six worker ids');
is(scalar(keys %{ $replica->owners($dc) }), 6,
	'the new master holds all six claims');

# Too few replicas: WAIT cannot be satisfied, the id is not used.
wait_for_replica($replica->port);
# The one replica normally acknowledges at once; on a busy machine it may
# not within the WAIT, and the error says so with 0.  Either way the count
# in the message is the one WAIT returned.
my $pg = claiming_node('snowid.redis_min_replicas' => 2);
my $err = SnowidTest::psql_error($pg, 'SELECT snowid_next()');
like($err, qr/ERROR:  53000: only ([01]) of the 2 redis replicas required acknowledged the worker id claim at 127\.0\.0\.1:\d+\nDETAIL:  The claimed worker id is not used: a failover now could lose the claim and give the id to another server\. WAIT 2 \d+ returned \1\.\nHINT:  Check that the replicas are up and connected, or lower snowid.redis_min_replicas\./,
	'too few replicas: a clear error');
is(SnowidRedis::worker($pg), '|none', 'too few replicas: no worker id');

# No master by that name.
my $ph = claiming_node('snowid.redis_url' => $url =~ s/mymaster/nosuch/r);
$err = SnowidTest::psql_error($ph, 'SELECT snowid_next()');
like($err, qr/ERROR:  42704: redis sentinels know no master named "nosuch"\nDETAIL:  Sentinel 127\.0\.0\.1:\d+ knows no master named "nosuch"\.\nHINT:  The name after the sentinels/,
	'unknown master name: a clear error');

# A "sentinel" naming a replica as master (a stale sentinel).
my $stale = SnowidFakeRedis->new(SENTINEL =>
	  'perl:"*2\r\n\$9\r\n127.0.0.1\r\n\$' . length($master->port) . '\r\n'
	  . $master->port . '\r\n"');
$ph->stop;
SnowidTest::set_conf($ph,
	'snowid.redis_url' => 'redis-sentinel://127.0.0.1:' . $stale->port . '/mymaster');
$ph->start;
$err = SnowidTest::psql_error($ph, 'SELECT snowid_next()');
like($err, qr/ERROR:  08006: redis server at 127\.0\.0\.1:@{[$master->port]}, named master by the sentinels, is not a master\nDETAIL:  ROLE says the server is a replica\.\nHINT:  A failover is probably under way/,
	'a master that is a replica: a clear error');

# A sentinel with a password of its own: given as sentinel_password, the
# claim goes through; missing or wrong, the error says so without it.
my $sentinel_password = 'spw-Sentinel-7k7w';
my $guarded = SnowidRedis::Sentinel->new(master_port => $replica->port,
	name => 'guarded', quorum => 1, password => $sentinel_password);
my $guarded_url = 'redis-sentinel://127.0.0.1:' . $guarded->port . '/guarded';
my $pi = claiming_node('snowid.redis_url' =>
	  "$guarded_url?sentinel_password=" . ($sentinel_password =~ s/-/%2D/gr));
$ids->collect($pi, 1000);
like(SnowidRedis::worker($pi), qr/^\d+\|redis$/,
	'a sentinel with a password, given as sentinel_password: claimed');

# The sentinels' password in snowid.redis_sentinel_password_file, out of
# every setting: read at the claim, the URL holds none.
my $spwfile = PostgreSQL::Test::Utils::tempdir_short() . '/sentinel.pw';
open(my $fh, '>', $spwfile) or die $!;
print $fh "$sentinel_password\n";
close $fh;
chmod 0600, $spwfile or die $!;
$pi->stop;
SnowidTest::set_conf($pi, 'snowid.redis_url' => $guarded_url,
	'snowid.redis_sentinel_password_file' => $spwfile);
$pi->start;
unlink $pi->data_dir . '/snowid_worker';
$ids->collect($pi, 1000);
like(SnowidRedis::worker($pi), qr/^\d+\|redis$/,
	'the sentinels\' password from snowid.redis_sentinel_password_file: claimed');
SnowidTest::set_conf($pi, 'snowid.redis_sentinel_password_file' => '');
$pi->stop;
SnowidTest::set_conf($pi, 'snowid.redis_url' => $guarded_url);
$pi->start;
unlink $pi->data_dir . '/snowid_worker';
$err = SnowidTest::psql_error($pi, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: could not reach any redis sentinel to find master "guarded"\nDETAIL:  The last one tried, at 127\.0\.0\.1:\d+: The sentinel replied: NOAUTH Authentication required\.\nHINT:  .*sentinel_password/,
	'a sentinel with a password, none given: a clear error');
$pi->stop;
SnowidTest::set_conf($pi,
	'snowid.redis_url' => "$guarded_url?sentinel_user=default&sentinel_password=wrong-Pass-1234");
$pi->start;
$err = SnowidTest::psql_error($pi, 'SELECT snowid_next()');
like($err, qr/DETAIL:  The last one tried, at 127\.0\.0\.1:\d+: Redis refused AUTH \(WRONGPASS\); the rest of its reply is not shown because AUTH carried the password\./,
	'a wrong sentinel password: refused, the reply not shown');
$pi->stop;
unlike(slurp_file($pi->logfile), qr/\Q$sentinel_password\E|wrong-Pass/,
	'the sentinel passwords are not in the server log');
$guarded->stop;

# No sentinel reachable.
$_->stop for @sentinels;
$ph->stop;
SnowidTest::set_conf($ph, 'snowid.redis_url' => $url);
$ph->start;
$err = SnowidTest::psql_error($ph, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: could not reach any redis sentinel to find master "mymaster"\nDETAIL:  The last one tried, at 127\.0\.0\.1:\d+: Connection refused\.\nHINT:  Check that the sentinels named in snowid.redis_url are running/,
	'no sentinel reachable: a clear error');

$ids->no_duplicates;
$_->stop for ($pa, $pb, $pc, $pd, $pe, $pf, $pg, $ph);
done_testing();
