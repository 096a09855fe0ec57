# The last n of a holder's proofs that a store answers is input: a server
# takes it only up to its clock plus twice the widest clock margin (a
# store takes no n further from its clock than that margin, and its clock
# lies within it of the server's), and refuses a larger one with a WARNING
# (08P01), failing the call, rather than moving every later proof of its
# process past it (issue 67: the answer was taken as it was, so that one
# such answer carried the process's proofs where no store takes them).
#
# The store's record of a running lease holder's proofs is written by hand
# with the largest n it may hold (2^53 - 1, some 285 years ahead),
# standing for a broken store: the holder's renewals are refused as stale
# (28000, Redis' SNOWID_STALE_PROOF) naming that n.  The holder refuses it
# and logs why; once the record is put right, its next renewal is granted
# again and it goes on issuing with its worker id, which it could not if
# its proofs had followed that n.  (A lease, because its renewals call the
# store's function in both stores, where a check-in of a claim for good in
# Redis that finds nothing changed is answered by reads alone.)
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 17;
my $node = SnowidLease::start_node($coord, 'holder',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '30s',
	  'snowid.clock_margin' => '1s', 'log_error_verbosity' => 'verbose' });
my $ledger = SnowidTest::Ledger->new;
$ledger->take($node, 100, 'the holder takes a lease and issues');
my $w = SnowidLease::wait_lease($node);
my ($identity) = ($coord->owners($dc)->{$w} // '') =~ /^lease (.*)$/;
like($identity // '', qr/^dc=$dc host=/, "the store names the lease holder of worker id $w");

# Waits (up to 30 s) until the holder's log, past offset, matches re
sub wait_log
{
	my ($re, $offset) = @_;
	my $until = time + 30;

	while (time < $until)
	{
		my $log = slurp_file($node->logfile, $offset);
		return $1 if $log =~ $re;
		sleep 0.1;
	}
	return undef;
}

# the store's record of the holder's last n, written by hand
my $n_max = 9007199254740991;
my $offset = -s $node->logfile;
if ($pg)
{
	$coord->db->sql(undef, "INSERT INTO snowid_coordinator.proofs_taken VALUES ($dc, '$identity', $n_max)");
}
else
{
	$coord->cli('HSET', "{snowid:dc:$dc}:fences", "proof $identity", $n_max);
}
my $warning = wait_log(qr/(WARNING:  08P01: snowid refused the last n of a holder proof that its store answered\n(?:[^\n]*\n){0,3})/, $offset);
ok(defined $warning, 'the holder refuses the last n the store answers (08P01)')
  or diag(slurp_file($node->logfile, $offset));
like($warning // '', qr/DETAIL:  The store answered a last n taken that is no number of microseconds up to \d+, this server's clock plus twice the widest clock margin/,
	'its detail says what bound the answer broke');
like($warning // '', qr/HINT:  Check the clocks of this server and of its store, and that the store's record of this holder's proofs was not written by hand/,
	'its hint says what to check');
ok(defined wait_log(qr/(WARNING:  [0-9A-Z]{5}: snowid could not renew the lease on worker id $w)/, $offset),
	'the renewal fails');

# the record put right: the holder checks in again and issues on
$offset = -s $node->logfile;
if ($pg)
{
	$coord->db->sql(undef, "DELETE FROM snowid_coordinator.proofs_taken WHERE datacenter = $dc AND n = $n_max");
}
else
{
	$coord->cli('HDEL', "{snowid:dc:$dc}:fences", "proof $identity");
}
ok(defined wait_log(qr/(LOG:  [0-9A-Z]{5}: snowid renewed the lease on worker id $w again)/, $offset),
	'once the record is put right, the holder renews its lease again');
is(SnowidLease::worker_id($node), $w, 'with its worker id');
$ledger->take($node, 100, 'the holder issues on');
$ledger->no_duplicates;
unlike(slurp_file($node->logfile), qr/snowid lost worker id/, 'the holder never lost its lease');

$node->stop;
done_testing();
