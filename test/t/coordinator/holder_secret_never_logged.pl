# The holder secret never goes where a store logs it, and a proof read from
# a store's log is refused when replayed (issue 67, item 6).
#
# The path: every call sent the server's holder secret itself, as a bind
# parameter of a coordination database's CALL (logged with
# log_min_duration_statement, parameters and all) and as an argument of
# Redis' FCALL (in its SLOWLOG and in MONITOR's output), where whoever
# reads the log and has the fleet's credentials could act as that server.
# Now a call sends a proof: a number n larger than any the store took from
# that holder, and the hash of the holder's key (the hash of its secret,
# which the store keeps) and n; the store takes n before the call does
# anything else.  The key goes once, when the store asks to register it:
# to a coordination database under a pad it answered (which no log
# shows), to Redis as it is (whose fleet user may write its hashes
# anyway).  Here a permanent holder and a lease holder claim, check in,
# renew and stop with every call logged; no log holds either secret (nor a
# coordination database's log the key), and a logged proof replayed by the
# fleet's role is refused.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Digest::SHA;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $coord = SnowidCoord::start();
my $redis = $coord->source eq 'redis';
my $dc = 8;
my ($monitor, $watched, $log_start);

# every call logged: Redis' slow log keeps every command, and MONITOR
# watches; the coordination database logs every statement with its
# parameters, whole
if ($redis)
{
	$coord->cli('CONFIG', 'SET', 'slowlog-log-slower-than', '0');
	$coord->cli('CONFIG', 'SET', 'slowlog-max-len', '100000');
	$coord->cli('SLOWLOG', 'RESET');
	$watched = '';
	# line by line, as it comes (redis-cli buffers what it writes to a pipe)
	$monitor = IPC::Run::start(
		[ 'stdbuf', '-oL', $coord->cli_program, '-s', $coord->socket, 'MONITOR' ],
		'<', \undef, '>', \$watched, '2>', \my $monitor_err);
	my $deadline = time + 10;
	$monitor->pump_nb, sleep 0.1 until $watched =~ /OK/ || time > $deadline;
	like($watched, qr/OK/, 'MONITOR watches');
}
else
{
	$coord->node->append_conf('postgresql.conf', qq{
log_min_duration_statement = 0
log_parameter_max_length = -1
log_parameter_max_length_on_error = -1
log_statement = 'all'
});
	# (SnowidCoordDb keeps the parameters of the fleet's calls out of the
	# log, as coordinator.md advises for servers of 1.3.0: not here)
	$coord->db->sql(undef, 'ALTER ROLE coord_fleet SET log_parameter_max_length = -1');
	$coord->node->reload;
	$log_start = -s $coord->node->logfile;
}

my %common = ('snowid.datacenter_id' => $dc, 'snowid.checkin_interval' => '1s');
my $perm = SnowidLease::start_node($coord, 'perm', {%common});
my $lease = SnowidLease::start_node($coord, 'lease',
	{ %common, 'snowid.worker_lease' => '3s' });
$_->safe_psql('postgres', 'SELECT snowid_next()') for ($perm, $lease);
my $wp = SnowidLease::worker_id($perm);
my $wl = SnowidLease::worker_id($lease);
isnt($wp, '', 'the permanent holder claims a worker id');
isnt($wl, '', 'the lease holder takes one on lease');
# check-ins and renewals
sleep 4;
$_->safe_psql('postgres', 'SELECT snowid_next()') for ($perm, $lease);

sub secret_of
{
	my ($node) = @_;
	my ($secret) = slurp_file($node->data_dir . '/snowid_holder_secret')
	  =~ /^snowid_holder_secret 1 ([0-9a-f]{64})$/m;

	return $secret;
}
my %secret = (perm => secret_of($perm), lease => secret_of($lease));
ok(defined $secret{$_}, "the $_ holder has a secret") for qw(perm lease);

# what the store logged
my $logged;
if ($redis)
{
	my $until = time + 1;
	$monitor->pump_nb, sleep 0.05 while time < $until;
	$monitor->kill_kill;
	append_to_file("$PostgreSQL::Test::Utils::log_path/162_monitor.txt", $watched);
	$logged = $coord->cli('SLOWLOG', 'GET', '-1') . "\n" . $watched;
	like($watched, qr/snowid_3_claim/, 'MONITOR saw the claims');
	like($logged, qr/snowid_3_lease_renew/, 'and the renewals');
}
else
{
	$logged = slurp_file($coord->node->logfile, $log_start);
	like($logged, qr/parameters: \$1 = /i,
		'the coordination database logged the calls with their parameters');
	like($logged, qr/snowid_coordinator\.lease_renew/, 'and the renewals');
}
for my $who (qw(perm lease))
{
	ok(index($logged, $secret{$who}) < 0, "no log holds the $who holder's secret");
	next if $redis;
	# the key a coordination database keeps, SHA-256 of the secret, neither
	ok(index($logged, Digest::SHA::sha256_hex($secret{$who})) < 0,
		"no log holds the $who holder's key");
}

my $refused;
# a proof read from the log, replayed by the fleet's role, is refused: the
# permanent holder's (a claim; a check-in in Redis reads the hashes
# alone while Redis has its claim), and the lease holder's last renewal,
# replayed as a release of its lease
my $identity = SnowidRedis::identity($perm, $dc);
my $lid = SnowidRedis::identity($lease, $dc);
my $now = SnowidLease::now_ms() + 1000;
if ($redis)
{
	my $base = "{snowid:dc:$dc}";
	my @keys = ('3', "$base:owners", "$base:leases", "$base:fences");
	my @proofs = $watched =~ /"\Q$identity\E" "[^"]*" "(\d+:[0-9a-f]{40})"/g;
	ok(@proofs >= 1, 'MONITOR shows a proof of the permanent holder')
	  or diag(join("\n", grep { /snowid_3_claim/ } split /\n/, $watched));
	my @renewals = $watched =~
	  /"snowid_3_lease_renew" "3" "[^"]*" "[^"]*" "[^"]*" "\Q$lid\E" "[^"]*" "([0-9a-f]{16} \d+:[0-9a-f]{40})"/g;
	ok(@renewals >= 1, 'and proofs of the lease holder\'s renewals');
	for my $replay ([ 'snowid_3_claim', $identity, "-1 31 -1 0 $now", $proofs[-1] // '' ],
		[ 'snowid_3_lease_release', $lid, "$wl 0", $renewals[-1] // '' ])
	{
		my ($out, $err) = ('', '');
		IPC::Run::run([ $coord->cli_program, '-s', $coord->socket, 'FCALL',
			$replay->[0], @keys, @$replay[ 1 .. 3 ] ],
			'<', \undef, '>', \$out, '2>', \$err);
		like("$out$err", qr/SNOWID_STALE_PROOF/,
			"a logged proof replayed in $replay->[0] is refused as one taken already");
	}
}
else
{
	my @proofs = $logged =~ /\$2 = '\Q$identity\E', \$3 = '(\d+:[0-9a-f]{64})'/gi;
	ok(@proofs > 1, 'the log shows proofs of the permanent holder')
	  or diag(substr($logged, 0, 3000));
	my @renewals = $logged =~
	  /\$2 = '\Q$lid\E', \$3 = '(\d+:[0-9a-f]{64})', \$4 = '\d+', \$5 = '\d+', \$6 = '\d+', \$7 = '([0-9a-f]{16})'/gi;
	ok(@renewals >= 2, 'and proofs of the lease holder\'s renewals');
	$refused = $coord->db->sql_error('coord_fleet',
		"CALL snowid_coordinator.claim($dc, '$identity', '$proofs[-1]', -1, 31, -1, $now)");
	like($refused // 'granted', qr/^28000: holder proof taken already/,
		'a logged proof replayed is refused as one taken already');
	$refused = $coord->db->sql_error('coord_fleet',
		"CALL snowid_coordinator.lease_release($dc, '$lid', '$renewals[-2]', $wl, 0, false, '$renewals[-1]')");
	like($refused // 'granted', qr/^28000: holder proof taken already/,
		'and so is a renewal\'s replayed as a release of the lease');
}
is($coord->owners($dc)->{$wl}, "lease $lid", 'the lease holder keeps its lease');

# the holders go on
sleep 2;
$_->safe_psql('postgres', 'SELECT snowid_next()') for ($perm, $lease);
is(SnowidLease::worker_id($perm), $wp, 'the permanent holder keeps its worker id');
is(SnowidLease::worker_id($lease), $wl, 'the lease holder keeps its worker id');
ok(slurp_file($perm->logfile) !~ /stopped issuing ids/,
	'the permanent holder was never refused');
$_->stop for ($perm, $lease);
done_testing();
