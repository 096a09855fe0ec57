# A deliberately broken Redis on a loopback port for the fault tests: runs
# test/t/fake_redis_server with the given rules (see that script) and stops
# it at the end of the test file, also when the test dies.
package SnowidFakeRedis;

use strict;
use warnings;

use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;

my @servers;

# SnowidFakeRedis->new(EVAL => 'drip', AUTH => 'perl:"+OK\r\n"'): starts one.
sub new
{
	my ($class, %rules) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($out, $err) = ('', '');
	my $script = "$FindBin::RealBin/fake_redis_server";
	my $handle = IPC::Run::start(
		[ $^X, $script, $port, map { "$_=$rules{$_}" } sort keys %rules ],
		'<', \undef, '>', \$out, '2>', \$err);
	my $self = bless { port => $port, handle => $handle, err => \$err },
	  $class;

	push @servers, $self;
	$handle->pump until $out =~ /ready/ || !$handle->pumpable;
	die "fake redis did not start: $err" unless $out =~ /ready/;
	return $self;
}

sub port { return $_[0]->{port}; }

# Its snowid.redis_url, with a password if one is given.
sub url
{
	my ($self, $password) = @_;

	return 'redis://' . (defined $password ? ":$password\@" : '')
	  . "127.0.0.1:$self->{port}";
}

sub stop
{
	my $self = shift;

	return unless $self->{handle};
	$self->{handle}->signal('TERM');
	$self->{handle}->finish;
	delete $self->{handle};
}

END
{
	local $?;

	$_->stop for @servers;
}

1;
