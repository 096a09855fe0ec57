# A member of the fleet's role holds a holder's row with prove(): the
# holder's renewals wait behind it and its lease runs out.
#
# prove(), the procedure every call of a holder makes first, is the one
# SECURITY DEFINER procedure that does not commit, so the fleet's role can
# CALL it in a transaction block of its own.  It takes the holder's row
# FOR UPDATE before it checks the proof: a member that calls it under
# another holder's name with any made-up proof, and leaves its transaction
# open, holds that row for as long as it likes, and every call of that
# holder (its renewals, its check-ins) waits for it until its own timeout.
# A running lease holder then loses its worker id, without any quiet
# period or loss of the store (issue 67, item 6: no fleet call keeps a
# lock beyond a fixed bound whatever its caller does).
#
# The coordination database only (Redis' functions run one at a time).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $coord = SnowidPgCoord->new;
my $dc = 7;
my $lease = SnowidLease::start_node($coord, 'lease',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '6s',
	  'snowid.clock_margin' => '1s' });
$lease->safe_psql('postgres', SnowidTest::Bursts->sql(0.002));
$lease->safe_psql('postgres', 'SELECT snowid_next()');
SnowidLease::wait_lease($lease);
my $w = SnowidLease::worker_id($lease);
my $db = $coord->db;
my $identity = $db->sql(undef,
	"SELECT identity FROM snowid_coordinator.holders WHERE datacenter = $dc");
note("the lease holder holds worker id $w as '$identity'");

# the member: a made-up proof under the holder's name, its transaction left
# open for two leases
my $member = $db->node->background_psql('coord',
	extra_params => [ '-U', 'coord_fleet' ]);
$member->query_safe('BEGIN');
my $q = $identity =~ s/'/''/gr;
$member->query_safe("CALL snowid_coordinator.prove($dc, '$q', '1:" . ('0' x 64) . "', '{claim}')");
my $bursts = SnowidTest::Bursts->new->start({ lease => $lease->connstr('postgres') }, 14)->finish;
$member->query_safe('COMMIT');
$member->quit;
my @failed = grep { /ERROR/ } split /\n/, $bursts->{errs}{lease};
note('the lease holder issued ' . ($bursts->{n}{lease} // 0) . ' ids; errors: '
	  . $bursts->{errs}{lease});
is($bursts->{errs}{lease}, '',
	'a member\'s open prove() under the holder\'s name costs the lease holder no call');
is(SnowidLease::worker_id($lease), $w, 'the lease holder keeps its worker id');
$lease->stop;
done_testing();
