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
use SnowidPgCoord;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
SnowidTest::need_file("$sharedir/extension/dblink.control",
	'postgresql-NN, or contrib/dblink of a source build');

my $password = 'fleet password 1';
my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $conninfo = SnowidSqlEdition::fleet_login($cnode, $password);

sub psql_as { return SnowidSqlEdition::psql_as(@_); }

sub sql_server
{
	return SnowidSqlEdition::claim_server($_[0], $conninfo, $password);
}

sub claim_when_quiet_ends { return SnowidSqlEdition::claim_when_quiet_ends(@_); }


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

my (%got, @runs);
for my $c ([ 'a', $clerka ], [ 'q', $clerkq ])
{
	$got{ $c->[0] } = '';
	push @runs, IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $c->[1], '-c', 'SELECT burst(0.8)' ],
		'>', \$got{ $c->[0] }, '2>', \my $burst_err);
}
$_->finish for @runs;

my (%ids, %ms, %n, $both, $a_wq);
for my $name ('a', 'q')
{
	for my $line (split /\n/, $got{$name})
	{
		my ($id, $w, $t) = split ' ', $line;
		$n{$name}++;
		$a_wq++ if $name eq 'a' && $w eq $wq;
		$both++ if $ids{$id}++;
		$ms{"$w $t"}{$name} = 1;
	}
}
my $shared = scalar(grep { keys %{ $ms{$_} } == 2 } keys %ms);
diag(sprintf('A issued %d ids, Q %d; %d ids by both, %d ms of one worker id by both',
	$n{a} // 0, $n{q} // 0, $both // 0, $shared));
is($both // 0, 0, 'no id is issued by both A and Q');
# (each writer moves its generator 9 ms past its clock, and the calls of
# the next 10 ms take that millisecond: two generators with one worker id
# meet only in the milliseconds both took, and a burst may show none)
is($a_wq // 0, 0, "A issues no id with worker id $wq, which Q holds");
is($shared, 0, 'no millisecond of one worker id is issued by both');

$_->stop for ($sqla, $sqlq);
done_testing();
