# A value written into Redis must not put a server out of service.  Anyone
# who could write snowid's keys used to set a fence far in the future
# (HSET {snowid:dc:N}:fences 0 3400000000000, the year 2077): a server
# renewing that lease took it as its own fence, and the next server to
# claim the id moved its generator there, wrote it into its mark and WAL,
# and failed every snowid_next() from then on.  Now every fence from Redis
# must lie within what a snowid server can have written by now (this
# server's clock plus the largest drift budget and lease, plus a day of
# clock difference, doc/redis.md): a renewal keeps its own fence and logs
# where the bad one is; a claim that finds only such fences is refused with
# an error naming the key and the field; nothing of it reaches the
# generator, and once the field is repaired the server claims as usual.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 5;
my $far = '3400000000000';    # 2077-09-28, in Unix ms
my $fences = "{snowid:dc:$dc}:fences";
my $owners = "{snowid:dc:$dc}:owners";
my $redis = SnowidRedis->new;
my %lease = (
	'snowid.datacenter_id' => $dc,
	'snowid.worker_bits' => 1,
	'snowid.worker_lease' => '3s');

# Whether a server's generator, its mark and its fence lie in the present:
# within an hour of now.
sub in_the_present
{
	my ($node, $name) = @_;

	is( $node->safe_psql(
			'postgres', q{
		SELECT coalesce(last_time, now()) < now() + interval '1 hour'
		   AND coalesce(high_water_time, now()) < now() + interval '1 hour'
		   AND coalesce(fence_time, now()) < now() + interval '1 hour'
		FROM snowid_status()}),
		't',
		"$name: the generator, its mark and its fence lie in the present");
}

# Ids of a server decode to the present.
sub ids_of_now
{
	my ($node, $name) = @_;

	is( $node->safe_psql(
			'postgres', q{
		SELECT bool_and((snowid_decode(id)).ts
		                BETWEEN now() - interval '1 hour' AND now() + interval '1 hour')
		FROM (SELECT snowid_next() AS id FROM generate_series(1, 100)) AS t}),
		't',
		"$name: ids decode to the present");
}

# -- a renewal meets a fence someone moved to 2077 -------------------------

my $holder = $redis->new_node('holder', \%lease);
$holder->start;
$holder->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $w = SnowidLease::wait_lease($holder);
my $renewals =
  $holder->safe_psql('postgres', 'SELECT renewals FROM snowid_status()');
$redis->cli('HSET', $fences, $w, $far);
$holder->poll_query_until('postgres',
	"SELECT renewals >= $renewals + 2 FROM snowid_status()")
  or die 'the lease was not renewed';
in_the_present($holder, 'renewal');
ids_of_now($holder, 'renewal');
ok( $holder->log_contains(
		qr/WARNING:  snowid refused the fence redis holds for worker id $w of datacenter $dc\n.*DETAIL:  Field "$w" of key \Q$fences\E holds $far /
	),
	'the renewal logs which key and field hold the bad fence');
ok($holder->log_contains(qr/HINT:  .*HSET \Q$fences\E $w \d+\./),
	'and how to set it back');

# The holder stops without giving its id back: its lease runs out in Redis.
$holder->stop('immediate');
for my $id (0, 1)
{
	$redis->cli('HSET', $fences, $id, $far);
}
sleep 4;

# -- a lease claim finds nothing but such fences ----------------------------

# the owners hash as a line
sub owners_line
{
	my $owners = $redis->owners($dc);

	return join ',', map { "$_=$owners->{$_}" } sort keys %$owners;
}

my $before = owners_line();
my $leaser = $redis->new_node('leaser', \%lease);
$leaser->start;
$leaser->safe_psql('postgres', 'CREATE EXTENSION snowid');
$leaser->wait_for_log(
	qr/redis holds an impossible fence for worker id \d of datacenter $dc/);
ok( $leaser->log_contains(
		qr/redis holds an impossible fence for worker id (\d) of datacenter $dc\n.*DETAIL:  Field "\1" of key \Q$fences\E \(or field "fence:\1" of key \Q$owners\E\) holds the fence $far, \d+ ms past the latest one a snowid server can have written by now\./
	),
	'a lease claim is refused with the key and the field of the fence');
like(SnowidTest::psql_error($leaser, 'SELECT snowid_next()'),
	qr/ERROR:  (XX001|55000):/, 'and the server issues no id');
in_the_present($leaser, 'refused lease claim');
is(owners_line(), $before, 'the refused claim wrote nothing');
$leaser->stop;

# -- a permanent claim of a configured id -----------------------------------

# the other id: the holder's lease, run out, is still listed
my $other = 1 - $w;
$redis->cli('HSET', $owners, "fence:$other", $far);
my $fixed = $redis->new_node('fixed',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => $other });
$fixed->start;
$fixed->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($fixed, 'SELECT snowid_next()');
like(
	$err,
	qr/ERROR:  XX001: redis holds an impossible fence for worker id $other of datacenter $dc\nDETAIL:  Field "$other" of key \Q$fences\E \(or field "fence:$other" of key \Q$owners\E\) holds the fence $far, /,
	'a configured worker id is refused with the key and the field of its fence');
like($err, qr/HINT:  Find out who else writes snowid's keys, then set both fields with HSET/,
	'and the hint says what to do');
in_the_present($fixed, 'refused permanent claim');
is($redis->cli('HGET', $owners, $other), '', 'nothing was written');

# -- repaired, both claim as usual, after a restart too ---------------------

# as the hint says: both fields set to the present (no server issued later)
my $now = int(Time::HiRes::time() * 1000);
$redis->cli('HSET', $owners, "fence:$other", $now);
$redis->cli('HSET', $fences, '0', $now, '1', $now);
ids_of_now($fixed, 'repaired, permanent');
$fixed->restart;
ids_of_now($fixed, 'repaired, permanent, restarted');
$leaser->start;
is(SnowidLease::wait_lease($leaser), $w,
	'repaired, the lease claim takes the id whose lease ran out');
ids_of_now($leaser, 'repaired, lease');
in_the_present($leaser, 'repaired, lease');

$fixed->stop;
$leaser->stop;
done_testing();
