# A coordination database restored from a dump takes again the proofs it
# took since the dump, replayed from its log by the fleet's role.
#
# security.md ("Holder secrets") says that a proof read from a log is never
# taken again: the store kept the last n it took from each holder
# (snowid_coordinator.holders.proof_n, now the table proofs_taken, not
# dumped) and refuses an n no larger.  But holders is a configuration
# table that pg_dump dumps, proof_n with it: a
# restore (coordinator.md, "Backups": pg_dump of the coordination database
# keeps the claims) brings proof_n back to what it was at the dump, and
# every proof the log shows from after the dump is taken again, under the
# holder's name, until the holder's next call.  Here a permanent holder's
# check-ins after the dump, logged with their parameters (as coordinator.md
# allows once no server of 1.3.0 runs), then the holder stops (so that
# no call of its own races the replay), the restore, and the last logged
# proof replayed by the fleet's role.
#
# The coordination database only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidRedis;
use Test::More;
use Time::HiRes qw(time sleep);

my $coord = SnowidPgCoord->new;
my $db = $coord->db;
my $dc = 9;
$db->node->append_conf('postgresql.conf', qq{
log_parameter_max_length = -1
log_statement = 'all'
});
$db->sql(undef, 'ALTER ROLE coord_fleet SET log_parameter_max_length = -1');
$db->node->reload;

my $p = SnowidLease::start_node($coord, 'p',
	{ 'snowid.datacenter_id' => $dc, 'snowid.checkin_interval' => '1s' });
$p->safe_psql('postgres', 'SELECT snowid_next()');
my $pid = SnowidRedis::identity($p, $dc);
$coord->backup;
my $log_start = -s $db->node->logfile;
# check-ins after the dump, each proof taken
my @proofs;
my $deadline = time + 60;
until (@proofs >= 3 || time > $deadline)
{
	@proofs = slurp_file($db->node->logfile, $log_start) =~
	  /\$2 = '\Q$pid\E', \$3 = '(\d+:[0-9a-f]{64})'/gi;
	sleep 0.2;
}
ok(@proofs >= 3, 'the log shows the holder\'s check-ins after the dump');
my $taken = $db->sql(undef,
	"SELECT max(n) FROM snowid_coordinator.proofs_taken WHERE datacenter = $dc");
note("last n taken before the restore: $taken; last proof logged: $proofs[-1]");
$p->stop;

$coord->restore_backup;
my $restored = $db->sql(undef,
	"SELECT coalesce(max(n), 0) FROM snowid_coordinator.proofs_taken WHERE datacenter = $dc");
note("last n taken after the restore: $restored");
my $err = $db->sql_error('coord_fleet',
	"CALL snowid_coordinator.claim($dc, '$pid', '$proofs[-1]', -1, 31, -1, @{[ $db->now_ms ]})");
note('the replay answered: ' . ($err // 'no error'));
like($err // 'taken', qr/^28000: holder proof taken already/,
	'a proof the log shows, taken before the restore, is refused when replayed after it');
done_testing();
