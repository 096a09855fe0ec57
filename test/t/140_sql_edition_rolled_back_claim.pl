# The SQL edition's restart re-assertion (issue 56; test 132's path) after
# a claim whose transaction rolled back.  The first build noted a claim's
# server start in a row of snowid_coordinator_state, and held back a claim
# noted under another start; but the claim sets snowid_claimed (a
# sequence: no rollback undoes it) before it writes that row (a table: a
# rollback does), and a database without the row was "not held back" (as
# one of a coordination database that keeps no state record).  So the
# first claim, made by the first snowid_next() of a transaction that then
# rolled back, left the worker id claimed and nothing noted: A (SQL
# edition) takes its first id in a transaction that rolls back, and issues
# with worker id w; its server stops before its owner's next scheduled
# snowid_claim(); the coordination database forgets; Q claims w after the
# quiet period; A's server starts and issued with w at once, without
# re-asserting it (on 16: all 460 of A's ids with Q's worker id, 7 of 760
# twice).  The start is now noted in the unlogged sequence
# snowid_sql_claimed_run, which no rollback undoes: A's restart re-asserts,
# is refused (the coordination database gave w to Q), and the next call
# claims another worker id.
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

# A's first id, in a transaction that rolls back, claims w (once the quiet
# period allows)
my $wa = '';
my $deadline = time + 90;
my ($rc, $out, $err);
while ($wa eq '' && time < $deadline)
{
	($rc, $out, $err) = psql_as($clerka,
		'BEGIN; SELECT (snowid_decode(snowid_next())).worker_id; ROLLBACK;');
	$wa = $out if $rc == 0;
	diag($err) unless $rc == 0 || $err =~ /55006: /;
	sleep 0.5 if $wa eq '';
}
like($wa, qr/^\d+$/, "A claims worker id $wa in a transaction that rolls back");
is($sqla->safe_psql('appdb', 'SELECT count(*) FROM snowid_coordinator_state'), '0',
	'the claim noted nothing');
($rc, $out, $err) = psql_as($clerka, 'SELECT (snowid_decode(snowid_next())).worker_id');
is($out, $wa, 'A issues with it') or diag($err);

# A's server stops; the coordination database forgets; Q claims after the
# quiet period and its floor
$sqla->stop;
$coord->wipe;
my $lost = time;
my $wq = claim_when_quiet_ends($clerkq);
is($wq, $wa, "Q claims worker id $wq after the quiet period");
note(sprintf('Q claimed %.1f s after the loss', time - $lost));
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
is($out, $wq, 'Q\'s scheduled snowid_claim() re-asserts it') or diag($err);

# A's server is back; both issue for 0.8 s, before A's next scheduled
# snowid_claim()
$sqla->start;
($rc, $out, $err) = psql_as($clerka, 'SELECT (snowid_decode(snowid_next())).worker_id');
note("A's first id after its start: rc $rc, worker id $out $err");
isnt($out, $wq, "A's first id after its start does not carry worker id $wq, which Q holds");
# A and Q issue at once, in bursts of 1.5 s until an id comes twice (at
# most 5; each writer moves its generator 9 ms past its clock, and the
# calls of the next 10 ms take that millisecond, so two generators with one
# worker id meet only in the milliseconds both took)
my $took = SnowidSqlEdition::bursts_at_once({ a => $clerka, q => $clerkq }, 1.5, 5);
my $a_wq = $took->{worker}{a}{$wq} // 0;
diag(sprintf('A issued %d ids (%d with worker id %s), Q %d; %d ids by both, %d ms of one worker id by both',
	$took->{n}{a} // 0, $a_wq, $wq, $took->{n}{q} // 0, $took->{both}, $took->{shared}));
is($a_wq, 0, "A issues no id with worker id $wq while Q holds it");
is($took->{both}, 0, 'no id is issued by both A and Q');

$_->stop for ($sqla, $sqlq);
done_testing();
