# A crash restart counts as a restart for the claim of the SQL edition
# (test 132's rule).  A claim is re-asserted after its server starts; the
# first build of that rule noted the start by pg_postmaster_start_time(),
# which a crash restart (a backend killed: the postmaster reinitialises and
# runs crash recovery) keeps.  A (SQL edition) held worker id w; a backend
# of A died, and A's crash recovery lasted longer than the quiet period
# and its floor (the postmaster held with SIGSTOP meanwhile; a long
# recovery does the same); the coordination database forgot; Q claimed w;
# A, back under the same postmaster, issued with w at once, as Q did (the
# attack on the fix: 3,701 ids twice in 0.8 s on 18).  A claim now also
# sets an unlogged sequence, which crash recovery resets.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as claim_when_quiet_ends);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

sub sql_server
{
	return SnowidSqlEdition::claim_server($_[0], $conninfo, $password);
}

my ($sqla, $appa, $clerka) = sql_server('sqla');
my ($sqlq, $appq, $clerkq) = sql_server('sqlq');
# restart_after_crash is on by default (PostgreSQL::Test::Cluster turns it off)
$sqla->append_conf("postgresql.conf", "restart_after_crash = on\n");
$sqla->reload;

my $wa = claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");
my ($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'A\'s scheduled snowid_claim() re-asserts it') or diag($err);
my $start_before = $sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

# a backend of A dies (SIGKILL): the postmaster kills the others and runs
# crash recovery, held here for as long as the coordination database needs
# to forget and Q to claim
my $pm = (split /\n/, slurp_file($sqla->data_dir . '/postmaster.pid'))[0];
my $victim = IPC::Run::start([ 'psql', '-XAtq', '-d', $sqla->connstr('appdb'), '-c', 'SELECT pg_sleep(600)' ],
	'>', \my $vout, '2>', \my $verr);
my $vpid;
for (1 .. 100)
{
	$vpid = $sqla->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600)%' AND pid <> pg_backend_pid()});
	last if $vpid;
	sleep 0.1;
}
ok($vpid, "a backend of A ($vpid)");
kill 'KILL', $vpid;
kill 'STOP', $pm;
$victim->finish;
$coord->wipe;
my $lost = time;
my $wq = claim_when_quiet_ends($clerkq);
is($wq, $wa, "Q claims worker id $wq after the quiet period");
note(sprintf('Q claimed %.1f s after the loss', time - $lost));
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
is($out, $wq, 'Q\'s scheduled snowid_claim() re-asserts it') or diag($err);

# A's recovery ends
kill 'CONT', $pm;
for (1 .. 300)
{
	($rc, $out, $err) = psql_as($sqla->connstr('postgres'), 'SELECT 1');
	last if $rc == 0;
	sleep 0.1;
}
is($sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_before,
	'A crash-restarted: the postmaster\'s start time is the same');

my $took = SnowidSqlEdition::bursts_at_once({ a => $clerka, q => $clerkq }, 0.8);

diag(sprintf('A issued %d ids, Q %d; %d ids by both, %d ms of one worker id by both',
	$took->{n}{a} // 0, $took->{n}{q} // 0, $took->{both}, $took->{shared}));
is($took->{both}, 0, 'no id is issued by both A and Q');
# (each writer moves its generator 9 ms past its clock, and the calls of
# the next 10 ms take that millisecond: two generators with one worker id
# meet only in the milliseconds both took, and a burst may show none)
is($took->{worker}{a}{$wq} // 0, 0, "A issues no id with worker id $wq, which Q holds");
is($took->{shared}, 0, 'no millisecond of one worker id is issued by both');

$_->stop for ($sqla, $sqlq);
done_testing();
