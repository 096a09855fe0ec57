# What the Patroni TAP tests (test/t/integrations/patroni.pl, integrations/patroni_lease.pl)
# share: a three-member etcd cluster on loopback, a Patroni cluster of three
# nodes on it (a primary and two standbys of the PostgreSQL under test, with
# snowid preloaded through Patroni's own configuration), clients that take
# ids all the time through whichever node is the primary, and the scenario
# both tests run (synchronous_mode on): a switchover, a failover after a
# crash of the primary (SIGKILL) with the old primary rejoining through
# pg_rewind, and a failover to a standby whose PostgreSQL's clock runs 5 s
# behind the old primary's (libfaketime).  The etcd members, Patroni's REST
# APIs and the PostgreSQL servers listen on free loopback ports.
#
# Every process runs as the test's user, with its output in a log of its own
# (SnowidProcess): tmp_check/log/TEST_etcd_N.log, TEST_patroni_N.log (with
# the output of the node's PostgreSQL, which Patroni starts) and
# TEST_client_N.log (the ids a client got, one "ID" line each).  Every one
# is stopped at the end of the test file, also when the test dies.
package SnowidPatroni;

use strict;
use warnings;

use File::Basename;
use File::Path qw(rmtree);
use File::Spec;
use HTTP::Tiny;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidProcess;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time usleep);
use List::Util;

my @nodes;      # every Patroni node made, to stop at the end
my @etcds;      # every etcd cluster made

# The tools a Patroni test needs, or a skip naming their Debian packages
# (a failure under SNOWID_REQUIRE_TOOLS=1).  Returns the path of
# libfaketime.
sub need_tools
{
	SnowidTest::need_program('patroni',    'patroni');
	SnowidTest::need_program('patronictl', 'patroni');
	SnowidTest::need_program('etcd',       'etcd-server');
	SnowidTest::need_program('etcdctl',    'etcd-client');
	SnowidTest::need_python_module('etcd', 'python3-etcd')
	  if SnowidTest->can('need_python_module');
	return SnowidTest->can('need_libfaketime')
	  ? SnowidTest::need_libfaketime()
	  : '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
}

# Polls until the function returns true, at most the tests' timeout; dies
# naming what it waited for otherwise.  Returns what the function returned.
sub wait_until
{
	my ($what, $check) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $deadline)
	{
		my $result = eval { $check->() };
		return $result if $result;
		usleep(100_000);
	}
	die "timed out waiting for $what\n";
}


# A three-member etcd cluster on loopback, each member with its data
# directory in the test's temp dir.
package SnowidPatroni::Etcd;

sub new
{
	my ($class, %params) = @_;
	my $n = $params{members} // 3;
	my $dir = PostgreSQL::Test::Utils::tempdir('etcd');
	my @members = map {
		{
			name   => "etcd$_",
			client => PostgreSQL::Test::Cluster::get_free_port(),
			peer   => PostgreSQL::Test::Cluster::get_free_port(),
			dir    => "$dir/etcd$_",
		}
	} 1 .. $n;
	my $cluster = join(',',
		map { "$_->{name}=http://127.0.0.1:$_->{peer}" } @members);
	my $self = bless { members => \@members }, $class;

	push @etcds, $self;
	# each waits for the others before it serves clients: start them all,
	# then wait until every one is healthy
	for my $m (@members)
	{
		$m->{process} = SnowidProcess->new('etcd');
		$m->{process}->start(
			[
				'etcd', '--name', $m->{name},
				'--data-dir', $m->{dir},
				'--listen-client-urls', "http://127.0.0.1:$m->{client}",
				'--advertise-client-urls', "http://127.0.0.1:$m->{client}",
				'--listen-peer-urls', "http://127.0.0.1:$m->{peer}",
				'--initial-advertise-peer-urls', "http://127.0.0.1:$m->{peer}",
				'--initial-cluster', $cluster,
				'--initial-cluster-state', 'new',
				'--initial-cluster-token', "snowid-$$",
				# Heartbeats every half second, and an election only
				# after 5 s without one: a member starved of CPU on a
				# loaded machine starts none (an election leaves
				# Patroni without its DCS meanwhile).
				'--heartbeat-interval', '500',
				'--election-timeout', '5000',
				# Patroni's etcd (v2) API: its etcd3 client's watch
				# stalled for minutes here, so that the leader saw a
				# switchover request only three minutes late
				'--enable-v2',
			]);
	}
	SnowidPatroni::wait_until('etcd to be healthy', sub {
		my $out = `etcdctl --endpoints=@{[ $self->endpoints ]} endpoint health 2>&1`;
		return $? == 0;
	});
	return $self;
}

# host:port of every member, as Patroni's etcd.hosts takes them
sub hosts { return map { "127.0.0.1:$_->{client}" } @{ $_[0]->{members} }; }

sub endpoints
{
	return join(',', map { "http://$_" } $_[0]->hosts);
}

sub stop
{
	my $self = shift;

	$_->{process}->stop for @{ $self->{members} };
	return;
}


# A node of a Patroni cluster: its patroni process, its configuration file,
# the PostgreSQL it runs.
package SnowidPatroni::Node;

use File::Basename ();
use HTTP::Tiny;
use JSON::PP;
use Test::More;

my $socket_dir;

# SnowidPatroni::Node->new(name => 'pg1', etcd => $etcd, scope => 'snowid',
# parameters => { PostgreSQL settings }, dcs => { more of the cluster's
# configuration in the DCS, bootstrap only }): a node not started.
sub new
{
	my ($class, %params) = @_;
	my $name = $params{name};
	my $dir = PostgreSQL::Test::Utils::tempdir("patroni_$name");
	my $bindir = `pg_config --bindir`;

	die 'pg_config --bindir failed' if $? || !$bindir;
	chomp $bindir;
	$socket_dir //= PostgreSQL::Test::Utils::tempdir_short();
	my $self = bless {
		%params,
		dir       => $dir,
		data      => "$dir/data",
		bindir    => $bindir,
		port      => PostgreSQL::Test::Cluster::get_free_port(),
		rest_port => PostgreSQL::Test::Cluster::get_free_port(),
		config    => "$dir/patroni.yml",
		process   => SnowidProcess->new('patroni'),
	}, $class;

	$self->write_config;
	push @nodes, $self;
	return $self;
}

sub name      { return $_[0]->{name}; }
sub port      { return $_[0]->{port}; }
sub rest_port { return $_[0]->{rest_port}; }
sub config    { return $_[0]->{config}; }
sub data_dir  { return $_[0]->{data}; }
sub logfile   { return $_[0]->{process}->logfile; }

# The YAML of the node's configuration: scalars quoted, maps and lists as
# Perl hashes and arrays.
sub yaml
{
	my ($value, $indent) = @_;
	my $pad = '  ' x $indent;

	if (ref $value eq 'HASH')
	{
		return join('', map {
			my $v = $value->{$_};
			ref $v
			  ? "$pad$_:\n" . yaml($v, $indent + 1)
			  : "$pad$_: " . scalar_yaml($v) . "\n"
		} sort keys %$value);
	}
	return join('', map {
		ref $_
		  ? "$pad-\n" . yaml($_, $indent + 1)
		  : "$pad- " . scalar_yaml($_) . "\n"
	} @$value);
}

sub scalar_yaml
{
	my ($v) = @_;

	return $v if $v =~ /^(?:-?\d+|true|false)$/;
	$v =~ s/'/''/g;
	return "'$v'";
}

# Writes the configuration file: the parameters given, with the cluster's
# own (the cluster's settings in the DCS at bootstrap; trust on loopback).
sub write_config
{
	my $self = shift;
	my %config = (
		scope     => $self->{scope} // 'snowid',
		namespace => '/service/',
		name      => $self->{name},
		log       => { level => 'INFO' },
		restapi   => {
			listen          => "127.0.0.1:$self->{rest_port}",
			connect_address => "127.0.0.1:$self->{rest_port}",
		},
		etcd      => { hosts => [ $self->{etcd}->hosts ] },
		# A loop a second, so that Patroni acts at once, and a leader key
		# that lives 30 s, with DCS and PostgreSQL calls retried for
		# 10 s (Patroni wants loop_wait + 2 * retry_timeout <= ttl): a
		# Patroni or etcd starved of CPU for a few seconds costs the
		# primary neither its key nor its role.  No event waits for the
		# key to expire: a Patroni whose primary crashed releases it at
		# once (primary_start_timeout 0), as a switchover does.
		bootstrap => {
			dcs => {
				ttl                     => 30,
				loop_wait               => 1,
				retry_timeout           => 10,
				primary_start_timeout   => 0,
				maximum_lag_on_failover => 16 * 1024 * 1024,
				%{ $self->{dcs} // {} },
			},
			initdb => [ { encoding => 'UTF8' }, { locale => 'C' } ],
		},
		postgresql => {
			listen          => "127.0.0.1:$self->{port}",
			connect_address => "127.0.0.1:$self->{port}",
			data_dir        => $self->{data},
			bin_dir         => $self->{bin_dir} // $self->{bindir},
			pgpass          => "$self->{dir}/pgpass",
			use_pg_rewind   => 'true',
			authentication  => {
				superuser   => { username => 'postgres' },
				replication => { username => 'replicator' },
			},
			pg_hba => [
				'local all all trust',
				'host all all 127.0.0.1/32 trust',
				'host replication all 127.0.0.1/32 trust',
			],
			parameters => {
				unix_socket_directories => $socket_dir,
				wal_log_hints           => 'on',
				max_wal_senders         => 10,
				max_replication_slots   => 10,
				wal_keep_size           => '64MB',
				fsync                   => 'off',
				log_line_prefix         => "%m [%p] $self->{name} ",
				%{ $self->{parameters} // {} },
			},
		},
		tags => $self->{tags} // {},
	);

	$config{tags} = { nofailover => 'false' } unless %{ $config{tags} };
	open(my $fh, '>', $self->{config}) or die "could not write config: $!";
	print $fh yaml(\%config, 0);
	close $fh;
	return;
}

# Starts patroni and waits until its REST API answers.  With faketime =>
# an offset as FAKETIME takes it ('-5s') and libfaketime => its path, the
# PostgreSQL it runs (and nothing else) runs that far off the real clock:
# Patroni's bin_dir is then a directory of links to the PostgreSQL under
# test whose postgres starts the real one under libfaketime.  (Patroni
# itself cannot run under libfaketime 0.9.10: every time.sleep() of Python
# 3.11 fails there with EINVAL.)
sub start
{
	my ($self, %opts) = @_;

	if ($opts{faketime})
	{
		my $bin = "$self->{dir}/faketime_bin";

		File::Path::rmtree($bin) if -d $bin;
		mkdir $bin or die "could not create $bin: $!";
		for my $program (glob "$self->{bindir}/*")
		{
			my $name = File::Basename::basename($program);
			next if $name eq 'postgres';
			symlink($program, "$bin/$name")
			  or die "could not link $program: $!";
		}
		open(my $fh, '>', "$bin/postgres") or die "could not write: $!";
		print $fh "#!/bin/sh
"
		  . "LD_PRELOAD='$opts{libfaketime}' FAKETIME='$opts{faketime}' "
		  . "FAKETIME_DONT_FAKE_MONOTONIC=1 exec '$self->{bindir}/postgres' \"\$@\"\n";
		close $fh;
		chmod 0755, "$bin/postgres";
		$self->{bin_dir} = $bin;
	}
	else
	{
		delete $self->{bin_dir};
	}
	$self->write_config;
	$self->{process}->start([ 'patroni', $self->{config} ],
		port => $self->{rest_port});
	return $self;
}

# Stops patroni, which stops its PostgreSQL first (fast shutdown).
sub stop
{
	my $self = shift;
	my $pid;

	$self->{process}->stop;

	# A patroni that did not stop within the grace was killed, and may
	# leave its PostgreSQL running: the next patroni would take that one
	# over as it is (not under the next start's libfaketime, say).
	$pid = $self->postmaster_pid;
	if ($pid && kill 0, $pid)
	{
		diag("$self->{name}: PostgreSQL outlived its patroni; stopping it");
		system('pg_ctl', '-D', $self->{data}, '-m', 'fast', '-w', 'stop') == 0
		  or die "$self->{name}: pg_ctl stop failed";
	}
	return;
}

sub running { return $_[0]->{process}->running; }

# A GET of the REST API: the decoded JSON, or undef; with the status code
# as well in list context.
sub rest
{
	my ($self, $path) = @_;
	my $res = HTTP::Tiny->new(timeout => 5)
	  ->get("http://127.0.0.1:$self->{rest_port}$path");
	my $json = eval { decode_json($res->{content}) };

	return wantarray ? ($res->{status}, $json) : $json;
}

# The members of the cluster as this node's REST API shows them (GET
# /cluster): { name => { role, state, timeline, lag, ... } }.
sub members
{
	my $self = shift;
	my $cluster = $self->rest('/cluster') or return {};

	return { map { $_->{name} => $_ } @{ $cluster->{members} // [] } };
}

# The postmaster's pid, from postmaster.pid; undef if there is none.
sub postmaster_pid
{
	my $self = shift;

	open(my $fh, '<', "$self->{data}/postmaster.pid") or return undef;
	my $pid = <$fh>;
	close $fh;
	chomp $pid if defined $pid;
	return $pid;
}

# The pids of the postmaster's children whose command line matches.
sub child_pids
{
	my ($self, $pattern) = @_;
	my $pid = $self->postmaster_pid // return ();

	return map {
		my ($child, $args) = /^\s*(\d+)\s+(.*)$/;
		defined $args && $args =~ $pattern ? $child : ();
	} split /\n/, `ps -o pid=,args= --ppid $pid`;
}

# The libpq connection string of this node.
sub connstr
{
	my ($self, $db) = @_;

	return "host=127.0.0.1 port=$self->{port} user=postgres dbname="
	  . ($db // 'postgres') . ' connect_timeout=5';
}

# Runs sql (statements and psql's meta-commands, a line each) on the node
# with psql; returns its output (-XAt), or dies.
sub safe_psql
{
	my ($self, $sql) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $self->connstr ],
		'<', \$sql, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default))
	  or die "psql on $self->{name} failed: $err";
	chomp $out;
	return $out;
}

# As safe_psql, but undef where psql fails.
sub try_psql
{
	my ($self, $sql) = @_;
	my $out = eval { $self->safe_psql($sql) };

	return $out;
}

# Whether the node runs as the primary, taking writes.
sub is_primary
{
	my $self = shift;

	return ($self->try_psql('SELECT NOT pg_is_in_recovery()') // '') eq 't';
}

# Its output since patroni last started (Patroni's log and PostgreSQL's).
sub output { return $_[0]->{process}->output; }

# Its whole log.
sub log_text
{
	my $self = shift;

	return PostgreSQL::Test::Utils::slurp_file($self->logfile);
}


# Clients that take ids all the time through the cluster's primary: each
# runs psql again and again with a libpq multi-host connection string and
# target_session_attrs=read-write, so that every call reconnects to
# whichever node takes writes; a call that fails is tried again 50 ms on.
# Each prints a line per id it got: "ID <time it got it> <id> <port of the
# server> <timeline>".
package SnowidPatroni::Client;

use Time::HiRes qw(time);

my $client_code = <<'EOF';
use strict;
use warnings;
use Time::HiRes qw(time usleep);

$| = 1;
my ($conninfo, $sql) = @ARGV;
my $stop = 0;
$SIG{TERM} = sub { $stop = 1; };
until ($stop)
{
	my $start = time;
	my $pid = open(my $fh, '-|', 'psql', '-XAtq', '-F', ' ', '-v',
		'ON_ERROR_STOP=1', '-d', $conninfo, '-c', $sql);
	my @lines = $pid ? <$fh> : ();
	my $ok = $pid && close($fh);
	my $end = time;

	if ($ok)
	{
		printf "ID %.3f %s", $end, $_ for @lines;
	}
	else
	{
		printf "ERR %.3f %.3f\n", $start, $end;
		usleep(50_000);
	}
}
EOF

# SnowidPatroni::Client->new(\@nodes, 'INSERT ... RETURNING id,
# inet_server_port(), timeline'): a client started.
sub new
{
	my ($class, $nodes, $sql) = @_;
	my $conninfo = 'host=' . join(',', map { '127.0.0.1' } @$nodes)
	  . ' port=' . join(',', map { $_->port } @$nodes)
	  . ' user=postgres dbname=postgres connect_timeout=2'
	  . ' target_session_attrs=read-write';
	my $self = bless { process => SnowidProcess->new('client') }, $class;

	$self->{process}->start([ $^X, '-e', $client_code, $conninfo, $sql ]);
	return $self;
}

sub stop { $_[0]->{process}->stop; return; }

# The ids it got: [ time, id, port, timeline ] each, in the order it got
# them.
sub ids
{
	my $self = shift;

	return [ map { /^ID (\S+) (\d+) (\d+) (\S+)$/ ? [ $1, $2, $3, $4 ] : () }
		  split /\n/, PostgreSQL::Test::Utils::slurp_file(
			$self->{process}->logfile) ];
}

# What its failed calls said between two times: { message => count }, the
# message being psql's error without the numbers that differ (ports,
# times).
sub messages
{
	my ($self, $from, $to) = @_;
	my (%messages, @pending);

	for (split /\n/, PostgreSQL::Test::Utils::slurp_file(
			$self->{process}->logfile))
	{
		next if /^ID /;
		if (/^ERR (\S+)/)
		{
			if ($1 >= $from && $1 < $to)
			{
				my %once = map { $_ => 1 } @pending;
				$messages{$_}++ for keys %once;
			}
			@pending = ();
			next;
		}
		next unless /(?:ERROR|FATAL|error):\s+(.*)/ || /^(connection to server .*)/;
		push @pending, $1 =~ s/\d+(?:\.\d+)*/N/gr;
	}
	return \%messages;
}

# How many failed calls it made.
sub errors
{
	my $self = shift;

	return scalar(() = PostgreSQL::Test::Utils::slurp_file(
			$self->{process}->logfile) =~ /^ERR /mg);
}


package SnowidPatroni;

use IPC::Run;

# What every client runs: ids stored in a table with a primary key (a
# repeated id in one primary's data fails the insert), returned with the
# port of the server that issued them and its timeline, which tells the
# primaries apart (each promotion starts a new one).
my $returning = 'RETURNING id, inet_server_port(),'
  . ' substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)';
my @client_sql = (
	"INSERT INTO ids SELECT snowid_next() FROM generate_series(1, 10) $returning",
	"INSERT INTO ids SELECT snowid_next_batch(20) $returning");

# Every id the clients got so far: [ time, id, port, timeline ] each,
# ordered by time.
sub all_ids
{
	my ($clients) = @_;

	return [ sort { $a->[0] <=> $b->[0] } map { @{ $_->ids } } @$clients ];
}

# Waits until the clients got n ids from the node since the time given.
sub wait_ids
{
	my ($clients, $node, $since, $n, $what) = @_;

	wait_until($what // ("ids from " . $node->name), sub {
		my $got = grep { $_->[2] == $node->port && $_->[0] > $since }
		  @{ all_ids($clients) };
		return $got >= ($n // 50);
	});
	return;
}

# Runs patronictl with the node's configuration; dies if it fails.
sub patronictl
{
	my ($node, @args) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'patronictl', '-c', $node->config, @args ],
		'<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default))
	  or die "patronictl @args failed: $err$out";
	note("patronictl @args:\n$out$err");
	return $out;
}

# Waits until one of the candidates is the primary and no other node is
# (the old primary has shut down, or is a standby again); returns it.
sub wait_primary
{
	my ($what, $candidates, $nodes) = @_;

	return wait_until($what, sub {
		my @primaries = grep { $_->is_primary } @$nodes;
		return undef unless @primaries == 1;
		return (grep { $_ == $primaries[0] } @$candidates)
		  ? $primaries[0] : undef;
	});
}

# Waits until the node is a standby that streams from the primary on its
# timeline and has replayed what the primary had written when the wait
# began (a standby that forked off before that point never gets there: it
# must be rewound first).
sub wait_streaming
{
	my ($node, $primary, $what) = @_;
	my ($lsn, $tli) = split /\|/, $primary->safe_psql(
		'SELECT pg_current_wal_lsn(), substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)');

	$tli = hex $tli;
	wait_until($what // ($node->name . ' to stream from ' . $primary->name),
		sub {
			($node->try_psql(qq{
				SELECT status = 'streaming' AND received_tli = $tli
				  AND pg_last_wal_replay_lsn() >= '$lsn'
				FROM pg_stat_wal_receiver}) // '') eq 't';
		});
	return;
}

# Waits until Patroni names a synchronous standby (one of the candidates,
# if given) and the primary replicates to it synchronously; returns it.
# Patroni switches over and fails over only to that node
# (synchronous_mode).
sub wait_sync
{
	my ($primary, $nodes, $candidates) = @_;

	return wait_until('a synchronous standby of ' . $primary->name, sub {
		my $members = $primary->members;
		my ($sync) = grep {
			($members->{ $_->name }{role} // '') eq 'sync_standby'
		} @{ $candidates // $nodes };
		return undef unless $sync;
		return ($primary->try_psql(q{SELECT string_agg(application_name, ',')
			FROM pg_stat_replication WHERE sync_state = 'sync'}) // '')
		  eq $sync->name ? $sync : undef;
	});
}

# The scenario of the Patroni tests: a cluster of three nodes whose
# PostgreSQL settings add the given ones to shared_preload_libraries =
# snowid, clients taking ids throughout, and three events, each checked
# and timed (the time the clients waited for ids is reported, never
# tested).  Options: parameters => { snowid settings }, libfaketime =>
# path, started => sub { ($primary, @nodes) } for the test's checks of the
# new cluster, check => sub { ($last_primary, \@terms) } for its checks of
# the ids at the end (each term: { node, timeline, ids }; the last primary
# has them all in its table got).
sub run_scenario
{
	my (%opts) = @_;
	my $etcd = SnowidPatroni::Etcd->new;
	my %parameters = (
		shared_preload_libraries => 'snowid',
		%{ $opts{parameters} });
	my @nodes = map {
		SnowidPatroni::Node->new(
			name       => "pg$_",
			etcd       => $etcd,
			parameters => \%parameters,
			dcs        => { synchronous_mode => 'true' })
	} 1 .. 3;
	my (@events, @clients, @primaries);

	# the cluster: pg1 bootstraps it, pg2 and pg3 are made from its base
	# backup by Patroni
	my $first = $nodes[0];
	$first->start;
	wait_primary('pg1 to bootstrap the cluster', [$first], [$first]);
	$first->safe_psql(
		'CREATE EXTENSION snowid; CREATE TABLE ids (id bigint PRIMARY KEY)');
	$_->start for @nodes[ 1, 2 ];
	wait_streaming($_, $first) for @nodes[ 1, 2 ];
	for my $node (@nodes)
	{
		is($node->safe_psql('SHOW shared_preload_libraries'), 'snowid',
			$node->name . ': Patroni preloads snowid');
	}
	$opts{started}->($first, @nodes) if $opts{started};

	@clients = map { SnowidPatroni::Client->new(\@nodes, $_) } @client_sql;
	wait_ids(\@clients, $first, 0, 100);

	# 1. a switchover, by patronictl, to the synchronous standby
	my $second = wait_sync($first, \@nodes);
	my $t0 = time;
	my $out = patronictl($first, 'switchover', '--leader', $first->name,
		'--candidate', $second->name, '--force');
	like($out, qr/Successfully switched over to "\Q${\ $second->name }\E"/,
		'patronictl switches over to ' . $second->name);
	wait_primary($second->name . ' to take over', [$second], \@nodes);
	wait_ids(\@clients, $second, $t0);
	push @events, { name => sprintf('switchover %s -> %s (patronictl)',
			$first->name, $second->name), start => $t0 };
	wait_streaming($first, $second, $first->name . ' to rejoin as a standby');

	# 2. a failover: the primary crashes, SIGKILL to its postmaster and
	# every child at once.  Its WAL senders are stopped (SIGSTOP) first,
	# and it crashes once it has WAL the standbys never receive, so that
	# it rejoins only through pg_rewind: a transaction of the test's own,
	# committed without waiting for a standby (synchronous_commit =
	# local), and every client's insert, waiting for the synchronous
	# standby (whose answer no WAL sender reads any more).
	my @standbys = grep { $_ != $second } @nodes;
	wait_streaming($_, $second) for @standbys;
	wait_sync($second, \@nodes);
	# (a WAL sender of a connection a standby left, as on its restart,
	# may take a while to notice and exit)
	my @senders = @{
		wait_until($second->name . ' to run one WAL sender for each standby',
			sub {
				my @pids = $second->child_pids(qr/walsender/);
				return @pids == 2 ? \@pids : undef;
			})
	};
	is(scalar(@senders), 2, 'the primary runs a WAL sender for each standby');
	kill 'STOP', @senders;
	$second->safe_psql(
		'SET synchronous_commit = local; SELECT pg_current_xact_id()');
	wait_until($second->name . ' to hold WAL no standby received,'
		  . ' with every client\'s insert waiting for the synchronous standby',
		sub {
			($second->try_psql(qq{
				SELECT (SELECT count(*) = 2
						  AND pg_current_wal_lsn() > max(sent_lsn)
						FROM pg_stat_replication)
				  AND (SELECT count(*) >= ${\ scalar @clients}
						FROM pg_stat_activity
						WHERE backend_type = 'client backend'
						  AND wait_event = 'SyncRep')}) // '') eq 't';
		});
	my @victims = ($second->postmaster_pid, $second->child_pids(qr/./));
	$t0 = time;
	kill 'KILL', @victims or die "could not kill the server: $!";
	my $third = wait_primary('a standby to take over from ' . $second->name,
		\@standbys, \@nodes);
	wait_ids(\@clients, $third, $t0);
	push @events, { name => sprintf('failover %s -> %s (SIGKILL)',
			$second->name, $third->name), start => $t0 };
	wait_streaming($second, $third, $second->name . ' to rejoin as a standby');
	# (Patroni runs pg_rewind also where it finds nothing to rewind, as
	# after a switchover: here pg_rewind must have rewound.)
	my $rewound = qr/running\ pg_rewind\ from\ \Q${\ $third->name }\E\b.*
	  ^pg_rewind:\ rewinding\ from\ last\ common\ checkpoint/msx;
	ok($second->output =~ $rewound,
		$second->name . ' rejoined through pg_rewind');

	# 3. a failover back to the rewound node while its clock runs 5 s
	# behind the primary's: its patroni restarts under libfaketime, and the
	# other standby stops, so that it is the synchronous standby and the
	# only candidate.  SIGKILL to the primary's postmaster and every child
	# at once, as in 2: killed alone, its children exit one by one, and
	# Patroni's own session may still read pg_stat_replication with the
	# WAL senders gone; it then takes the synchronous standby away and,
	# with none left, restarts the old primary instead of failing over
	# (seen once in CI, on 18).
	my ($other) = grep { $_ != $second && $_ != $third } @nodes;
	$second->stop;
	$second->start(faketime => '-5s', libfaketime => $opts{libfaketime});
	wait_streaming($second, $third,
		$second->name . ' to stream again, 5 s behind');
	# Its clock read between two readings of the test's, again until the
	# round trip took at most a second (a loaded machine may take longer
	# to start psql).  Its offset lies between the two differences, a
	# span that must reach within half a second of -5 s.
	my ($before, $clock, $after) = @{
		wait_until($second->name . "'s clock, read within a second", sub {
			my $before = time;
			my $clock = $second->safe_psql(
				'SELECT extract(epoch FROM clock_timestamp())');
			my $after = time;
			return $after - $before <= 1 ? [ $before, $clock, $after ] : undef;
		})
	};
	ok($clock >= $before - 5.5 && $clock <= $after - 4.5,
		$second->name . "'s clock runs 5 s behind")
	  or diag(sprintf("%s's clock read %.3f, %.3f to %.3f s off the test's",
		$second->name, $clock, $clock - $after, $clock - $before));
	$other->stop;
	wait_sync($third, \@nodes, [$second]);
	@victims = ($third->postmaster_pid, $third->child_pids(qr/./));
	$t0 = time;
	kill 'KILL', @victims or die "could not kill the server: $!";
	wait_primary($second->name . ' to take over, 5 s behind', [$second],
		\@nodes);
	wait_ids(\@clients, $second, $t0);
	push @events, { name => sprintf('failover %s -> %s (SIGKILL; %s 5 s behind)',
			$third->name, $second->name, $second->name), start => $t0 };
	wait_streaming($third, $second, $third->name . ' to rejoin as a standby');
	note($third->name . ' rejoined '
		  . ($third->output =~ /running pg_rewind from/ ? 'through pg_rewind'
			: 'without pg_rewind'));
	$other->start;
	wait_streaming($other, $second, $other->name . ' to rejoin as a standby');
	wait_ids(\@clients, $second, time, 50);

	$_->stop for @clients;
	@primaries = ($first, $second, $third, $second);
	my $last = $second;

	# every id: none twice, each primary's above all before it
	my $ids = all_ids(\@clients);
	my $ledger = SnowidTest::Ledger->new;
	$ledger->add(map { $_->[1] } @$ids);
	$ledger->no_duplicates;
	my %by_node = map { $_->port => $_ } @nodes;
	my (%terms, @terms);
	for my $id (@$ids)
	{
		my $term = $terms{ $id->[3] } //= do {
			push @terms, { timeline => hex($id->[3]), ports => {}, ids => [] };
			$terms[-1];
		};
		$term->{ports}{ $id->[2] }++;
		push @{ $term->{ids} }, $id;
	}
	@terms = sort { $a->{timeline} <=> $b->{timeline} } @terms;
	is(join(' ', map { join('+', map { $by_node{$_}->name } sort keys %{ $_->{ports} }) } @terms),
		join(' ', map { $_->name } @primaries),
		'the primaries, by timeline: ' . join(', ', map { $_->name } @primaries));
	my $max = 0;
	for my $term (@terms)
	{
		my ($port) = keys %{ $term->{ports} };
		my @sorted = sort { $a <=> $b } map { $_->[1] } @{ $term->{ids} };
		$term->{node} = $by_node{$port};
		cmp_ok($sorted[0], '>', $max,
			sprintf('timeline %d (%s, %d ids): every id lies above those of the primaries before',
				$term->{timeline}, $term->{node}->name, scalar @sorted));
		$max = $sorted[-1] if $sorted[-1] > $max;
	}

	# every id a client got is stored in the last primary's table, the
	# ids of the old primaries with it (synchronous_mode: a commit returns
	# once the synchronous standby has it)
	my $file = PostgreSQL::Test::Utils::tempdir('ids') . '/ids';
	PostgreSQL::Test::Utils::append_to_file($file,
		join('', map { "$_->[1]\n" } @$ids));
	my $missing = $last->safe_psql(
		"CREATE TABLE got (id bigint); \\copy got FROM '$file'\n"
		  . 'SELECT count(*) FROM got LEFT JOIN ids USING (id) WHERE ids.id IS NULL');
	is($missing, 0, 'the primary stores every id the clients got');

	# the time clients waited for ids across each event (reported only)
	for my $i (0 .. $#events)
	{
		my ($before, $after) = @terms[ $i, $i + 1 ];
		my $last = $before->{ids}[-1][0];
		my $first = $after->{ids}[0][0];
		my $errors = grep { /^ERR (\S+)/ && $1 >= $events[$i]{start} && $1 < $first }
		  map { split /\n/, PostgreSQL::Test::Utils::slurp_file($_->{process}->logfile) } @clients;
		diag(sprintf('%s: clients waited %.3f s for ids (last id before %.3f s after the event started, first after %.3f s); %d calls failed meanwhile',
			$events[$i]{name}, $first - $last, $last - $events[$i]{start},
			$first - $events[$i]{start}, $errors));
		my %messages;
		for my $client (@clients)
		{
			my $m = $client->messages($events[$i]{start} - 2, $first);
			$messages{$_} += $m->{$_} for keys %$m;
		}
		diag("  what the failed calls said: $messages{$_} x $_")
		  for sort { $messages{$b} <=> $messages{$a} } keys %messages;
	}
	diag(sprintf('%d ids from %d clients, %d failed calls in all',
		scalar @$ids, scalar @clients, List::Util::sum(map { $_->errors } @clients)));

	$opts{check}->($last, \@terms) if $opts{check};
	$_->stop for @nodes;
	$etcd->stop;
	return;
}

# Stops what is still running at the end of the test file, also when it
# dies: each patroni (which stops its PostgreSQL), then any postmaster a
# patroni left (immediate shutdown), then etcd.  SnowidProcess stops the
# rest (its END block runs after this one).
END
{
	local $?;

	for my $node (@nodes)
	{
		eval { $node->stop; };
	}
	for my $node (@nodes)
	{
		my $pid = $node->postmaster_pid;
		next unless $pid && kill 0, $pid;
		system('pg_ctl', '-D', $node->data_dir, '-m', 'immediate', '-w',
			'stop');
	}
	for my $etcd (@etcds)
	{
		eval { $etcd->stop; };
	}
}

1;
