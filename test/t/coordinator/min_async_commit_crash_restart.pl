# The protocol in brief's RESTART_LOSS in a coordination database
# (sql/snowid_coordinator/1.1/ranges.sql, noticed() and server_now()):
# a grant lost in a crash restart is not noticed (found by the attack
# attack67x on 2cb02f4, issue 67).
#
# Any role may set its own session defaults, and every server of the
# fleet calls as the fleet's role: one statement of a fleet member,
# ALTER ROLE CURRENT_USER SET synchronous_commit = off, makes every later
# call of every server commit asynchronously (the procedures commit inside
# and cannot carry settings; the functions' SET clauses do not reach
# their COMMIT).  The coordination server then answers a grant whose WAL
# is not yet on disk.  When a process of the server dies (an OOM kill, an
# operator's kill -9 of a stuck backend), the postmaster reinitialises
# shared memory and runs crash recovery, without restarting itself: the
# grants of the last wal_writer_delay or so are gone, and server_now()
# (the install, the system identifier, the timeline and the postmaster's
# start) is the same as before, so noticed() starts no quiet period.
# Seen on 18 (2cb02f4): a holder granted worker id 0 for good, the server
# crash restarted, the id's row gone, the run unchanged, and another
# holder granted worker id 0 at once, while the first's range runs: two
# holders with overlapping ranges.  The brief says a fleet member needs no
# assumption, and that every restart counts as a possible loss.  The same
# path opens with synchronous_commit = off in the coordination server's
# own configuration (a common setting for speed), with no member at all.
#
# To make the crash fall inside the window every time however loaded the
# machine, the test stops the WAL writer, the background writer and the
# checkpointer (SIGSTOP) before the grant and kills them after it (the
# crash); in production the window is up to three wal_writer_delay.
#
# The coordination database only (Redis has no crash restart: every start
# is a new run id).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

plan skip_all => 'a coordination database\'s crash restart (test/run --part coord)'
  unless SnowidCoord::store() eq 'postgresql';

my ($R, $M) = (3000, 2000);
my $s = SnowidMinStore->started($R, $M);
my $store = $s->store;
my $node = $store->node;
my $dc = 1;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

# A coordination server as installed: it restarts after a crash
# (PostgreSQL::Test::Cluster turns that off)
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->reload;

$s->quiet_over($dc);
$store->db->sql(undef, 'CHECKPOINT');

# A fleet member sets the fleet role's session default
$store->db->sql('coord_fleet', 'ALTER ROLE CURRENT_USER SET synchronous_commit = off');
is($store->db->sql('coord_fleet', 'SHOW synchronous_commit'), 'off',
	'a fleet member turned synchronous commit off for every session of the fleet\'s role');

my $run = run_id($store);
my @stopped = split /\n/, $store->db->sql(undef, q{
	SELECT pid FROM pg_stat_activity
	WHERE backend_type IN ('walwriter', 'background writer', 'checkpointer')});
is(scalar @stopped, 3, 'the WAL writer, the background writer and the checkpointer');
kill 'STOP', @stopped;

my ($id, $end) = granted(call($store, 'claim', $dc, $a, "31 $R 1 -1"));
is($id, 0, 'a is granted worker id 0 for good');

# The crash: the postmaster reinitialises and recovers, without restarting
kill 'KILL', @stopped;
$node->poll_query_until('coord', 'SELECT true')
  or die 'the coordination server did not come back from its crash restart';
is(run_id($store), $run,
	'after the crash restart, the coordination server\'s run is the same as before');

# The grant is gone: a restart that kept its run must have kept it, or
# started a quiet period
my $slot = slot($store, $dc, 0);
my $claim_b = call($store, 'claim', $dc, $b, "31 $R 1 -1");
ok($slot eq "$end good $a" || $claim_b =~ /^SNOWID_(?:QUIET|FENCED) /,
	'RESTART_LOSS: b is not granted worker id 0 while a\'s range runs: the crash restart'
	  . ' kept a\'s grant, or is noticed as a possible loss')
  or diag("worker id 0 as kept after the crash: '$slot'; b's claim: $claim_b;"
	  . " a's range ends $end, the store's clock is " . store_now($store));

$store->stop;
done_testing();
