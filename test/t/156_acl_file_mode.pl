# redis.md's ACL file keeps its mode (issue 69's attack): "Keep the user
# across restarts" writes the file with install -m 600, for it holds the
# SHA-256 of the administrator's password and, once snowid's user is saved,
# of that user's (unsalted: a weak password falls to a dictionary).  Then
# the first steps (redis-setup.sh) make snowid's user and ACL SAVE it, as
# the page says to after every change.  Redis writes the file anew (a
# temporary file renamed over it) with the mode its own umask gives: a
# Redis started from a shell or a container (umask 022) leaves the file
# readable by every local user.  The file must stay as the page wrote it,
# readable by its owner alone.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();

my $top = "$FindBin::RealBin/../..";
my $admin_password = 'pw-Acl-Mode-7q4x';
my $cli = $ENV{SNOWID_REDIS_CLI} || 'redis-cli';

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

# Runs a script of the page with bash -e, redis-cli this Redis' client
# logged in as the administrator (REDISCLI_AUTH), as 077 does.
sub run_script
{
	my ($redis, $script) = @_;
	my $socket = $redis->socket;
	my ($out, $err) = ('', '');
	my $head = "set -euo pipefail\n"
	  . "redis-cli() { command '$cli' -s '$socket' -e \"\$@\"; }\n";

	local $ENV{REDISCLI_AUTH} = $admin_password;
	my $ok = IPC::Run::run([ 'bash', '-c', $head . $script ],
		'<', \undef, '>', \$out, '2>', \$err);
	return ($ok, "$out$err");
}

sub mode_of { return sprintf('%04o', (stat($_[0]))[2] & 07777); }

# A Redis started by hand or in a container runs with the usual umask
umask(022);

my $aclfile = PostgreSQL::Test::Utils::tempdir_short() . '/users.acl';
my $script = page_file('doc/redis.md', 'redis-aclfile.sh');
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
my $setup = page_file('doc/redis.md', 'redis-setup.sh');
my ($pg_config) = SnowidTest::pg_config_in_path();
$setup =~ s{^PG_CONFIG=\S+}{PG_CONFIG='$pg_config'}m
  or die 'redis-setup.sh names no PG_CONFIG';
my ($ok, $out) = run_script($redis, $setup);
ok($ok, 'redis-setup.sh makes the user and saves it') or diag($out);
like(slurp_file($aclfile), qr/^user snowid-dc3 /m,
	'the ACL file now holds snowid-dc3 and its password hash');

is(mode_of($aclfile), '0600',
	'after ACL SAVE, the ACL file (password hashes) is still readable by its owner alone');

$redis->stop;
done_testing();
