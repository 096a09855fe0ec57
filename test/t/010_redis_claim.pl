# Worker ids claimed from Redis: three servers of one datacenter, started
# together with many sessions each asking for an id at once, claim one
# distinct id each, with exactly one claim per server; ids taken from all
# three at the same time are unique; a restart keeps the id; and Redis
# receives no command while ids are generated.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use Sys::Hostname;
use Test::More;

my $dc = 4;
my $sessions = 8;		# per server, asking for their first id at once
my $takers = 2;			# per server, taking ids concurrently
my $per_taker = 50_000;

my $redis = SnowidRedis->new;

my @nodes = map {
	SnowidRedis::new_node("claim_$_", {
		'snowid.datacenter_id' => $dc,
		'snowid.redis_url' => $redis->url })
} qw(a b c);
$_->start for @nodes;

# Identity of a server as it claims in Redis.
sub identity
{
	my $node = shift;
	my $sysid = $node->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()');

	return "dc=$dc host=" . hostname() . ' port=' . $node->port
	  . " sysid=$sysid";
}

# Starts psql in the background; returns [ handle, \stdout, \stderr ].
sub start_psql
{
	my ($node, $sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);

	return [ $h, \$out, \$err ];
}

# Waits for background psqls; returns all their output lines.
sub finish_psql
{
	my ($name, @runs) = @_;
	my @lines;

	for my $r (@runs)
	{
		my ($h, $out, $err) = @$r;
		$h->finish;
		is($h->result(0), 0, "$name: session finished without error")
		  or diag($$err);
		push @lines, split /\n/, $$out;
	}
	return @lines;
}

# The ids of all servers together, with the worker id of their server.
my %issued;
my $duplicates = 0;

sub record_ids
{
	my ($worker_id, @ids) = @_;

	for my $id (@ids)
	{
		$duplicates++ if exists $issued{$id};
		$issued{$id} = $worker_id;
	}
}

# Many sessions per server wait at a gate (an advisory lock held by one
# session of that server) and then all take their first id at once, right
# after the server came up.
my @gates;
my @first;
for my $node (@nodes)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	is($node->safe_psql('postgres',
			'SELECT worker_id IS NULL, worker_source FROM snowid_status()'),
		't|none', $node->name . ': no worker id before first use');
	my $gate = $node->background_psql('postgres');
	$gate->query_safe('SELECT pg_advisory_lock(1)');
	push @gates, $gate;
	for (1 .. $sessions)
	{
		push @first, start_psql($node, q{
			SELECT pg_advisory_lock_shared(1);
			SELECT pg_advisory_unlock_shared(1);
			SELECT snowid_next();
		});
	}
}
for my $node (@nodes)
{
	$node->poll_query_until('postgres', qq{
		SELECT count(*) = $sessions FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted})
	  or die 'sessions did not reach the gate';
}
is($redis->command_calls->{eval} // 0, 0, 'no claim before first use');
$_->query_safe('SELECT pg_advisory_unlock(1)') for @gates;
my @first_ids = grep { /^\d+$/ } finish_psql('first ids', @first);
$_->quit for @gates;
is(scalar @first_ids, 3 * $sessions, 'every session got its first id');

is($redis->command_calls->{eval}, 3,
	'exactly one claim per server, however many sessions asked at once');

# Each server holds one distinct id, registered under its own identity.
my $owners = $redis->owners($dc);
my %worker_of;
for my $node (@nodes)
{
	my ($worker_id, $source) = split /\|/,
	  $node->safe_psql('postgres',
		'SELECT worker_id, worker_source FROM snowid_status()');
	is($source, 'redis', $node->name . ': worker_source is redis');
	is($owners->{$worker_id}, identity($node),
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
record_ids(($_ >> 12) & 31, $_) for @first_ids;

# Ids from all three servers at the same time; Redis hears nothing meanwhile.
my $before = $redis->command_calls;
my @runs;
for my $node (@nodes)
{
	for (1 .. $takers)
	{
		push @runs, [ $node, start_psql($node,
			"SELECT snowid_next() FROM generate_series(1, $per_taker)") ];
	}
}
for my $r (@runs)
{
	my ($node, $run) = @$r;
	my @ids = finish_psql($node->name . ' ids', $run);
	is(scalar @ids, $per_taker, $node->name . ": $per_taker ids");
	my $wrong = grep { (($_ >> 12) & 31) != $worker_of{ $node->name } } @ids;
	is($wrong, 0, $node->name . ': every id carries its claimed worker id');
	record_ids($worker_of{ $node->name }, @ids);
}
is_deeply($redis->command_calls, $before,
	'Redis received no command while ids were generated');
is(scalar keys %issued, 3 * ($sessions + $takers * $per_taker),
	'all ids recorded');
is($duplicates, 0, 'no duplicate among the ids of all three servers');

# A restart claims again, once, and gets the same id back.
my ($node_a) = @nodes;
my $worker_a = $worker_of{ $node_a->name };
$node_a->restart;
is($node_a->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowid_status()'),
	't', 'after a restart: the worker id is claimed on first use');
my $id = $node_a->safe_psql('postgres', 'SELECT snowid_next()');
record_ids($worker_a, $id);
is($node_a->safe_psql('postgres',
		'SELECT worker_id, worker_source FROM snowid_status()'),
	"$worker_a|redis", 'a restart keeps the worker id');
is($redis->command_calls->{eval}, 4, 'the restart claimed once');
is_deeply($redis->owners($dc), $owners,
	'the restart left the claims in Redis unchanged');
ok($node_a->log_contains(
		qr/\Qsnowid claimed worker id $worker_a of datacenter $dc in redis at unix:@{[$redis->socket]}\E/),
	'the claim is logged');

# The cache file holds the claim with the identity.
like(slurp_file($node_a->data_dir . '/snowid_worker'),
	qr/^snowid_worker 1 datacenter_id=$dc worker_id=$worker_a worker_bits=5 identity=\Q@{[identity($node_a)]}\E\n\z/,
	'the claim is cached in the data directory');

is($duplicates, 0, 'no duplicate among all ids');
$_->stop for @nodes;
done_testing();
