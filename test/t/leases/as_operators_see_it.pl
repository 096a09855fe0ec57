# A server on lease as an operator sees it (issue 48):
#
# - the lease renewer shows in pg_stat_activity (it connected to no
#   database, and did not);
# - a clean stop ends it without the postmaster's "exited with exit code 1"
#   line, which read as a fault at every shutdown;
# - a server that gave its id back at a clean stop
#   (snowid.release_on_shutdown = on) takes the same id again when it is
#   still free, not the lowest free one (the mark forgot the id at the
#   stop: it held 1, 0 was free too, and it took 0);
# - a server moved from a claim for good onto a lease takes that id on
#   lease, so that it comes free when the server goes (it stayed held for
#   good under the server's name, and the server took another id).
#
# The store is Redis or a PostgreSQL coordination database (SnowidCoord).
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
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $dc = 2;
my $coord = SnowidCoord->new;
my $ledger = SnowidTest::Ledger->new;
my $by_worker = SnowidLease::ByWorker->new($ledger);
# No lease here needs to run out: 6 s, renewed every 2 s, within a drift
# budget above it; a call to the coordinator may take 4 s on a busy machine.
my %layout = ('snowid.datacenter_id' => $dc, 'snowid.worker_bits' => 3);
my %lease = (
	%layout,
	'snowid.max_drift_ms' => 10000,
	'snowid.coordinator_timeout_ms' => 4000,
	'snowid.worker_lease' => '6s',
	'snowid.release_on_shutdown' => 'on');

# The server log written since a position (a byte offset).
sub log_since
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile);

	return substr($log, $offset);
}

my $a = SnowidLease::start_node($coord, 'a', \%lease);
is(SnowidLease::wait_lease($a), 0, 'a takes worker id 0 on lease');
my $b = SnowidLease::start_node($coord, 'b', \%lease);
is(SnowidLease::wait_lease($b), 1, 'b takes worker id 1 on lease');
$by_worker->take($a, 0, 100, 'a');
$by_worker->take($b, 1, 100, 'b');

# The renewer in pg_stat_activity, with its wait event.
ok( $b->poll_query_until(
		'postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE backend_type = 'snowid lease renewer' AND datname IS NULL}),
	'the lease renewer shows in pg_stat_activity, in no database');

# Clean stops that give the ids back: no exit code 1 in the log.
my $offset = -s $b->logfile;
$a->stop;
$b->stop;
my $stop_log = log_since($b, $offset);
like($stop_log, qr/snowid gave back worker id 1 /,
	'a clean stop with snowid.release_on_shutdown gives the id back');
unlike($stop_log, qr/snowid lease renewer.*exited with exit code/,
	'and the lease renewer exits without an exit code in the log');
ok(!exists $coord->owners($dc)->{$_}, "worker id $_ is free") for 0, 1;

# b starts again first: with 0 and 1 free, it takes its own id 1 again.
$b->start;
is(SnowidLease::wait_lease($b), 1,
	'after a clean stop that gave worker id 1 back, with 0 free too: worker id 1 again');
$by_worker->take($b, 1, 100, 'b after its restart');
$a->start;
is(SnowidLease::wait_lease($a), 0, 'and a its worker id 0');
$by_worker->take($a, 0, 100, 'a after its restart');

# A renewer terminated by someone else than the postmaster comes back.
my $renewer = SnowidLease::lease_worker_pid($a);
$a->safe_psql('postgres', "SELECT pg_terminate_backend($renewer)");
my $back;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$back = eval { SnowidLease::lease_worker_pid($a) };
	last if defined $back && $back != $renewer;
	Time::HiRes::sleep(0.1);
}
isnt($back // $renewer, $renewer,
	'a lease renewer ended by pg_terminate_backend() is started again');
is(SnowidLease::wait_lease($a), 0, 'and the server holds a worker id on lease');

# A server that claimed an id for good, moved onto a lease.
my $p = SnowidLease::start_node($coord, 'p', \%layout);
$ledger->collect($p, 10);
is(SnowidRedis::worker($p), '2|' . $coord->source,
	'p claims worker id 2 for good');
my $p_name = SnowidRedis::identity($p, $dc);
$by_worker->add(2, SnowidTest::next_ids($p, 100));
$p->stop;
SnowidTest::set_conf($p, %lease);
$p->start;
is(SnowidLease::wait_lease($p), 2,
	'moved onto a lease, it takes the id it held for good, on lease');
is($coord->owners($dc)->{2}, "lease $p_name", 'held on lease now');
ok(!grep({ $_ eq $p_name } values %{ $coord->owners($dc) }),
	'and no id held for good under its name any more');
$by_worker->take($p, 2, 100, 'p on lease');
$p->stop;
ok(!exists $coord->owners($dc)->{2},
	'its clean stop gives the id back: it is no longer held for good');

$_->stop for $a, $b;
$by_worker->ok_all('every holder issued ids above the holders of its worker id before it');
$ledger->no_duplicates;

done_testing();
