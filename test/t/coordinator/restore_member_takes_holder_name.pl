# A running holder keeps its worker id, and its name, across a restore of
# the coordination database, whatever a fleet member calls (found by the
# attack attack67d on 0a3f29d, issue 67).  The path: server C claims for
# good after the copy the database is later restored to, so the restore
# forgets the hash of C's secret along with C's claim.  A member of the
# fleet's role learns C's name from the store itself (a claim of C's
# worker id is answered 'conflict', naming its holder), and right after
# the restore, before C's next check-in (a stalled process, a busy
# machine), re-asserts C's worker id under C's name with a secret of its
# own: granted, the member's secret is registered as C's.  C's check-in is
# then refused as another server's (42501), C stops issuing, and every
# later call of C is refused the same way, until an administrator calls
# reset_secret().  Seen on 18: the member's re-assertion granted 0.4 s
# after the restore began (C's check-in held 0.4 s, within its fence); C
# logged "snowid stopped issuing ids with worker id 1" and its next
# snowid_next() failed with 42501 (coordination database, 0a3f29d).  security.md promises that what
# the fleet's role can do leaves "servers that hold their ids keep
# issuing".
#
# The coordination database only: a Redis user of the fleet may rewrite
# any claim directly, secrets included (security.md, "What it guards, by
# store").
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
my $dc = 12;
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

# the member learns C's name from the store
my ($r, $o, $e) = member_call('dc=12 host=made-up port=1 sysid=1', 'false');
my @row = split /\|/, $o // '';
note("the member's claim of C's worker id: $r [$o] $e");
is($row[0], 'conflict', 'a claim of C\'s worker id is answered conflict');
my $c_name = $row[5] // '';
like($c_name, qr/^dc=$dc host=/, 'naming C, its holder');

# the restore, C's check-in held still; the member re-asserts C's worker id
# under C's name with its own secret
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
note("the member's re-assertion under C's name: "
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
