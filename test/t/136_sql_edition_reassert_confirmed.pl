# The SQL edition's re-assertion after its server starts sends
# confirmed_ms, as the C edition's restarts do (the confirmed re-assertion
# rule).  Without it, the path of internals.md's NO_FIX_CONFIRMED_REASSERT
# row stayed open for the SQL edition: A (SQL edition) holds worker id w;
# the coordination database is backed up; A's server stops; the
# coordination database forgets; Q claims w after the quiet period; the
# coordination database is restored from the backup (which says A holds
# w); A's server starts and its first id re-asserted w, granted as A's own,
# and A and Q both issued with w until Q's next scheduled snowid_claim()
# was refused (the attack on 1.2: 2,622 ids twice in 0.8 s on 18).  Now the
# re-assertion names when A sent its last granted claim, before the loss,
# and is held to a new claim's rules.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

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

my $wa = claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");
my ($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'A\'s scheduled snowid_claim() re-asserts it') or diag($err);
$coord->backup;
$sqla->stop;
$coord->wipe;
my $lost = time;
my $wq = claim_when_quiet_ends($clerkq);
is($wq, $wa, "Q claims worker id $wq after the quiet period");
note(sprintf('Q claimed %.1f s after the loss', time - $lost));
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
is($out, $wq, 'Q\'s scheduled snowid_claim() re-asserts it') or diag($err);
($rc, $out, $err) = psql_as($clerkq, 'SELECT count(*) FROM (SELECT burst(0.3)) b');
is($rc, 0, 'Q issues') or diag($err);

# the coordination database restored from its backup, then A's server
# starts: its first id (a role that may claim) re-asserts
$coord->restore_backup;
$sqla->start;
($rc, $out, $err) = psql_as($clerka, 'SELECT (snowid_decode(snowid_next())).worker_id');
note("A's first id after its start: rc $rc, worker id $out $err");

my $took = SnowidSqlEdition::bursts_at_once({ a => $clerka, q => $clerkq }, 0.8);
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
note("Q's next snowid_claim(): rc $rc, $out $err");

diag(sprintf('A issued %d ids, Q %d; %d ids by both',
	$took->{n}{a} // 0, $took->{n}{q} // 0, $took->{both}));
is($took->{both}, 0, 'no id is issued by both A and Q');
# (each writer moves its generator 9 ms past its clock, and the calls of
# the next 10 ms take that millisecond: two generators with one worker id
# meet only in the milliseconds both took, and a burst may show none)
is($took->{worker}{a}{$wq} // 0, 0, "A issues no id with worker id $wq, which Q holds");

$_->stop for ($sqla, $sqlq);
done_testing();
