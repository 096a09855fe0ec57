# Probe (attack on the SQL edition 1.2, claim mode): does every event after
# which a claim must be re-asserted change snowid_sql_claim_run(), and does
# nothing issue under the claim before it is?  A crash restart right after
# initdb (no statistics file ever written), a crash of the background
# writer and of the checkpointer, two crashes in a row, a clean restart
# then a crash, a reset of the statistics by hand; and resets that need
# no re-assertion keep the run.  (Passed on 16 when written: a probe that
# found nothing, kept as coverage of the run's premise.)
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
$sqla->append_conf('postgresql.conf', "restart_after_crash = on\n");
$sqla->reload;

sub run_now
{
	return $sqla->safe_psql('appdb', 'SELECT snowid_sql_private.snowid_sql_claim_run()');
}

sub noted
{
	return $sqla->safe_psql('appdb',
		'SELECT pg_sequence_last_value(\'snowid_sql_private.snowid_sql_claimed_run\')');
}

# the common path and the table's, as a caller that does not claim
sub issues_unclaimed
{
	my ($rc, $out, $err) = psql_as($sqla->connstr('appdb'),
		'SELECT coalesce(snowid_sql_private.snowid_sql_next(false, false)::text, \'none\')');
	return $rc ? "error: $err" : $out;
}

sub wait_up
{
	for (1 .. 600)
	{
		my ($rc) = psql_as($sqla->connstr('postgres'), 'SELECT 1');
		return 1 if $rc == 0;
		sleep 0.05;
	}
	return 0;
}

sub pid_of
{
	my ($type) = @_;
	return $sqla->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = '$type'");
}

sub crash_by
{
	my ($what) = @_;
	my $pid;
	if ($what eq 'backend')
	{
		my $h = IPC::Run::start([ 'psql', '-XAtq', '-d', $sqla->connstr('appdb'), '-c', 'SELECT pg_sleep(600)' ],
			'>', \my $o, '2>', \my $e);
		for (1 .. 100)
		{
			$pid = $sqla->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600)%' AND pid <> pg_backend_pid()});
			last if $pid;
			sleep 0.05;
		}
		kill 'KILL', $pid;
		$h->finish;
	}
	else
	{
		$pid = pid_of($what);
		kill 'KILL', $pid;
	}
	# the postmaster notices: wait until it is back
	sleep 0.2;
	return wait_up();
}

my $start = $sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $wa = SnowidSqlEdition::claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");

my @events = (
	[ 'a backend killed right after initdb (no statistics file yet)', sub { crash_by('backend') } ],
	[ 'the background writer killed', sub { crash_by('background writer') } ],
	[ 'the checkpointer killed', sub { crash_by('checkpointer') } ],
	[ 'a backend killed, then another as soon as the server is back', sub { crash_by('backend') && crash_by('backend') } ],
	[ 'a clean restart, then a backend killed', sub { $sqla->restart; crash_by('backend') } ],
	[ 'pg_stat_reset_shared(\'bgwriter\')', sub { $sqla->safe_psql('postgres', "SELECT pg_stat_reset_shared('bgwriter')"); 1 } ],
	[ 'pg_stat_reset_shared(\'archiver\') (no re-assertion needed)', sub { $sqla->safe_psql('postgres', "SELECT pg_stat_reset_shared('archiver')"); 1 } ],
	[ 'pg_stat_reset() (no re-assertion needed)', sub { $sqla->safe_psql('appdb', "SELECT pg_stat_reset()"); 1 } ],
);
for my $ev (@events)
{
	my ($name, $do) = @$ev;
	my ($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
	is($out, $wa, "before $name: claimed") or diag($err);
	my $before = run_now();
	is(noted(), $before, "before $name: noted under this run");
	my $s_before = $sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	ok($do->(), "$name: server up");
	my $s_after = $sqla->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	my $after = run_now();
	diag("$name: start " . ($s_before eq $s_after ? 'kept' : 'changed') . ", run $before -> $after; "
		. 'reset ' . $sqla->safe_psql('postgres', 'SELECT pg_stat_get_bgwriter_stat_reset_time()'));
	if ($name =~ /no re-assertion/)
	{
		is($after, $before, "$name: the run is kept");
		next;
	}
	isnt($after, $before, "$name: the run changed");
	is($sqla->safe_psql('appdb', 'SELECT snowid_sql_private.snowid_sql_claim_stale()'), 't', "$name: stale");
	is(issues_unclaimed(), 'none', "$name: nothing issued before the re-assertion");
}

$sqla->stop;
done_testing();
