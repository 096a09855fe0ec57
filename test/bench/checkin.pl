# What the check-in of permanent claims (issue 43, the forgetting rule)
# costs a coordinator, counted, and how long a brand-new deployment's first
# claim waits.  Not a test of snowid: figures, printed as notes, for
# doc/redis.md and doc/coordinator.md.  Run it as a TAP file:
#
#   test/run --pg 19 --part tap --tap test/bench/checkin.pl
#
# 1. A real snowid server checks in against a real Redis and a real
#    coordination database for a few intervals, and the store's own
#    counters say what one check-in is made of (Redis: INFO commandstats
#    and connections; the coordination database: pg_stat_database and
#    pg_stat_user_functions).
# 2. A fleet of SNOWID_BENCH_HOLDERS (1,000) holders, each with its own
#    holder name, secret and worker id, claims once and then checks in every
#    snowid.checkin_interval (5 s, the default), spread evenly, for
#    SNOWID_BENCH_SECONDS (60): against Redis, this script makes the calls
#    the check-in makes (a connection, HGET of the claim and of the state
#    record, INFO server; the claim function if those say Redis forgot), and
#    checks that they are what the real server's check-in was made of;
#    against the coordination database, pgbench makes them (a connection,
#    the SETs of the session's timeouts, CALL snowid_coordinator.claim()
#    re-asserting, as pgcoord/store.c sends them; then again on connections
#    kept open, to tell the calls' cost from the connections').  The store's
#    counters and its processes' CPU time say what they cost it.
# 3. A brand-new deployment's first claim, timed, with and without the
#    administrator's step that marks its datacenter new.
#
# The machine's load is noted before and after: these are counts, not
# speed claims, but the CPU time per call depends on the machine.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../t/lib";

use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use POSIX qw(sysconf _SC_CLK_TCK);
use SnowidPgCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidRedis::need_redis();

my $holders = $ENV{SNOWID_BENCH_HOLDERS} // 1000;
my $seconds = $ENV{SNOWID_BENCH_SECONDS} // 60;
my $interval_s = 5;    # snowid.checkin_interval's default
my $rate = $holders / $interval_s;
my $dc = 1;
my $max_worker_id = 1023;    # the default layout's 10 bits
my $ticks = sysconf(_SC_CLK_TCK);

# --- the machine --------------------------------------------------------

# How busy the processors were over a second, in percent, and the load
# averages: noted with the figures.
sub machine_load
{
	my $read = sub {
		open(my $fh, '<', '/proc/stat') or die "/proc/stat: $!";
		my @f = split ' ', scalar <$fh>;
		close $fh;
		shift @f;
		my $all = 0;
		$all += $_ for @f[ 0 .. 7 ];
		return ($all - $f[3] - $f[4], $all);
	};
	my ($b1, $a1) = $read->();
	sleep 1;
	my ($b2, $a2) = $read->();
	my $load = PostgreSQL::Test::Utils::slurp_file('/proc/loadavg');

	$load =~ s/^(\S+ \S+ \S+).*/$1/s;
	return sprintf('processors %.0f%% busy over a second, load averages %s',
		$a2 > $a1 ? 100 * ($b2 - $b1) / ($a2 - $a1) : 0, $load);
}

# CPU seconds a process and its exited children have used (utime, stime,
# cutime, cstime of /proc/PID/stat)
sub cpu_seconds
{
	my ($pid) = @_;
	my $stat = PostgreSQL::Test::Utils::slurp_file("/proc/$pid/stat");

	$stat =~ s/^.*\) //s;
	my @f = split ' ', $stat;
	return ($f[11] + $f[12] + $f[13] + $f[14]) / $ticks;
}

my $cpus = `nproc`;
chomp $cpus;
my $uname = `uname -srm`;
chomp $uname;
note("machine: $cpus processors, $uname; " . machine_load());

# --- Redis, in its own words ----------------------------------------------

# One command on a connection, its reply: a string, an integer, undef for
# nil, an array reference, or { error => text }.
sub resp
{
	my ($socket, @argv) = @_;
	my $out = '*' . scalar(@argv) . "\r\n";

	$out .= '$' . length($_) . "\r\n$_\r\n" for @argv;
	print $socket $out or die "write to redis: $!";
	return resp_read($socket);
}

sub resp_read
{
	my ($socket) = @_;
	my $line = <$socket>;

	die 'redis closed the connection' unless defined $line;
	$line =~ s/\r\n$//;
	my ($type, $rest) = (substr($line, 0, 1), substr($line, 1));
	return $rest if $type eq '+';
	return { error => $rest } if $type eq '-';
	return $rest + 0 if $type eq ':';
	if ($type eq '$')
	{
		return undef if $rest < 0;
		my $data = '';
		while (length($data) < $rest + 2)
		{
			my $n = read($socket, $data, $rest + 2 - length($data),
				length($data));
			die "read from redis: $!" unless $n;
		}
		return substr($data, 0, $rest);
	}
	if ($type eq '*')
	{
		return undef if $rest < 0;
		return [ map { resp_read($socket) } 1 .. $rest ];
	}
	die "unexpected reply from redis: $line";
}

sub redis_connect
{
	my ($port) = @_;
	my $socket = IO::Socket::INET->new(
		PeerAddr => '127.0.0.1',
		PeerPort => $port,
		Proto => 'tcp') or die "connect to redis: $!";

	binmode $socket;
	$socket->autoflush(1);
	return $socket;
}

# INFO's fields, of the section asked for
sub redis_info
{
	my ($redis, $section) = @_;
	my %info;

	for (split /\r?\n/, $redis->cli('INFO', $section))
	{
		$info{$1} = $2 if /^([^#:][^:]*):(.*)$/;
	}
	return \%info;
}

# Calls and microseconds of each command since CONFIG RESETSTAT (read in
# one INFO all: the connection it comes on, and CONFIG, not counted), and
# the connections received
sub redis_counts
{
	my ($redis) = @_;
	my $info = redis_info($redis, 'all');
	my %counts = (connections => $info->{total_connections_received} - 1);

	for (keys %$info)
	{
		my ($name) = /^cmdstat_(.+)$/;

		next unless defined $name && $name !~ /^config/;
		my ($calls) = $info->{$_} =~ /calls=(\d+)/;
		my ($usec) = $info->{$_} =~ /usec=(\d+)/;
		$counts{commands}{$name} = { calls => $calls, usec => $usec };
	}
	return \%counts;
}

sub describe_commands
{
	my ($commands, $per) = @_;

	return join ', ', map {
		sprintf('%s %.2f', $_, $commands->{$_}{calls} / $per)
	} sort keys %$commands;
}


# The claim function of snowid's library (snowid.lua), as redis/scripts.c
# calls it: the datacenter's three keys, the identity, the numbers and the
# secret.  Numbers: the explicit id, the highest id, the preferred id, 0
# (no replicas to wait for), usable_ms, quiet_ms and reassert.
sub redis_claim
{
	my ($socket, $holder, $reassert) = @_;
	my $base = "{snowid:dc:$dc}";
	my $usable_ms = int(time * 1000) + 1000;

	return resp($socket, 'FCALL', 'snowid_2_claim', 3, "$base:owners",
		"$base:leases", "$base:fences", $holder->{identity},
		"$holder->{id} $max_worker_id -1 0 $usable_ms 9000 $reassert",
		$holder->{secret});
}

# One check-in of a holder, as redis/claim.c makes it: the holder and the
# state record read, INFO server; the claim function, re-asserting, only if
# Redis no longer has the claim or has changed runs.  Returns 1 if reads
# answered it.
sub redis_checkin
{
	my ($port, $holder) = @_;
	my $socket = redis_connect($port);
	my $base = "{snowid:dc:$dc}";
	my $owner = resp($socket, 'HGET', "$base:owners", $holder->{id});
	my $state = resp($socket, 'HGET', "$base:owners", 'state');
	my $info = resp($socket, 'INFO', 'server');
	my ($run) = ($state // '') =~ /^\S+ (\S+)/;
	my ($current) = $info =~ /run_id:(\w+)/;
	my $reads = defined $owner && $owner eq $holder->{identity}
	  && defined $run && defined $current && $run eq $current;

	if (!$reads)
	{
		my $reply = redis_claim($socket, $holder, 1);
		die "check-in of $holder->{identity} refused: $reply->{error}"
		  if ref $reply eq 'HASH';
	}
	close $socket;
	return $reads ? 1 : 0;
}

# The fleet: holder i has worker id i + 1 (the real server has 0), a name
# and a secret of its own
my @fleet = map {
	{
		id => $_ + 1,
		identity => "dc=$dc host=bench-$_ port=5432 sysid=1 instance=0000000000000001",
		secret => ('0' x 57) . (1_000_000 + $_),
	}
} 0 .. $holders - 1;

# Plays the fleet's check-ins for $seconds at $rate a second, each holder
# every $interval_s, spread evenly; calls $checkin->($holder) for each.
# Returns the check-ins made, how many answered from reads, and how far
# behind its schedule the player fell at most (s).
sub play
{
	my ($checkin) = @_;
	my $start = time;
	my ($made, $reads, $behind) = (0, 0, 0);

	while (1)
	{
		my $due = $start + $made / $rate;
		my $now = time;

		last if $due >= $start + $seconds;
		if ($due > $now)
		{
			sleep($due - $now);
		}
		else
		{
			$behind = $now - $due if $now - $due > $behind;
		}
		$reads += $checkin->($fleet[ $made % $holders ]);
		$made++;
	}
	return ($made, $reads, $behind);
}

my $redis = SnowidRedis->new(tcp => 1);
my $port = $redis->port;
my $redis_pid = redis_info($redis, 'server')->{process_id};

# 1. A real server's check-in, counted by Redis
my $node = SnowidTest::new_node('real',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.redis_url' => "redis://127.0.0.1:$port",
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
$node->safe_psql('postgres', 'SELECT snowid_next()');
$redis->cli('CONFIG', 'RESETSTAT');
my $real_start = time;
sleep(4 * $interval_s + 1);
my $real = redis_counts($redis);
my $real_s = time - $real_start;
$node->stop;
my $real_checkins = $real->{connections};
note(sprintf(
		'redis, a real server over %.0f s: %d connections (check-ins); per check-in: %s',
		$real_s, $real_checkins,
		describe_commands($real->{commands}, $real_checkins || 1)));
my %real_per = map {
	$_ => sprintf('%.2f', $real->{commands}{$_}{calls} / ($real_checkins || 1))
} keys %{ $real->{commands} };

# 2. The fleet claims once, then checks in
my $socket = redis_connect($port);
for my $holder (@fleet)
{
	my $reply = redis_claim($socket, $holder, 0);
	die "claim of $holder->{identity}: $reply->{error}" if ref $reply eq 'HASH';
	die "claim of $holder->{identity} got another id" if $reply->[0] != $holder->{id};
}
close $socket;
note('before the fleet on redis: ' . machine_load());
$redis->cli('CONFIG', 'RESETSTAT');
my $cpu = cpu_seconds($redis_pid);
my ($made, $reads, $behind) = play(sub { redis_checkin($port, $_[0]) });
my $sim = redis_counts($redis);
$cpu = cpu_seconds($redis_pid) - $cpu;
note('after the fleet on redis: ' . machine_load());
my %sim_per = map {
	$_ => sprintf('%.2f', $sim->{commands}{$_}{calls} / $made)
} keys %{ $sim->{commands} };
is_deeply(\%sim_per, \%real_per,
	'the fleet\'s check-ins make the commands a real server\'s check-in makes');
my $usec = 0;
$usec += $_->{usec} for values %{ $sim->{commands} };
note(sprintf(
		'redis, %d holders checking in every %d s for %d s: %d check-ins (%.1f/s; %d answered from reads; the player at most %.3f s behind), %d connections (%.1f/s), commands: %s (%.1f calls/s in all); Redis spent %.1f ms of commands (commandstats usec, %.1f us a check-in) and %.2f s of CPU (%.1f%% of one processor; %.0f us a check-in)',
		$holders, $interval_s, $seconds, $made, $made / $seconds, $reads,
		$behind, $sim->{connections}, $sim->{connections} / $seconds,
		describe_commands($sim->{commands}, $made),
		(eval { my $n = 0; $n += $_->{calls} for values %{ $sim->{commands} }; $n }) / $seconds,
		$usec / 1000, $usec / $made, $cpu, 100 * $cpu / $seconds,
		1e6 * $cpu / $made));
$redis->stop;

# --- the coordination database -----------------------------------------

my $coord = SnowidPgCoord->new;
my $db = $coord->db;
my $cn = $coord->node;
my ($postmaster) = split /\n/,
  PostgreSQL::Test::Utils::slurp_file($cn->data_dir . '/postmaster.pid');

# The coordination database's counters since coord_reset(): sessions,
# commits and active time (the session of the reset not counted), and the
# calls of snowid_coordinator's functions (track_functions = 'pl'), read in
# one session
sub coord_counts
{
	sleep 2;    # the statistics reach the views within a second
	my @rows = split /\n/, $cn->safe_psql('coord', q{
		SELECT sessions - 1, xact_commit - 1, round(active_time)
		FROM pg_stat_database WHERE datname = 'coord';
		SELECT funcname || '|' || calls FROM pg_stat_user_functions
		WHERE schemaname = 'snowid_coordinator' ORDER BY 1});
	my ($sessions, $commits, $active_ms) = split /\|/, shift @rows;
	my %functions = map { split /\|/ } @rows;

	return {
		sessions => $sessions,
		commits => $commits,
		active_ms => $active_ms,
		functions => \%functions
	};
}

sub coord_reset
{
	$cn->safe_psql('coord', 'SELECT pg_stat_reset()');
	return;
}

sub describe_delta
{
	my ($counts, $per) = @_;

	return sprintf('%.2f sessions, %.2f commits, functions: %s',
		$counts->{sessions} / $per, $counts->{commits} / $per,
		join(', ', map { sprintf('%s %.2f', $_, $counts->{functions}{$_} / $per) }
			  sort keys %{ $counts->{functions} }));
}

# 1. A real server's check-in, counted by the coordination database
$node = $coord->new_node('real_pg', { 'snowid.datacenter_id' => $dc });
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
$node->safe_psql('postgres', 'SELECT snowid_next()');
coord_reset();
$real_start = time;
sleep(4 * $interval_s);
my $pg_real = coord_counts();
$real_s = time - $real_start;
$node->stop;
note(sprintf('coordination database, a real server over %.0f s: %d sessions (check-ins); per check-in: %s',
		$real_s, $pg_real->{sessions},
		describe_delta($pg_real, $pg_real->{sessions} || 1)));

# 2. The fleet claims once (its own names and secrets), then pgbench checks
# it in: a connection each (-C), the session's timeouts set, the claim
# re-asserted, as pgcoord/conn.c and store.c send them
my $usable_ms = int(time * 1000) + 86_400_000;
my $register = join '', map {
	"CALL snowid_coordinator.claim($dc, '$_->{identity}', '$_->{secret}', $_->{id}, $max_worker_id, -1, $usable_ms);\n"
} @fleet;
$db->sql('coord_fleet', $register);
my $script = PostgreSQL::Test::Utils::tempdir() . '/checkin.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh "\\set h random(0, " . ($holders - 1) . ")\n",
  "\\set s 1000000 + :h\n",
  "\\set w 1 + :h\n",
  "SET statement_timeout = 2000\\; SET lock_timeout = 2000;\n",
  "CALL snowid_coordinator.claim($dc, 'dc=$dc host=bench-:h port=5432 sysid=1 instance=0000000000000001', '",
  '0' x 57, ":s', :w, $max_worker_id, -1, $usable_ms, 9000, true);\n";
close $fh;
my %pg_real_per = map {
	$_ => sprintf('%.2f', $pg_real->{functions}{$_} / ($pg_real->{sessions} || 1))
} keys %{ $pg_real->{functions} };

# pgbench plays the fleet's check-ins, each on a connection of its own (as
# a server's check-in makes them) or, for comparison, on connections kept
# open (what the calls cost without the connections)
sub pg_fleet
{
	my ($connect_each) = @_;
	my ($out, $err) = ('', '');
	my $what = $connect_each ? 'a connection each' : 'connections kept open';

	note("before the fleet on the coordination database ($what): "
		  . machine_load());
	coord_reset();
	my $cpu = cpu_seconds($postmaster);
	IPC::Run::run(
		[
			'pgbench', '-n', $connect_each ? ('-C') : (), '-c', 4, '-j', 1,
			'-R', $rate, '-T', $seconds, '-M', 'simple', '-f', $script,
			'-h', $cn->host, '-p', $cn->port, '-U', 'coord_fleet', 'coord'
		],
		'>', \$out, '2>', \$err) or die "pgbench failed: $err";
	my $counts = coord_counts();
	$cpu = cpu_seconds($postmaster) - $cpu;
	note("after the fleet on the coordination database ($what): "
		  . machine_load());
	my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $out =~ /number of failed transactions: (\d+)/;
	my ($latency) = $out =~ /latency average = ([\d.]+ ms)/;
	my ($lag) = $out =~ /rate limit schedule lag: avg ([\d.]+ \(max [\d.]+\) ms)/;
	is($failed // 0, 0, "every check-in of the fleet succeeded ($what)");
	my %per = map {
		$_ => sprintf('%.2f', $counts->{functions}{$_} / ($done || 1))
	} keys %{ $counts->{functions} };
	is_deeply(\%per, \%pg_real_per,
		"the fleet's check-ins call the functions a real server's check-in calls ($what)");
	note(sprintf(
			'coordination database, %d holders checking in every %d s for %d s, %s: %d check-ins (%.1f/s of the %.1f/s asked for; pgbench: latency %s, behind its schedule %s): %d sessions, per check-in %s; the server spent %.2f s of CPU (%.1f%% of one processor; %.0f us a check-in), %.0f ms active in sessions',
			$holders, $interval_s, $seconds, $what, $done, $done / $seconds,
			$rate, $latency // '?', $lag // '?', $counts->{sessions},
			describe_delta($counts, $done), $cpu, 100 * $cpu / $seconds,
			1e6 * $cpu / $done, $counts->{active_ms}));
	note("pgbench said:\n$out");
	return;
}

pg_fleet(1);
pg_fleet(0);

# --- a brand-new deployment's first claim ----------------------------------

# The first claim of a new server, timed: with its datacenter marked new by
# the administrator's step, and without
sub first_claim
{
	my ($store, $name) = @_;
	my $n = $store->new_node($name, { 'snowid.datacenter_id' => 7 });
	my $start;
	my $took;

	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$start = time;
	$n->safe_psql('postgres', 'SELECT snowid_next()');
	$took = time - $start;
	$n->stop;
	return $took;
}

for my $case ([ 'redis', sub { SnowidRedis->new(@_) } ],
	[ 'a coordination database', sub { SnowidPgCoord->new(@_) } ])
{
	my ($what, $make) = @$case;
	my $marked = $make->();
	my $unmarked = $make->(mark_new => 0);

	note(sprintf(
			'%s, a brand-new deployment\'s first claim: %.3f s with its datacenter marked new, %.3f s without',
			$what, first_claim($marked, "new_$what" =~ s/\W/_/gr),
			first_claim($unmarked, "unmarked_$what" =~ s/\W/_/gr)));
}
note('at the end: ' . machine_load());

done_testing();
