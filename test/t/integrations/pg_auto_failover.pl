# snowid under pg_auto_failover (Debian's pg-auto-failover-cli 2.0, with
# its monitor extension postgresql-15-auto-failover, so PostgreSQL 15 only).
#
# A monitor and two data nodes on loopback, made by pg_autoctl create and
# kept by pg_autoctl run in the background, as the test's own user.  snowid
# is preloaded, with the same snowid.worker_id on both nodes, by lines
# appended to the first node's postgresql.conf after pg_autoctl created it
# (they follow pg_autoctl's include of postgresql-auto-failover.conf, which
# it rewrites at every start and which names pg_stat_statements in
# shared_preload_libraries); pg_basebackup and pg_rewind carry them, and
# the public-id key file in the data directory, to the other node.  Two
# clients take ids all the time through the multi-host URI of pg_autoctl
# show uri (target_session_attrs=read-write), one persistent psql session
# each, reconnecting after any error, while
#
#   1. pg_autoctl perform switchover moves the primary to the other node;
#   2. the primary's postmaster is killed (SIGKILL): its keeper restarts it;
#   3. the primary's whole node is killed (keeper and PostgreSQL, SIGKILL):
#      the monitor fails over to the standby;
#   4. the killed node's keeper starts again, with that node's clock now
#      18 s behind: pg_autoctl rewinds it and it follows as a standby;
#   5. the primary's keeper is stopped (pg_autoctl stop): the monitor fails
#      over to the standby whose clock runs 18 s behind;
#   6. the stopped node rejoins as a standby;
#   7. a switchover back to the node whose clock is right.
#
# Every id and the node that issued it (inet_server_port()) is kept: none
# repeats, each client's ids rise, every id lies above every id any client
# had received before asking for it (so each primary's first id lies above
# every id of the primaries before it), and every id carries the one worker
# id.  The longest time a client waited for an id across each event is
# printed (never asserted).  The monitor's health checks are shortened so
# that a failover takes seconds (see doc/pg_auto_failover.md).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidProcess;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time usleep);

my ($pg_major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan skip_all => 'pg_auto_failover is packaged for PostgreSQL 15 only'
  . ' (Debian\'s postgresql-15-auto-failover), and this is PostgreSQL '
  . ($pg_major // 'unknown')
  unless ($pg_major // 0) == 15;
my $pg_autoctl = SnowidTest::need_program('pg_autoctl', 'pg-auto-failover-cli');
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
unless (-f "$sharedir/extension/pgautofailover.control")
{
	my $why = 'needs the pgautofailover extension (Debian package postgresql-15-auto-failover)';
	die "$why: not found, and SNOWID_REQUIRE_TOOLS=1 counts a missing tool as a failure\n"
	  if $ENV{SNOWID_REQUIRE_TOOLS};
	plan skip_all => $why;
}
SnowidTest::need_clock();

# A test killed by a signal still stops what it started (END, below).
$SIG{$_} = sub { die "caught SIG$_[0]\n" } for qw(TERM INT HUP);

my $worker_id = 5;
# Seconds the clock of the node killed in event 3 runs behind once it
# rejoins: more than the failover to it takes (some 11 s here), so that
# its clock still lies behind the old primary's last ids when it takes
# over.
my $behind = 18;
my $timeout = $PostgreSQL::Test::Utils::timeout_default;
my $log_path = $PostgreSQL::Test::Utils::log_path;
my $autoctl_log = "$log_path/pg_auto_failover_commands.log";

# pg_autoctl keeps its configuration, state and pid files under the XDG
# directories, and its PostgreSQL servers' sockets in PG_REGRESS_SOCK_DIR
# (else in the build's default, /var/run/postgresql, not the test's to use).
# The runtime directory must exist: pg_autoctl puts its pid files in
# /tmp/pg_autoctl otherwise, outside the test's directory.
my $base = PostgreSQL::Test::Utils::tempdir('paf');
my $sockdir = PostgreSQL::Test::Utils::tempdir_short;
$ENV{XDG_CONFIG_HOME} = "$base/config";
$ENV{XDG_DATA_HOME} = "$base/data";
$ENV{XDG_RUNTIME_DIR} = "$base/run";
mkdir($ENV{XDG_RUNTIME_DIR}, 0700) or die "mkdir $ENV{XDG_RUNTIME_DIR}: $!";
$ENV{PG_REGRESS_SOCK_DIR} = $sockdir;
$ENV{PGHOST} = $sockdir;
delete $ENV{$_} for qw(PGPORT PGDATABASE PGUSER PGSERVICE);

# The monitor and the data nodes: name => { dir, port, keeper (a
# SnowidProcess), clock (data nodes: a SnowidTest::Clock) }.
my %node;
my @data_nodes = qw(a b);
my @groups;    # each pg_autoctl run's process group, for END
my (%log_seen, @log_lines, %postmasters);    # see collect_logs

# Runs pg_autoctl with these arguments, its output appended to the
# commands' log; dies (quoting the log's end) if it fails.  Returns its
# output.
sub autoctl
{
	my @args = @_;
	my $out = '';
	my $ok = eval {
		IPC::Run::run([ $pg_autoctl, @args ], '<', \undef, '>&', \$out,
			IPC::Run::timeout($timeout));
	};
	open(my $fh, '>>', $autoctl_log) or die "$autoctl_log: $!";
	print $fh "\$ pg_autoctl @args\n$out\n";
	close $fh;
	return $out if $ok;
	my @lines = split /\n/, $out;
	splice(@lines, 0, -25) if @lines > 25;
	die "pg_autoctl @args failed" . ($@ ? " ($@)" : '') . ":\n"
	  . join("\n", @lines) . "\n";
}

# Runs sql on a port (a database, default postgres); returns (ok, stdout,
# stderr).
sub sql
{
	my ($port, $sql, $db) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run(
			[
				'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1',
				'-p', $port, '-d', $db // 'postgres', '-c', $sql
			],
			'<', \undef, '>', \$out, '2>', \$err,
			IPC::Run::timeout(30));
	};
	chomp $out;
	return ($ok ? 1 : 0, $out, $err . ($@ // ''));
}

sub safe_sql
{
	my ($port, $sql, $db) = @_;
	my ($ok, $out, $err) = sql($port, $sql, $db);

	die "\"$sql\" on port $port failed: $err" unless $ok;
	return $out;
}

# Waits until sql returns true on a port.
sub wait_sql
{
	my ($port, $sql) = @_;
	my $deadline = time + $timeout;

	until ((sql($port, $sql))[1] eq 't')
	{
		die "\"$sql\" on port $port did not return true" if time > $deadline;
		usleep(100_000);
	}
	return;
}

sub append_file
{
	my ($file, $text) = @_;

	open(my $fh, '>>', $file) or die "$file: $!";
	print $fh $text;
	close $fh;
	return;
}

# Starts a node's pg_autoctl run in the background, in a session of its
# own (so that its keeper and PostgreSQL can be killed as one process
# group), a data node's under its clock (SnowidTest::Clock).
sub start_keeper
{
	my ($name) = @_;
	my $n = $node{$name};
	local %ENV = %ENV;

	if ($n->{clock})
	{
		my %clock_env = $n->{clock}->env;

		@ENV{ keys %clock_env } = values %clock_env;
	}
	$n->{keeper} //= SnowidProcess->new("pg_autoctl_$name");
	$n->{keeper}->start(
		[
			$^X, '-MPOSIX', '-e',
			'defined POSIX::setsid() or die "setsid: $!"; exec @ARGV or die "exec: $!"',
			$pg_autoctl, 'run', '--pgdata', $n->{dir}
		],
		output => qr/pg_autoctl service is running|Postgres is now serving/);
	my $pidfile = "$ENV{XDG_RUNTIME_DIR}/pg_autoctl$n->{dir}/pg_autoctl.pid";
	if (open(my $fh, '<', $pidfile))
	{
		my $pid = <$fh>;
		close $fh;
		push @groups, $1 if defined $pid && $pid =~ /^(\d+)/;
	}
	return;
}

# Each node's name, reported and goal state, as the monitor has them.
sub states
{
	my ($ok, $out) = sql($node{monitor}{port},
		'SELECT nodename, reportedstate, goalstate, health FROM pgautofailover.node ORDER BY nodeid',
		'pg_auto_failover');
	my %s;

	return %s unless $ok;
	for (split /\n/, $out)
	{
		my ($name, $reported, $goal, $health) = split /\|/;
		$s{$name} = { reported => $reported, goal => $goal, health => $health };
	}
	return %s;
}

sub show_states
{
	my %s = @_;

	return join(', ',
		map { "$_ $s{$_}{reported}/$s{$_}{goal}" . ($s{$_}{health} == 1 ? '' : ' (unhealthy)') } sort keys %s);
}

# Waits until every named node has reached a goal state that matches (a
# regex): reported state and goal state that state, and the monitor's
# health check passes; for a node whose name ends in "?" (one that is
# down), the goal state alone.  (A switchover asked for while the monitor
# still counts a standby that has just rejoined as unhealthy leaves the old
# primary writable until pgautofailover.primary_demote_timeout, while the
# standby is promoted read-only.)  Returns the states.
sub wait_states
{
	my (%want) = @_;
	my %down = map { s/\?$//r => 1 } grep { /\?$/ } keys %want;
	%want = map { s/\?$//r => $want{$_} } keys %want;
	my $deadline = time + $timeout;
	my %s;

	while (time < $deadline)
	{
		%s = states();
		return %s unless grep {
			!$s{$_}
			  || (!$down{$_} && ($s{$_}{reported} ne $s{$_}{goal} || $s{$_}{health} != 1))
			  || $s{$_}{goal} !~ /^(?:$want{$_})$/
		} keys %want;
		usleep(100_000);
	}
	my $events = eval {
		autoctl('show', 'events', '--pgdata', $node{monitor}{dir},
			'--count', '30');
	} // $@;
	die "nodes did not reach "
	  . join(', ', map { "$_ $want{$_}" } sort keys %want)
	  . "; they are at: " . show_states(%s) . "\nevents:\n$events";
}

# The node the monitor has as primary (wait_primary counts: it takes writes
# with its standby gone).
sub primary
{
	my %s = states();
	my @p = grep { $s{$_}{goal} =~ /^(?:primary|wait_primary)$/ } sort keys %s;

	die 'not one primary: ' . show_states(%s) unless @p == 1;
	return $p[0];
}

sub other { return $_[0] eq 'a' ? 'b' : 'a'; }

# Kills a node as a machine dies: its pg_autoctl processes and postmaster
# (one process group), then the postmaster's children (each in a session
# of its own); waits until all are gone.
sub kill_node
{
	my ($name) = @_;
	my $pm = postmaster_pid($name);
	my $pgid = `ps -o pgid= -p $pm` =~ s/\s+//gr;
	my @children = split ' ', `ps -o pid= --ppid $pm`;
	my @group = split ' ', `ps -o pid= -g $pgid`;

	die "no process group for postmaster $pm" unless $pgid;
	kill 'KILL', -$pgid;
	kill 'KILL', @children;
	$node{$name}{keeper}->stop;    # reaps pg_autoctl run, the test's child
	my $deadline = time + $timeout;
	for my $p (@group, @children)
	{
		while (alive($p))
		{
			die "process $p outlived SIGKILL" if time > $deadline;
			usleep(10_000);
		}
	}
	return;
}

# Whether a process runs (a zombie does not).
sub alive
{
	my ($pid) = @_;

	return 0 unless kill 0, $pid;
	open(my $fh, '<', "/proc/$pid/stat") or return 0;
	my $stat = <$fh> // '';
	close $fh;
	return $stat =~ /\) Z / ? 0 : 1;
}

sub postmaster_pid
{
	my ($name) = @_;
	open(my $fh, '<', "$node{$name}{dir}/postmaster.pid") or return;
	my $pid = <$fh>;
	close $fh;
	chomp $pid if defined $pid;
	return $pid;
}

# The data nodes' server logs, gathered as they grow: pg_basebackup and
# pg_rewind copy the data directory's log/ from node to node, and pg_rewind
# removes the files the source lacks, so each node's log/ holds the other's
# files too and loses its own.  Every line is kept once, in the order seen;
# the postmasters' pids tell the nodes apart (the one whose clock is set
# back also writes its times that far behind).
sub collect_logs
{
	for my $name (grep { $node{$_} } @data_nodes)
	{
		my $pm = postmaster_pid($name);
		$postmasters{$name}{$pm} = 1 if $pm;
		for my $log (sort glob("$node{$name}{dir}/log/*.log"))
		{
			open(my $fh, '<', $log) or next;
			while (my $line = <$fh>)
			{
				push @log_lines, $line unless $log_seen{$line}++;
			}
			close $fh;
		}
	}
	return;
}

# ---------------------------------------------------------------------------
# The clients

# A client: one psql session at a time on the URI; each call takes one id
# and the port of the server that issued it.  Any error (a lost connection,
# a refused one, a read-only server, an id refused) ends the session and
# the client connects again after 50 ms.  Writes a line per call: "ok ID
# PORT SENT RECEIVED" or "err SENT RECEIVED MESSAGE" (times on the test's
# clock, in seconds).
my $client_code = <<'EOC';
use strict;
use warnings;
use IO::Handle;
use IPC::Run;
use Time::HiRes qw(time usleep);

my ($uri, $file) = @ARGV;
open(my $log, '>>', $file) or die "$file: $!";
$log->autoflush(1);
my ($in, $out, $err, $h) = ('', '', '');
my $timer = IPC::Run::timeout(60);
$SIG{TERM} = sub { eval { $h->kill_kill(grace => 1) } if $h; exit 0 };
while (1)
{
	unless ($h)
	{
		($in, $out, $err) = ('', '', '');
		$h = IPC::Run::start([ 'psql', '-XAtq', '-d', $uri ],
			'<', \$in, '>', \$out, '2>', \$err, $timer);
	}
	my $sent = time;
	$in .= "SELECT snowid_next() || ' ' || inet_server_port();\n\\echo END\n";
	$timer->start(60);
	my $done = eval { $h->pump until $out =~ /^END$/m; 1 };
	my $received = time;
	if ($done && $out =~ s/\A(\d+) (\d+)\nEND\n//)
	{
		printf $log "ok %s %s %.6f %.6f\n", $1, $2, $sent, $received;
		usleep(10_000);
		next;
	}
	my ($why) = ("$err\n$@\nno answer" =~ /(\S[^\n]*)/);
	printf $log "err %.6f %.6f %s\n", $sent, $received, $why;
	eval { $h->kill_kill(grace => 1) };
	undef $h;
	usleep(50_000);
}
EOC

my @clients;    # { proc, file, offset, records => [ {ok, id, port, sent, received, why} ] }

sub start_clients
{
	my ($uri, $n) = @_;

	for my $c (1 .. $n)
	{
		my $file = "$base/client_$c.txt";
		my $proc = SnowidProcess->new('client');
		$proc->start([ $^X, '-e', $client_code, $uri, $file ],
			file => $file);
		push @clients, { proc => $proc, file => $file, offset => 0, records => [] };
	}
	return;
}

# Reads what the clients wrote since the last call.
sub read_clients
{
	for my $c (@clients)
	{
		open(my $fh, '<', $c->{file}) or next;
		seek($fh, $c->{offset}, 0);
		while (my $line = <$fh>)
		{
			last unless $line =~ /\n\z/;
			$c->{offset} += length $line;
			if ($line =~ /^ok (\d+) (\d+) (\S+) (\S+)$/)
			{
				push @{ $c->{records} },
				  { ok => 1, id => $1, port => $2, sent => $3, received => $4 };
			}
			elsif ($line =~ /^err (\S+) (\S+) (.*)$/)
			{
				push @{ $c->{records} },
				  { ok => 0, sent => $1, received => $2, why => $3 };
			}
		}
		close $fh;
	}
	return;
}

# Waits until every client has taken an id from this port in a call sent
# after time t; returns the first such record of each.
sub wait_for_ids
{
	my ($port, $t, $what) = @_;
	my $deadline = time + $timeout;

	while (time < $deadline)
	{
		read_clients();
		my @first = map {
			my ($r) = grep { $_->{ok} && $_->{port} == $port && $_->{sent} > $t }
			  @{ $_->{records} };
			$r ? $r : ();
		} @clients;
		return @first if @first == @clients;
		die "a client stopped: " . $_->{proc}->output
		  for grep { !$_->{proc}->running } @clients;
		usleep(50_000);
	}
	my @last = map { $_->{records}[-1] } @clients;
	die "clients took no id from port $port after $what; their last calls: "
	  . join('; ', map { $_ ? ($_->{ok} ? "ok from $_->{port}" : "err $_->{why}") : 'none' } @last);
}

# ---------------------------------------------------------------------------
# The monitor

my $monitor_port = PostgreSQL::Test::Cluster::get_free_port();
$node{monitor} = { dir => "$base/monitor", port => $monitor_port };
autoctl('create', 'monitor', '--pgdata', $node{monitor}{dir},
	'--pgport', $monitor_port, '--listen', '127.0.0.1',
	'--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl');
# Health checks every second, each connection given 3 s and tried three
# times, 1 s apart; a node unhealthy once its keeper has not reported for
# 6 s and its health check fails; an unreachable primary given up 5 s
# after that (the defaults: 5 s, three tries 2 s apart, 20 s, 30 s).  So a
# node dead for good is failed over within some 12 s, and a loaded machine
# that delays a keeper's reports or a server's connections for a few
# seconds fails nothing over (it would have to hold off the health check
# for some 11 s and the keeper for 6 s at once).  The keepers' network_partition_timeout
# stays below the demote timeout (create_node), as
# doc/pg_auto_failover.md asks.
append_file("$node{monitor}{dir}/postgresql.conf", <<'EOF');
shared_buffers = '32MB'
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 3000
pgautofailover.health_check_max_retries = 2
pgautofailover.health_check_retry_delay = 1000
pgautofailover.node_considered_unhealthy_timeout = 6000
pgautofailover.primary_demote_timeout = 5000
EOF
start_keeper('monitor');
my $monitor_uri =
  "postgres://autoctl_node\@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable";
{
	my $deadline = time + $timeout;

	until ((sql($monitor_port, 'SELECT 1', 'pg_auto_failover'))[0])
	{
		die 'the monitor does not answer' if time > $deadline;
		usleep(100_000);
	}
}

# ---------------------------------------------------------------------------
# The data nodes

for my $name (@data_nodes)
{
	$node{$name} = {
		dir => "$base/$name",
		port => PostgreSQL::Test::Cluster::get_free_port(),
		clock => SnowidTest::Clock->new,
	};
}

sub create_node
{
	my ($name) = @_;

	autoctl('create', 'postgres', '--pgdata', $node{$name}{dir},
		'--pgport', $node{$name}{port}, '--listen', '127.0.0.1',
		'--hostname', '127.0.0.1', '--name', $name, '--auth', 'trust',
		'--no-ssl', '--dbname', 'postgres', '--monitor', $monitor_uri);
	# A primary that reaches neither the monitor nor a standby for 4 s
	# demotes itself (the default: 20 s): before the monitor promotes its
	# standby, 6 s after the node's last report and 5 s more at the
	# earliest.
	autoctl('config', 'set', '--pgdata', $node{$name}{dir},
		'timeout.network_partition_timeout', '4');
	return;
}

# The first node: pg_autoctl makes and registers it, then stops.  Its
# postgresql.conf starts with pg_autoctl's include of
# postgresql-auto-failover.conf; what is appended after it wins.
create_node('a');
my $auto_conf = slurp_file("$node{a}{dir}/postgresql-auto-failover.conf");
my ($autoctl_preload) =
  $auto_conf =~ /^shared_preload_libraries\s*=\s*'?([^'\n]*)'?\s*$/m;
note "pg_autoctl's postgresql-auto-failover.conf preloads: "
  . ($autoctl_preload // 'nothing');
my @preload = (
	(grep { $_ ne '' && $_ ne 'snowid' } split /\s*,\s*/, $autoctl_preload // ''),
	'snowid');
append_file("$node{a}{dir}/postgresql.conf", <<"EOF");

# snowid (after pg_autoctl's include above, so that these win)
shared_preload_libraries = '@{[ join(',', @preload) ]}'
snowid.worker_id = $worker_id
snowid.max_wait_ms = 10000
snowid.public_key_file = 'snowid_public_keys'
shared_buffers = '32MB'
EOF
my $key = join('', map { sprintf '%02x', int(rand(256)) } 1 .. 16);
{
	my $file = "$node{a}{dir}/snowid_public_keys";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh "K1 $key\n";
	close $fh;
	chmod 0600, $file or die "chmod $file: $!";
}
start_keeper('a');
wait_states(a => 'single');
wait_sql($node{a}{port}, 'SELECT NOT pg_is_in_recovery()');
safe_sql($node{a}{port}, 'CREATE EXTENSION snowid');

# The second node: pg_basebackup copies the first one's data directory,
# postgresql.conf and key file with it.
create_node('b');
start_keeper('b');
my %s = wait_states(a => 'primary', b => 'secondary');
pass('pg_autoctl made a primary and a secondary: ' . show_states(%s));

for my $name (@data_nodes)
{
	is( safe_sql(
			$node{$name}{port},
			"SELECT current_setting('shared_preload_libraries') || ' / '"
			  . " || current_setting('snowid.worker_id')"),
		join(',', @preload) . " / $worker_id",
		"node $name preloads snowid with worker id $worker_id");
}

my $uri = autoctl('show', 'uri', '--pgdata', $node{monitor}{dir},
	'--formation', 'default');
($uri) = $uri =~ m{^\s*(postgres(?:ql)?://\S+)\s*$}m
  or die "no URI in pg_autoctl show uri";
like($uri, qr/target_session_attrs=read-write/,
	"pg_autoctl show uri gives a multi-host URI: $uri");
$uri .= '&connect_timeout=2';

# A public id made on the first primary, read on every later one.
my $probe = safe_sql($node{a}{port}, 'SELECT snowid_next()');
my $public = safe_sql($node{a}{port}, "SELECT snowid_public($probe)");

sub check_public
{
	my ($name, $what) = @_;

	is( safe_sql(
			$node{$name}{port},
			"SELECT snowid_from_public('$public') || ' ' || snowid_public($probe)"),
		"$probe $public",
		"$what: node $name reads and makes the first primary's public ids");
	return;
}

start_clients($uri, 2);
wait_for_ids($node{a}{port}, 0, 'the start');
sleep 1;

# ---------------------------------------------------------------------------
# The events

my @events;    # { name, start, end, from, to }

# Runs an event: the action, then waits until the monitor has the states
# given by settle() (which returns the primary it expects) and every client
# has taken an id from that primary in a call sent after the action (or
# after the time settle() returns as its second value).
sub event
{
	my ($name, $action, $settle) = @_;
	my $from = primary();

	note "event: $name (primary: node $from)";
	my $start = time;
	$action->($from);
	my ($to, $after) = $settle->($from);
	my @first = wait_for_ids($node{$to}{port}, $after // $start, $name);
	is(primary(), $to, "$name: node $to is the primary");
	push @events,
	  { name => $name, start => $start, end => time, from => $from, to => $to };
	collect_logs();
	sleep 1;    # ids on the new primary for a while
	return $to;
}

my $p = event(
	'switchover',
	sub { autoctl('perform', 'switchover', '--pgdata', $node{monitor}{dir}) },
	sub {
		my $to = other($_[0]);
		wait_states($to => 'primary', $_[0] => 'secondary');
		return $to;
	});
check_public($p, 'after the switchover');

$p = event(
	'postmaster killed',
	sub {
		my $pm = postmaster_pid($_[0]);
		kill 'KILL', $pm or die "could not kill postmaster $pm";
		my $deadline = time + $timeout;
		while (kill 0, $pm)
		{
			die "postmaster $pm outlived SIGKILL" if time > $deadline;
			usleep(10_000);
		}
	},
	sub {
		# the keeper starts it again; should the monitor fail over
		# meanwhile, the ids go on there
		my $deadline = time + $timeout;
		my $restarted;
		until ($restarted)
		{
			die 'the killed postmaster did not come back' if time > $deadline;
			usleep(100_000);
			my ($ok, $out) = sql($node{ $_[0] }{port},
				'SELECT pg_is_in_recovery()');
			$restarted = time if $ok;
		}
		my %s = wait_states(a => 'primary|secondary', b => 'primary|secondary');
		return (primary(), $restarted);
	});

my $killed = $p;
$p = event(
	'node killed (keeper and postmaster)',
	sub { kill_node($_[0]) },
	sub {
		my $to = other($_[0]);
		wait_states($to => 'wait_primary|primary', "$_[0]?" => 'demoted');
		return $to;
	});

# The killed node comes back with its clock behind.
$node{$killed}{clock}->set("-$behind");
$p = event(
	"node killed rejoins, its clock ${behind} s behind",
	sub { start_keeper($killed) },
	sub {
		wait_states($p => 'primary', $killed => 'secondary');
		return $p;
	});
is( safe_sql(
		$node{$killed}{port},
		"SELECT current_setting('snowid.worker_id') || ' '"
		  . " || pg_is_in_recovery()"),
	"$worker_id true",
	"the rewound node $killed follows with snowid and worker id $worker_id");

my $stopped = $p;
$p = event(
	"keeper stopped: failover to the node ${behind} s behind",
	sub {
		autoctl('stop', '--pgdata', $node{ $_[0] }{dir});
		my $deadline = time + $timeout;
		usleep(50_000) while $node{ $_[0] }{keeper}->running && time < $deadline;
	},
	sub {
		my $to = other($_[0]);
		wait_states($to => 'wait_primary|primary', "$_[0]?" => 'demoted');
		return $to;
	});
is($p, $killed, "the node ${behind} s behind took over");
check_public($p, "after the failover to the node ${behind} s behind");

$p = event(
	'stopped node rejoins',
	sub { start_keeper($stopped) },
	sub {
		wait_states($p => 'primary', $stopped => 'secondary');
		return $p;
	});

$p = event(
	"switchover to the node ${behind} s ahead",
	sub { autoctl('perform', 'switchover', '--pgdata', $node{monitor}{dir}) },
	sub {
		my $to = other($_[0]);
		wait_states($to => 'primary', $_[0] => 'secondary');
		return $to;
	});
check_public($p, 'at the end');

# ---------------------------------------------------------------------------
# The ids

$_->{proc}->stop for @clients;
read_clients();

my $ids = SnowidTest::Ledger->new;
my @all;    # every ok record of every client
for my $c (0 .. $#clients)
{
	my @ok = grep { $_->{ok} } @{ $clients[$c]{records} };
	my $rising = 1;

	for my $i (1 .. $#ok)
	{
		next if $ok[$i]{id} > $ok[ $i - 1 ]{id};
		$rising = 0;
		diag("client $c: id $ok[$i]{id} from port $ok[$i]{port} follows"
			  . " $ok[$i-1]{id} from port $ok[$i-1]{port}");
		last;
	}
	ok($rising, 'client ' . ($c + 1) . ': its ' . scalar(@ok) . ' ids rise');
	$ids->add(map { $_->{id} } @ok);
	push @all, @ok;
}
$ids->no_duplicates;

# Every id lies above every id received before its call was sent.
{
	my @by_received = sort { $a->{received} <=> $b->{received} } @all;
	my @by_sent = sort { $a->{sent} <=> $b->{sent} } @all;
	my ($i, $max, $bad) = (0, undef, 0);

	for my $r (@by_sent)
	{
		while ($i < @by_received && $by_received[$i]{received} < $r->{sent})
		{
			$max = $by_received[$i] if !$max || $by_received[$i]{id} > $max->{id};
			$i++;
		}
		next unless $max && $r->{id} <= $max->{id};
		diag("id $r->{id} from port $r->{port}, asked for at $r->{sent},"
			  . " lies below $max->{id} from port $max->{port}, received at $max->{received}")
		  if $bad++ < 5;
	}
	is($bad, 0,
		'every id lies above every id received before it was asked for');
}

# Per event: the new primary's first id above every id before it.
my $port_node = { map { $node{$_}{port} => $_ } @data_nodes };
for my $e (@events)
{
	my @before = grep { $_->{received} < $e->{start} } @all;
	my ($first) = sort { $a->{sent} <=> $b->{sent} }
	  grep { $_->{sent} > $e->{start} && $port_node->{ $_->{port} } eq $e->{to} } @all;
	my $max = 0;
	$max = $_->{id} > $max ? $_->{id} : $max for @before;
	cmp_ok($first->{id}, '>', $max,
		"$e->{name}: node $e->{to}'s first id lies above every earlier id");
}

# Every id carries the worker id, as the server decodes it.
{
	my $script = "CREATE TEMP TABLE ids (id bigint PRIMARY KEY);\n"
	  . "COPY ids FROM STDIN;\n"
	  . join('', map { "$_\n" } $ids->all)
	  . "\\.\n"
	  . "SELECT string_agg(DISTINCT d.datacenter_id || '/' || d.worker_id, ',')"
	  . " FROM ids, snowid_decode(ids.id) d;\n";
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1',
			'-p', $node{$p}{port}, '-d', 'postgres', '-f', '-'
		],
		'<', \$script, '>', \$out, '2>', \$err,
		IPC::Run::timeout($timeout)) or die "decoding failed: $err";
	chomp $out;
	is($out, "0/$worker_id", "every id carries datacenter 0, worker id $worker_id");
}

# What clients waited for ids across each event: the longest time between
# two ids one client received, the later one after the event began.
for my $e (@events)
{
	my @waits;
	for my $c (0 .. $#clients)
	{
		my @ok = grep { $_->{ok} } @{ $clients[$c]{records} };
		my @errs = grep { !$_->{ok} && $_->{sent} >= $e->{start} && $_->{sent} <= $e->{end} }
		  @{ $clients[$c]{records} };
		my $worst;
		for my $i (1 .. $#ok)
		{
			next if $ok[$i]{received} < $e->{start} || $ok[ $i - 1 ]{received} > $e->{end};
			my $gap = $ok[$i]{received} - $ok[ $i - 1 ]{received};
			$worst = [ $gap, $ok[ $i - 1 ], $ok[$i] ] if !$worst || $gap > $worst->[0];
		}
		next unless $worst;
		my ($gap, $x, $y) = @$worst;
		my %why;
		$why{ $_->{why} =~ s/\d+/N/gr }++ for @errs;
		push @waits, sprintf('client %d waited %.3f s (last id before from node %s, first after from node %s, %d ms later in id time; %d failed calls%s)',
			$c + 1, $gap, $port_node->{ $x->{port} }, $port_node->{ $y->{port} },
			($y->{id} >> 22) - ($x->{id} >> 22),
			scalar @errs,
			%why ? ': ' . join('; ', map { "$why{$_}x $_" } sort keys %why) : '');
	}
	note("$e->{name} (node $e->{from} to node $e->{to}, "
		  . sprintf('%.1f s until every client had an id of node %s', $e->{end} - $e->{start}, $e->{to})
		  . "):\n  " . join("\n  ", @waits));
}
note(sprintf('%d ids in all, by %d clients', $ids->count, scalar @clients));

# Where snowid continued after each promotion, from the servers' logs.
collect_logs();
note("postmasters: "
	  . join('; ', map { "node $_ " . join(', ', sort keys %{ $postmasters{$_} }) } @data_nodes));
note($_) for map { /^(\S+ \S+) \S+ \[(\d+)\].*(snowid continues .*)$/ ? "$1 [$2] $3" : () } @log_lines;

done_testing();

# Stops every process the test started, also when it dies: the clients,
# each pg_autoctl run (which stops its PostgreSQL), then any PostgreSQL
# still running (pg_ctl stop -m immediate); copies the servers' logs
# beside the test's.
END
{
	local $?;

	$_->{proc}->stop for @clients;
	for my $name (@data_nodes, 'monitor')
	{
		my $n = $node{$name} or next;
		$n->{keeper}->stop if $n->{keeper};
	}
	for my $name (@data_nodes, 'monitor')
	{
		my $n = $node{$name} or next;
		my $pid = postmaster_pid($name);
		system('pg_ctl', '-D', $n->{dir}, '-m', 'immediate', 'stop')
		  if $pid && alive($pid);
	}
	collect_logs();
	if (@log_lines && open(my $out, '>', "$log_path/pg_auto_failover_data_nodes.log"))
	{
		print $out "# postmasters: "
		  . join('; ', map { "node $_ " . join(', ', sort keys %{ $postmasters{$_} }) } @data_nodes)
		  . "\n", @log_lines;
		close $out;
	}
	for my $name ('monitor')
	{
		my $n = $node{$name} or next;
		my @logs = sort glob("$n->{dir}/log/*.log") or next;
		open(my $out, '>', "$log_path/pg_auto_failover_${name}_postgres.log") or next;
		for my $log (@logs)
		{
			open(my $in, '<', $log) or next;
			print $out $_ while <$in>;
			close $in;
		}
		close $out;
	}
	# whatever is left of a pg_autoctl run's process group
	for my $g (@groups)
	{
		kill 'KILL', -$g if `ps -o args= -g $g` =~ /pg_autoctl/;
	}
}
