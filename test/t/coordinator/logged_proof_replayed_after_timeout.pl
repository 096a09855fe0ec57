# A proof the coordination database logged but never took, replayed by the
# fleet's role: a permanent holder's worker id moved away under its name
# while it issues, and another server issues with that id too.
#
# security.md ("Holder secrets") says that a proof read from a log is never
# taken again, for the store takes n first, in prove(), which commits.  But
# log_statement logs a CALL, parameters and all, when it starts: a call
# that never reaches prove()'s commit (its lock timeout while it waits for
# the holder's row, a connection cut) leaves in the log a proof the store
# never took, and the proof is bound to no call.  Here the member holds the
# permanent holder P's row with an open prove() of its own
# (coordinator/prove_holds_holder_row.pl), so that P's next check-in is
# logged and times out in prove() (P issues on, as while a store is down);
# the member queues behind its hold a replay of P's proof (a lease claim
# under P's name, which moves P's worker id onto a lease of a second, fenced
# at the member's client_ms) and a hold again, so that P's check-ins keep
# timing out while P issues on.  The lease runs out; a new server N claims
# P's id, and P and N issue with it.
#
# The coordination database only, its calls logged with their parameters
# (as coordinator.md allows once no server of 1.3.0 runs).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $coord = SnowidPgCoord->new;
my $db = $coord->db;
my $dc = 8;
$db->node->append_conf('postgresql.conf', qq{
log_parameter_max_length = -1
log_statement = 'all'
});
$db->sql(undef, 'ALTER ROLE coord_fleet SET log_parameter_max_length = -1');
$db->node->reload;

my %common = ('snowid.datacenter_id' => $dc, 'snowid.clock_margin' => '1s',
	'snowid.checkin_interval' => '10s');
my $burst = SnowidTest::Bursts->sql;
my $p = SnowidLease::start_node($coord, 'p', {%common});
$p->safe_psql('postgres', $burst);
$p->safe_psql('postgres', 'SELECT snowid_next()');
my $wp = SnowidLease::worker_id($p);
my $pid = SnowidRedis::identity($p, $dc);
note("P holds worker id $wp as '$pid'");

# the member holds P's row; P's next check-in is logged and times out (P
# tries again at once, again and again, each logged)
my $member = $db->node->background_psql('coord',
	extra_params => [ '-U', 'coord_fleet' ]);
my $log_start = -s $db->node->logfile;
my $p_log_start = -s $p->logfile;
my $hold = "CALL snowid_coordinator.prove($dc, '$pid', '1:" . ('0' x 64) . "', '{claim}')";
$member->query_safe('BEGIN');
$member->query_safe($hold);
my ($proof, $max);
my $deadline = time + 90;
until (time > $deadline)
{
	($proof, $max) = slurp_file($db->node->logfile, $log_start) =~
	  /\$2 = '\Q$pid\E', \$3 = '(\d+:[0-9a-f]{64})', \$4 = '-?\d+', \$5 = '(\d+)'/i;
	last if defined $max
	  && slurp_file($p->logfile, $p_log_start) =~ /could not check in/;
	sleep 0.02;
}
ok(defined $proof, 'the log shows P\'s check-in that timed out, with its proof');

# Sessions waiting for P's row, by pid
sub waiting
{
	return map { $_ => 1 } split /\n/, $db->sql(undef, q{
		SELECT l.pid FROM pg_locks l WHERE NOT l.granted
		UNION SELECT a.pid FROM pg_stat_activity a
		WHERE a.wait_event_type = 'Lock'});
}
# right after P's next call starts to wait (P tries again every 1.5 s),
# the member queues behind its hold the replay of that proof (a lease claim
# under P's name, of a second: P's id moved onto a lease that runs out) and
# a hold again; once P's call that waited ahead of them has timed out, it
# ends its first hold
my %before = waiting();
sleep 0.01 until grep({ !$before{$_} } keys %{ { waiting() } }) || time > $deadline;
my %ahead = waiting();
my $now = $db->now_ms;
my $replay = $db->start_psql('coord_fleet',
	"CALL snowid_coordinator.lease_claim($dc, '$pid', '$proof', $max, 1000, $now, $now, -1, 0, '0123456789abcdef');\n");
sleep 0.1;
my $again = $db->start_psql('coord_fleet',
	"BEGIN;\n$hold;\nSELECT pg_sleep(20);\nCOMMIT;\n");
sleep 0.1;
note('waiting: ' . join(', ', sort keys %{ { waiting() } }) . '; P\'s: ' . join(', ', sort keys %ahead));
sleep 0.02 while grep({ my %w = waiting(); $w{$_} } keys %ahead) && time < $deadline;
$member->query_safe('COMMIT');
$member->quit;
$replay->finish;
my $answer = $replay->stdout . $replay->stderr;
note("the replay answered: $answer");
unlike($answer, qr/^ok\|/m,
	'a logged proof the database did not take is refused when replayed');
note('the store: ' . $db->sql(undef,
	"SELECT string_agg(worker_id || '=' || coalesce(holder, '-') || ' ' || on_lease || ' ' || coalesce(lease_expires_ms, 0) || ' fence ' || fence_ms, ', ' ORDER BY worker_id) FROM snowid_coordinator.worker_ids WHERE datacenter = $dc"));

# a new server claims, and P and N issue
my $n = SnowidLease::start_node($coord, 'n', {%common});
$n->safe_psql('postgres', $burst);
$deadline = time + 60;
sleep 0.2 until $n->psql('postgres', 'SELECT snowid_next()') == 0 || time > $deadline;
my $wn = SnowidLease::worker_id($n);
note("N holds worker id '$wn'");
my $bursts = SnowidTest::Bursts->new->start(
	{ p => $p->connstr('postgres'), n => $n->connstr('postgres') }, 3)->finish;
note("P issued " . ($bursts->{n}{p} // 0) . ", N " . ($bursts->{n}{n} // 0)
	  . " ids, $bursts->{both} by both");
is($bursts->{both}, 0, 'no id is issued by both P and N');
is($bursts->{shared}, 0, 'no millisecond of one worker id is issued by both P and N');
$again->finish;
$_->stop for ($p, $n);
done_testing();
