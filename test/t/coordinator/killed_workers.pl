# A background worker of snowid that ends, or stops, never lets its server
# issue ids the coordinator may have given to another (issue 67, 5).
#
# 1. The killed check-in, as an outside reading found it on 27c1922: a
#    server A holds its worker id for good; an operator ends its check-in
#    worker with kill -TERM; the coordinator then loses everything
#    (FLUSHALL; the coordination database emptied); a new server B claims.
#    The worker exited 0 then, which the postmaster takes as "done": it
#    never came back, nothing was logged, and after the quiet period B was
#    granted A's worker id while A went on issuing with it.  Now it is
#    started again a second later (logged, and counted in snowid_status()),
#    re-asserts A's id within the quiet period, and B gets another.
# 2. A check-in held still (SIGSTOP: as good as gone, and never started
#    again): A stops issuing a quiet period past its last check-in, with
#    55000 after a bounded wait, before the coordinator, which forgot, can
#    grant its id to B.  Let go, the check-in finds the id B's, and A drops
#    it and claims another.
# 3. The lease renewer: ended by kill -TERM, it comes back and renews the
#    lease it left, which the server keeps (it gave it back before); held
#    still, the holder issues nothing at or past its lease's fence.
#
# Throughout, every server issues ids in batches, and once the new server
# holds an id both issue at once; no two servers may issue with one worker
# id in overlapping milliseconds, and no id twice.  Against Redis, or a
# coordination database (SnowidCoord).
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

my $coord = SnowidCoord->new;
my $ids = SnowidTest::Ledger->new;

# As in store_forgets.pl: a call may take up to 5 s on a loaded machine; one machine,
# one clock, so a clock margin of a second.  A quiet period lasts a
# check-in (1 s) plus the timeout, the drift budget (1 s) and a second:
# 8 s; a claim after a loss waits for it and its floor, about 17 s.
my %common = %SnowidLease::quick_checkins;
my $quiet_ms = 1000 + 5000 + 1000 + 1000;

# Ids with their worker id and millisecond, for sec seconds, 20 every 2 ms
my $burst = SnowidTest::Bursts->sql(0.002);

# A started server of datacenter dc with snowid, more settings and burst()
sub server
{
	my ($name, $dc, %settings) = @_;
	my $node = SnowidLease::start_node($coord, $name,
		{ %common, 'snowid.datacenter_id' => $dc, %settings });

	$node->safe_psql('postgres', $burst);
	return $node;
}

# Two servers issue at once for 3 s: returns the tally (SnowidTest::Bursts),
# its ids in the ledger
sub both_issue
{
	my ($x, $y) = @_;
	my $took = SnowidTest::Bursts->new->start(
		{ $x->name => $x->connstr('postgres'), $y->name => $y->connstr('postgres') },
		3)->finish;

	$ids->add(@{ $took->{ids} });
	return $took;
}

sub worker_id { return SnowidLease::worker_id(@_); }

# What each server issued, in runs: a run is a stretch of ids with one
# worker id, [worker id, first ms, last ms]
my %runs;

# Takes 200 ids from a server in one statement (which may wait for a claim
# up to wait_s), adds them to the ledger and to the server's runs.
# Returns the runs of the batch, or, if it failed, undef and the error
# (with its SQLSTATE).
sub batch
{
	my ($node, $wait_s) = @_;
	$wait_s //= 5;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		SET statement_timeout = '${wait_s}s';
		SELECT x, (snowid_decode(x)).worker_id,
			(extract(epoch FROM (snowid_decode(x)).ts) * 1000)::bigint
		FROM (SELECT snowid_next() AS x FROM generate_series(1, 200)) s},
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	return (undef, $err) if $ret != 0 || $out eq '';
	my @batch;
	for my $line (split /\n/, $out)
	{
		my ($id, $w, $ms) = split /\|/, $line;
		$ids->add($id);
		if (@batch && $batch[-1][0] == $w)
		{
			$batch[-1][2] = $ms;
		}
		else
		{
			push @batch, [ $w, $ms, $ms ];
		}
	}
	push @{ $runs{ $node->name } }, @batch;
	return \@batch;
}

# The pairs of runs of two servers with one worker id and overlapping
# milliseconds, as text; '' for none.
sub overlap
{
	my @names = sort keys %runs;
	my @found;

	for my $i (0 .. $#names)
	{
		for my $j ($i + 1 .. $#names)
		{
			for my $r (@{ $runs{ $names[$i] } })
			{
				for my $s (@{ $runs{ $names[$j] } })
				{
					push @found, "$names[$i] [@$r] and $names[$j] [@$s]"
					  if $r->[0] == $s->[0]
					  && $r->[1] <= $s->[2]
					  && $s->[1] <= $r->[2];
				}
			}
		}
	}
	return join('; ', @found[ 0 .. ($#found < 4 ? $#found : 4) ]);
}

# Waits until a server's background worker of the given name runs with a
# pid other than old; returns the new pid, or undef after the timeout.
sub wait_new_pid
{
	my ($node, $name, $old) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $deadline)
	{
		my $pid = eval { SnowidLease::worker_pid($node, $name) };
		return $pid if defined $pid && $pid != $old;
		sleep 0.1;
	}
	return undef;
}

# A query on a server's snowid_status(), as text; the error if it fails (a
# column a release before 1.3 lacks)
sub status
{
	my ($node, $columns) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT $columns FROM snowid_status()");

	return $ret == 0 ? $out : $err;
}

# 1. The killed check-in, then a loss and a new server's claim.
{
	my $dc = 20;
	SnowidLease::new_scenario($coord, $dc, \%runs);
	my $a = server('a', $dc);
	batch($a) for 1 .. 3;
	my $held = worker_id($a);
	is(SnowidRedis::worker($a), "$held|" . $coord->source,
		'killed check-in: A claimed a worker id for good');
	my $identity = SnowidRedis::identity($a, $dc);
	like(status($a, 'coordinator_worker_pid'), qr/^\d+$/,
		'killed check-in: snowid_status() shows the check-in\'s pid');

	my $offset = -s $a->logfile;
	my $checkin = SnowidLease::worker_pid($a, 'snowid check-in');
	is(status($a, 'coordinator_worker_pid'), $checkin,
		'killed check-in: it is the pid of "snowid check-in"');
	kill 'TERM', $checkin;
	$coord->wipe;

	# B claims in the background (it waits for the quiet period and its
	# floor) while A issues on
	my $b = server('b', $dc);
	my $claim = SnowidTest::start_psql($b,
		'SET statement_timeout = 90000; SELECT snowid_next()');
	while ($claim->{handle}->pumpable)
	{
		batch($a);
		$claim->{handle}->pump_nb;
		sleep 0.2;
	}
	is($claim->finish, 0, 'killed check-in: B\'s claim succeeds');
	$ids->add(split /\n/, $claim->stdout);
	my $took = both_issue($a, $b);
	ok($took->{n}{ $a->name } && $took->{n}{ $b->name },
		'killed check-in: then A and B issue at once');
	is($took->{shared}, 0,
		'killed check-in: no millisecond of one worker id is issued by both');

	my $back = wait_new_pid($a, 'snowid check-in', $checkin);
	ok(defined $back, 'killed check-in: "snowid check-in" runs again');
	is(status($a, 'coordinator_worker_pid || \'|\' || coordinator_worker_restarts'),
		($back // '') . '|1',
		'killed check-in: snowid_status() shows its new pid and one restart');
	ok( $a->log_contains(
			qr/LOG:  background worker "snowid check-in" was terminated by process \d+/,
			$offset),
		'killed check-in: the log says who ended it');
	ok( $a->log_contains(
			qr/LOG:  background worker "snowid check-in" started again\n.*DETAIL:  Its last process \(PID $checkin\) was terminated by process \d+/,
			$offset),
		'killed check-in: and that it started again');
	is($coord->owners($dc)->{$held}, $identity,
		'killed check-in: A re-asserted its worker id after the loss');
	is(worker_id($a), $held, 'killed check-in: A keeps its worker id');
	isnt(worker_id($b), $held, 'killed check-in: B gets another');
	is(overlap(), '',
		'killed check-in: no two servers issue with one worker id in overlapping milliseconds');
	like(status($a, 'coordinator_confirmed_at > now() - interval \'10 s\''),
		qr/^t$/, 'killed check-in: snowid_status() shows a recent confirmation');
	$_->stop for ($a, $b);
}

# 2. The check-in held still; a loss; a new server's claim.
{
	my $dc = 21;
	SnowidLease::new_scenario($coord, $dc, \%runs);
	my $a = server('a2', $dc);
	batch($a) for 1 .. 3;
	my $held = worker_id($a);
	my $offset = -s $a->logfile;
	my $checkin = SnowidLease::worker_pid($a, 'snowid check-in');
	kill 'STOP', $checkin;
	my $stopped = time;
	$coord->wipe;

	# when (after the stop) the batch that A refused began, and A's last
	# id's own millisecond: by the ids' time and the statement's start, not
	# by when a slow client saw the end
	my $b = server('b2', $dc);
	my $claim = SnowidTest::start_psql($b,
		'SET statement_timeout = 90000; SELECT snowid_next()');
	my ($refused, $refused_after, $last_ms);
	while ($claim->{handle}->pumpable)
	{
		my $began = time - $stopped;
		my ($got, $err) = batch($a);
		if (defined $got)
		{
			$last_ms = $got->[-1][2];
		}
		else
		{
			$refused //= $err;
			$refused_after //= $began;
		}
		$claim->{handle}->pump_nb;
		sleep 0.2;
	}
	is($claim->finish, 0, 'check-in held still: B\'s claim succeeds');
	$ids->add(split /\n/, $claim->stdout);
	like($refused // '',
		qr/ERROR:  55000: snowid worker id $held is not checked in with the coordinator/,
		'check-in held still: A refuses to issue, 55000');
	like($refused // '', qr/HINT:  Check that the background worker "snowid check-in" runs/,
		'check-in held still: and says what to check');
	cmp_ok($refused_after // 99, '<', $quiet_ms / 1000 + 5,
		'check-in held still: A refuses a call begun within a quiet period and the wait');
	cmp_ok(($last_ms // 0) - $stopped * 1000, '<', $quiet_ms,
		'check-in held still: A issues nothing past a quiet period after its last check-in');
	is(worker_id($b), $held,
		'check-in held still: B gets A\'s worker id, which A no longer issues with');
	my $took = both_issue($a, $b);
	ok(!$took->{n}{ $a->name } && $took->{n}{ $b->name },
		'check-in held still: then B issues, A does not');
	is($took->{shared}, 0,
		'check-in held still: no millisecond of one worker id is issued by both');

	kill 'CONT', $checkin;
	ok( $a->wait_for_log(
			qr/WARNING:  snowid stopped issuing ids with worker id $held of datacenter $dc/,
			$offset),
		'check-in held still, let go: A finds its id given away and drops it');
	my ($got) = batch($a, 90);
	ok(defined $got && $got->[0][0] != $held,
		'check-in held still, let go: A\'s next ids carry another worker id');
	batch($b);
	is(overlap(), '',
		'check-in held still: no two servers issue with one worker id in overlapping milliseconds');
	$_->stop for ($a, $b);
}

# 3. The lease renewer: ended, then held still.
{
	my $dc = 22;
	SnowidLease::new_scenario($coord, $dc, \%runs);
	my $l = server('l', $dc, 'snowid.worker_lease' => '3s');
	my $held = SnowidLease::wait_lease($l);
	batch($l) for 1 .. 3;
	my $offset = -s $l->logfile;
	my $renewer = SnowidLease::lease_worker_pid($l);
	my $renewals = status($l, 'renewals');
	kill 'TERM', $renewer;
	my $back = wait_new_pid($l, 'snowid lease renewer', $renewer);
	ok(defined $back, 'lease renewer ended: it runs again');
	my $failed = 0;
	for (1 .. 10)
	{
		my ($got) = batch($l);
		$failed++ unless defined $got;
		sleep 0.2;
	}
	is($failed, 0, 'lease renewer ended: the server issues on meanwhile');
	ok( $l->poll_query_until('postgres',
			"SELECT renewals > $renewals FROM snowid_status()"),
		'lease renewer ended: the new renewer renews the lease');
	is(worker_id($l), $held, 'lease renewer ended: the server keeps its worker id');
	ok(!$l->log_contains(qr/snowid (gave back|parked its lease on) worker id/, $offset),
		'lease renewer ended: the lease was neither given back nor parked');
	is(status($l, 'coordinator_worker_restarts'), '1',
		'lease renewer ended: snowid_status() counts one restart');

	# held still: nothing at or past the fence
	$renewer = SnowidLease::lease_worker_pid($l);
	kill 'STOP', $renewer;
	my $fence = status($l,
		'(extract(epoch FROM fence_time) * 1000)::bigint');
	my ($refused, $last_ms);
	my $deadline = time + 30;
	while (time < $deadline)
	{
		my ($got, $err) = batch($l, 2);
		if (!defined $got)
		{
			$refused = $err;
			last;
		}
		$last_ms = $got->[-1][2];
		sleep 0.2;
	}
	like($refused // '', qr/ERROR:  08006: the lease on snowid worker id $held ran out/,
		'lease renewer held still: the holder stops at its fence');
	cmp_ok($last_ms // 0, '<', $fence,
		'lease renewer held still: every id it issued lies below the fence');
	kill 'CONT', $renewer;
	my ($got) = batch($l, 90);
	ok(defined $got, 'lease renewer let go: the server issues again');
	$l->stop;
}

$ids->no_duplicates;
done_testing();
