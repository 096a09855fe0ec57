# What the tests of a store restored behind its holders' backs share
# (test/t/coordinator/second_store_restore.pl and
# restore_after_member_call.pl): a fleet in one datacenter, claiming
# through a Redis user that may not INFO (so that only the holders' word
# can find a restore of a snapshot) or as the coordination database's
# fleet role; its servers A and C; and the race after the restore, with
# C's check-in stalled while a new server B claims and both issue.
package SnowidStoreRestore;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidTest;
use Test::More;
use IPC::Run ();
use Time::HiRes qw(sleep);

# A fleet in datacenter $dc of the store $coord (SnowidCoord): its Redis
# user made (the fleet's calls run as it), the datacenter marked brand new.
# Its servers check in every second with a coordinator timeout of 20 s:
# a check-in fence (a check-in interval, the timeout and the drift budget
# past the last check-in) that outlasts the store's restart and the wait
# for its quiet period on a loaded machine, where C's last check-in may
# already be seconds old when the test holds it (let go past its fence, C
# rightly loses its worker id to B).
sub new
{
	my ($class, $coord, $dc) = @_;
	my $self = bless {
		coord => $coord,
		dc => $dc,
		settings => {
			%SnowidLease::quick_checkins,
			'snowid.coordinator_timeout_ms' => 20000,
			'snowid.datacenter_id' => $dc
		},
		burst => SnowidTest::Bursts->sql(0.002)
	}, $class;

	if ($coord->source eq 'redis')
	{
		$self->fleet_user;
		$self->{settings}{'snowid.redis_url'} =
		  'unix://fleet:fleet-secret@' . $coord->socket;
	}
	$coord->mark_dc_new($dc);
	return $self;
}

# The fleet's Redis user, again after a restore (ACL users are not kept in
# snapshots); nothing with a coordination database
sub fleet_user
{
	my ($self) = @_;
	my $dc = $self->{dc};

	return if $self->{coord}->source ne 'redis';
	$self->{coord}->cli('ACL', 'SETUSER', 'fleet', 'reset', 'on', '>fleet-secret',
		"~{snowid:dc:$dc}:*", '+fcall', '+hgetall', '+hget', '+hset',
		'+hdel', '+time', '+role');
	return;
}

# The store's files restored to the copy taken last (copy_files); before
# (a code ref), if given, runs just before the store stops
sub restore
{
	my ($self, $before) = @_;

	$self->{coord}->restore_files($before);
	$self->fleet_user;
	return;
}

# A server of the fleet, on lease, started
sub server
{
	my ($self, $name) = @_;

	return SnowidLease::start_node($self->{coord}, $name, $self->{settings});
}

# Server A, which holds a worker id: (node, worker id)
sub start_a
{
	my ($self) = @_;
	my $a = $self->server('a');

	$a->safe_psql('postgres', 'SELECT snowid_next()');
	my $wa = SnowidLease::worker_id($a);
	note("A holds worker id $wa");
	return ($a, $wa);
}

# Server C, claiming after the copy (two tests): (node, worker id), once
# C and A have checked in since C's claim
sub start_c
{
	my ($self, $wa) = @_;
	my $c = $self->server('c');

	$c->safe_psql('postgres', $self->{burst});
	my ($ret, $out, $err) = $c->psql('postgres', 'SELECT snowid_next()');
	is($ret, 0, 'C claims') or diag($err);
	my $wc = SnowidLease::worker_id($c);
	note("C holds worker id $wc");
	isnt($wc, $wa, 'A and C hold two worker ids');
	sleep 3;    # both check in since C's claim
	return ($c, $wc);
}

# The copy restored ($what names it in the tests' names) while C's
# check-in is held still (a stalled process, a busy machine), and a new
# server B claims: a quiet period must start (A's word, or B's claim; on a
# coordination database any call after its restart); C's check-in, let go
# half a second after B's claim left, re-asserts C's worker id within the
# period, and B must not get that id; no
# id nor millisecond of one worker id may be issued by both while both
# issue (four tests).  C's check-in is let go within its check-in fence (a
# check-in interval and a timeout after its last): held past it, C is a
# holder that went quiet across a loss, a new claimant under the restart
# rule, which rightly loses its id to B.  Returns B.
sub race_after_restore
{
	my ($self, $what, $c, $wc) = @_;
	my $coord = $self->{coord};

	# B's server is up before the restore, so that its claim follows it
	my $b = $self->server('b');
	$b->safe_psql('postgres', $self->{burst});

	my $checkin = SnowidLease::worker_pid($c, 'snowid check-in');
	my $lost;
	$self->restore(sub { kill 'STOP', $checkin; $lost = SnowidLease::now_ms(); });
	# A checks in every second: it says it saw a later counter (a
	# coordination database, whose every restart is a possible loss, may
	# record the quiet period only at the call that needs it: B's claim)
	my $quiet;
	my $until = Time::HiRes::time() + 3;
	sleep 0.1 until ($quiet = $coord->in_quiet($self->{dc})) || Time::HiRes::time() > $until;
	# C's check-in goes on a second after B's claim left (start() returns
	# once every burst took its first id: B's, after the quiet period)
	note('B claims ' . (SnowidLease::now_ms() - $lost)
		  . ' ms after the restore began; C\'s check-in goes on a second later');
	my $cont = IPC::Run::start([ 'sh', '-c', "sleep 1; kill -CONT $checkin" ]);
	my $bursts = SnowidTest::Bursts->new->start(
		{ b => $b->connstr('postgres'), c => $c->connstr('postgres') }, 2);
	$cont->finish;
	note("C's check-in went on by " . (SnowidLease::now_ms() - $lost) . ' ms after it was held');
	$until = Time::HiRes::time() + 30;
	sleep 0.2 until $quiet || ($quiet = $coord->in_quiet($self->{dc})) || Time::HiRes::time() > $until;
	ok($quiet, "$what: a holder's word starts a quiet period");
	my $took = $bursts->finish;
	my $wb = SnowidLease::worker_id($b);
	note("B's claim ended " . (SnowidLease::now_ms() - $lost) . " ms after $what: worker id '$wb'");
	isnt($wb, $wc, "$what: B does not get C's worker id");
	my ($n, $lo, $hi) = @$took{qw(n lo hi)};
	diag(sprintf('B issued %d ids (ms %d..%d), C %d (ms %d..%d); %d issued by both, %d ms of one worker id by both',
		$n->{b} // 0, ($lo->{b} // 0) - $lost, ($hi->{b} // 0) - $lost,
		$n->{c} // 0, ($lo->{c} // 0) - $lost, ($hi->{c} // 0) - $lost,
		$took->{both}, $took->{shared}));
	is($took->{both}, 0, 'no id is issued by both B and C');
	is($took->{shared}, 0, 'no millisecond of one worker id is issued by both B and C');
	return $b;
}

# A member of the fleet's role (a coordination database's coord_fleet, a
# secret of its own) calls claim() of worker id $w as $identity,
# re-asserting it or not: (psql's exit code, its row as "outcome|...",
# stderr).
sub member_claim
{
	my ($self, $identity, $w, $reassert) = @_;
	my $dc = $self->{dc};
	my $call = "CALL snowid_coordinator.claim($dc, "
	  . "'$identity', '" . ('c7' x 32) . "', $w, 31, -1, "
	  . "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, "
	  . "reassert => $reassert)";

	die 'member_claim: a coordination database only'
	  if $self->{coord}->source ne 'postgresql';
	return $self->{coord}->node->psql('coord', $call,
		extra_params => [ '-U', 'coord_fleet', '-A', '-t', '-F', '|' ]);
}

# The store restored to the copy taken last while C's check-in is held
# still (a stalled process, a busy machine), and a member re-asserting C's
# worker id $wc as $identity the moment the quiet period lets it, before
# C's check-in goes on: the seconds from the restore to the grant, or
# undef if none was granted within 30 s.
sub member_reasserts_first
{
	my ($self, $c, $wc, $identity) = @_;
	my $checkin = SnowidLease::worker_pid($c, 'snowid check-in');
	my ($granted, $r, $o, $e, $lost);

	$self->restore(sub { kill 'STOP', $checkin; $lost = Time::HiRes::time(); });
	my $until = $lost + 30;
	while (Time::HiRes::time() < $until)
	{
		($r, $o, $e) = $self->member_claim($identity, $wc, 'true');
		if ($r == 0 && ($o // '') =~ /^ok\|/)
		{
			$granted = sprintf('%.1f', Time::HiRes::time() - $lost);
			last;
		}
		sleep 0.05;
	}
	kill 'CONT', $checkin;
	note("the member's re-assertion of worker id $wc as '$identity': "
		  . (defined $granted ? "granted $granted s after the restore began" : "never granted: $o $e"));
	return $granted;
}

# Waits (up to 60 s) until server $c logs that it stopped issuing ids with
# worker id $w: the WARNING's message, DETAIL and HINT lines, or () if it
# never did.
sub wait_stopped
{
	my ($self, $c, $w) = @_;
	my $dc = $self->{dc};
	my $until = Time::HiRes::time() + 60;

	while (Time::HiRes::time() < $until)
	{
		my $log = PostgreSQL::Test::Utils::slurp_file($c->logfile);
		my @lines = $log =~
		  /WARNING:  (snowid stopped issuing ids with worker id $w of datacenter $dc)\n[^\n]*DETAIL:  ([^\n]*)\n[^\n]*HINT:  ([^\n]*)\n/;
		return @lines if @lines;
		sleep 0.2;
	}
	return ();
}

# Calls snowid_next() on $c until it issues (up to $seconds): the error of
# the first call that failed (psql's verbose form, "ERROR:  SQLSTATE:
# ..." with its DETAIL and HINT), '' if none failed, and whether it issued
# in time.
sub next_after_stop
{
	my ($self, $c, $seconds) = @_;
	my $first;
	my $until = Time::HiRes::time() + $seconds;

	while (Time::HiRes::time() < $until)
	{
		my ($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()',
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		return ($first // '', 1) if $r == 0;
		$first //= $e;
		sleep 0.5;
	}
	return ($first // '', 0);
}

1;
