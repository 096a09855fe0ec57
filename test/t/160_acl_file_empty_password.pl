# redis.md's ACL file written by an administrator who logs in to Redis
# without REDISCLI_AUTH (issue 69's attack).  "Keep the user across
# restarts" writes the default user's password into the ACL file as
# sha256 of "$REDISCLI_AUTH", for Redis ignores requirepass once it has an
# ACL file.  An administrator who reaches Redis with --askpass or -a (as
# install.md's upgrade step 2 lists them: "redis-cli with the options that
# reach your Redis as an administrator ... --askpass") has no
# REDISCLI_AUTH: the block then writes the hash of the empty password, and
# once Redis restarts with the file, anyone who reaches it sends AUTH ""
# and is the default user, with every right (FLUSHALL, FUNCTION LOAD,
# CONFIG SET): the requirepass it had no longer protects it.  Run as the
# page shows it, without REDISCLI_AUTH, the block must stop, or the Redis
# it sets up must refuse AUTH "".
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IO::Socket::UNIX;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();

my $top = "$FindBin::RealBin/../..";

# The block of a page after the line "<!-- file NAME -->"
sub page_file
{
	my ($page, $name) = @_;
	my $text = slurp_file("$top/$page");

	$text =~ /^([ \t]*)<!-- file \Q$name\E -->\n\1```\w*\n(.*?)^\1```\n/ms
	  or die "$page has no file $name";
	my ($indent, $block) = ($1, $2);
	$block =~ s/^\Q$indent\E//mg;
	return $block;
}

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
my $script = page_file('doc/redis.md', 'redis-aclfile.sh');
$script =~ s{sudo install -o redis -g redis -m 600 /dev/stdin /etc/redis/users\.acl}
  {install -m 600 /dev/stdin '$aclfile'}
  or die 'redis.md no longer writes the ACL file with install';
$script =~ s{^sudo systemctl restart redis-server\n}{}m;

# The administrator logs in with --askpass: no REDISCLI_AUTH
delete local $ENV{REDISCLI_AUTH};
my ($out, $err) = ('', '');
my $ok = IPC::Run::run([ 'sh', '-c', $script ],
	'<', \undef, '>', \$out, '2>', \$err);
SKIP:
{
	skip 'the block stops without the password: nothing is written', 1
	  if !$ok || !-s $aclfile;

	# (the test's client logs in as anyone could: with the empty password)
	my $redis = SnowidRedis->new(password => '', library => 0,
		mark_new => 0, args => [ '--aclfile', $aclfile ]);
	my $reply = raw_redis($redis->socket, [ 'AUTH', '' ], [ 'ACL', 'WHOAMI' ]);
	unlike($reply, qr/\A\+OK\r\n/,
		'Redis set up by the block refuses AUTH with an empty password')
	  or diag("replies: $reply");
	$redis->stop;
}

done_testing();
