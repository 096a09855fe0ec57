# A wall clock stepped forward does not make a restart's re-assertion look
# recent.  snowid_store_state keeps confirmed_ms, when the server sent its
# last call the store granted; after a loss the store takes a restart's
# re-assertion as the holder's own only if that lies recent enough (the
# confirmed re-assertion rule, doc/internals.md).  Until issue 55's third
# attack the server kept the largest send time by its wall clock: a clock
# stepped forward past the margin while a check-in was granted, then put
# right, left the file that far ahead, and a server stopped with it and
# restarted after a second loss passed for one that was live at the loss,
# and took back the worker id another server had taken between the losses.
#
# A. P's clock steps 50 s ahead while its claim of worker id 0 for good is
#    granted, and is put right: the file never names a time ahead of the
#    real clock.  P stops; the store forgets; Q takes id 0 after the quiet
#    period; the store forgets again before Q's next check-in; P restarts
#    when its stepped time has come.  No id, and no millisecond of worker
#    id 0, is issued by both.
# B. A file naming a time a day ahead (as the releases that kept the
#    largest send time leave it after a step of a day) does not stop a
#    restart: it is sent as unknown, and the server issues ids at once.
#
# Against Redis, or a coordination database (SnowidCoord); the servers'
# clocks under SnowidTest::Clock, their monotonic clocks not.
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
use Time::HiRes qw(sleep);

SnowidCoord::need_store();
SnowidTest::need_clock();

my $step_s = 50;
my $coord = SnowidCoord->new;
my %common = (%SnowidLease::quick_checkins, 'snowid.worker_bits' => 1);

# Ids with their worker id and millisecond, for sec seconds, 20 every 2 ms
my $burst = SnowidTest::Bursts->sql(0.002);

# Waits until the server's store answered a call it sent at or after
# since_ms by its own clock (snowid_status().coordinator_answered_at)
sub wait_answered
{
	my ($node, $since_ms) = @_;

	$node->poll_query_until('postgres',
		"SELECT coordinator_answered_at >= to_timestamp($since_ms / 1000.0)
		   FROM snowid_status()")
	  or die $node->name . ' got no answer from its store';
	return;
}

# ---------------------------------------------------------------- A
# P's clock steps ahead after its start and before its claim for good, the
# first call the store grants it (SnowidTest::Clock moves the clock of
# every process of the server, its background workers' too, as a real step
# would; under libfaketime, which the test used before, their check-ins
# went on by the real clock)
my $dc = 21;
$coord->mark_dc_new($dc);
my $clock = SnowidTest::Clock->new;
my $p = $coord->new_node('p', { %common, 'snowid.datacenter_id' => $dc });
$clock->start_node($p);
$p->safe_psql('postgres', 'CREATE EXTENSION snowid');
$p->safe_psql('postgres', $burst);
my $stepped_at = SnowidLease::now_ms();
$clock->set("+$step_s");
$p->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidLease::worker_id($p), '0', 'A: P claims worker id 0 for good, its clock ahead');
cmp_ok(SnowidLease::confirmed_in_file($p), '<=', SnowidLease::now_ms() + 1000,
	'A: a call granted while the clock is ahead keeps no time ahead of the real clock');
$clock->set('+0');
wait_answered($p, SnowidLease::now_ms());
cmp_ok(SnowidLease::confirmed_in_file($p), '<=', SnowidLease::now_ms() + 1000,
	'A: nor after the clock is put right and P checks in');
$p->stop;
ok(-e $p->data_dir . '/snowid_worker', 'A: P\'s cache file names its id');

# loss 1; Q takes id 0 after the quiet period and its floor
my $q = SnowidLease::claim_after_loss($coord, { %common, 'snowid.datacenter_id' => $dc },
	$burst, 'A: ');
diag('Q claimed ' . ($stepped_at + $step_s * 1000 - SnowidLease::now_ms())
	  . ' ms before the time P\'s clock named during its step');

# Q issues until the time P's clock named during the step has come (a file
# naming it would then pass the rule); its check-in stops; loss 2; P starts
sleep 0.3 while SnowidLease::now_ms() < $stepped_at + $step_s * 1000;
SnowidLease::race_after_second_loss($coord, $clock, $p, $q, 'A: ');
$_->stop for ($p, $q);

# ---------------------------------------------------------------- B
my $dc2 = 22;
$coord->mark_dc_new($dc2);
my $s = SnowidLease::start_node($coord, 's', { %common, 'snowid.datacenter_id' => $dc2 });
$s->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidLease::worker_id($s), '0', 'B: S claims worker id 0 for good');
$s->stop;

my $file = $s->data_dir . '/snowid_store_state';
my $line = slurp_file($file);
my $ahead = SnowidLease::now_ms() + 86_400_000;
$line =~ s/confirmed_ms=\d+/confirmed_ms=$ahead/ or die "no confirmed_ms in $line";
PostgreSQL::Test::Utils::append_to_file("$file.new", $line);
rename("$file.new", $file) or die "could not rename: $!";

$s->start;
my ($ret, $out, $err) = $s->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, 'B: a file naming a time a day ahead does not stop the restart')
  or diag($err);
is(SnowidLease::worker_id($s), '0', 'B: S re-asserts worker id 0');
wait_answered($s, SnowidLease::now_ms());
cmp_ok(SnowidLease::confirmed_in_file($s), '<=', SnowidLease::now_ms() + 1000,
	'B: the file is written down to the real clock at the next granted call');
$s->stop;

done_testing();
