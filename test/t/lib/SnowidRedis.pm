# A throwaway redis-server for the Redis TAP tests (test/t/redis/, and every
# other test that claims from Redis).
# The programs are redis-server and redis-cli, or those named by
# SNOWID_REDIS_SERVER and SNOWID_REDIS_CLI (test/run --redis valkey sets
# them to Valkey's), or by new()'s server and cli parameters.
#
# Each server listens on a unix socket in a short temporary directory, and
# on a loopback TCP port when asked; it keeps nothing on disk.  A server
# that is not started as a replica gets snowid's function library from the
# installed file at every start (FUNCTION LOAD, as the setup the
# documentation recommends), unless new() is given library => 0.  Its
# output goes to a log (tmp_check/log/TEST_redis-server_N.log), and every
# server started here is stopped at the end of the test file, also when the
# test dies (SnowidProcess).  Also what these tests ask of a PostgreSQL
# server about Redis: a server set up to claim from it, its identity there,
# its worker id.
package SnowidRedis;

use strict;
use warnings;

use File::Basename;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidProcess;
use SnowidTest;
use Sys::Hostname;
use Time::HiRes ();

# For the top of a test file that starts Redis servers: the server program
# (SNOWID_REDIS_SERVER, else redis-server on PATH: Debian's redis-server)
# and redis-cli (SNOWID_REDIS_CLI, else on PATH: redis-tools), or a skip
# naming the package (a failure under SNOWID_REQUIRE_TOOLS=1, see
# SnowidTest::need_program).
sub need_redis
{
	SnowidTest::need_program($ENV{SNOWID_REDIS_SERVER} || 'redis-server',
		'redis-server');
	SnowidTest::need_program($ENV{SNOWID_REDIS_CLI} || 'redis-cli',
		'redis-tools');
	return;
}

# SnowidRedis->new(password => 'pw', tcp => 1): starts a server.  Also
# server => and cli => (paths of the programs), args => [ more arguments of
# the server ], and tls => { cert => FILE, key => FILE, ca => FILE,
# auth_clients => 'yes' } to listen for TLS on a loopback port (tls_port),
# and library => 0 not to load snowid's function library.  Datacenters 0
# to 63 (of the default key prefix) are marked brand new at every start
# that loads the library, as an administrator does before a deployment's
# first claim, so that claims wait for no quiet period; mark_new => 0 leaves
# them unmarked (the forgetting rule, coordinator/store_forgets.pl).
sub new
{
	my ($class, %params) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir_short();
	my $self = bless {
		dir      => $dir,
		socket   => "$dir/redis.sock",
		port     => $params{tcp} ? PostgreSQL::Test::Cluster::get_free_port() : 0,
		password => $params{password},
		server   => $params{server} || $ENV{SNOWID_REDIS_SERVER} || 'redis-server',
		cli      => $params{cli} || $ENV{SNOWID_REDIS_CLI} || 'redis-cli',
		args     => $params{args} || [],
		tls      => $params{tls},
		tls_port => $params{tls} ? PostgreSQL::Test::Cluster::get_free_port() : 0,
		library  => $params{library} // 1,
		mark_new => $params{mark_new} // 1,
	}, $class;

	$self->{process} = SnowidProcess->new(basename($self->{server}));
	$self->start;
	return $self;
}

sub socket   { return $_[0]->{socket}; }
sub tls_port { return $_[0]->{tls_port}; }
sub port     { return $_[0]->{port}; }
sub password { return $_[0]->{password}; }

# The client program (redis-cli, or valkey-cli), for more than cli() does
sub cli_program { return $_[0]->{cli}; }

# Valkey's programs, as (server => ..., cli => ...) for new(): from
# SNOWID_VALKEY_BIN (test/pgbuild valkey), else from PATH; an empty list if
# there is no valkey-server.
sub valkey
{
	my $dir = $ENV{SNOWID_VALKEY_BIN};

	if (!$dir)
	{
		($dir) = grep { -x "$_/valkey-server" } split /:/, $ENV{PATH};
	}
	return () unless $dir && -x "$dir/valkey-server" && -x "$dir/valkey-cli";
	return (server => "$dir/valkey-server", cli => "$dir/valkey-cli");
}

# The snowid.redis_url of the unix socket, with the server's password
# unless another is given.
sub url
{
	my ($self, $password) = @_;

	$password //= $self->{password};
	return 'unix://' . (defined $password ? ":$password\@" : '')
	  . $self->{socket};
}

# What SnowidCoord's tests ask of either store (SnowidPgCoord has the same):
# the source snowid_status() names for a claim for good, the setting that
# names the store, a field of a worker id ("fences": its fence; "leases":
# "<expiry> <floor> <token>"), undef if none, and an administrator's mistake
# (the holder removed by hand, its fence left).
sub source  { return 'redis'; }
sub setting { return 'snowid.redis_url'; }

sub field
{
	my ($self, $dc, $what, $worker_id) = @_;
	my $value = $self->cli('HGET', "{snowid:dc:$dc}:$what", $worker_id);

	return $value eq '' ? undef : $value;
}

sub remove_holder
{
	my ($self, $dc, $worker_id) = @_;

	$self->cli('HDEL', owners_key($dc), $worker_id);
	return;
}

# More that SnowidCoord's tests ask of either store: the message of a claim
# that cannot reach it, the commands its hints name to list the holders of
# a datacenter and to free a worker id, a claim for good of another server
# (worker id held by identity), losing every claim and fence (as a Redis
# without persistence that restarts; the function library stays), and a
# hung server (SIGSTOP: it accepts connections and answers nothing).
sub unreachable
{
	my ($self) = @_;

	return "could not connect to redis server at unix:$self->{socket}";
}

sub list_command
{
	my ($self, $dc) = @_;

	return 'HGETALL ' . owners_key($dc);
}

# The command a hint gives to free worker id of datacenter dc, its margin
# a minute plus the server's snowid.max_drift_ms (1000 by default) plus 1.
sub free_command
{
	my ($self, $dc, $worker_id, $max_drift_ms) = @_;
	my $base = "{snowid:dc:$dc}";
	my $margin = 60000 + ($max_drift_ms // 1000) + 1;

	return "redis-cli FCALL snowid_3_free 3 $base:owners $base:leases "
	  . qq{$base:fences admin "$worker_id $margin"};
}

sub add_holder
{
	my ($self, $dc, $worker_id, $identity) = @_;

	$self->cli('HSET', owners_key($dc), $worker_id, $identity);
	return;
}

sub wipe
{
	my ($self) = @_;

	$self->cli('FLUSHALL');
	return;
}

sub freeze
{
	my ($self) = @_;
	my ($pid) = $self->cli('INFO', 'server') =~ /process_id:(\d+)/;

	kill 'STOP', $pid or die "could not stop redis-server $pid";
	$self->{frozen} = [$pid];
	return;
}

sub thaw
{
	my ($self) = @_;

	kill 'CONT', @{ delete $self->{frozen} // [] };
	return;
}

# And more (066, 085): the connections of snowid servers open now (the
# one asking left out), calls that write held until release_writes (CLIENT
# PAUSE WRITE), a field of a worker id written by hand (as field reads it),
# and a URL of this store's kind where no server listens.
sub clients
{
	my ($self) = @_;

	return (grep { /^id=/ } split /\n/, $self->cli('CLIENT', 'LIST')) - 1;
}

sub hold_writes
{
	my ($self) = @_;

	return $self->cli('CLIENT', 'PAUSE', '60000', 'WRITE') eq 'OK';
}

sub release_writes
{
	my ($self) = @_;

	return $self->cli('CLIENT', 'UNPAUSE') eq 'OK';
}

sub set_field
{
	my ($self, $dc, $what, $worker_id, $value) = @_;

	$self->cli('HSET', "{snowid:dc:$dc}:$what", $worker_id, $value);
	return;
}

sub unreachable_url { return 'unix:///nonexistent/redis.sock'; }

# Starts the server (again, after stop) and waits until it answers PING.
sub start
{
	my $self = shift;
	my @cmd = (
		$self->{server}, '--port', $self->{port}, '--bind', '127.0.0.1',
		'--unixsocket', $self->{socket}, '--unixsocketperm', '700',
		'--save', '', '--appendonly', 'no', '--daemonize', 'no',
		'--dir', $self->{dir});

	push @cmd, '--requirepass', $self->{password}
	  if defined $self->{password};
	push @cmd, '--tls-port', $self->{tls_port},
	  '--tls-cert-file', $self->{tls}{cert},
	  '--tls-key-file', $self->{tls}{key},
	  '--tls-ca-cert-file', $self->{tls}{ca},
	  '--tls-auth-clients', $self->{tls}{auth_clients} // 'no'
	  if $self->{tls};
	push @cmd, @{ $self->{args} };
	unlink $self->{socket};
	$self->{process}->start(\@cmd,
		socket => $self->{socket},
		until  => sub { ($self->try_cli('PING') // '') eq 'PONG' });
	$self->load_library
	  if $self->{library}
	  && !grep { /^--(replicaof|slaveof)$/ } @{ $self->{args} };
	return;
}

# Stops the server (see SnowidProcess::stop); start() starts it again.
sub stop
{
	my $self = shift;

	$self->{process}->stop;
	return;
}

# The installed file of snowid's function library, as the documentation
# names it: $(pg_config --sharedir)/extension/snowid.lua, with the
# pg_config of the installation under test (first in PATH).
sub library_file
{
	my $share = `pg_config --sharedir`;

	die 'pg_config --sharedir failed' if $? || !$share;
	chomp $share;
	return "$share/extension/snowid.lua";
}

# Loads snowid's function library from the installed file, as an
# administrator does (FUNCTION LOAD REPLACE), with the server's password.
sub load_library
{
	my $self = shift;

	$self->cli('FUNCTION', 'LOAD', 'REPLACE', slurp_file(library_file()));
	$self->mark_new if $self->{mark_new};
	return;
}

# Marks datacenter dc brand new (snowid_3_new_datacenter), as an
# administrator does before its first claim; refused, which is ignored, if
# it has a record already (marked at a restart, see mark_new)
sub mark_dc_new
{
	my ($self, $dc) = @_;
	my $base = "{snowid:dc:$dc}";

	$self->try_cli('FCALL', 'snowid_3_new_datacenter', 3, "$base:owners",
		"$base:leases", "$base:fences", 'admin');
	return;
}

# Marks datacenters 0 to 63 brand new (snowid_3_new_datacenter), in one
# redis-cli; one that has claims or a record already refuses, which is
# ignored (a server restarted with its data).  Then resets the command
# counts (command_calls): they count the test's calls only.
sub mark_new
{
	my $self = shift;
	my @cmd = ($self->{cli}, '-s', $self->{socket});
	my $commands = '';
	my ($out, $err);

	push @cmd, '-a', $self->{password}, '--no-auth-warning'
	  if defined $self->{password};
	for my $dc (0 .. 63)
	{
		my $base = "{snowid:dc:$dc}";
		$commands .= "FCALL snowid_3_new_datacenter 3 $base:owners "
		  . "$base:leases $base:fences admin\n";
	}
	# and the command counts (command_calls) start after it
	$commands .= "CONFIG RESETSTAT\n";
	IPC::Run::run(\@cmd, '<', \$commands, '>', \$out, '2>', \$err)
	  or die "redis-cli failed marking datacenters new: $err";
	return;
}

# Redis' data as it is now, saved (SAVE) to the file it loads at its next
# start; restore_backup restarts it from that file, as a Redis that crashed
# and came back from its last snapshot (the harness starts it with no save
# points, so a stop saves nothing).
sub backup
{
	my $self = shift;

	$self->cli('SAVE');
	return;
}

sub restore_backup
{
	my $self = shift;

	$self->stop;
	$self->start;
	return;
}

# What a base backup of a coordination database is to SnowidPgCoord: for
# Redis, a snapshot and a restart from it.
sub base_backup         { return $_[0]->backup; }
sub restore_base_backup { return $_[0]->restore_backup; }

# Redis' files copied and put back: for Redis, backup and restore_backup
# (a restart from the snapshot, as SnowidPgCoord's copy of its files);
# restore_files(before) runs before (a code ref) just before Redis stops.
sub copy_files { return $_[0]->backup; }

sub restore_files
{
	my ($self, $before) = @_;

	$before->() if $before;
	return $self->restore_backup;
}

# The state record of datacenter dc as far as quiet periods go (the
# forgetting rule), as SnowidPgCoord::quiet_record: { from, until, floor,
# longest, widest } from "<generation> <run id> <from> <until> <counter>
# <floor> <longest> <widest>"; zeros if none
sub quiet_record
{
	my ($self, $dc) = @_;
	my $state = $self->cli('HGET', "{snowid:dc:$dc}:owners", 'state');
	my %q;

	@q{qw(from until floor longest widest)} =
	  $state =~ /^\S+ \S+ (\d+) (\d+) \d+ (\d+) (\d+) (\d+)$/;
	$q{$_} //= 0 for qw(from until floor longest widest);
	return \%q;
}

# Whether datacenter dc is in a quiet period (the forgetting rule) by
# Redis' clock: the end its state record names lies ahead
sub in_quiet
{
	my ($self, $dc) = @_;
	my $state = $self->cli('HGET', "{snowid:dc:$dc}:owners", 'state');
	my ($until) = $state =~ /^\S+ \S+ \d+ (\d+)/;
	my ($s, $us) = split /\n/, $self->cli('TIME');

	return defined $until && $until > $s * 1000 + int($us / 1000);
}

# Points the server $node at the Redis URL $url with a claim deadline of
# $timeout_ms (snowid.redis_timeout_ms), restarting it
sub point_at
{
	my ($node, $url, $timeout_ms) = @_;

	SnowidTest::set_conf($node, 'snowid.redis_url' => $url,
		'snowid.redis_timeout_ms' => $timeout_ms);
	$node->restart;
	return;
}

# Runs a shell script of a page with bash, stopping at the first command
# that fails, redis-cli being this Redis' client, which fails on an error
# reply (-e), logged in through REDISCLI_AUTH as the pages say, with
# $password (the administrator's; none if undef), PG_CONFIG the
# installation under test.  Returns whether it succeeded, and its output.
sub run_page_script
{
	my ($self, $script, $password) = @_;
	my ($pg_config) = SnowidTest::pg_config_in_path();
	my ($out, $err) = ('', '');
	my $head = "set -euo pipefail\nPG_CONFIG='$pg_config'\n"
	  . "redis-cli() { command '$self->{cli}' -s '$self->{socket}' -e \"\$@\"; }\n";

	local $ENV{REDISCLI_AUTH} = $password if defined $password;
	my $ok = IPC::Run::run([ 'bash', '-c', $head . $script ],
		'<', \undef, '>', \$out, '2>', \$err);
	return ($ok, "$out$err");
}

# Runs redis-cli with the given arguments and returns its output, chomped;
# dies if redis-cli fails: the server cannot be reached, or it answers with
# an error (redis-cli -e), so that no check reads a failed command as an
# empty answer.
sub cli
{
	my ($self, @args) = @_;

	return run_cli([ $self->{cli}, '-s', $self->{socket} ],
		$self->{password}, @args);
}

# As cli, but returns undef if redis-cli fails: for polling a server that
# may not be up yet.
sub try_cli
{
	my ($self, @args) = @_;

	return try_run_cli([ $self->{cli}, '-s', $self->{socket} ],
		$self->{password}, @args);
}

# Runs a redis-cli command line (the program and where to connect), with a
# password if one is given, and the command's arguments.  Returns the
# output, chomped, or undef if redis-cli failed ($cli_error then says how).
my $cli_error = '';

sub try_run_cli
{
	my ($cmd, $password, @args) = @_;
	my @cmd = (@$cmd, '-e');
	my ($out, $err) = ('', '');

	push @cmd, '-a', $password, '--no-auth-warning' if defined $password;
	if (!IPC::Run::run([ @cmd, @args ], '<', \undef, '>', \$out, '2>', \$err))
	{
		$cli_error = "'@$cmd @args' exited with status "
		  . ($? >> 8) . ": $err$out";
		return undef;
	}
	chomp $out;
	return $out;
}

# As try_run_cli, but dies if redis-cli fails.
sub run_cli
{
	my $out = try_run_cli(@_);

	die "redis-cli failed: $cli_error" unless defined $out;
	return $out;
}

# HGETALL of a datacenter's claims: { worker id => identity }, without the
# field "state" (the record of who wrote them, see snowid.lua's forgetting
# rule).
sub owners
{
	my ($self, $dc, $prefix) = @_;
	my %owners = split /\n/, $self->cli('HGETALL', owners_key($dc, $prefix));

	delete $owners{state};
	return \%owners;
}

sub owners_key
{
	my ($dc, $prefix) = @_;

	return '{' . ($prefix // 'snowid') . ":dc:$dc}:owners";
}

# An administrator frees worker id of datacenter dc with the library's
# function, fenced at Redis' clock plus margin ms; returns the fence.
sub free
{
	my ($self, $dc, $worker_id, $margin) = @_;
	my $base = "{snowid:dc:$dc}";

	return $self->cli('FCALL', 'snowid_3_free', '3', "$base:owners",
		"$base:leases", "$base:fences", 'admin', "$worker_id $margin");
}

# Calls of each command since the server started, from INFO commandstats,
# without INFO itself: { command => calls }.
sub command_calls
{
	my $self = shift;
	my %calls;

	for (split /\r?\n/, $self->cli('INFO', 'commandstats'))
	{
		$calls{$1} = $2 if /^cmdstat_([^:]+):calls=(\d+)/;
	}
	delete $calls{info};
	return \%calls;
}

# A PostgreSQL server with snowid preloaded that claims its worker id from
# this Redis, not started: $redis->new_node('name', { settings }, init
# parameters) as SnowidTest::new_node; the settings may name another
# snowid.redis_url.
sub new_node
{
	my ($self, $name, $settings, %init) = @_;

	return SnowidTest::new_node($name,
		{ 'snowid.redis_url' => $self->url, %$settings }, %init);
}

# The identity under which a server of datacenter dc claims in Redis: its
# host name, port, system identifier and the instance of its data
# directory, from its mark file (padded to 16 hex digits; none where the
# mark file names none, as releases before 1.3 wrote it).
sub identity
{
	my ($node, $dc) = @_;
	my $sysid = $node->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()');
	my $mark = $node->data_dir . '/snowid_state';
	my ($instance) =
	  -e $mark
	  ? PostgreSQL::Test::Utils::slurp_file($mark) =~ / instance=([0-9a-f]+) /
	  : ();

	return "dc=$dc host=" . hostname() . ' port=' . $node->port
	  . " sysid=$sysid"
	  . (defined $instance
		? ' instance=' . ('0' x (16 - length $instance)) . $instance
		: '');
}

# A server's worker id and where it came from, from snowid_status():
# "3|redis", or "|none" without a worker id.
sub worker
{
	my ($node) = @_;

	return $node->safe_psql('postgres',
		'SELECT worker_id, worker_source FROM snowid_status()');
}

# Passes if a server refused a worker id has none and still runs:
# snowid_decode() works there (two tests; $what begins their names)
sub refused_runs
{
	my ($node, $what) = @_;

	Test::More::is(worker($node), '|none', "$what: no worker id");
	Test::More::is(
		$node->safe_psql(
			'postgres',
			'SELECT datacenter_id, worker_id, sequence FROM snowid_decode((1::bigint << 22) | (2 << 17) | (5 << 12) | 9)'
		),
		'2|5|9',
		"$what: the server runs and snowid_decode() works");
	return;
}

# Whether the snowid library that node loads must have TLS: as
# SNOWID_EXPECT_TLS says (test/run sets it), or else, where a missing tool
# fails (SNOWID_REQUIRE_TOOLS=1), test/versions.sh for the node's major
# version (whether the hiredis it is tested with has TLS): there, never
# what the build happens to have, as a build that lost TLS must fail.  A
# user's make prove_installcheck tests the build they made: TLS if it was
# linked with hiredis_ssl.
sub tls_expected
{
	my ($node) = @_;

	return $ENV{SNOWID_EXPECT_TLS} ? 1 : 0
	  if defined $ENV{SNOWID_EXPECT_TLS} && $ENV{SNOWID_EXPECT_TLS} ne '';
	return tls_linked($node) unless $ENV{SNOWID_REQUIRE_TOOLS};

	my %v = SnowidTest::versions();
	my ($major) = $node->config_data('--version') =~ /^PostgreSQL (\d+)/;
	my $hiredis = $v{"SNOWID_HIREDIS_$major"}
	  // die "test/versions.sh names no hiredis for PostgreSQL $major";

	return (grep { $_ eq $hiredis } split ' ', $v{SNOWID_HIREDIS_TLS}) ? 1 : 0;
}

# Whether the snowid library that node loads is linked with hiredis_ssl.
sub tls_linked
{
	my ($node) = @_;
	my $lib = $node->config_data('--pkglibdir') . '/snowid.so';

	return scalar(`ldd '$lib'` =~ /libhiredis_ssl/) ? 1 : 0;
}

# Runs redis-cli on the server's TCP port; see cli.
sub cli_tcp
{
	my ($self, @args) = @_;

	return SnowidRedis::Sentinel::cli_port($self->{port}, @args);
}


# A Redis Sentinel (redis-server --sentinel, or SNOWID_REDIS_SERVER's) on a
# loopback port, watching
# the master "mymaster" (or the given name) on 127.0.0.1:master_port.
# Stopped at the end of the test file like the servers.
package SnowidRedis::Sentinel;

# SnowidRedis::Sentinel->new(master_port => 6379, quorum => 2), and
# optionally name => 'mymaster', password => 'pw' (its requirepass), and
# tls => { cert => FILE, key => FILE, ca => FILE } to listen for TLS only
# (its port is then the TLS port) and reach the master over TLS.
sub new
{
	my ($class, %params) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir_short();
	my $name = $params{name} // 'mymaster';
	my $tls = $params{tls};
	my $self = bless {
		dir      => $dir,
		port     => PostgreSQL::Test::Cluster::get_free_port(),
		name     => $name,
		password => $params{password},
		tls      => $tls,
	}, $class;

	open(my $fh, '>', "$dir/sentinel.conf") or die $!;
	print $fh ($tls
		? "port 0\ntls-port $self->{port}\ntls-cert-file $tls->{cert}\n"
		  . "tls-key-file $tls->{key}\ntls-ca-cert-file $tls->{ca}\n"
		  . "tls-auth-clients no\ntls-replication yes\n"
		: "port $self->{port}\n"),
	  "bind 127.0.0.1\ndir $dir\n",
	  (defined $params{password} ? "requirepass $params{password}\n" : ''),
	  "sentinel monitor $name 127.0.0.1 $params{master_port} ",
	  ($params{quorum} // 2), "\n",
	  # A master that answers no PING for 5 s is down: one that a loaded
	  # machine stalls for a second or two (its append-only file, or no
	  # CPU) is not failed over between two steps of a test.
	  "sentinel down-after-milliseconds $name 5000\n",
	  "sentinel failover-timeout $name 4000\n",
	  "sentinel parallel-syncs $name 1\n";
	close $fh;
	$self->{process} = SnowidProcess->new('sentinel');
	$self->start;
	return $self;
}

sub port { return $_[0]->{port}; }

# Starts the sentinel (again, after stop) and waits until it answers PING.
sub start
{
	my $self = shift;

	$self->{process}->start(
		[ $ENV{SNOWID_REDIS_SERVER} || 'redis-server',
		  "$self->{dir}/sentinel.conf", '--sentinel' ],
		until => sub { ($self->try_cli('PING') // '') eq 'PONG' });
	return;
}

# Stops the sentinel (see SnowidProcess::stop).
sub stop
{
	my $self = shift;

	$self->{process}->stop;
	return;
}

# As SnowidRedis::cli and try_cli (over TLS for a TLS sentinel).
sub cli
{
	my ($self, @args) = @_;

	return SnowidRedis::run_cli($self->sentinel_cli, $self->{password},
		@args);
}

sub try_cli
{
	my ($self, @args) = @_;

	return SnowidRedis::try_run_cli($self->sentinel_cli, $self->{password},
		@args);
}

# The redis-cli command line for this sentinel.
sub sentinel_cli
{
	my $self = shift;
	my $cmd = port_cli($self->{port});

	push @$cmd, '--tls', '--cacert', $self->{tls}{ca} if $self->{tls};
	return $cmd;
}

# redis-cli against a loopback TCP port; dies if it fails (see
# SnowidRedis::cli).
sub cli_port
{
	my ($port, @args) = @_;

	return SnowidRedis::run_cli(port_cli($port), undef, @args);
}

# As cli_port, but returns undef if redis-cli fails.
sub try_cli_port
{
	my ($port, @args) = @_;

	return SnowidRedis::try_run_cli(port_cli($port), undef, @args);
}

# The redis-cli command line for a loopback TCP port.
sub port_cli
{
	my ($port) = @_;

	return [ $ENV{SNOWID_REDIS_CLI} || 'redis-cli', '-h', '127.0.0.1', '-p',
		$port ];
}

# Waits until every sentinel of the list knows the master, its one replica
# and the other two sentinels, so that a failover can happen.
sub wait_for_sentinels
{
	my ($sentinels) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;

	until (!grep { ($_->try_cli('INFO', 'sentinel') // '')
				!~ /status=ok,address=[^,]+,slaves=1,sentinels=3/ } @$sentinels)
	{
		die 'the sentinels did not see the replica and each other'
		  if Time::HiRes::time() > $deadline;
		Time::HiRes::sleep(0.1);
	}
	return;
}

# Waits until every sentinel of the list names the Redis on the port as
# master, and it says it is one.
sub wait_for_master
{
	my ($sentinels, $port) = @_;

	wait_for_role($port, qr/^master/,
		sub { !grep { $_->master_port ne $port } @$sentinels });
	return;
}

# Waits until the ROLE of the Redis on the port matches (and the function
# given, if any, returns true).
sub wait_for_role
{
	my ($port, $role, $also) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;

	until ((try_cli_port($port, 'ROLE') // '') =~ $role && (!$also || $also->()))
	{
		die "the Redis on port $port did not take its role"
		  if Time::HiRes::time() > $deadline;
		Time::HiRes::sleep(0.1);
	}
	return;
}

# The port of the master this sentinel names.
sub master_port
{
	my $self = shift;
	my (undef, $port) = split /\n/,
	  $self->cli('SENTINEL', 'get-master-addr-by-name', $self->{name});

	return $port // '';
}

1;
