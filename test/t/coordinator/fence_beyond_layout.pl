# Retiring a worker id beyond a narrowed layout never lowers its fence.  A
# server that held worker id 6 on lease (worker_bits 3) and claims again
# with worker_bits 2 gives id 6 up; its fence must stay past every id the
# lease let it issue.  Before, the library read only the fences of ids up
# to the new highest one, so retiring id 6 wrote its fence anew from 0 (and
# a permanent holder's from its claim's usable time): the next holder of 6
# could start below ids already issued.  Run against Redis' function
# library through FCALL, as a server calls it; the coordination database's
# functions are checked for the same in coordinator/pg_store_functions.pl.  The servers
# of a datacenter run one layout (a switch stops them all, and the library
# refuses a wider one while others hold ids): each layout below is that of
# the one server of a datacenter of its own.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use SnowidRedis;
use Test::More;
use Time::HiRes qw(time usleep);

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $redis = SnowidRedis->new;
my $dc = 1;
my $base = "{snowid:dc:$dc}";
my $me = 'dc=1 host=h port=1 sysid=1 instance=0000000000000001';

# A call of the library as the server of that identity, with a holder
# secret of its own (after the token and a space, for a lease)
sub fcall
{
	my ($function, $identity, $numbers, @token) = @_;
	my $secret = '5e' x 32;

	return $redis->cli('FCALL', "snowid_3_$function", '3',
		map({ "$base:$_" } qw(owners leases fences)), $identity,
		$numbers, @token ? "$token[0] $secret" : $secret);
}

sub fence
{
	my ($id) = @_;
	my $value = $redis->cli('HGET', "$base:fences", $id);

	return $value eq '' ? 0 : $value;
}

my $now = int(time * 1000);

# A lease on id 6 (worker ids 0 to 7), its fence a lease of 1000 s ahead
my $got = fcall('lease_claim', $me,
	"7 1000000 $now " . ($now + 1000) . ' 6 0', '00000000000000a1');
like($got, qr/^6\n/, 'a lease on worker id 6');
my $fence6 = fence(6);
cmp_ok($fence6, '>=', $now + 1000000, 'fenced a lease ahead');

# The same server, its layout narrowed to worker ids 0 to 3, claims again
$got = fcall('lease_claim', $me,
	"3 1000000 $now " . ($now + 1000) . ' -1 0', '00000000000000a2');
like($got, qr/^[0-3]\n/, 'with worker ids 0 to 3 it takes one of them');
ok(!exists $redis->owners($dc)->{6}, 'and gives id 6 up');
cmp_ok(fence(6), '>=', $fence6, 'whose fence stays where its lease left it');

# A permanent holder of id 5 whose fence lies ahead, narrowed the same way
($dc, $base) = (2, '{snowid:dc:2}');
my $perm = 'dc=1 host=p port=1 sysid=1 instance=0000000000000002';
$redis->cli('HSET', "$base:fences", '5', $now + 500000);
$got = fcall('claim', $perm, "5 7 -1 0 " . ($now + 600000));
like($got, qr/^5\n/, 'a permanent claim of id 5 above its fence');
$got = fcall('claim', $perm, "-1 3 -1 0 " . ($now + 1000));
like($got, qr/^[0-3]\n/, 'narrowed, it claims one of 0 to 3');
cmp_ok(fence(5), '>=', $now + 500000, 'and id 5 keeps its fence');

# A permanent holder of id 4 without a fence, narrowed: id 4 is fenced just
# past the claim's usable time, which its holder may have issued at (as
# free() asks: that millisecond included, plus 1)
($dc, $base) = (3, '{snowid:dc:3}');
my $other = 'dc=1 host=q port=1 sysid=1 instance=0000000000000003';
$got = fcall('claim', $other, "4 7 -1 0 " . ($now + 1000));
like($got, qr/^4\n/, 'a permanent claim of id 4');
$got = fcall('claim', $other, "-1 3 -1 0 " . ($now + 2000));
like($got, qr/^[0-3]\n/, 'narrowed, it claims one of 0 to 3');
is(fence(4), $now + 2001, 'and id 4 is fenced just past its usable time');

# With 24 worker bits (ids 0 to 16777215) a claim's work is bounded by the
# ids that have a holder or a fence, not by 2^24: Redis never answers other
# clients BUSY while it runs.  Before, a lease claim walked every id (7.3 s
# measured, past Redis' 5 s limit; here the limit is 1 s, which a bounded
# claim stays far below even on a loaded machine).
$redis->cli('CONFIG', 'SET', 'lua-time-limit', '1000');
($dc, $base) = (4, '{snowid:dc:4}');
my $wide = 'dc=1 host=w port=1 sysid=1 instance=0000000000000004';
for my $call ([ 'lease_claim', "16777215 60000 $now " . ($now + 1000) . ' -1 0', '00000000000000a3' ],
	[ 'claim', "-1 16777215 -1 0 " . ($now + 1000) ])
{
	my ($function, $numbers, @token) = @$call;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $redis->cli_program, '-s', $redis->socket, '-e', 'FCALL',
			"snowid_3_$function", '3', map({ "$base:$_" } qw(owners leases fences)),
			$wide, $numbers, @token ],
		'<', \undef, '>', \$out, '2>', \$err);
	my ($pings, $busy) = (0, 0);
	while ($h->pumpable)
	{
		my $pong = $redis->try_cli('PING');
		$pings++;
		$busy++ unless defined $pong && $pong eq 'PONG';
		$h->pump_nb;
		usleep(20_000);
	}
	$h->finish;
	like($out, qr/^\d+\n/, "$function with 24 worker bits: granted");
	is($busy, 0, "$function with 24 worker bits: no other client was answered BUSY ($pings pings)");
}

done_testing();
