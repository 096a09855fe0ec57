# A holder that comes back stale after the coordinator forgot (issue 55):
# no duplicate, and a wait instead.
#
# 1. A lease holder L is frozen (SIGSTOP, as a paused VM) past its lease.
#    Q takes L's worker id, above L's fence.  The coordinator then forgets
#    (Redis flushed, the coordination database emptied), or goes back to a
#    backup taken while L held the id.  L goes on.  Its lease is over by its
#    own clock: it renews nothing, and its next id comes from a new claim,
#    at or above the floor the loss left.  Before, L renewed at once, the
#    store made its lease again (or found it in the backup), and L and Q
#    both issued with the id until Q's next renewal.
# 2. A renewal of a lease that ran out, or that the store forgot, is refused
#    by the store itself, in a quiet period too (a call by hand, as a
#    renewal sent just before its holder's deadline would reach the store
#    after it).
# 3. A server P holds a worker id for good, moves onto a lease (which takes
#    that id over) and stops: its cache file snowid_worker is gone.  Q
#    claims the id for good once P's lease ran out; the coordinator
#    forgets; P starts again with claims for good.  It gets no id below the
#    floor the loss left, and not Q's.  Before, P re-asserted the id its
#    stale cache file named and got it at once, both issuing with it until
#    Q's next check-in.
# 4. A claim the store refuses removes the cache file.
# 5. A server P5 holds a worker id for good when the store is backed up,
#    moves it onto a lease and gives it back; Q5 leases it; the store goes
#    back to the backup (which says P5 holds it for good); P5 starts again
#    with claims for good, its cache file naming nothing.  It waits for the
#    quiet period and its floor.  Before, the store's claim counted as P5's
#    re-assertion: P5 got the id at the backup's fence at once, and both
#    issued with it until Q5's next renewal (found by the model,
#    NO_FIX_HELD_QUIET).
# 6. A server whose check-in worker or lease renewer the postmaster did not
#    register (max_worker_processes used up: a LOG line alone) takes no
#    worker id from the store, with an error naming max_worker_processes.
#    Before, it claimed for good and never checked in: once the store
#    forgot, the id went to another server while it went on issuing.
# 7. A server P7 holds a worker id for good and stops; its cache file names
#    the id, rightly.  The store forgets; Q7 claims the id for good once the
#    quiet period and its floor passed; the store forgets again; P7 starts.
#    Its last granted call lies before the first loss, by more than a live
#    holder's could: its re-assertion is a new claim, which waits for the
#    quiet period and its floor (the confirmed re-assertion rule).  Before,
#    P7 re-asserted the id at once, at the store's fence, and P7 and Q7 both
#    issued with it until Q7's next check-in.
#
# Both servers issue ids in turns throughout; no two of them may issue with
# one worker id in overlapping milliseconds.  Against Redis, or a
# coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $source = $coord->source;

# As in store_forgets.pl: a call may take up to 5 s on a loaded machine; one machine, one
# clock, so a clock margin of a second.  With a lease of 3 s, a quiet
# period lasts 3 + 5 + 1 + 1 s and its floor lies 11 s past its end: a claim
# after a loss waits about 21 s, within the minute a claim waits.  Two
# worker ids (one worker bit), so that Q takes the id L or P held.
my $lease_ms = 3000;
my %common = (%SnowidLease::quick_checkins, 'snowid.worker_bits' => 1);
my %lease = ('snowid.worker_lease' => "${lease_ms}ms");

# A started server of datacenter dc with snowid and more settings
sub server
{
	my ($name, $dc, %settings) = @_;

	return SnowidLease::start_node($coord, $name,
		{ %common, 'snowid.datacenter_id' => $dc, %settings });
}

sub worker_id { return SnowidLease::worker_id(@_); }

# The runs of ids each server issued, by worker id: a run is a stretch of
# consecutive ids with one worker id, its first and last millisecond.
my %runs;

# Takes a batch of ids from a server, within 3 s (a call that waits for a
# claim longer, or fails, gives none and ends the server's run), and adds
# it to the server's runs.  Returns the first millisecond of the batch, or
# undef if it gave no ids.
sub batch
{
	my ($node) = @_;
	my $name = $node->name;
	my ($ret, $out) = $node->psql('postgres', q{
		SET statement_timeout = '3s';
		WITH s AS (SELECT n, snowid_next() AS x FROM generate_series(1, 500) n),
		d AS (SELECT n, (snowid_decode(x)).worker_id AS w,
					 (extract(epoch FROM (snowid_decode(x)).ts) * 1000)::bigint AS ms
			  FROM s),
		g AS (SELECT n, w, ms, n - row_number() OVER (PARTITION BY w ORDER BY n) AS run
			  FROM d)
		SELECT w, min(ms), max(ms) FROM g GROUP BY w, run ORDER BY min(n)});
	my $list = $runs{$name} //= [];

	if ($ret != 0 || $out eq '')
	{
		push @$list, undef;    # the run ends
		return undef;
	}
	my $first;
	for my $line (split /\n/, $out)
	{
		my ($w, $lo, $hi) = split /\|/, $line;
		$first //= $lo;
		my $last = $list->[-1];
		if (defined $last && $last->{w} == $w)
		{
			$last->{hi} = $hi;
		}
		else
		{
			push @$list, { w => $w, lo => $lo, hi => $hi };
		}
	}
	return $first;
}

# The first pair of runs of two servers that share a worker id and
# overlapping milliseconds, as a sentence; '' if there is none.
sub overlap
{
	my @names = sort keys %runs;

	for my $i (0 .. $#names)
	{
		for my $j ($i + 1 .. $#names)
		{
			for my $p (grep { defined } @{ $runs{ $names[$i] } })
			{
				for my $q (grep { defined } @{ $runs{ $names[$j] } })
				{
					next if $p->{w} != $q->{w};
					next if $p->{hi} < $q->{lo} || $q->{hi} < $p->{lo};
					return sprintf('%s and %s both issued with worker id %d in %d to %d',
						$names[$i], $names[$j], $p->{w},
						$p->{lo} > $q->{lo} ? $p->{lo} : $q->{lo},
						$p->{hi} < $q->{hi} ? $p->{hi} : $q->{hi});
				}
			}
		}
	}
	return '';
}

# Waits until worker id w of datacenter dc may be taken by another server:
# no live lease on it, and its fence behind the clock.
sub wait_free
{
	my ($dc, $w) = @_;
	my $deadline = time + 60;

	sleep 0.2
	  until (SnowidLease::fence($coord, $dc, $w) < SnowidLease::now_ms() - 1000
		  && !($coord->owners($dc)->{$w}
			  && SnowidLease::hget($coord, $dc, 'leases', $w)
			  && (split ' ', SnowidLease::hget($coord, $dc, 'leases', $w))[0]
			  > SnowidLease::now_ms()))
	  || time > $deadline;
	return;
}

# The two servers issue in turns, from before the loss until `late` has
# issued ids again after it, and a lease and a second more have passed:
# then no two servers issued with one worker id in overlapping
# milliseconds, and late's first id after the loss lies at or above the
# floor the loss left.  `forget` makes the store forget; `before` runs just
# after it (a thaw, a start).  The other server's background worker that
# would notice (its lease renewer, its check-in) is held still (SIGSTOP)
# from just before the loss to 4 s after it: as a worker that does not come
# round at once.
sub across_loss
{
	my ($what, $dc, $late, $other, $notices, $forget, $before) = @_;

	batch($other) for 1 .. 3;
	my $held = SnowidLease::worker_pid($other, $notices);
	kill 'STOP', $held;
	my $lost = SnowidLease::now_ms();
	$forget->();
	# the other's worker goes on 4 s after the loss, whatever the late
	# server's start and the batches take on a loaded machine (a worker
	# held to the quiet period's end rightly loses its id)
	my $thaw = IPC::Run::start([ 'sh', '-c', "sleep 4; kill -CONT $held" ]);
	$before->();
	my $since = time;
	my $deadline = $since + 120;
	my $late_first;
	while (time < $deadline)
	{
		$late_first //= batch($late);
		batch($other);
		last if defined $late_first && time > $since + $lease_ms / 1000 + 1;
	}
	$thaw->finish;
	my $q = $coord->quiet_record($dc);
	is(overlap(), '',
		"$what: no two servers issue with one worker id in overlapping milliseconds");
	ok(defined $late_first, "$what: " . $late->name . ' issues ids again');
	cmp_ok($q->{floor}, '>', $lost, "$what: the loss left a floor past it");
	cmp_ok($late_first // 0, '>=', $q->{floor},
		"$what: " . $late->name . '\'s first id after it lies at or above that floor');
	return;
}

# 1. A lease holder frozen past its lease; the store forgets: flushed, or
# back from a backup taken while the holder held the id.
for my $case ([ 'flushed', 11 ], [ 'restored', 12 ])
{
	my ($how, $dc) = @$case;
	my $what = "frozen lease holder, store $how";
	SnowidLease::new_scenario($coord, $dc, \%runs);
	my $l = server("l_$how", $dc, %lease);
	is(SnowidLease::wait_lease($l), 0, "$what: L takes worker id 0 on lease");
	batch($l) for 1 .. 3;
	$coord->backup if $how eq 'restored';
	my $offset = -s $l->logfile;
	my $pids = SnowidLease::freeze($l);
	wait_free($dc, 0);
	my $q = server("q_$how", $dc, %lease);
	is(SnowidLease::wait_lease($q), 0,
		"$what: while L is frozen past its lease, Q takes worker id 0");
	across_loss($what, $dc, $l, $q, 'snowid lease renewer',
		sub { $how eq 'flushed' ? $coord->wipe : $coord->restore_backup },
		sub { SnowidLease::thaw($pids) });
	ok( $l->log_contains(
			qr/WARNING:  snowid lost worker id 0 of datacenter $dc: its lease ran out before it was renewed/,
			$offset),
		"$what: L renews nothing, its lease over by its own clock");
	$_->stop for ($l, $q);
}

# 2. The store refuses to renew a lease that ran out, or that it forgot,
# by hand.  A lease claim, then a renewal past its end; a lease claim, the
# store emptied, then a renewal in the quiet period that follows.
my $dc2 = 13;
my $hand = "dc=$dc2 host=by-hand port=1 sysid=1";
my $base = "{snowid:dc:$dc2}";
my $token = '0123456789abcdef';
# the store's answer to a lease call by hand: the worker id granted, 'lost'
# or the error
sub by_hand
{
	my ($call, $redis_numbers, $db_args, $db_named) = @_;

	if ($source eq 'redis')
	{
		my $out = eval {
			$coord->cli('FCALL', "snowid_3_$call", 3, "$base:owners",
				"$base:leases", "$base:fences", $hand, $redis_numbers,
				"$token " . ('ab' x 32));
		};
		return $@ =~ /SNOWID_LOST/ ? 'lost' : $@ ? $@ : (split /\n/, $out)[0];
	}
	my $o = $coord->db->call("$call($dc2, '$hand', $db_args, '$token',"
		  . " quiet_ms => 9000, clock_margin_ms => 1000$db_named)");
	return $o->{outcome} eq 'ok' ? $o->{worker_id} : $o->{outcome};
}
for my $forgets (0, 1)
{
	my $what = $forgets ? 'a lease the store forgot, in a quiet period'
	  : 'a lease that ran out';
	$coord->mark_dc_new($dc2);
	my $now = SnowidLease::now_ms();
	is(by_hand('lease_claim', "1 1000 $now $now -1 0 9000 0 0 1000",
			"1, 1000, $now, $now, -1, 0", ''),
		'0', "$what: a lease claim by hand takes worker id 0");
	if ($forgets)
	{
		$coord->wipe;
	}
	else
	{
		sleep 1.5;
	}
	$now = SnowidLease::now_ms();
	is(by_hand('lease_renew', "0 1000 @{[ $now + 1000 ]} 9000 $now 0 0 1000",
			"0, 1000, @{[ $now + 1000 ]}", ", client_ms => $now"),
		'lost', "$what: its renewal is refused as lost");
	$coord->wipe;
}

# 3. A stale cache file: P holds id 0 for good, moves onto a lease, stops;
# Q claims id 0 for good; the store forgets; P starts with claims for good.
my $dc3 = 14;
SnowidLease::new_scenario($coord, $dc3, \%runs);
my $p = server('p', $dc3);
batch($p);
is(worker_id($p), '0', 'stale cache: P claims worker id 0 for good');
ok(-e $p->data_dir . '/snowid_worker', 'stale cache: its cache file names it');
$p->append_conf('postgresql.conf', "snowid.worker_lease = '${lease_ms}ms'");
$p->restart;
is(SnowidLease::wait_lease($p), 0, 'stale cache: P moves onto a lease of worker id 0');
ok(!-e $p->data_dir . '/snowid_worker',
	'stale cache: the cache file is gone once the lease took the id over');
batch($p);
$p->stop;
wait_free($dc3, 0);
my $q3 = server('q3', $dc3);
batch($q3);
is(worker_id($q3), '0', 'stale cache: Q claims worker id 0 for good once P\'s lease ran out');
$p->append_conf('postgresql.conf', "snowid.worker_lease = 0");
across_loss('stale cache, store flushed', $dc3, $p, $q3, 'snowid check-in',
	sub { $coord->wipe }, sub { $p->start });
is(worker_id($q3), '0', 'stale cache: Q keeps worker id 0');
isnt(worker_id($p), '0', 'stale cache: P gets another');

# 4. A refused claim removes the cache file: P, stopped, is configured with
# the worker id Q holds.
$p->stop;
ok(-e $p->data_dir . '/snowid_worker', 'refused claim: P\'s cache file names its claim');
$p->append_conf('postgresql.conf', 'snowid.worker_id = 0');
$p->start;
my ($refused) = $p->psql('postgres', 'SELECT snowid_next()');
isnt($refused, 0, 'refused claim: P\'s claim of the id Q holds is refused');
ok(!-e $p->data_dir . '/snowid_worker', 'refused claim: P\'s cache file is gone');
$_->stop for ($p, $q3);

# 5. A claim the store holds from a backup: P5 holds id 0 for good when the
# store is backed up, moves onto a lease (its cache file goes) and gives it
# back at a clean stop; Q5 takes id 0 on lease; the store goes back to the
# backup, which says P5 holds id 0 for good; P5 starts again with claims
# for good, its cache file naming nothing.  The store's claim is not P5's
# re-assertion: P5 waits for the quiet period and its floor.  Before, it
# was granted id 0 at the backup's fence at once, and P5 and Q5 both
# issued with it until Q5's next renewal.
my $dc5 = 15;
SnowidLease::new_scenario($coord, $dc5, \%runs);
my $p5 = server('p5', $dc5, 'snowid.release_on_shutdown' => 'on');
batch($p5);
is(worker_id($p5), '0', 'held claim: P5 claims worker id 0 for good');
$coord->backup;
$p5->append_conf('postgresql.conf', "snowid.worker_lease = '${lease_ms}ms'");
$p5->restart;
is(SnowidLease::wait_lease($p5), 0, 'held claim: P5 moves onto a lease of worker id 0');
batch($p5);
$p5->stop;
my $q5 = server('q5', $dc5, %lease);
is(SnowidLease::wait_lease($q5), 0,
	'held claim: Q5 takes worker id 0 on lease, given back at P5\'s stop');
$p5->append_conf('postgresql.conf', "snowid.worker_lease = 0");
across_loss('held claim, store back to the backup', $dc5, $p5, $q5,
	'snowid lease renewer', sub { $coord->restore_backup }, sub { $p5->start });
$_->stop for ($p5, $q5);

# 6. No background worker: no worker id from the store.  The same data
# directory, for good and then on lease.
$p->append_conf('postgresql.conf', "snowid.worker_id = -1\nmax_worker_processes = 0");
$p->start;
for my $kind ('snowid check-in', 'snowid lease renewer')
{
	my ($ret, $out, $err) = $p->psql('postgres', 'SELECT snowid_next()');
	like($err,
		qr/ERROR:  snowid cannot take a worker id from its coordinator without the background worker "\Q$kind\E"/,
		"no $kind registered: no worker id");
	like($err, qr/max_worker_processes \(0\)/, "no $kind registered: the error names max_worker_processes");
	is(worker_id($p), '', "no $kind registered: the server holds no worker id");
	$p->append_conf('postgresql.conf', "snowid.worker_lease = '${lease_ms}ms'");
	$p->restart;
}
$p->stop;

# 7. Two losses: P7 stops holding id 0 for good; the store forgets; Q7
# claims id 0 (waiting for the quiet period and its floor); the store
# forgets again; P7 starts, its cache file naming id 0.
my $dc7 = 17;
SnowidLease::new_scenario($coord, $dc7, \%runs);
my $p7 = server('p7', $dc7);
batch($p7);
is(worker_id($p7), '0', 'two losses: P7 claims worker id 0 for good');
$p7->stop;
ok(-e $p7->data_dir . '/snowid_worker', 'two losses: P7\'s cache file names it');
$coord->wipe;
my $q7 = server('q7', $dc7);
# its claim waits for the quiet period the loss started, and its floor
my ($q7_ret) = $q7->psql('postgres', 'SELECT snowid_next()');
is($q7_ret, 0, 'two losses: Q7\'s claim is granted after the quiet period');
batch($q7);
is(worker_id($q7), '0', 'two losses: Q7 claims worker id 0 for good, which the store forgot was P7\'s');
across_loss('two losses, store flushed again', $dc7, $p7, $q7, 'snowid check-in',
	sub { $coord->wipe }, sub { $p7->start });
is(worker_id($q7), '0', 'two losses: Q7 keeps worker id 0');
isnt(worker_id($p7), '0', 'two losses: P7 gets another');
$_->stop for ($p7, $q7);
done_testing();
