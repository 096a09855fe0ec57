# Attack on the SQL edition 1.2 (claim mode, the claim's run): the run
# hashes the background writer's stats_reset, which a backend reads from
# its statistics snapshot, kept to the end of the transaction
# (stats_fetch_consistency = cache, the default).  The statistics reset by
# hand (pg_stat_reset_shared('bgwriter'), as monitoring tools do) make the
# claim stale, and the scheduled snowid_claim() re-asserts it under the new
# run; but a transaction of the owner that took an id before the reset
# still reads the old one at its next id: it finds the claim stale,
# re-asserts it, and notes it under the old run, holding the row 'claim' of
# snowid_locks to its end.  Every other session then finds the claim stale,
# and waits for that row to re-assert it: up to the claim's lock_timeout
# (70 s), then fails, for as long as the transaction lasts.
#
# Expected: the claim is noted under the server's run as it is, and the
# other sessions' calls go on while the transaction is open.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my ($sqla, $appa, $clerka) = SnowidSqlEdition::claim_server('sqla', $conninfo, $password);

sub noted
{
	return $sqla->safe_psql('appdb',
		q{SELECT pg_sequence_last_value('snowid_sql_private.snowid_sql_claimed_run')});
}

sub run_now
{
	return $sqla->safe_psql('appdb', 'SELECT snowid_sql_private.snowid_sql_claim_run()');
}

my $wa = SnowidSqlEdition::claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");

# the owner's transaction takes an id (its statistics snapshot read)
my $in = '';
my ($sout, $serr) = ('', '');
my $sess = IPC::Run::start([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $appa ],
	'<', \$in, '>', \$sout, '2>', \$serr);
sub session_says
{
	my ($tag) = @_;
	for (1 .. 600)
	{
		$sess->pump_nb;
		return 1 if $sout =~ /^$tag\|/m || $serr ne '';
		sleep 0.05;
	}
	return 0;
}
$in .= "BEGIN;\nSELECT 'a', snowid_next() IS NOT NULL;\n";
session_says('a');
like($sout, qr/^a\|t/m, 'a transaction of the owner takes an id') or diag($serr);

# the statistics reset by hand; the scheduled claim re-asserts
$sqla->safe_psql('postgres', q{SELECT pg_stat_reset_shared('bgwriter')});
my ($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'the scheduled snowid_claim() re-asserts the claim after the reset') or diag($err);
is(noted(), run_now(), 'noted under this run');

# the transaction's next id
$in .= "SELECT 'b', snowid_next() IS NOT NULL;\n";
session_says('b');
like($sout, qr/^b\|t/m, 'the transaction takes its next id') or diag($serr);
is(noted(), run_now(), 'the claim is still noted under this run');

# another session's id, while the transaction is open
my $t0 = time;
($rc, $out, $err) = psql_as($clerka, q{SET statement_timeout = '5s'; SELECT snowid_next() IS NOT NULL});
my $took = time - $t0;
diag(sprintf('a clerk\'s id while the transaction is open: %s in %.1f s',
	$rc ? "error ($err)" : $out, $took));
is($out, 't', 'another session takes an id while the transaction is open');
($rc, $out, $err) = psql_as($appa, q{SET statement_timeout = '5s'; SELECT worker_id FROM snowid_claim()});
is($out, $wa, 'the scheduled snowid_claim() goes on while the transaction is open') or diag($err);

$in .= "COMMIT;\n\\q\n";
$sess->finish;
$sqla->stop;
done_testing();
