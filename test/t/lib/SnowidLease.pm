# What the lease TAP tests (test/t/leases/, and the lease paths of
# test/t/coordinator/ and test/t/copies-and-failover/) share: waiting for a
# server to hold a worker id on lease, reading a lease and its fence in
# the store, starting a server with its clock skewed, the time of an id,
# freezing a whole server with SIGSTOP, and a ledger of ids per
# worker id that checks that each holder's ids lie above the last holder's.
package SnowidLease;

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(usleep);

# The settings of the tests of a store that loses its claims: check-ins
# every second, a store that must answer within 5 s, a clock margin of 1
# s, so that a quiet period after a loss lasts 8 s (1 s + 5 s + 1 s + 1 s)
our %quick_checkins = (
	'snowid.coordinator_timeout_ms' => 5000,
	'snowid.checkin_interval' => '1s',
	'snowid.clock_margin' => '1s');

# A server of the coordinator (SnowidCoord) with the given settings and
# init parameters (allows_streaming => 1), started (with its wall clock
# at skew => OFFSET if given: start_skewed), with the extension created.
sub start_node
{
	my ($coord, $name, $settings, %init) = @_;
	my $offset = delete $init{skew};
	my $node = $coord->new_node($name, $settings, %init);

	if (defined $offset)
	{
		start_skewed($node, $offset);
	}
	else
	{
		$node->start;
	}
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

# A server's worker id, or '' without one
sub worker_id
{
	my ($node) = @_;
	my ($id) = split /\|/, SnowidRedis::worker($node);

	return $id // '';
}

# Waits until a server holds a worker id on lease; returns it.
sub wait_lease
{
	my ($node) = @_;

	my $deadline =
	  Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;

	# (one query: on a loaded machine a short lease can run out, and be
	# taken again, between two)
	while (Time::HiRes::time() < $deadline)
	{
		my $id = $node->safe_psql('postgres',
			q{SELECT worker_id FROM snowid_status()
			  WHERE worker_source = 'lease' AND worker_id IS NOT NULL});

		return $id if $id ne '';
		Time::HiRes::sleep(0.1);
	}
	die $node->name . ' took no worker id on lease';
}

# A worker id's lease ("leases") or fence ("fences") in the store
# (SnowidRedis or SnowidPgCoord), or undef.
sub hget
{
	my ($coord, $dc, $what, $worker_id) = @_;

	return $coord->field($dc, $what, $worker_id);
}

# The fence of a worker id, in Unix ms; 0 if it has none.
sub fence
{
	my ($coord, $dc, $worker_id) = @_;

	return hget($coord, $dc, 'fences', $worker_id) // 0;
}

# The processes of a running server: the postmaster and its children.
sub server_pids
{
	my ($node) = @_;
	my $postmaster = $node->{_pid} or die $node->name . ' is not running';
	my @children = split /\s+/, `ps -o pid= --ppid $postmaster`;

	return ($postmaster, grep { /^\d+$/ } @children);
}

# The pid of a running server's background worker of the given name
# ("snowid lease renewer", "snowid check-in")
sub worker_pid
{
	my ($node, $name) = @_;
	my ($postmaster) = server_pids($node);

	for (split /\n/, `ps -o pid=,args= --ppid $postmaster`)
	{
		return $1 if /^\s*(\d+)\s.*\Q$name\E/;
	}
	die $node->name . " has no $name";
}

# The pid of a running server's lease renewer.
sub lease_worker_pid
{
	my ($node) = @_;

	return worker_pid($node, 'snowid lease renewer');
}

# Freezes a whole server (SIGSTOP, children first), as a stalled VM would.
sub freeze
{
	my ($node) = @_;
	my @pids = server_pids($node);

	kill 'STOP', reverse @pids;
	return \@pids;
}

# Lets a frozen server go on.
sub thaw
{
	my ($pids) = @_;

	kill 'CONT', @$pids;
	return;
}

# Starts a server with its wall clock offset ('+20s', '-2s', '+5'), under
# a SnowidTest::Clock set once, and returns the clock; or on its own clock
# for undef.  The clock reaches every process of the server.  (libfaketime's
# FAKETIME, used before, missed the background workers that PostgreSQL 15's
# postmaster forks from its SIGCHLD handler: there the lease renewer kept the
# real clock while the sessions ran skewed.)
sub start_skewed
{
	my ($node, $offset) = @_;

	if (!defined $offset)
	{
		local $ENV{LD_PRELOAD} = '';
		$node->start;
		return;
	}
	my ($seconds) = $offset =~ /^([+-]?\d+(?:\.\d+)?)s?$/
	  or die "start_skewed: not an offset in seconds: $offset";
	my $clock = SnowidTest::Clock->new;
	$clock->set($seconds =~ /^[+-]/ ? $seconds : "+$seconds");
	$clock->start_node($node);
	return $clock;
}

# The Unix ms of an id, decoded by a server.
sub id_ms
{
	my ($node, $id) = @_;

	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (snowid_decode($id)).ts) * 1000)::bigint");
}

# The time since the epoch in ms, by the real clock.
sub now_ms
{
	return int(Time::HiRes::time() * 1000);
}


# Ids by the worker id they carry, in the order their holders took them:
# every id of a later holder must lie above every id of an earlier one.
# The confirmed_ms a server's snowid_store_state names (when it sent its
# last call the store granted), 0 if none
sub confirmed_in_file
{
	my ($node) = @_;
	my $f = $node->data_dir . '/snowid_store_state';

	return 0 unless -e $f;
	my ($c) = slurp_file($f) =~ /confirmed_ms=(\d+)/;
	return $c // 0;
}

# Restarts the servers given ([ server, its worker id, a test's name ]),
# takes an id from each, and passes if each still claims its worker id
# for good from $coord (a test each)
sub restart_keeps_worker_ids
{
	my ($coord, @servers) = @_;

	$_->[0]->restart for @servers;
	$_->[0]->safe_psql('postgres', 'SELECT snowid_next()') for @servers;
	is(SnowidRedis::worker($_->[0]), "$_->[1]|" . $coord->source, $_->[2]) for @servers;
	return;
}

# A scenario of its own in a test that keeps its servers' runs of ids
# (%$runs, emptied): its datacenter $dc, marked new in $coord
sub new_scenario
{
	my ($coord, $dc, $runs) = @_;

	%$runs = ();
	$coord->mark_dc_new($dc);
	return;
}

# The tests of a clock stepped forward (test/t/coordinator/clock_forward_*):
# the store loses its claims (loss 1), and a new server Q of the settings
# given claims worker id 0 for good after the quiet period and its floor,
# and issues ids (two tests; $what begins their names).  Returns Q.
sub claim_after_loss
{
	my ($coord, $settings, $burst, $what) = @_;

	$coord->wipe;
	my $q = $coord->new_node('q', $settings);
	$q->start;
	$q->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$q->safe_psql('postgres', $burst);
	my ($ret, $out, $err) = $q->psql('postgres', 'SELECT snowid_next()');
	is($ret, 0, "${what}Q claims after the quiet period") or diag($err);
	is(worker_id($q), '0', "${what}Q holds worker id 0 for good");
	return $q;
}

# Then Q's check-in stalls, the store loses its claims again (loss 2), and
# P, which held worker id 0 before loss 1, starts again under $clock
# (SnowidTest::Clock): both issue for 6 s, Q's check-in going on after 4
# s.  Q must issue, and no id nor millisecond of one worker id be issued
# by both (three tests).
sub race_after_second_loss
{
	my ($coord, $clock, $p, $q, $what) = @_;
	my $checkin = worker_pid($q, 'snowid check-in');

	kill 'STOP', $checkin;
	$coord->wipe;
	$clock->start_node($p);
	my $bursts = SnowidTest::Bursts->new->start(
		{ p => $p->connstr('postgres'), q => $q->connstr('postgres') }, 6);
	Time::HiRes::sleep(4);
	kill 'CONT', $checkin;
	my $took = $bursts->finish;
	diag(sprintf('P issued %d ids, Q %d; P holds worker id \'%s\'; %d ids by both',
		$took->{n}{p} // 0, $took->{n}{q} // 0, worker_id($p), $took->{both}));
	ok(($took->{n}{q} // 0) > 0, "${what}Q issued ids after the second loss");
	is($took->{both}, 0, "${what}no id is issued by both P and Q");
	is($took->{shared}, 0, "${what}no millisecond of one worker id is issued by both");
	return;
}

package SnowidLease::ByWorker;

use Test::More;

sub new
{
	my ($class, $ledger) = @_;

	return bless { ledger => $ledger, max => {}, bad => 0 }, $class;
}

# Takes n ids from a server holding worker id w, adds them to the ledger and
# checks that they increase and lie above every id earlier holders of w (and
# this server) issued with it.  Without a name, counts a failure silently
# (see ok_all).  Returns the ids.
sub take
{
	my ($self, $node, $w, $n, $name) = @_;
	my @ids = SnowidTest::next_ids($node, $n);
	my $good = @ids == $n;

	for my $i (0 .. $#ids)
	{
		$good = 0 if $i > 0 && $ids[$i] <= $ids[ $i - 1 ];
	}
	$good = 0 if @ids && $ids[0] <= ($self->{max}{$w} // 0);
	$self->{max}{$w} = $ids[-1] if @ids && $ids[-1] > ($self->{max}{$w} // 0);
	$self->{ledger}->add(@ids);
	if (defined $name)
	{
		ok($good, "$name: $n increasing ids above every earlier id of worker id $w");
	}
	else
	{
		$self->{bad}++ unless $good;
	}
	return @ids;
}

# Adds ids taken elsewhere (decoded for their worker id) in order.
sub add
{
	my ($self, $w, @ids) = @_;

	$self->{bad}++ if @ids && $ids[0] <= ($self->{max}{$w} // 0);
	for my $i (1 .. $#ids)
	{
		$self->{bad}++ if $ids[$i] <= $ids[ $i - 1 ];
	}
	$self->{max}{$w} = $ids[-1]
	  if @ids && $ids[-1] > ($self->{max}{$w} // 0);
	$self->{ledger}->add(@ids);
	return @ids;
}

# One test: no silent take failed.
sub ok_all
{
	my ($self, $name) = @_;

	return is($self->{bad}, 0, $name);
}

1;
