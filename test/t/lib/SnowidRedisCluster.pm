# A throwaway Redis Cluster for the TAP tests: masters without replicas,
# each a SnowidRedis server started with --cluster-enabled yes on a
# loopback TCP port (and its unix socket) and its cluster bus on another,
# joined with redis-cli --cluster create.  SnowidRedis stops them at the end of the
# test file, also when the test dies.  Also what the tests do with the
# cluster: find the master that owns a key's slot, move a slot from one
# master to another the way a resharding does (step by step, so that a
# claim can run while the slot migrates), and set up an ACL user.
package SnowidRedisCluster;

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use Time::HiRes qw(usleep);

# SnowidRedisCluster->new(masters => 3, password => 'pw', server => ...,
# cli => ...): starts the masters, creates the cluster and waits until every
# master reports cluster_state:ok.  The password is the default user's;
# server and cli as for SnowidRedis->new.
sub new
{
	my ($class, %params) = @_;
	my @masters = map {
		SnowidRedis->new(
			tcp      => 1,
			password => $params{password},
			server   => $params{server},
			cli      => $params{cli},
			args     => [
				'--cluster-enabled', 'yes', '--cluster-node-timeout', '5000',
				# the cluster bus on a free port too, not on port + 10000
				'--cluster-port', PostgreSQL::Test::Cluster::get_free_port()
			])
	} 1 .. ($params{masters} // 3);
	my $self = bless { masters => \@masters, password => $params{password} },
	  $class;
	my @cmd = ($masters[0]->cli_program, '--cluster', 'create',
		(map { '127.0.0.1:' . $_->port } @masters),
		'--cluster-replicas', '0', '--cluster-yes');
	my ($out, $err) = ('', '');

	push @cmd, '-a', $params{password}, '--no-auth-warning'
	  if defined $params{password};
	IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default))
	  or die "--cluster create failed:\n$out$err";
	$self->wait_until_ok;
	$_->{cluster_id} = $_->cli('CLUSTER', 'MYID') for @masters;
	return $self;
}

sub masters { return @{ $_[0]->{masters} }; }

# Waits until every master says cluster_state:ok: each knows an owner of
# every slot, so any of them can redirect a claim.
sub wait_until_ok
{
	my $self = shift;

	for my $master ($self->masters)
	{
		$self->poll_state($master, 'ok')
		  or die 'the cluster did not reach cluster_state:ok';
	}
	return;
}

# Waits until a master reports the given cluster_state (ok or fail); false
# if it does not within the test timeout.
sub poll_state
{
	my ($self, $master, $state) = @_;

	for (1 .. 100 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1 if $master->cli('CLUSTER', 'INFO') =~ /^cluster_state:$state\r?$/m;
		usleep(10_000);
	}
	return 0;
}

# The slot of a key.
sub keyslot
{
	my ($self, $key) = @_;

	return $self->{masters}[0]->cli('CLUSTER', 'KEYSLOT', $key);
}

# The master that owns a slot, as the given master (default the first)
# sees it in CLUSTER NODES.
sub owner
{
	my ($self, $slot, $viewer) = @_;
	my $nodes = ($viewer // $self->{masters}[0])->cli('CLUSTER', 'NODES');

	for my $line (split /\r?\n/, $nodes)
	{
		my ($id, $addr, $flags, @rest) = split / /, $line;

		next unless $flags =~ /\bmaster\b/;
		for my $range (@rest[5 .. $#rest])
		{
			next unless $range =~ /^(\d+)(?:-(\d+))?$/;
			next unless $slot >= $1 && $slot <= ($2 // $1);
			my ($owner) = grep { $_->{cluster_id} eq $id } $self->masters;
			return $owner;
		}
	}
	die "no master owns slot $slot";
}

# The number of keys a master holds in a slot.
sub keys_in_slot
{
	my ($self, $master, $slot) = @_;

	return $master->cli('CLUSTER', 'COUNTKEYSINSLOT', $slot);
}

# The first step of moving a slot from one master to another: the target
# imports it, the source migrates it.  From now on the source answers a
# command on a key it no longer has with -ASK, pointing at the target.
sub start_migration
{
	my ($self, $slot, $from, $to) = @_;

	_ok($to->cli('CLUSTER', 'SETSLOT', $slot, 'IMPORTING', $from->{cluster_id}));
	_ok($from->cli('CLUSTER', 'SETSLOT', $slot, 'MIGRATING', $to->{cluster_id}));
	return;
}

# The second step: MIGRATE every key of the slot from the source to the
# target.  Returns how many keys moved.
sub migrate_keys
{
	my ($self, $slot, $from, $to) = @_;
	my @keys = split /\r?\n/, $from->cli('CLUSTER', 'GETKEYSINSLOT', $slot, 1000);
	my @auth = defined $self->{password} ? ('AUTH', $self->{password}) : ();

	for my $key (@keys)
	{
		_ok($from->cli('MIGRATE', '127.0.0.1', $to->port, $key, 0,
				1000 * $PostgreSQL::Test::Utils::timeout_default, @auth));
	}
	return scalar @keys;
}

# The last step: the target owns the slot, as every master is told.
sub finish_migration
{
	my ($self, $slot, $from, $to) = @_;

	for my $master ($to, $from, grep { $_ != $to && $_ != $from } $self->masters)
	{
		_ok($master->cli('CLUSTER', 'SETSLOT', $slot, 'NODE', $to->{cluster_id}));
	}
	for my $master ($self->masters)
	{
		die "master on port @{[$master->port]} does not see the slot moved"
		  unless $self->owner($slot, $master) == $to;
	}
	return;
}

# ACL SETUSER with the given rules on every master (the cluster does not
# share ACLs between its nodes).
sub acl_setuser
{
	my ($self, $user, @rules) = @_;

	_ok($_->cli('ACL', 'SETUSER', $user, @rules)) for $self->masters;
	return;
}

# Sets cluster-announce-hostname on every master and waits until every
# master knows the host name of every master (it travels by gossip);
# until then a master that prefers host names names "?" in -MOVED.
sub announce_hostname
{
	my ($self, $hostname) = @_;
	my $n = $self->masters;

	_ok($_->cli('CONFIG', 'SET', 'cluster-announce-hostname', $hostname))
	  for $self->masters;
	for my $master ($self->masters)
	{
		my $known = 0;

		for (1 .. 100 * $PostgreSQL::Test::Utils::timeout_default)
		{
			my @lines = split /\r?\n/, $master->cli('CLUSTER', 'NODES');

			$known = grep { (split / /)[1] =~ /,\Q$hostname\E$/ } @lines;
			last if $known == $n;
			usleep(10_000);
		}
		die "master on port @{[$master->port]} knows $known host names"
		  unless $known == $n;
	}
	return;
}

# Calls of a command on a master since it started, from INFO commandstats.
sub calls
{
	my ($self, $master, $command) = @_;

	return $master->command_calls->{$command} // 0;
}

sub _ok
{
	my $reply = shift;

	die "redis-cli: $reply" unless $reply eq 'OK';
	return;
}

1;
