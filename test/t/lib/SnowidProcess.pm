# The servers a TAP test starts besides PostgreSQL's (redis-server or
# valkey-server, sentinels, test/t/lib/fake_redis_server, test/t/lib/fake_dns_server):
# each runs in the background, as the test's own user, with its output
# (stdout and stderr) appended to a log of its own beside the nodes' logs,
# where test/run shows it when the test fails.  start() waits until it is
# ready, stop() ends it (SIGTERM, then SIGKILL if it has not exited within
# the tests' timeout), and every one still running is stopped at the end of
# the test file, also when the test dies.  The other test modules start,
# wait for and stop their servers only through this one.
#
# It loads no PostgreSQL::Test module, so that SnowidFakeDns can be loaded
# before isolate() runs the test again (see there); it reads their settings
# once the test runs.
package SnowidProcess;

use strict;
use warnings;

use File::Basename;
use IO::Socket::INET;
use IPC::Run;
use Time::HiRes qw(time usleep);

my @processes;    # every one made, to stop at the end
my %made;         # how many of each name, to number their logs

# SnowidProcess->new('redis-server'): a server not started yet, and its
# log, tmp_check/log/TEST_NAME_N.log (TEST the test file, N counting the
# servers of that name from 1).
sub new
{
	my ($class, $name) = @_;
	my $test = basename($0) =~ s/\.[^.]+$//r;
	my $n = ++$made{$name};
	my $self = bless {
		name => "$name $n",
		log  => "$PostgreSQL::Test::Utils::log_path/${test}_${name}_$n.log",
	}, $class;

	push @processes, $self;
	return $self;
}

# The path of its log.
sub logfile { return $_[0]->{log}; }

# What makes a server ready, by the name start() takes it by.
my %conditions = (
	# port => N: 127.0.0.1:N accepts a TCP connection
	port => sub {
		IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $_[1]);
	},
	# socket => PATH: the unix socket PATH exists
	socket => sub { -S $_[1] },
	# file => PATH: the file PATH exists
	file => sub { -e $_[1] },
	# output => qr/.../: its output since it started matches
	output => sub { $_[0]->output =~ $_[1] },
	# until => sub { ... }: the function returns true
	until => sub { $_[1]->() },
);

# $process->start([ program, arguments ], condition => value, ...): starts
# the program and waits until every condition given holds (see above), one
# after the other in the order above (so until, the costliest, last).  Dies,
# quoting the end of the log, if the program exits first or is not ready
# within the tests' timeout (it is then stopped).  A stopped server may be
# started again; its log goes on.  Returns the process.
sub start
{
	my ($self, $cmd, %ready) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	die "$self->{name} is running already" if $self->running;
	die "unknown condition: $_" for grep { !$conditions{$_} } keys %ready;
	$self->{offset} = -s $self->{log} // 0;
	$self->{handle} = IPC::Run::start($cmd, '<', '/dev/null',
		'>>', $self->{log}, '2>&1');
	for my $what (grep { exists $ready{$_} } qw(port socket file output until))
	{
		until ($conditions{$what}->($self, $ready{$what}))
		{
			$self->failed('exited before it was ready') unless $self->running;
			if (time > $deadline)
			{
				$self->stop;
				$self->failed('was not ready in time');
			}
			usleep(10_000);
		}
	}
	return $self;
}

# Whether it runs: started and not exited.
sub running
{
	my $self = shift;

	return $self->{handle} && $self->{handle}->pumpable ? 1 : 0;
}

# Its output since it last started, from its log.
sub output
{
	my $self = shift;

	open(my $fh, '<', $self->{log}) or return '';
	seek($fh, $self->{offset} // 0, 0);
	local $/;
	my $text = <$fh> // '';
	close $fh;
	return $text;
}

# Stops it if it was started: SIGTERM (and SIGCONT, should the test have
# frozen it with SIGSTOP), then SIGKILL if it has not exited within the
# tests' timeout; waits until it has.
sub stop
{
	my $self = shift;
	my $handle = delete $self->{handle} or return;

	$handle->signal('CONT');
	$handle->kill_kill(grace => $PostgreSQL::Test::Utils::timeout_default);
	return;
}

# Dies saying why it did not start, with the last lines of its output.
sub failed
{
	my ($self, $why) = @_;
	my @lines = split /\n/, $self->output;

	splice(@lines, 0, -30) if @lines > 30;
	die "$self->{name} $why; its log, $self->{log}, ends:\n"
	  . join('', map { "$_\n" } @lines);
}

END
{
	# keep the test's exit status: waiting for a process sets $?
	local $?;

	$_->stop for @processes;
}

1;
