# A second restore of the store's files to an older copy of itself is
# noticed, as the first (issue 55; found by the attack att55c on its fix).
# Such a restore (crash recovery of a coordination database's files: the
# same install, system identifier and timeline; a Redis snapshot, for
# servers that may not INFO) shows no loss of the store's own: only the
# holders' word (they saw a later counter than the record's) finds it, and
# starts a quiet period.  The path: the store marked a generation made on a
# word (declared_generation, Redis' ninth field of the state record) and
# ignored every word in it (the rule declared_once of recall(), against a
# member repeating the word), so a copy taken after the first restore,
# restored in turn, went unnoticed: no quiet period, and a new server B
# took at once the worker id a server C claimed after that copy (161 and
# 264 ids issued by both on 18).  Closed: every word of a later state
# starts (or lengthens) a quiet period and a new state (recall() in
# quiet.sql and snowid.lua).  Here: restore 1 is noticed, C claims after
# copy 2, restore 2 with C's check-in stalled: a quiet period starts, B
# does not get C's worker id, and no id is issued by both.
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
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $source = $coord->source;
my %common = ('snowid.coordinator_timeout_ms' => 5000,
	'snowid.checkin_interval' => '1s', 'snowid.clock_margin' => '1s');
my $dc = 9;
my %user;
sub fleet_user
{
	# a Redis user that may not INFO (ACL users are not kept in snapshots)
	$coord->cli('ACL', 'SETUSER', 'fleet', 'reset', 'on', '>fleet-secret',
		"~{snowid:dc:$dc}:*", '+fcall', '+hgetall', '+hget', '+hset',
		'+hdel', '+time', '+role');
	return;
}
if ($source eq 'redis')
{
	fleet_user();
	%user = ('snowid.redis_url' => 'unix://fleet:fleet-secret@' . $coord->socket);
}

sub server
{
	my ($name, %settings) = @_;

	return SnowidLease::start_node($coord, $name,
		{ %common, 'snowid.datacenter_id' => $dc, %user, %settings });
}

my $burst = SnowidTest::Bursts->sql(0.002);

$coord->mark_dc_new($dc);
my $a = server('a');
$a->safe_psql('postgres', 'SELECT snowid_next()');
my $wa = SnowidLease::worker_id($a);
note("A holds worker id $wa");

# copy 1; A checks in a few times (the counter moves on); restore 1: A's
# word starts a quiet period (as 105's scenario 5)
$coord->copy_files;
sleep 3;
$coord->restore_files;
fleet_user() if $source eq 'redis';
my $deadline = time + 60;
my $quiet;
sleep 0.2 until ($quiet = $coord->in_quiet($dc)) || time > $deadline;
ok($quiet, 'restore 1: A\'s word starts a quiet period');
sleep 0.5 while $coord->in_quiet($dc) && time < $deadline + 60;

# copy 2, taken in the generation restore 1 made on a word
$coord->copy_files;
sleep 2;

# C claims after copy 2 (waits for restore 1's floor) and issues
my $c = server('c');
$c->safe_psql('postgres', $burst);
my ($ret, $out, $err) = $c->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, 'C claims') or diag($err);
my $wc = SnowidLease::worker_id($c);
note("C holds worker id $wc");
isnt($wc, $wa, 'A and C hold two worker ids');
sleep 3;    # both check in since C's claim

# restore 2.  C's check-in is late (a stalled process, a busy machine):
# the new server's claim comes first, as the quiet period is there for.
my $checkin = SnowidLease::worker_pid($c, 'snowid check-in');
kill 'STOP', $checkin;
my $lost = SnowidLease::now_ms();
$coord->restore_files;
fleet_user() if $source eq 'redis';
# A checks in: it says it saw a later counter
sleep 3;
ok($coord->in_quiet($dc), 'restore 2: a holder\'s word starts a quiet period');

# B's claim comes first; C's check-in resumes a second later, within the
# quiet period, and re-asserts C's worker id.  Both issue meanwhile.
my $b = server('b');
$b->safe_psql('postgres', $burst);
my $bursts = SnowidTest::Bursts->new->start(
	{ b => $b->connstr('postgres'), c => $c->connstr('postgres') }, 2);
sleep 1;
kill 'CONT', $checkin;
my $took = $bursts->finish;
my $wb = SnowidLease::worker_id($b);
note("B's claim ended " . (SnowidLease::now_ms() - $lost) . " ms after restore 2: worker id '$wb'");
isnt($wb, $wc, 'restore 2: B does not get C\'s worker id');
my ($n, $lo, $hi) = @$took{qw(n lo hi)};
diag(sprintf('B issued %d ids (ms %d..%d), C %d (ms %d..%d); %d issued by both, %d ms of one worker id by both',
	$n->{b} // 0, ($lo->{b} // 0) - $lost, ($hi->{b} // 0) - $lost,
	$n->{c} // 0, ($lo->{c} // 0) - $lost, ($hi->{c} // 0) - $lost,
	$took->{both}, $took->{shared}));
is($took->{both}, 0, 'no id is issued by both B and C');
is($took->{shared}, 0, 'no millisecond of one worker id is issued by both B and C');
$_->stop for ($a, $b, $c);
done_testing();
