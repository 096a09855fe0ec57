# A server that restarts keeps its worker id whatever session defaults a
# fleet member sets for the fleet's role (found by the attack attack67d on
# 0a3f29d, issue 67).  Any role may set its own session defaults (ALTER
# ROLE CURRENT_USER SET ...), and every server of the fleet opens its
# sessions to the coordination database as that role, setting only
# statement_timeout and lock_timeout: one statement of a member,
# default_transaction_isolation = 'serializable' (or
# default_transaction_read_only = on), makes every call of every server
# fail (lock_datacenter() refuses an isolation above read committed,
# 0A000; prove()'s insert, 25006), with no snowid function called.  A
# holder for good issues on through it, as through an outage (its
# check-ins fail, one WARNING); but a restart cannot get its worker id
# back for as long as the default stays (nor can a new server claim one).
# Seen on 18 (0a3f29d): after the restart, every snowid_next() for 20 s
# refused ("refused the call ... cannot run at the serializable isolation
# level (SQLSTATE 0A000)"; with read-only "cannot confirm worker id 0").
# security.md lists what the fleet's role can deny: new servers, not
# restarts, and through the procedures only.
#
# The coordination database only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);


my $coord = SnowidPgCoord->new;
my $dc = 15;
$coord->mark_dc_new($dc);
my $c = SnowidLease::start_node($coord, 'c',
	{ %SnowidLease::quick_checkins, 'snowid.datacenter_id' => $dc });
my ($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()');
is($r, 0, 'C claims') or diag($e);
my $wc = SnowidLease::worker_id($c);

for my $default ("default_transaction_isolation = 'serializable'",
	'default_transaction_read_only = on')
{
	# the member's one statement, as the fleet's role
	($r, $o, $e) = $coord->node->psql('coord',
		"ALTER ROLE CURRENT_USER SET $default",
		extra_params => [ '-U', 'coord_fleet' ]);
	note("the member sets $default: $r $e");
	my $set = time;

	# C's check-ins fail from now on (0A000, or 25006), which a holder for
	# good issues on through, as through an outage: it goes on issuing
	sleep 8;
	($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()');
	is($r, 0, "C goes on issuing ids with $default set for the fleet's role")
	  or diag($e);

	# C restarts, as an operator does: it keeps its worker id once the
	# store grants it again, which the member's default must not stop
	$c->restart;
	my $err;
	my $until = time + 20;
	while (time < $until)
	{
		($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()');
		$err = $r == 0 ? undef : $e;
		last unless defined $err;
		sleep 0.5;
	}
	is($err, undef, "C issues again after a restart with $default set for the fleet's role");
	is(SnowidLease::worker_id($c), $wc, 'with its worker id');
	$coord->node->safe_psql('coord', 'ALTER ROLE coord_fleet RESET ALL');
	# C claims again before the next
	$until = time + 30;
	sleep 0.2 until $c->psql('postgres', 'SELECT snowid_next()') == 0 || time > $until;
}

my @warned = grep { /could not check in|DETAIL/ } split /\n/, slurp_file($c->logfile);
note("C's log: $_") for @warned[0 .. ($#warned < 5 ? $#warned : 5)];
$c->stop;
done_testing();
