# Redis restarted from an older snapshot takes again the proofs it took
# since the snapshot, replayed from MONITOR's output by the fleet's user.
#
# security.md ("Holder secrets") says that a proof read from a log (Redis'
# SLOWLOG, MONITOR) is never taken again: the library keeps the last n it
# took from each holder (the field "proof <holder>" of the fences hash) and
# refuses an n no larger (SNOWID_STALE_PROOF).  But that field is data like
# any other: Redis brought back from a snapshot (redis.md: a restart from
# an older snapshot, which the quiet period covers) holds the n of the
# snapshot, and every proof MONITOR showed since is taken again, under the
# holder's name, until the holder's next call.  Here a lease holder's
# renewals after a SAVE, watched by MONITOR; the holder stops, Redis
# restarts from the snapshot, and the last proof watched is replayed.
#
# Redis only (coordinator/restore_retakes_logged_proofs.pl: a coordination
# database restored from a dump).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidRedis;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidRedis::need_redis();
my $coord = SnowidRedis->new;
my $dc = 9;
my $p = SnowidLease::start_node($coord, 'p',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '3s' });
$p->safe_psql('postgres', 'SELECT snowid_next()');
SnowidLease::wait_lease($p);
my $pid = SnowidRedis::identity($p, $dc);
$coord->backup;

my $watched = '';
my $monitor = IPC::Run::start(
	[ 'stdbuf', '-oL', $coord->cli_program, '-s', $coord->socket, 'MONITOR' ],
	'<', \undef, '>', \$watched, '2>', \my $monitor_err);
my @proofs;
my $deadline = time + 60;
until (@proofs >= 3 || time > $deadline)
{
	$monitor->pump_nb;
	@proofs = $watched =~
	  /"snowid_3_lease_renew" "3" "[^"]*" "[^"]*" "[^"]*" "\Q$pid\E" "[^"]*" "[0-9a-f]{16} (\d+:[0-9a-f]{40})"/g;
	sleep 0.1;
}
$monitor->kill_kill;
ok(@proofs >= 3, 'MONITOR shows the holder\'s renewals after the snapshot');
note('the last proof watched: ' . ($proofs[-1] // ''));
$p->stop;

$coord->restore_backup;
my $base = "{snowid:dc:$dc}";
my $now = SnowidLease::now_ms();
my ($out, $err) = ('', '');
IPC::Run::run([ $coord->cli_program, '-s', $coord->socket, 'FCALL',
	'snowid_3_claim', '3', "$base:owners", "$base:leases", "$base:fences",
	$pid, "-1 31 -1 0 $now", $proofs[-1] // '' ],
	'<', \undef, '>', \$out, '2>', \$err);
note("the replay answered: $out$err");
like("$out$err", qr/SNOWID_STALE_PROOF/,
	'a proof MONITOR showed, taken before the restart, is refused when replayed after it');
done_testing();
