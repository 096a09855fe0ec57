# A database of the SQL edition whose server was down while the
# coordination database forgot re-asserts its worker id before it issues
# again.  The C edition's restart re-asserts its cache file's id before its
# first id; the SQL edition kept its claim in its tables, and issued with
# it as soon as its server was back, until the owner's next scheduled
# snowid_claim(): A (SQL edition) holds worker id w; its server stops for
# longer than the quiet period and its floor; the coordination database
# forgets; Q claims w after the quiet period; A's server starts: both issued
# with w until A's next snowid_claim() was refused (the attack on issue 55:
# 312 ids twice in 0.8 s).  A claim now notes the start of its server, and
# one noted under another start is re-asserted before the generator moves
# with it: by the first call of a role that may claim (refused here, as Q
# holds w), or the owner's snowid_claim(); a role that may not claim is
# refused until then.
#
# Also: after a plain restart (no loss) the first id of a role that may
# claim re-asserts and keeps the worker id, snowid_next_batch() too; a role
# the owner has no privileges of gets 55000 naming snowid_claim() until the
# owner re-asserts.
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
# snowid_claim() (every second)
$sqla->start;
my $took = SnowidSqlEdition::bursts_at_once({ a => $clerka, q => $clerkq }, 0.8);
($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($rc, 0, 'A\'s next snowid_claim() claims another worker id') or diag($err);
isnt($out, $wq, 'not Q\'s');

diag(sprintf('A issued %d ids, Q %d; %d ids by both, %d ms of one worker id by both',
	$took->{n}{a} // 0, $took->{n}{q} // 0, $took->{both}, $took->{shared}));
is($took->{both}, 0, 'no id is issued by both A and Q');
# (each writer moves its generator 9 ms past its clock, and the calls of
# the next 10 ms take that millisecond: two generators with one worker id
# meet only in the milliseconds both took, and a burst may show none)
is($took->{worker}{a}{$wq} // 0, 0, "A issues no id with worker id $wq, which Q holds");
is($took->{shared}, 0, 'no millisecond of one worker id is issued by both');
ok(($took->{n}{a} // 0) < 1000, 'A\'s first call re-asserted its claim, refused as Q holds it');

# a plain restart of Q's server: a role that may not claim is refused until
# the claim is re-asserted; a role that may, re-asserts at its first id
$sqlq->safe_psql('postgres', 'CREATE ROLE stranger LOGIN');
my $stranger = $sqlq->connstr('appdb') . ' user=stranger';
$sqlq->restart;
($rc, $out, $err) = psql_as($stranger, 'SELECT snowid_next()');
isnt($rc, 0, 'after a restart, a role that may not claim takes no id before the claim is re-asserted');
like($err, qr/snowid_claim\(\)/, 'and is told to have the owner run snowid_claim()');
($rc, $out, $err) = psql_as($clerkq, 'SELECT count(*) FROM snowid_next_batch(5)');
is($out, '5', 'a role that may claim re-asserts at its first ids, snowid_next_batch() too') or diag($err);
($rc, $out, $err) = psql_as($clerkq, 'SELECT (snowid_decode(snowid_next())).worker_id');
is($out, $wq, 'and keeps its worker id') or diag($err);
($rc, $out, $err) = psql_as($stranger, 'SELECT snowid_next() > 0');
is($out, 't', 'then any role takes ids') or diag($err);
$sqlq->restart;
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
is($out, $wq, 'after another restart, the owner\'s snowid_claim() re-asserts it') or diag($err);
($rc, $out, $err) = psql_as($stranger, 'SELECT snowid_next() > 0');
is($out, 't', 'and any role takes ids again') or diag($err);

$_->stop for ($sqla, $sqlq);
done_testing();
