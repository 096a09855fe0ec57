# One call of a fleet member does not blind the store to the next restore
# of its files (issue 55; found by the attack att55c on its fix).  The
# member (any role the fleet's calls run as, under a made-up holder name)
# says once that it saw the next counter: the store starts a quiet period.
# The path: the store marked that generation as made on a word
# (declared_generation, Redis' ninth field of the state record) and
# ignored every later word in it (the rule declared_once of recall()), so
# the operator's restore of the store's files to a copy taken after that
# (crash recovery: the same install, system identifier and timeline; a
# Redis snapshot for servers that may not INFO), which only the holders'
# word finds, went unnoticed: no quiet period, and a new server B took at
# once the worker id a server C claimed after the copy (462 ms of one
# worker id by both on 18 with a coordination database; 1,554 ids twice
# with Redis).  Closed: every word of a later state starts (or lengthens)
# a quiet period and a new state.  The same path as second_store_restore.pl, whose first
# restore the member's one call stands for.
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
use SnowidStoreRestore;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $source = $coord->source;
my $dc = 9;
my $pg = $source eq 'postgresql';
my $member = "dc=$dc host=made-up port=1 sysid=1";
my $member_secret = 'b5' x 32;
my $fleet = SnowidStoreRestore->new($coord, $dc);
my ($a, $wa) = $fleet->start_a;

# the member's one call: it saw the next counter.  A's own calls may move
# the counter between the read and the call (a check-in that writes), when
# the member's counter is no longer past the store's: it then says it again
# with the counter read anew, as a member may (up to five times)
sub member_word
{
	my ($gen, $counter, $call_ms);
	if ($pg)
	{
		# the member reads the state by a claim of its own and says its
		# word right after, in one DO block: no round trip between them,
		# which a loaded machine stretched past A's check-ins every time
		# (five tries, none landed), and again up to 20 times while the
		# word made no new state (A's check-in came between)
		my $into = join(', ', map { "$_ => %s.$_" }
			  qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter));
		my $call = "CALL snowid_coordinator.claim($dc, '$member', '$member_secret', -1, 31, -1, "
		  . "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, quiet_ms => 1101, "
		  . "%s clock_margin_ms => 0, $into)";
		my $read = sprintf($call, '', ('o') x 8);
		my $word = sprintf($call,
			'seen_generation => o.generation, seen_counter => o.counter + 1,', ('w') x 8);
		my ($r, $o, $e) = $coord->node->psql('coord', qq{
DO \$do\$
DECLARE
	o snowid_coordinator.outcome;
	w snowid_coordinator.outcome;
BEGIN
	FOR i IN 1 .. 20 LOOP
		$read;
		RAISE NOTICE 'sent %', floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
		$word;
		RAISE NOTICE 'word % %', w.outcome, w.generation;
		EXIT WHEN w.generation <> o.generation;
	END LOOP;
END
\$do\$}, extra_params => [ '-U', 'coord_fleet' ]);
		note("member's call: $r $o $e");
		($call_ms) = ($e =~ /NOTICE:  sent (\d+)/g)[-1]
		  or die "the member's word: $r $o $e";
	}
	else
	{
		my $base = "{snowid:dc:$dc}";
		my ($g, $c) = $coord->cli('HGET', "$base:owners", 'state') =~ /^(\w+) \S+ \d+ \d+ (\d+)/;
		($gen, $counter) = (hex $g, $c);
		my ($s, $us) = split /\n/, $coord->cli('TIME');
		my $now = $s * 1000 + int($us / 1000);
		$call_ms = $now;
		eval {
			$coord->cli('FCALL', 'snowid_3_claim', 3, "$base:owners", "$base:leases",
				"$base:fences", $member,
				join(' ', -1, 31, -1, 0, $now, 1101, 0, $gen, $counter + 1, 0), $member_secret);
		};
		note("member's call: $@");
	}
	# the quiet period it started ends past the time of the call (read from
	# the state record rather than against the clock now, which a loaded
	# machine may read after the period ended)
	my $until = $pg
	  ? $coord->db->sql(undef, "SELECT coalesce(max(quiet_until_ms), 0) "
		  . "FROM snowid_coordinator.datacenters WHERE datacenter = $dc")
	  : (($coord->cli('HGET', "{snowid:dc:$dc}:owners", 'state')
			=~ /^\S+ \S+ \d+ (\d+)/)[0] // 0);
	note("the quiet period ends at $until, the call was sent at $call_ms");
	return $until > $call_ms;
}
my $word;
for my $try (1 .. 5)
{
	last if $word = member_word();
}
ok($word, 'the member\'s word starts a quiet period (the known finding)');
my $deadline = time + 60;
sleep 0.5 while $coord->in_quiet($dc) && time < $deadline + 60;

# the operator's copy of the store's files, taken in the generation made on the member's word
$coord->copy_files;
sleep 2;

# C claims after the copy (waits for the member's floor) and issues; the
# copy restored with C's check-in stalled
my ($c, $wc) = $fleet->start_c($wa);
my $b = $fleet->race_after_restore('restore', $c, $wc);
$_->stop for ($a, $b, $c);
done_testing();
