# A coordinator that forgets causes a wait, never a duplicate (the
# forgetting rule, doc/internals.md).  Server A claims a worker id and
# issues ids; the coordinator then forgets the claim: its data gone (Redis:
# FLUSHALL; a coordination database: its tables emptied), or back from an
# older backup (Redis restarted from an older snapshot; the coordination
# database restored from an older pg_dump), or back to an older copy of
# itself that its identity cannot tell (the holders remember a later
# counter of its state record).  Server B, new, in the same
# datacenter, claims: it waits until A has re-asserted its id, and gets
# another.  For a permanent claim of an idle server, and a re-assertion
# refused because the id was given away meanwhile, which stops the holder at
# once.  A lease the coordinator forgot is not renewed: its busy holder stops
# issuing with the id at once and claims again, waiting as B does.  B's claim waits for the quiet period and for
# the floor it leaves, and succeeds without being tried again: the servers
# here share one machine and its clock, so that they declare a clock
# margin of a second (snowid.clock_margin).  Last, the stores refuse a
# clock margin out of bounds, and a call that declares no quiet period (by
# hand, or of release 1.2) is held to one too.  Against Redis, or a
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

# Each datacenter marked brand new before its first claim (after the loss
# of the scenario before, which lost every datacenter's record): a claim
# after a loss waits for the quiet period and the floor it leaves, which an
# unmarked datacenter's first claim would too.
my $coord = SnowidCoord->new;
my $source = $coord->source;
my $ids = SnowidTest::Ledger->new;

# A call may take up to 5 s on a loaded machine; a quiet period lasts a
# check-in (1 s here) or a lease, plus that, plus the drift budget (1 s)
# and a second: 8 s.  Its floor lies the clock margin (1 s: one machine,
# one clock) and its length past its end: a claim after a loss waits about
# 17 s in all, within the minute a claim waits.
my %common = %SnowidLease::quick_checkins;
my $quiet_ms = 1000 + 5000 + 1000 + 1000;

# A started server of datacenter dc with snowid and more settings
sub server
{
	my ($name, $dc, %settings) = @_;

	return SnowidLease::start_node($coord, $name,
		{ %common, 'snowid.datacenter_id' => $dc, %settings });
}

# Takes n ids from a server whose claim comes after the store forgot (at
# lost, Unix ms), in datacenter dc: the claim waits for the quiet period and
# the floor it leaves, and succeeds without being tried again.  That floor
# lies past the loss, and the first id at or above it.  Returns the ids.
sub collect_after_loss
{
	my ($node, $n, $dc, $lost, $what) = @_;
	my @got = $ids->collect($node, $n);
	my $q = $coord->quiet_record($dc);

	cmp_ok($q->{floor}, '>', $lost, "$what: the quiet period left a floor past the loss");
	cmp_ok(SnowidLease::id_ms($node, $got[0]), '>=', $q->{floor},
		"$what: the new claim waited for it: its first id lies at or above it");
	return @got;
}

sub worker_id { return SnowidLease::worker_id(@_); }

# 1. A permanent claim, the holder idle; the coordinator loses everything.
my $dc = 5;
my $a = server('a', $dc);
$ids->collect($a, 100);
my $held = worker_id($a);
is(SnowidRedis::worker($a), "$held|$source", 'permanent: A claimed a worker id');

# How long A takes to re-assert, and B's first claim to wait, are printed:
# doc/coordinator.md and doc/redis.md quote them.
my $identity = SnowidRedis::identity($a, $dc);
my $wiped = time;
my $lost = SnowidLease::now_ms();
$coord->wipe;
my $deadline = time + 60;
sleep 0.1
  until ($coord->owners($dc)->{$held} // '') eq $identity || time > $deadline;
my $reasserted = time - $wiped;
is($coord->owners($dc)->{$held}, $identity,
	'permanent, store emptied: A re-asserted its claim in the store');
my $b = server('b', $dc);
my $claiming = time;
collect_after_loss($b, 1, $dc, $lost, 'permanent, store emptied');
my $waited = time - $claiming;
$ids->collect($b, 99);
diag(sprintf('%s emptied: the idle holder re-asserted after %.1f s (check-in every 1 s); '
	  . 'a new server\'s first id then took %.1f s (the quiet period: %s, then its floor: '
	  . 'its end + clock margin %s + its length)',
	$source, $reasserted, $waited,
	$a->safe_psql('postgres', q{SELECT 'check-in ' || current_setting('snowid.checkin_interval')
		|| ' + timeout ' || current_setting('snowid.coordinator_timeout_ms')
		|| ' + drift budget ' || current_setting('snowid.max_drift_ms') || ' + 1 s'}),
	$a->safe_psql('postgres', q{SELECT current_setting('snowid.clock_margin')})));
my $q = $coord->quiet_record($dc);
is($q->{widest}, 1000,
	'permanent, store emptied: the store keeps the clock margin the servers declare');
is($q->{floor}, $q->{until} + 1000 + ($q->{until} - $q->{from}),
	'permanent, store emptied: the floor lies past the quiet period by that margin and its length');
is($q->{until} - $q->{from}, $quiet_ms,
	'permanent, store emptied: the quiet period lasts what the servers declare');
isnt(worker_id($b), $held,
	'permanent, store emptied: B does not get the worker id of idle A');
is(worker_id($a), $held, 'permanent, store emptied: A keeps its worker id');
is($a->safe_psql('postgres', 'SELECT coordinator_reassertions FROM snowid_status()'),
	'1', 'permanent, store emptied: snowid_status() of A counts one re-assertion');
$ids->collect($a, 100);
$ids->collect($b, 100);

# 2. A lease, the holder busy; the coordinator loses everything.  A's next
# renewal is refused (the store no longer holds its lease, and does not make
# it again): A stops issuing with the id at once, and its ids come from a
# new claim, which waits for the quiet period and its floor as B's does.
# (6 s: on a loaded machine the claim's call alone took 3)
my $dc2 = 6;
my %lease = ('snowid.worker_lease' => '6s');
$coord->mark_dc_new($dc2);
my $a2 = server('a2', $dc2, %lease);
$ids->collect($a2, 100);
my $leased = worker_id($a2);
is(SnowidRedis::worker($a2), "$leased|lease", 'lease: A took a worker id');

my $offset2 = -s $a2->logfile;
my $busy = SnowidTest::start_psql($a2,
	'SELECT count(*) FROM (SELECT snowid_next() FROM generate_series(1, 2000000)) s');
$lost = SnowidLease::now_ms();
$coord->wipe;
my $b2 = server('b2', $dc2, %lease);
ok( $a2->wait_for_log(
		qr/WARNING:  snowid lost worker id $leased of datacenter $dc2/, $offset2),
	'lease, store emptied: A\'s renewal is refused, and A stops issuing with its id');
collect_after_loss($b2, 100, $dc2, $lost, 'lease, store emptied');
collect_after_loss($a2, 100, $dc2, $lost, 'lease, store emptied, A claims again');
isnt(worker_id($b2), worker_id($a2),
	'lease, store emptied: A and B hold two worker ids');
$busy->finish;
$ids->collect($a2, 100);

# 3. A permanent claim; the coordinator comes back from a backup taken
# before it (and after an earlier server's claim).
my $dc3 = 7;
$coord->mark_dc_new($dc3);
my $c3 = server('c3', $dc3);
$ids->collect($c3, 10);
$coord->backup;
my $a3 = server('a3', $dc3);
$ids->collect($a3, 100);
my $held3 = worker_id($a3);
isnt($held3, worker_id($c3), 'backup: A and C hold two worker ids');

$lost = SnowidLease::now_ms();
$coord->restore_backup;
my $b3 = server('b3', $dc3);
collect_after_loss($b3, 100, $dc3, $lost, 'store restored from a backup');
my %taken = map { worker_id($_) => 1 } ($a3, $c3);
ok(!$taken{ worker_id($b3) },
	'store restored from a backup: B gets neither A\'s nor C\'s worker id');
is(worker_id($a3), $held3, 'store restored from a backup: A keeps its worker id');
$ids->collect($a3, 100);

# 4. A re-assertion refused: after the loss, the id was given to another
# server before A checked in.  A stops issuing with it at once, and its next
# id carries another worker id.
my $dc4 = 8;
$coord->mark_dc_new($dc4);
my $a4 = server('a4', $dc4);
$ids->collect($a4, 100);
my $held4 = worker_id($a4);
my $offset = -s $a4->logfile;

# (A's check-in held still meanwhile: one that came between the two would
# re-assert the id before it was given away)
my $checkin4 = SnowidLease::worker_pid($a4, 'snowid check-in');
kill 'STOP', $checkin4;
$coord->wipe;
$coord->add_holder($dc4, $held4, 'dc=8 host=elsewhere port=1 sysid=1');
kill 'CONT', $checkin4;
ok( $a4->wait_for_log(
		qr/WARNING:  snowid stopped issuing ids with worker id $held4 of datacenter $dc4/,
		$offset),
	'refused re-assertion: A stops issuing with the id given away');
is(worker_id($a4), '', 'refused re-assertion: A holds no worker id');
$ids->collect($a4, 100);
my $moved = worker_id($a4);
ok($moved ne '' && $moved ne $held4,
	'refused re-assertion: A\'s next ids carry another worker id');

# 5. The coordinator goes back to an older copy of itself under the same
# identity, which its state record cannot tell: the files of a
# coordination database restored (crash recovery, the same install,
# system identifier and timeline), or a Redis restarted from an older
# snapshot for servers whose user may not read its run id (no INFO).  The
# holders have seen a later counter of the state record: the first to call
# after the restore starts the quiet period, so B gets neither A's id nor
# that of C, which claimed after the copy.
my $dc5 = 9;
my %user;
sub fleet_user
{
	# a Redis user that may not INFO (ACL users are not kept in snapshots)
	$coord->cli('ACL', 'SETUSER', 'fleet', 'reset', 'on', '>fleet-secret',
		"~{snowid:dc:$dc5}:*", '+fcall', '+hgetall', '+hget', '+hset',
		'+hdel', '+time', '+role');
	return;
}
if ($source eq 'redis')
{
	fleet_user();
	%user = ('snowid.redis_url' => 'unix://fleet:fleet-secret@' . $coord->socket);
}
my %fast = %user;
$coord->mark_dc_new($dc5);
my $a5 = server('a5', $dc5, %fast);
$ids->collect($a5, 100);
$coord->copy_files;
my $c5 = server('c5', $dc5, %fast);
$ids->collect($c5, 100);
my $held5 = worker_id($a5);
my $held5c = worker_id($c5);
isnt($held5c, $held5, 'older copy: A and C hold two worker ids');
# both have checked in since C's claim, and so seen its counter (a
# check-in a second; on a loaded machine later)
my $claimed5 = SnowidLease::now_ms();
my $since = "SELECT coalesce(coordinator_answered_at > to_timestamp($claimed5 / 1000.0), false)
	FROM snowid_status()";
$deadline = time + 60;
sleep 0.2
  until ($a5->safe_psql('postgres', $since) eq 't'
	  && $c5->safe_psql('postgres', $since) eq 't')
  || time > $deadline;
ok($a5->safe_psql('postgres', $since) eq 't' && $c5->safe_psql('postgres', $since) eq 't',
	'older copy: A and C have checked in since C\'s claim');

$lost = SnowidLease::now_ms();
$coord->restore_files;
fleet_user() if $source eq 'redis';
$deadline = time + 60;
# a quiet period begun since the restore (it may have ended again before
# a look on a loaded machine)
my $quiet;
sleep 0.2
  until ($quiet = $coord->quiet_record($dc5)->{from} >= $lost)
  || time > $deadline;
ok($quiet, 'older copy: a holder that saw later state starts a quiet period');
my $shown = q{SELECT coordinator_reassertions > 0 AND coordinator_forgot_at IS NOT NULL
	AND coordinator_answered_at >= coordinator_forgot_at
	AND coordinator_generation > 0 FROM snowid_status()};
$deadline = time + 60;
sleep 0.2 until $a5->safe_psql('postgres', $shown) eq 't' || time > $deadline;
is($a5->safe_psql('postgres', $shown), 't',
	'older copy: snowid_status() of A shows the coordinator forgot, and A re-asserted');
my $b5 = server('b5', $dc5, %fast);
collect_after_loss($b5, 100, $dc5, $lost, 'older copy');
my $got5 = worker_id($b5);
ok($got5 ne '' && $got5 ne $held5 && $got5 ne $held5c,
	'older copy: B gets neither A\'s nor C\'s worker id');
is(worker_id($a5), $held5, 'older copy: A keeps its worker id');
is(worker_id($c5), $held5c, 'older copy: C keeps its worker id');
$ids->collect($a5, 100);
$ids->collect($c5, 100);

$ids->no_duplicates;
$_->stop for ($a, $b, $a2, $b2, $c3, $a3, $b3, $a4, $a5, $b5, $c5);

# 6. Calls by hand (as a server of release 1.2 calls: no quiet period, no
# clock margin).  A clock margin out of bounds is refused, and writes
# nothing.  After a loss, a call that declares no quiet period is held to
# one as well: it starts the quiet period and is refused.
my $dc6 = 10;
# a usable time a day ahead: every fence lies below (the stores refuse one
# more than two days past their clock)
my $far = SnowidLease::now_ms() + 86400000;
my $hand = "dc=$dc6 host=by-hand port=1 sysid=1";
my $base = "{snowid:dc:$dc6}";
# a claim by hand: the library's numbers, or the coordination database's
# arguments after usable_ms; its refusal, or '' if granted
sub hand_claim
{
	my ($numbers, $args) = @_;

	if ($source eq 'redis')
	{
		eval {
			$coord->cli('FCALL', 'snowid_3_claim', 3, "$base:owners",
				"$base:leases", "$base:fences", $hand, "-1 31 -1 0 $far$numbers");
		};
		return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : '';
	}
	my $call = "claim($dc6, '$hand', -1, 31, -1, $far$args)";
	my $err = $coord->db->sql_error('coord_fleet', $coord->db->call_sql($call));
	return $err if defined $err;
	my $o = $coord->db->call($call);
	return $o->{outcome} eq 'ok' ? '' : 'SNOWID_' . uc($o->{outcome}) . ' ' . ($o->{fence_ms} // '');
}
my $before = $source eq 'redis'
  ? join(',', $coord->cli('HGETALL', "$base:owners"))
  : $coord->db->state;
like(hand_claim(' 9000 0 0 0 3600001', ', clock_margin_ms => 3600001'),
	$source eq 'redis'
	? qr/^SNOWID_USAGE clock_margin_ms must lie between 0 and 3600000, not 3600001/
	: qr/^22023: clock_margin_ms is out of range: 3600001$/,
	'a clock margin past an hour is refused');
is($source eq 'redis' ? join(',', $coord->cli('HGETALL', "$base:owners"))
	: $coord->db->state, $before, 'and writes nothing');
$coord->wipe;
like(hand_claim('', ''), qr/^SNOWID_QUIET \d+/,
	'after a loss, a claim that declares no quiet period is refused as quiet');
ok($coord->in_quiet($dc6), 'and starts the quiet period');
done_testing();
