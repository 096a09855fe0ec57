# A running holder keeps its worker id across a restore of the
# coordination database, whatever a fleet member calls (found by the
# attack attack67d on 0a3f29d, issue 67).  The path: server C claims for
# good after the copy the database is later restored to, so the restore
# forgets C's claim.  Right after the restore, before C's next check-in
# (a stalled process, a busy machine), a member of the fleet's role
# re-asserts C's worker id under a name it makes up, with a secret of its
# own: the store, in its quiet period, grants the re-assertion (it cannot
# tell the member from the holder), and C's check-in then finds the id
# another's and C stops issuing.  Unlike restore_member_takes_holder_name
# the member needs neither C's name nor anything but the worker id (0 to
# the layout's last: it may re-assert them all).  security.md promises
# that what the fleet's role can do leaves "servers that hold their ids
# keep issuing".  Seen on 18 (coordination database, 0a3f29d): the
# member's re-assertion granted 0.7 s after the restore began (C's
# check-in held that long, within its fence); C logged "snowid stopped
# issuing ids with worker id 1", and its next snowid_next() was refused
# until 78 s later ("cannot claim a worker id of datacenter 13 until").
#
# The coordination database only: a Redis user of the fleet may rewrite
# any claim directly (security.md, "What it guards, by store").
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidStoreRestore;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);


my $coord = SnowidPgCoord->new;
my $dc = 13;
my $fleet = SnowidStoreRestore->new($coord, $dc);
my ($a, $wa) = $fleet->start_a;

# the operator's copy, before C's first claim
$coord->copy_files;
sleep 2;
my ($c, $wc) = $fleet->start_c($wa);

my $member_secret = 'c7' x 32;
sub member_call
{
	my ($identity, $reassert) = @_;
	my $call = "CALL snowid_coordinator.claim($dc, "
	  . "'$identity', '$member_secret', $wc, 31, -1, "
	  . "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, "
	  . "reassert => $reassert)";
	my ($r, $o, $e) = $coord->node->psql('coord', $call,
		extra_params => [ '-U', 'coord_fleet', '-A', '-t', '-F', '|' ]);
	return ($r, $o, $e);
}

my ($r, $o, $e);
my $c_name = 'dc=13 host=made-up port=1 sysid=1';

# the restore, C's check-in held still; the member re-asserts C's worker id
# under a name of its own
my $checkin = SnowidLease::worker_pid($c, 'snowid check-in');
kill 'STOP', $checkin;
my $lost = time;
$fleet->restore;
my $granted;
my $until = time + 30;
while (time < $until)
{
	($r, $o, $e) = member_call($c_name, 'true');
	if ($r == 0 && ($o // '') =~ /^ok\|/)
	{
		$granted = sprintf('%.1f', time - $lost);
		last;
	}
	sleep 0.05;
}
kill 'CONT', $checkin;
note("the member's re-assertion of C's worker id: "
	  . (defined $granted ? "granted $granted s after the restore began" : "never granted: $o $e"));

# C checks in every second: give it several
sleep 5;
is(SnowidLease::worker_id($c), $wc, 'C keeps its worker id after its check-ins');
($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()');
is($r, 0, 'C goes on issuing ids') or diag($e);
my $log = slurp_file($c->logfile);
unlike($log, qr/stopped issuing ids/, 'C never stops issuing');

$_->stop for ($a, $c);
done_testing();
