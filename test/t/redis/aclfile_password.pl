# redis.md's ACL file written by an administrator who logs in to Redis
# without REDISCLI_AUTH (issue 69's second attack, its test 160).  "Keep
# the user across restarts" writes the default user's password into the
# ACL file as the SHA-256 of "$REDISCLI_AUTH", for Redis ignores
# requirepass once it has an ACL file.  An administrator who reaches Redis
# with --askpass or -a has no REDISCLI_AUTH: the block once wrote the hash
# of the empty password, and once Redis restarted with the file, anyone
# who reached it sent AUTH "" and was the default user, with every right.
# Run as the page shows it, without REDISCLI_AUTH the block must stop and
# write nothing; with it, the Redis it sets up refuses AUTH "" and takes
# the administrator's password.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IO::Socket::UNIX;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();


# Sends commands over a Redis socket as RESP arrays; returns the replies'
# raw text.
sub raw_redis
{
	my ($socket, @commands) = @_;
	my $sock = IO::Socket::UNIX->new(Peer => $socket)
	  or die "could not connect to $socket: $!";
	my $out = '';

	for my $command (@commands)
	{
		$out .= '*' . scalar(@$command) . "\r\n";
		$out .= '$' . length($_) . "\r\n$_\r\n" for @$command;
	}
	print $sock $out;
	$sock->shutdown(1);
	local $/;
	my $reply = <$sock>;
	close $sock;
	return $reply // '';
}

my $aclfile = PostgreSQL::Test::Utils::tempdir_short() . '/users.acl';
my $script = SnowidTest::page_file('doc/redis.md', 'redis-aclfile.sh');
$script =~ s{sudo install -o redis -g redis -m 600 /dev/stdin /etc/redis/users\.acl}
  {install -m 600 /dev/stdin '$aclfile'}
  or die 'redis.md no longer writes the ACL file with install';
$script =~ s{^sudo systemctl restart redis-server\n}{}m;

# The administrator logs in with --askpass: no REDISCLI_AUTH
my ($ok, $out, $err);
{
	delete local $ENV{REDISCLI_AUTH};
	($out, $err) = ('', '');
	$ok = IPC::Run::run([ 'sh', '-c', $script ], '<', \undef, '>', \$out, '2>', \$err);
}
ok(!$ok, 'without REDISCLI_AUTH, the block stops');
like($err, qr/REDISCLI_AUTH/, 'and says it wants REDISCLI_AUTH');
ok(!-e $aclfile, 'and writes no ACL file');

# With the password in REDISCLI_AUTH, as the page says
my $password = 'pw-Acl-Admin-3k9z';
{
	local $ENV{REDISCLI_AUTH} = $password;
	($out, $err) = ('', '');
	$ok = IPC::Run::run([ 'sh', '-c', $script ], '<', \undef, '>', \$out, '2>', \$err);
}
ok($ok, 'with REDISCLI_AUTH, the block writes the ACL file') or diag("$out$err");

# (the test's own client logs in as the administrator; AUTH "" is sent raw)
my $redis = SnowidRedis->new(password => $password, library => 0,
	mark_new => 0, args => [ '--aclfile', $aclfile ]);
my $reply = raw_redis($redis->socket, [ 'AUTH', '' ], [ 'ACL', 'WHOAMI' ]);
unlike($reply, qr/\A\+OK\r\n/,
	'Redis set up by the block refuses AUTH with an empty password')
  or diag("replies: $reply");
$reply = raw_redis($redis->socket, [ 'AUTH', $password ], [ 'ACL', 'WHOAMI' ]);
like($reply, qr/\A\+OK\r\n\$7\r\ndefault\r\n/,
	"and takes the administrator's password for the default user")
  or diag("replies: $reply");
$redis->stop;

done_testing();
