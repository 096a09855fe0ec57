# redis.md's ACL file stays out of other local users' reach (issue 69's
# second attack, its test 156).  "Keep the user across restarts" writes the
# file with install -m 600, for it holds the SHA-256 of the administrator's
# password and, once snowid's user is saved, of that user's.  Redis writes
# the file anew at every ACL SAVE (a temporary file renamed over it) with
# the mode its own umask gives: a Redis started from a shell or a
# container (umask 022) leaves it 0644.  The page therefore keeps the file
# in a directory only Redis' user enters (redis-acldir.sh, here on a
# directory of the test's), and that is what this checks: after the page's
# steps and ACL SAVE, the directory gives other users no right, whatever
# the file's mode has become.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();

my $admin_password = 'pw-Acl-Mode-7q4x';

sub mode_of { return sprintf('%04o', (stat($_[0]))[2] & 07777); }

# A Redis started by hand or in a container runs with the usual umask
umask(022);

# /etc/redis: a directory of the test's, first open to all as a fresh one
# may be
my $dir = PostgreSQL::Test::Utils::tempdir_short() . '/etc-redis';
mkdir $dir or die "mkdir $dir: $!";
chmod 0755, $dir;
my $acldir = SnowidTest::page_file('doc/redis.md', 'redis-acldir.sh');
$acldir =~ s{^sudo chown redis:redis /etc/redis\n}{}m
  or die 'redis.md no longer gives /etc/redis to redis';
$acldir =~ s{^sudo chmod (\d+) /etc/redis\b}{chmod $1 '$dir'}m
  or die 'redis.md no longer sets the mode of /etc/redis';
{
	my ($out, $err) = ('', '');
	ok(IPC::Run::run([ 'bash', '-ec', $acldir ], '<', \undef, '>', \$out, '2>', \$err),
		'redis-acldir.sh runs') or diag("$out$err");
}
is(oct(mode_of($dir)) & 07, 0, 'the directory of the ACL file gives other users no right');
my $aclfile = "$dir/users.acl";
my $script = SnowidTest::page_file('doc/redis.md', 'redis-aclfile.sh');
$script =~ s{sudo install -o redis -g redis -m 600 /dev/stdin /etc/redis/users\.acl}
  {install -m 600 /dev/stdin '$aclfile'}
  or die 'redis.md no longer writes the ACL file with install -m 600';
$script =~ s{^sudo systemctl restart redis-server\n}{}m;
{
	local $ENV{REDISCLI_AUTH} = $admin_password;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ 'bash', '-ec', $script ],
		'<', \undef, '>', \$out, '2>', \$err);
	ok($ok, 'redis-aclfile.sh writes the ACL file') or diag("$out$err");
}
is(mode_of($aclfile), '0600', 'as the page writes it, only its owner reads the ACL file');

my $redis = SnowidRedis->new(password => $admin_password, library => 0,
	mark_new => 0, args => [ '--aclfile', $aclfile ]);

# redis-setup.sh as the page shows it, with this installation's pg_config
my $setup = SnowidTest::page_file('doc/redis.md', 'redis-setup.sh');
my ($pg_config) = SnowidTest::pg_config_in_path();
$setup =~ s{^PG_CONFIG=\S+}{PG_CONFIG='$pg_config'}m
  or die 'redis-setup.sh names no PG_CONFIG';
my ($ok, $out) = $redis->run_page_script($setup, $admin_password);
ok($ok, 'redis-setup.sh makes the user and saves it') or diag($out);
like(slurp_file($aclfile), qr/^user snowid-dc3 /m,
	'the ACL file now holds snowid-dc3 and its password hash');

is(oct(mode_of($dir)) & 07, 0,
	'after ACL SAVE, the ACL file (password hashes) is still out of reach of other users: its directory gives them no right (the file is ' . mode_of($aclfile) . ')');
is(join(' ', map { s{.*/}{}r } glob("$dir/*")), 'users.acl',
	'and ACL SAVE left no other file there');

$redis->stop;
done_testing();
