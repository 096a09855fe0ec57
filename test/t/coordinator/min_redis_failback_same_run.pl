# The protocol in brief's RESTART_LOSS in Redis (noticed() of
# src/redis/snowid.lua): a failover and a failback to the same Redis
# process loses a grant unnoticed (found by the attack attack67x on
# 2cb02f4, issue 67).
#
# noticed() tells a restart, a restore and a failover from a Redis that
# kept every claim by the run id in the datacenter's record.  A run id is
# a process's: a master that is cut off, replaced by its replica, made a
# replica of it when it comes back (throwing away what it wrote that the
# replica never got) and promoted again (a failback, by Sentinel or an
# operator), has the run id it had.  If no call reached the replica while
# it was the master, the record still names that run id: no quiet period,
# and every grant the old master made that its replica never got (a grant
# on the far side of the cut, or one replication had not sent yet, as
# Redis replicates after it answers) is forgotten unnoticed.  The brief
# says every failover counts as a possible loss (assumption 2).
#
# Here with two real Redis servers and REPLICAOF in place of Sentinel, in
# real time under a copy of the library whose longest range is 10 s and
# margin 0.5 s: a's grant of worker id 0 on the master after its replica was
# promoted; the master made a replica of it (a's grant gone), then
# promoted again; b's claim is granted worker id 0 at once, while a's
# range runs.  Seen on Redis 7 (2cb02f4).  INFO replication's master_replid
# changes at each promotion.
#
# Redis only (a coordination server's promotion starts a new timeline,
# which its run names).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(sleep);

plan skip_all => 'Redis\' replication (test/run --part tap)'
  unless SnowidCoord::store() eq 'redis';
SnowidRedis::need_redis();

my ($R, $M) = (10000, 500);
my $copy = SnowidMinStore::store_copy($R, $M);
my $dc = 1;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

# (a full resynchronisation at once, not 5 s later)
my @fast = ('--repl-diskless-sync-delay', '0');
my $master = SnowidRedis->new(tcp => 1, library => 0, mark_new => 0, args => [@fast]);
$master->cli('FUNCTION', 'LOAD', 'REPLACE', $copy);
my $replica = SnowidRedis->new(tcp => 1, library => 0, mark_new => 0,
	args => [ @fast, '--replicaof', '127.0.0.1', $master->port ]);

# Waits until $what holds, or dies
sub wait_for
{
	my ($what, $sub) = @_;

	for (1 .. 600)
	{
		return if $sub->();
		sleep 0.1;
	}
	die "timed out waiting for $what";
}

sub in_sync
{
	my ($node) = @_;

	return $node->cli('INFO', 'replication') =~ /master_link_status:up/;
}

wait_for('the replica', sub { in_sync($replica) });

# The datacenter's first quiet period, over, on the master; the replica
# has the record
like(call($master, 'release', $dc, holder($dc, 'probe'), '0 0'), qr/^ok 0$/,
	'a first call notes the run of the master');
my ($run, $til) = record($master, $dc);
wait_for('the quiet period\'s end', sub { store_now($master) >= $til + $M });
wait_for('the record on the replica',
	sub { ($replica->cli('HGET', SnowidMinStore::key($dc), 'record') // '') ne '' });

# The master is cut off, and its replica promoted (a failover)
$replica->cli('REPLICAOF', 'NO', 'ONE');

# On the master's side of the cut, a is granted worker id 0
my ($id, $end) = granted(call($master, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'a is granted worker id 0 on the old master');

# The old master comes back as a replica of the new one (a's grant gone),
# then is promoted again (a failback), before any call reached the other
$master->cli('REPLICAOF', '127.0.0.1', $replica->port);
wait_for('the old master as a replica', sub { in_sync($master) });
$master->cli('REPLICAOF', 'NO', 'ONE');
$replica->cli('REPLICAOF', '127.0.0.1', $master->port);
# (the record's run names the run id and, since the fix, the replication
# id, which the promotions changed)
is((split /:/, run_id($master))[0], (split /:/, $run)[0],
	'the master, promoted again, has the run id it had');
is(slot($master, $dc, 0) // '', '', 'a\'s grant is gone');

my $reply = call($master, 'claim', $dc, $b, "31 $R 1 -1");
my $now = store_now($master);
cmp_ok($now, '<', $end, 'a\'s range still runs');
unlike($reply, qr/^ok 0 /,
	'RESTART_LOSS: after a failover and a failback, b is not granted worker id 0 while'
	  . ' a\'s range, which the failover lost, runs');
note("b's claim at $now, a's range ending at $end: $reply");

$replica->stop;
$master->stop;
done_testing();
