# A store brought back from a backup that keeps its identity is noticed,
# and a clean restart of the store costs the holders that run nothing
# (issue 67, item 6).
#
# The path: a coordination database restored from a pg_basebackup copy
# started without recovery.signal (crash recovery from its backup_label)
# keeps the install of snowid_coordinator, the system identifier and the
# timeline, which were all its record of the server that wrote its claims
# held: no quiet period started, and a new server was granted at once the
# worker id a permanent holder checking in every 30 s had claimed after the
# backup.  Closed: the record also holds when the database's postmaster
# started (server_now() in quiet.sql), so that every restart of it counts
# as one that may have forgotten, as every restart of Redis does (its run
# id).  The quiet period lasts the longest quiet_ms the restored record
# holds: 34 s for a holder that checks in every 30 s, which re-asserts its
# id within it.
#
# First: a lease holder and a permanent holder issue all along a clean
# restart of the store, with no failed call.  Then the restore: the new
# server's claim is refused as quiet (55006), the holder's check-in
# re-asserts its id, and the new server gets another once the quiet period
# and its floor have passed.  Against Redis, the same steps with a restart
# from an older snapshot (a new run id), which Redis noticed already.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new(base_backup => 1);
my $dc = 5;
my %common = ('snowid.datacenter_id' => $dc, 'snowid.clock_margin' => '1s');

sub server
{
	my ($name, %settings) = @_;

	return SnowidLease::start_node($coord, $name, { %common, %settings });
}

# 1. A clean restart of the store: a lease holder and a permanent holder
# issue all along, and no call fails.  (The lease outlasts the store's
# restart, about 3 s, with room for a loaded machine: with 6 s, a renewal
# refused as the store stopped left it under a second, and it ran out.)
my $lease = server('lease', 'snowid.worker_lease' => '15s');
my $perm = server('perm');
my $burst = SnowidTest::Bursts->sql(0.002);
for my $node ($lease, $perm)
{
	$node->safe_psql('postgres', $burst);
	$node->safe_psql('postgres', 'SELECT snowid_next()');
}
my $bursts = SnowidTest::Bursts->new->start(
	{ lease => $lease->connstr('postgres'), perm => $perm->connstr('postgres') }, 12);
sleep 3;
# Redis keeps its data across the restart in a snapshot (it saves none at
# a shutdown here)
$coord->cli('SAVE') if $coord->source eq 'redis';
my $stopped_ms = SnowidLease::now_ms();
$coord->stop;
sleep 2;
$coord->start;
my $took = $bursts->finish;
is($bursts->{errs}{lease} . $bursts->{errs}{perm}, '',
	'a clean restart of the store: no call of the lease or the permanent holder fails');
cmp_ok($took->{n}{$_} // 0, '>', 100, "$_ issued all along") for qw(lease perm);
is($took->{both}, 0, 'and no id twice');
# (it may be over by now, the bursts taking longer on a busy machine: the
# record says when the last one began)
my $deadline = time + 60;
my $record;
sleep 0.2 until ($record = $coord->quiet_record($dc))->{from} >= $stopped_ms || time > $deadline;
cmp_ok($record->{from}, '>=', $stopped_ms, 'the restart started a quiet period');
# both holders keep their worker ids through it
my %before = (lease => SnowidLease::worker_id($lease), perm => SnowidLease::worker_id($perm));
sleep 0.5 while $coord->in_quiet($dc) && time < $deadline + 60;
my $left = SnowidTest::Bursts->new->start(
	{ lease => $lease->connstr('postgres'), perm => $perm->connstr('postgres') }, 1)->finish;
is($left->{errs}{lease} . $left->{errs}{perm}, '', 'both issue after the quiet period');
is(SnowidLease::worker_id($_ eq 'lease' ? $lease : $perm), $before{$_},
	"$_ kept its worker id") for qw(lease perm);
$lease->stop;
$perm->stop;

# 2. A restore that keeps the store's identity.  Q, checking in every 30 s,
# claims before the backup: the record then holds a quiet period of 34 s.
my %slow = ('snowid.checkin_interval' => '30s');
my $q = server('q', %slow);
$q->safe_psql('postgres', 'SELECT snowid_next()');
my $wq = SnowidLease::worker_id($q);
$coord->base_backup;
# A, checking in every 30 s too, claims after the backup
my $a = server('a', %slow);
$a->safe_psql('postgres', 'SELECT snowid_next()');
my $wa = SnowidLease::worker_id($a);
isnt($wa, $wq, "A and Q hold two worker ids ($wa, $wq)");
note("Q holds worker id $wq, A $wa");

$coord->restore_base_backup;
my $lost = SnowidLease::now_ms();
# N's claim is the first call after the restore
my $n = server('n');
my ($ret, $out, $err) = $n->psql('postgres', 'SELECT snowid_next()');
my $wn = SnowidLease::worker_id($n);
isnt($wn, $wa, 'right after the restore, N does not get the worker id A holds');
like($err, qr/cannot claim a worker id of datacenter $dc until/,
	'N\'s claim is refused as quiet')
  or diag("N: ret $ret, worker id '$wn', stderr: $err");
my $quiet = $coord->quiet_record($dc);
cmp_ok($quiet->{until} - $quiet->{from}, '>=', 34000,
	'the quiet period lasts the 34 s the restored record holds for a holder that checks in every 30 s');

# A's check-in (within 30 s) re-asserts its worker id in the quiet period
$deadline = time + 45;
my $holder;
until (time > $deadline)
{
	$holder = $coord->owners($dc)->{$wa};
	last if defined $holder && $holder eq SnowidRedis::identity($a, $dc);
	sleep 0.5;
}
is($holder, SnowidRedis::identity($a, $dc), 'A\'s check-in re-asserted its worker id');
$a->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidLease::worker_id($a), $wa, 'and A issues with it');

# once the quiet period and its floor have passed, N claims another
$deadline = time + 120;
until (time > $deadline)
{
	($ret, $out, $err) = $n->psql('postgres', 'SELECT snowid_next()');
	last if $ret == 0;
	sleep 1;
}
is($ret, 0, 'N claims after the quiet period and its floor') or diag($err);
$wn = SnowidLease::worker_id($n);
note('N claimed worker id ' . $wn . ' ' . (SnowidLease::now_ms() - $lost) . ' ms after the restore');
ok($wn ne $wa && $wn ne $wq, 'N holds a worker id neither A nor Q holds');
my $after = SnowidTest::Bursts->new;
$_->safe_psql('postgres', $burst) for ($a, $n);
$after->start({ a => $a->connstr('postgres'), n => $n->connstr('postgres') }, 1)->finish;
is($after->{shared}, 0, 'no millisecond of one worker id is issued by both A and N');
$_->stop for ($q, $a, $n);
done_testing();
