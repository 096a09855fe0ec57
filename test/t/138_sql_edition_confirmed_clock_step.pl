# Issue 55's third attack on the SQL edition: a clock stepped forward does
# not make a restart's re-assertion look recent (as 127 for the C edition).
# A database of the SQL edition keeps confirmed_ms, when it sent its last
# claim the coordination database granted, and sends it with the
# re-assertion after its server starts; after a loss the coordination
# database takes that re-assertion as the holder's own only if confirmed_ms
# lies recent enough (the confirmed re-assertion rule, doc/internals.md).
# The SQL edition kept its own clock at the call: a clock stepped forward
# past the margin while a scheduled snowid_claim() was granted, then put
# right, left confirmed_ms that far ahead, and the database, stopped with
# it and restarted after a second loss, passed for one live at the loss,
# and was granted the worker id another server had taken between the
# losses: both issued with it.  It now keeps the earlier of its clock and
# the coordination server's, read over the claim's connection.
#
# A (one server under SnowidTest::Clock, a database of each way of
# installing, each its own datacenter) claims a worker id; its clock steps
# 40 s ahead (the margin declared is 1 s) while the owner's scheduled
# snowid_claim() is granted, and is put right; A stops.  The coordination
# database is backed up (it names A's claims) and loses everything; Q (a
# server of its own, a database for each of A's) takes each of A's worker
# ids after the quiet period.  When the time A's clock named during the
# step has come, the coordination database is restored from its backup and
# A's server starts: A's first ids re-assert.  No id is issued by both A
# and Q.
#
# B. What the coordination server's clock reads is checked: a database
# whose coordination server runs three days ahead of its own clock, or
# reads a time before 1970, is refused its claim with 08P01, and neither
# the coordination database nor the claim's state changes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my $src = File::Spec->rel2abs("$FindBin::RealBin/../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('confirmed_step'));
my ($version) = slurp_file("$src/snowid_sql.control") =~ /^default_version = '(.*)'$/m;
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
SnowidTest::need_clock();

# pg_tle where it is built (as test/t/128: test/tools/pgbuild --pg_tle
# records where it does not compile, 19, whose path is then left out,
# saying so)
my $tle_missing = SnowidSqlEdition::pg_tle_missing($libdir, $sharedir);
my $tle_name = 'snowid_sql_tle';
if (!defined $tle_missing)
{
	system("$src/test/tools/sql-edition pg_tle $src $version $tle_name > $dir/pg_tle.sql") == 0
	  or die 'could not make the pg_tle script';
}
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain.sql") == 0
  or die 'could not make the plain script';

# the ways of installing, each with the datacenter of its databases
my @paths = ([ 'extension', 4 ], [ 'plain script', 6 ]);
if (defined $tle_missing)
{
	note("pg_tle left out: $tle_missing");
}
else
{
	splice(@paths, 1, 0, [ 'pg_tle', 5 ]);
}

my $step_s = 40;
my $cclock = SnowidTest::Clock->new;
my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet(clock => $cclock);
my $cnode = $coord->node;

my $burst = $SnowidSqlEdition::burst_sql;

# A server with the roles app and clerk (whose privileges app has), and
# tle_admin, a member of pgtle_admin, with pg_tle preloaded where it is
# built
sub new_server
{
	my ($name, $clock) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_tle'\n")
	  unless defined $tle_missing;
	$clock ? $clock->start_node($node) : $node->start;
	$node->safe_psql('postgres', q{
		CREATE ROLE app LOGIN;
		CREATE ROLE clerk LOGIN;
		GRANT clerk TO app;
		CREATE ROLE tle_admin LOGIN;
	});
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO tle_admin')
	  unless defined $tle_missing;
	return $node;
}

# A database db of app's in datacenter dc, installed the way how says,
# claiming its worker id from the coordination database; its connection
# strings as app and as clerk
sub new_database
{
	my ($node, $db, $how, $dc) = @_;

	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	$node->safe_psql($db, 'CREATE EXTENSION dblink');
	my $app = $node->connstr($db) . ' user=app';
	my $clerk = $node->connstr($db) . ' user=clerk';
	my ($rc, $out, $err);
	if ($how eq 'pg_tle')
	{
		$node->safe_psql($db, 'CREATE EXTENSION pg_tle');
		($rc, $out, $err) = psql_as($node->connstr($db) . ' user=tle_admin',
			"\\i $dir/pg_tle.sql");
		die "could not register snowid_sql with pg_tle: $err" if $rc;
		($rc, $out, $err) = psql_as($app, "CREATE EXTENSION $tle_name");
	}
	elsif ($how eq 'plain script')
	{
		$rc = IPC::Run::run([ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $app,
				'-f', "$dir/plain.sql" ], '<', \undef, '>', \$out, '2>', \$err) ? 0 : 1;
	}
	else
	{
		($rc, $out, $err) = psql_as($app, 'CREATE EXTENSION snowid_sql');
	}
	die "$how: could not install: $err" if $rc;
	($rc, $out, $err) = psql_as($app, qq{
		UPDATE snowid_config SET datacenter_id = $dc, claim_worker_id = true;
		INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', '$password');
		UPDATE snowid_coordination SET checkin_interval_ms = 1000, clock_margin_ms = 1000;
		$burst});
	die "$how: configuration: $err" if $rc;
	return ($app, $clerk);
}

# the first ids of roles (connection strings) claim, once the quiet
# periods allow, tried in turn so that the quiet periods run at once; their
# worker ids, in order
sub claim_when_quiet_ends
{
	my @connstrs = @_;
	my @got = ('') x @connstrs;
	my $deadline = time + 90;

	while (time < $deadline && grep { $_ eq '' } @got)
	{
		for my $i (grep { $got[$_] eq '' } 0 .. $#connstrs)
		{
			my ($rc, $out, $err) = psql_as($connstrs[$i],
				'SELECT (snowid_decode(snowid_next())).worker_id');
			$got[$i] = $out if $rc == 0;
			diag($err) unless $rc == 0 || $err =~ /55006: /;
		}
		sleep 0.5;
	}
	return @got;
}

my $clock = SnowidTest::Clock->new;
my $sqla = new_server('sqla', $clock);
my $sqlq = new_server('sqlq');
my %path;
for my $p (@paths)
{
	my ($how, $dc) = @$p;
	my %h = (how => $how, dc => $dc);
	@h{ 'appa', 'clerka' } = new_database($sqla, "a$dc", $how, $dc);
	@h{ 'appq', 'clerkq' } = new_database($sqlq, "q$dc", 'extension', $dc);
	$path{$how} = \%h;
}

# A claims; its clock steps ahead while the owner's scheduled snowid_claim()
# is granted, and is put right; A stops
for my $h (values %path)
{
	my ($rc, $out, $err) = psql_as($h->{clerka},
		'SELECT (snowid_decode(snowid_next())).worker_id');
	is($rc, 0, "$h->{how}: A claims") or diag($err);
	$h->{wa} = $out;
}
my $stepped_at = SnowidLease::now_ms();
$clock->set("+$step_s");
for my $h (values %path)
{
	my ($rc, $out, $err) = psql_as($h->{appa}, 'SELECT worker_id FROM snowid_claim()');
	is($out, $h->{wa}, "$h->{how}: A's snowid_claim() is granted, its clock ${step_s} s ahead")
	  or diag($err);
	$h->{confirmed} = $sqla->safe_psql("a$h->{dc}",
		'SELECT confirmed_ms FROM snowid_coordinator_state');
	cmp_ok($h->{confirmed}, '<=', SnowidLease::now_ms() + 1000,
		"$h->{how}: the claim granted while the clock is ahead keeps no time ahead of the real clock");
}
$clock->set('+0');
$sqla->stop;

# loss 1, the coordination database backed up before (it names A's
# claims); Q takes A's worker ids after the quiet period
$coord->backup;
$coord->wipe;
my $lost = time;
my @hows = sort keys %path;
my @wq = claim_when_quiet_ends(map { $path{$_}{clerkq} } @hows);
for my $how (@hows)
{
	my $h = $path{$how};
	my $wq = shift @wq;
	is($wq, $h->{wa}, "$how: Q claims A's worker id after the quiet period");
	my ($rc, $out, $err) = psql_as($h->{appq}, 'SELECT worker_id FROM snowid_claim()');
	is($out, $wq, "$how: Q's scheduled snowid_claim() re-asserts it") or diag($err);
}
note(sprintf('Q claimed %.1f s after the loss', time - $lost));

# loss 2: the coordination database goes back to its backup; A's server
# starts; its first ids re-assert when the time its clock named during
# the step has come (by its confirmed_ms, if A kept one as late: a time
# past the coordination server's clock and the margin is refused), and
# start the quiet period
$coord->restore_backup;
$clock->start_node($sqla);
my $until = $stepped_at + $step_s * 1000;
for my $h (values %path)
{
	$until = $h->{confirmed} if $h->{confirmed} > $until;
}
my $ahead = $until - 500 - SnowidLease::now_ms();
note(sprintf('A re-asserts in %.1f s', $ahead / 1000));
sleep($ahead / 1000) if $ahead > 0;
for my $how (sort keys %path)
{
	my $h = $path{$how};
	my ($rc, $out, $err) = psql_as($h->{clerka},
		'SELECT (snowid_decode(snowid_next())).worker_id');
	note("$how: A's first id after its start: rc $rc, worker id $out $err");
	like($err, qr/55006: snowid_sql cannot claim a worker id/,
		"$how: A's re-assertion is held to a new claim's rules: refused in the quiet period");
}

# A and Q issue at once, a path at a time
for my $how (sort keys %path)
{
	my $h = $path{$how};
	my $took = SnowidSqlEdition::bursts_at_once({ a => $h->{clerka}, q => $h->{clerkq} }, 0.8);
	diag(sprintf('%s: A issued %d ids, Q %d; %d ids by both',
		$how, $took->{n}{a} // 0, $took->{n}{q} // 0, $took->{both}));
	cmp_ok($took->{n}{q} // 0, '>', 0, "$how: Q issues");
	is($took->{both}, 0, "$how: no id is issued by both A and Q");
}

# ---------------------------------------------------------------- B
# (the coordination database restored from its backup: datacenter 7, of
# which it holds nothing, recorded anew by an administrator)
my ($appb, $clerkb) = new_database($sqlq, 'b7', 'extension', 7);
$coord->db->sql('coord_admin', 'SELECT snowid_coordinator.end_quiet(7)');
my ($rc, $out, $err) = psql_as($clerkb, 'SELECT (snowid_decode(snowid_next())).worker_id');
is($rc, 0, 'B: a database claims') or diag($err);
my $state = q{SELECT generation || ' ' || counter || ' ' || confirmed_ms FROM snowid_coordinator_state};
my $store = q{SELECT d.counter || ' ' || d.generation || ' ' || string_agg(w.worker_id || w.holder, ' ')
	FROM snowid_coordinator.datacenters d LEFT JOIN snowid_coordinator.worker_ids w USING (datacenter)
	WHERE d.datacenter = 7 GROUP BY d.counter, d.generation};
for my $c ([ '+259200', 'three days ahead' ], [ '-1800000000', 'before 1970' ])
{
	my ($offset, $what) = @$c;
	my $before = $sqlq->safe_psql('b7', $state);
	my $before_store = $cnode->safe_psql('coord', $store);
	$cclock->set($offset);
	($rc, $out, $err) = psql_as($appb, 'SELECT worker_id FROM snowid_claim()');
	$cclock->set('+0');
	like($err, qr/ERROR:  08P01: the coordination database gave a time snowid_sql cannot use/,
		"B: a coordination server whose clock reads $what: the claim is refused");
	is($sqlq->safe_psql('b7', $state), $before, "B: $what: the claim's state is unchanged");
	is($cnode->safe_psql('coord', $store), $before_store,
		"B: $what: the coordination database got no call");
}
($rc, $out, $err) = psql_as($appb, 'SELECT worker_id FROM snowid_claim()');
is($rc, 0, 'B: the clock right, the claim is granted') or diag($err);

$_->stop for ($sqla, $sqlq);
done_testing();
