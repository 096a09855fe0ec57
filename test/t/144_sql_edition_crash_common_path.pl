# Attack on the SQL edition 1.2 (claim mode, a crash restart): a crash
# restart keeps the postmaster's start, and so snowid_sql_started, which a
# writer stamped before the crash (logged), still names this start; crash
# recovery changes the server's run (snowid_sql_claim_run(): the
# statistics' reset time changes), which snowid_sql_claimed_run no longer
# holds, so the claim is stale and must be re-asserted before ids are
# issued (test 133).  The writers and
# the table's path check it; the common path does not: it takes a position
# within 100 ms ahead of the clock under the claim snowid_claimed holds.  A
# (SQL edition) holds worker id w; a backend dies and A's recovery lasts
# longer than the quiet period and its floor (the postmaster held with
# SIGSTOP, as in test 133); the coordination database forgets; Q claims w;
# A's clock is stepped back meanwhile, to lie just below A's position when
# A is back.  A's calls then take positions under the stale claim, with
# the worker id Q holds, until the clock passes the position.  (They lie
# below Q's floor: no id comes twice here.)
#
# Expected: A issues no id with worker id w after its crash restart until
# it has re-asserted it (refused here, as Q holds it).
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

my $clock = SnowidTest::Clock->new;
my ($sqla, $appa, $clerka) = SnowidSqlEdition::claim_server('sqla', $conninfo, $password);
my ($sqlq, $appq, $clerkq) = SnowidSqlEdition::claim_server('sqlq', $conninfo, $password);
# restart_after_crash is on by default (PostgreSQL::Test::Cluster turns it
# off); A under a clock of its own
$sqla->append_conf('postgresql.conf', "restart_after_crash = on\n");
$sqla->stop;
$clock->start_node($sqla);

# ids taken from one millisecond to another, by A's clock: waits for the
# first, then issues until the second, each as "id worker ms"
my ($rc, $out, $err) = psql_as($appa, q{
	CREATE FUNCTION burst_between(from_ms bigint, to_ms bigint) RETURNS SETOF text
	LANGUAGE plpgsql AS $$
	DECLARE x bigint;
	BEGIN
		WHILE extract(epoch FROM clock_timestamp()) * 1000 < from_ms LOOP
			PERFORM pg_sleep(0.001);
		END LOOP;
		WHILE extract(epoch FROM clock_timestamp()) * 1000 < to_ms LOOP
			x := snowid_next();
			RETURN NEXT x || ' ' || (snowid_decode(x)).worker_id || ' ' ||
				(extract(epoch FROM (snowid_decode(x)).ts) * 1000)::bigint;
		END LOOP;
	END $$;
	GRANT EXECUTE ON FUNCTION burst_between(bigint, bigint) TO clerk});
is($rc, 0, 'burst_between() on A') or diag($err);

my $wa = SnowidSqlEdition::claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");
($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'A\'s scheduled snowid_claim() re-asserts it') or diag($err);
($rc, $out, $err) = psql_as($clerka, 'SELECT count(snowid_next()) FROM generate_series(1, 100)');
is($out, '100', 'A issues') or diag($err);
my $start_before = $sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
# where A's position lies (its writers keep it up to 9 ms past the clock)
my $pos_ms = $sqla->safe_psql('appdb',
	'SELECT (extract(epoch FROM (snowid_status()).high_water_time) * 1000)::bigint');
my $pos_at = time;
note("A's position at $pos_ms ms, " . sprintf('%.0f', $pos_ms - $pos_at * 1000) . ' ms past the clock');

# a backend of A dies; its recovery is held until Q has claimed w
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
my $wq = SnowidSqlEdition::claim_when_quiet_ends($clerkq);
is($wq, $wa, "Q claims worker id $wq after the quiet period");
($rc, $out, $err) = psql_as($appq, 'SELECT worker_id FROM snowid_claim()');
is($out, $wq, 'Q\'s scheduled snowid_claim() re-asserts it') or diag($err);

# A's clock steps back (NTP) to 8 s before its position (however long the
# rest of its recovery takes); its recovery ends
my $offset = ($pos_ms / 1000 - 8) - time;
$clock->set(sprintf('%+.6f', $offset));
note(sprintf('A\'s clock stepped back %.1f s', -$offset));
kill 'CONT', $pm;
for (1 .. 300)
{
	($rc, $out, $err) = psql_as($sqla->connstr('postgres'), 'SELECT 1');
	last if $rc == 0;
	sleep 0.1;
}
is($sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_before,
	'A crash-restarted: the postmaster\'s start time is the same');
is($sqla->safe_psql('appdb', 'SELECT snowid_sql_private.snowid_sql_claim_stale()'), 't',
	'A\'s claim is stale');

# A's application takes ids from 90 ms to 5 ms before the position, by
# A's clock (no call before: each would re-assert the claim)
($rc, $out, $err) = psql_as($clerka,
	sprintf('SELECT burst_between(%d, %d)', $pos_ms - 90, $pos_ms - 5));
my ($n, $a_wq) = (0, 0);
for my $line (split /\n/, $out)
{
	my ($id, $w, $t) = split ' ', $line;
	$n++;
	$a_wq++ if $w eq $wq;
}
diag(sprintf('after its crash restart A issued %d ids, %d with worker id %s (%s)',
	$n, $a_wq, $wq, $rc ? "then $err" : 'no error'));
is($a_wq, 0, "A issues no id with worker id $wq, which Q holds, before re-asserting it");

$clock->set('+0');
$_->stop for ($sqla, $sqlq);
done_testing();
