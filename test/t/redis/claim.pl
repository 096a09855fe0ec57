# Worker ids claimed from Redis: three servers of one datacenter, started
# together with many sessions each asking for an id at once, claim one
# distinct id each, with exactly one claim per server; ids taken from all
# three at the same time are unique; a restart keeps the id; and Redis
# receives no command while ids are generated.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 4;
my $sessions = 8;		# per server, asking for their first id at once
my $takers = 2;			# per server, taking ids concurrently
my $per_taker = 50_000;

my $redis = SnowidRedis->new;

# Check-ins an hour apart: a check-in is the servers' own call, on its
# schedule (every 5 s by default), which a slow run of the ids below would
# see as Redis hearing from them while ids were generated.
my @nodes = map {
	$redis->new_node("claim_$_",
		{ 'snowid.datacenter_id' => $dc, 'snowid.checkin_interval' => '1h' })
} qw(a b c);
$_->start for @nodes;

# Waits for background psqls; returns all their output lines.
sub finish_psql
{
	my ($name, @runs) = @_;
	my @lines;

	for my $run (@runs)
	{
		is($run->finish, 0, "$name: session finished without error")
		  or diag($run->stderr);
		push @lines, split /\n/, $run->stdout;
	}
	return @lines;
}

# The ids of all servers together.
my $ids = SnowidTest::Ledger->new;

# Many sessions per server wait at a gate (an advisory lock held by one
# session of that server) and then all take their first id at once, right
# after the server came up.
my @gates;
my @first;
for my $node (@nodes)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	is(SnowidRedis::worker($node), '|none',
		$node->name . ': no worker id before first use');
	my $gate = SnowidTest::Gate->new($node);
	push @gates, $gate;
	push @first, $gate->psql('SELECT snowid_next()') for 1 .. $sessions;
}
$_->wait_for($sessions) for @gates;
is($redis->command_calls->{fcall} // 0, 0, 'no claim before first use');
$_->release for @gates;
my @first_ids = grep { /^\d+$/ } finish_psql('first ids', @first);
is(scalar @first_ids, 3 * $sessions, 'every session got its first id');

# A server's first call to a store that has no key of its holder name is
# answered SNOWID_REGISTER, and the server registers the key with the claim
# at once: two calls, one claim.
is($redis->command_calls->{fcall}, 2 * 3,
	'exactly one claim per server (with its registration), however many sessions asked at once');

# Each server holds one distinct id, registered under its own identity.
my $owners = $redis->owners($dc);
my %worker_of;
for my $node (@nodes)
{
	my ($worker_id, $source) = split /\|/, SnowidRedis::worker($node);
	is($source, 'redis', $node->name . ': worker_source is redis');
	is($owners->{$worker_id}, SnowidRedis::identity($node, $dc),
		$node->name . ": Redis has worker id $worker_id under its identity");
	$worker_of{ $node->name } = $worker_id;
}
is(scalar keys %$owners, 3, 'Redis holds exactly three claims');
my %distinct = map { $_ => 1 } values %worker_of;
is(scalar keys %distinct, 3, 'the three worker ids are distinct');

# The first ids carry the datacenter and one of the claimed worker ids.
my $wrong_first = grep {
	!exists $distinct{ ($_ >> 12) & 31 } || (($_ >> 17) & 31) != $dc
} @first_ids;
is($wrong_first, 0, 'the first ids carry the datacenter and a claimed worker id');
$ids->add(@first_ids);

# Ids from all three servers at the same time; Redis hears nothing meanwhile.
my $before = $redis->command_calls;
my @runs;
for my $node (@nodes)
{
	for (1 .. $takers)
	{
		push @runs, [ $node, SnowidTest::start_psql($node,
			"SELECT snowid_next() FROM generate_series(1, $per_taker)") ];
	}
}
for my $r (@runs)
{
	my ($node, $run) = @$r;
	my @taken = finish_psql($node->name . ' ids', $run);
	is(scalar @taken, $per_taker, $node->name . ": $per_taker ids");
	my $wrong =
	  grep { (($_ >> 12) & 31) != $worker_of{ $node->name } } @taken;
	is($wrong, 0, $node->name . ': every id carries its claimed worker id');
	$ids->add(@taken);
}
is_deeply($redis->command_calls, $before,
	'Redis received no command while ids were generated');
is($ids->count, 3 * ($sessions + $takers * $per_taker), 'all ids recorded');
$ids->no_duplicates('no duplicate among the ids of all three servers');

# A restart claims again, once, and gets the same id back.
my ($node_a) = @nodes;
my $worker_a = $worker_of{ $node_a->name };
$node_a->restart;
is($node_a->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowid_status()'),
	't', 'after a restart: the worker id is claimed on first use');
$ids->collect($node_a, 1);
is(SnowidRedis::worker($node_a), "$worker_a|redis",
	'a restart keeps the worker id');
is($redis->command_calls->{fcall}, 2 * 3 + 1, 'the restart claimed once (its key registered already)');
is_deeply($redis->owners($dc), $owners,
	'the restart left the claims in Redis unchanged');
ok($node_a->log_contains(
		qr/\Qsnowid claimed worker id $worker_a of datacenter $dc in redis at unix:@{[$redis->socket]}\E/),
	'the claim is logged');

# The cache file holds the claim with the identity.
like(slurp_file($node_a->data_dir . '/snowid_worker'),
	qr/^snowid_worker 2 datacenter_id=$dc worker_id=$worker_a worker_bits=5 store=redis identity=\Q@{[SnowidRedis::identity($node_a, $dc)]}\E\n\z/,
	'the claim is cached in the data directory');

$ids->no_duplicates;
$_->stop for @nodes;
done_testing();
