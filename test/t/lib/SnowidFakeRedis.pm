# A deliberately broken Redis on a loopback port for the fault tests: runs
# test/t/lib/fake_redis_server with the given rules (see that script), logs its
# output and stops it at the end of the test file, also when the test dies
# (SnowidProcess).
package SnowidFakeRedis;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use File::Basename ();
use File::Spec;
use SnowidProcess;

# this folder (test/t/lib), where the fake server lies
my $here = File::Basename::dirname(File::Spec->rel2abs(__FILE__));

# SnowidFakeRedis->new(EVAL => 'drip', AUTH => 'perl:"+OK\r\n"'): starts one
# and waits until it says it is ready (a connection to see would count as
# the first the rules number).
# A host => '127.0.0.2' rule makes it listen on that loopback address.
sub new
{
	my ($class, %rules) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $host = delete $rules{host} // '127.0.0.1';
	my $script = "$here/fake_redis_server";
	my $process = SnowidProcess->new('fake_redis_server');

	$process->start(
		[
			$^X, $script, "$host:$port",
			map { "$_=$rules{$_}" } sort keys %rules
		],
		output => qr/^ready$/m);
	return bless { host => $host, port => $port, process => $process },
	  $class;
}

sub host { return $_[0]->{host}; }
sub port { return $_[0]->{port}; }

# What it printed (its rules may print what they were sent).
sub output { return $_[0]->{process}->output; }

# Its snowid.redis_url, with a password if one is given.
sub url
{
	my ($self, $password) = @_;

	return 'redis://' . (defined $password ? ":$password\@" : '')
	  . "$self->{host}:$self->{port}";
}

# Stops it (see SnowidProcess::stop).
sub stop
{
	my $self = shift;

	$self->{process}->stop;
	return;
}

1;
