# A name server that never answers, for the resolver test
# (test/t/redis/resolver_never_answers.pl), and the private world it needs, without
# root:
#
# - isolate(), called in a BEGIN block before PostgreSQL::Test::Utils is
#   loaded, runs the test file again in namespaces of its own: a network
#   with only loopback, where port 53 may be bound without privilege, and a
#   mount namespace in which test/t/lib/fake_resolv.conf is bind-mounted over
#   /etc/resolv.conf.  Everything the test starts (PostgreSQL, Redis, the
#   name server) runs there, as the same user as outside (a nested user
#   namespace maps it back, since initdb and postgres refuse to run as
#   root); the host's network and /etc/resolv.conf are never touched.
#   /etc/hosts is the host's: localhost still resolves.
# - SnowidFakeDns->new(NAME => 'ADDR,ADDR', ...) runs test/t/lib/fake_dns_server
#   on 127.0.0.1:53: it answers those names and never any other, logs the
#   queries it gets, and stops at the end of the test file, also when the
#   test dies (SnowidProcess).
package SnowidFakeDns;

use strict;
use warnings;

use IPC::Run;
use File::Basename ();
use File::Spec;
use SnowidProcess;
use Time::HiRes qw(time usleep);

# this folder (test/t/lib), where the fake server lies
my $here = File::Basename::dirname(File::Spec->rel2abs(__FILE__));

# Runs this test file again inside its own namespaces, unless it is already
# there.  Returns nothing there; a reason to skip the test if this system
# offers no unprivileged user namespaces.  Dies if they work but setting
# the world up fails.
sub isolate
{
	my $resolv_conf = "$here/fake_resolv.conf";
	my @enter = ('unshare', '--user', '--map-root-user', '--mount', '--net');
	my $setup = q{
		set -e
		ip link set lo up
		echo 53 > /proc/sys/net/ipv4/ip_unprivileged_port_start
		mount --bind "$1" /etc/resolv.conf
		uid=$2 gid=$3
		shift 3
		exec unshare --user --map-user="$uid" --map-group="$gid" -- "$@"
	};
	my ($gid) = split ' ', $(;
	my ($out, $err) = ('', '');

	return if ($ENV{SNOWID_FAKE_DNS_ISOLATED} // '') eq '1';
	if (!eval {
			IPC::Run::run(
				[
					@enter, '--', 'unshare', '--user', "--map-user=$<",
					"--map-group=$gid", '--', 'true'
				],
				'<', \undef, '>', \$out, '2>', \$err);
		})
	{
		return 'no unprivileged user, mount and network namespaces here: '
		  . ($@ || $err);
	}

	# the inner perl gets the -I paths that prove gave this one
	$ENV{PERL5LIB} = join ':', grep { !ref } @INC;
	$ENV{SNOWID_FAKE_DNS_ISOLATED} = '1';
	exec(@enter, '--', 'sh', '-c', $setup, 'sh', $resolv_conf, $<, $gid,
		$^X, $0, @ARGV)
	  or die "could not run unshare: $!";
}

# SnowidFakeDns->new(name => 'address,...', ...): starts the name server
# and waits until it says it is ready.
sub new
{
	my ($class, %names) = @_;
	my $script = "$here/fake_dns_server";
	my $process = SnowidProcess->new('fake_dns_server');

	$process->start(
		[ $^X, $script, '127.0.0.1', 53,
			map { "$_=$names{$_}" } sort keys %names ],
		output => qr/^ready$/m);
	return bless { process => $process }, $class;
}

# The queries it received so far, as "NAME TYPE" (1 for A, 28 for AAAA);
# in scalar context, how many.
sub queries
{
	my $self = shift;
	my @queries = $self->{process}->output =~ /^query (\S+ \d+)$/mg;

	return @queries;
}

# Waits until it has received a query for name after the first $since
# queries, for at most the tests' default timeout; true if one came.
sub wait_for_query
{
	my ($self, $name, $since) = @_;
	my $until = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $until)
	{
		my @queries = $self->queries;

		return 1 if grep { /^\Q$name\E / } @queries[ ($since // 0) .. $#queries ];
		usleep(10_000);
	}
	return 0;
}

# Stops it (see SnowidProcess::stop).
sub stop
{
	my $self = shift;

	$self->{process}->stop;
	return;
}

1;
