# Redis set up as doc/redis.md says, and snowid taken out again as
# doc/install.md says, each step run from the page as it stands:
#
#  1. Redis keeps its users in an ACL file ("Keep the user across
#     restarts", the block redis-aclfile.sh, its paths this test's): the
#     file gives the administrator's password, for a Redis ignores
#     requirepass once it has one (a Redis given both lets anyone in);
#  2. the first steps (redis-setup.sh) run in their order, each command
#     checked: the library loaded, the user made and saved, the datacenter
#     marked new; a server logging in as that user takes its first id at
#     once, with no quiet period;
#  3. Redis restarted (with appendonly yes, as the page advises): the user
#     is still there (one made and not saved is not), the server checks in
#     again without an error, and a restarted PostgreSQL logs in and claims
#     a worker id; with the user gone (as from a Redis that kept none), the
#     log and a claim say so as troubleshooting.md does, and a restart of
#     Redis brings it back from the file;
#  4. uninstalling (install.md): the extension dropped, snowid taken out of
#     the settings, the data directory's files removed (uninstall-files.sh,
#     in the node's data directory): the page names every file snowid
#     wrote there and every file src/ names for it, and none is left but
#     the mark, snowid_state, which the page keeps; the
#     worker id freed (redis.md's command), then uninstall-redis.sh: after
#     a restart, Redis holds no user, key or function of snowid's.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Digest::SHA qw(sha256_hex);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $top = "$FindBin::RealBin/../../..";
my $admin_password = 'pw-Doc-Admin-5r2m';
my $cli = $ENV{SNOWID_REDIS_CLI} || 'redis-cli';
my $bindir = `pg_config --bindir`;
die 'pg_config --bindir failed' if $? || !$bindir;
chomp $bindir;

# redis-cli as user with password: its output and errors
sub cli_as
{
	my ($redis, $user, $password, @args) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run(
		[ $cli, '-s', $redis->socket, '--user', $user, '--pass', $password,
		  '--no-auth-warning', @args ],
		'<', \undef, '>', \$out, '2>', \$err);
	return "$out$err";
}

# Waits until every file of @names exists in dir
sub wait_files
{
	my ($dir, @names) = @_;

	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1 unless grep { !-e "$dir/$_" } @names;
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

# ---------------------------------------------------------------------------
# 1. The ACL file

# A Redis given requirepass and an ACL file takes the file's users alone:
# one whose file does not give the default user a password lets anyone in.
my $empty = PostgreSQL::Test::Utils::tempdir_short() . '/users.acl';
PostgreSQL::Test::Utils::append_to_file($empty, '');
my $open = SnowidRedis->new(library => 0, mark_new => 0,
	args => [ '--requirepass', $admin_password, '--aclfile', $empty ]);
is($open->cli('ACL', 'WHOAMI'), 'default',
	'a Redis with an ACL file ignores requirepass: anyone is let in as the default user');
$open->stop;

# The file as the page writes it: its paths this test's, its service not
# restarted by systemctl (the test starts the Redis)
my $aclfile = PostgreSQL::Test::Utils::tempdir_short() . '/users.acl';
my $script = SnowidTest::page_file('doc/redis.md', 'redis-aclfile.sh');
like($script, qr{sudo install -o redis -g redis -m 600 /dev/stdin /etc/redis/users\.acl\n},
	'redis.md writes the ACL file with install, for the user redis');
$script =~ s{sudo install -o redis -g redis -m 600 /dev/stdin /etc/redis/users\.acl}
  {install -m 600 /dev/stdin '$aclfile'};
$script =~ s{^sudo systemctl restart redis-server\n}{}m;
my ($ok, $out) = $open->run_page_script($script, $admin_password);
ok($ok, 'its commands write the ACL file') or diag($out);
is(slurp_file($aclfile),
	'user default on #' . sha256_hex($admin_password) . " ~* &* +\@all\n",
	'the file gives the default user the password as Redis keeps it');

my $redis = SnowidRedis->new(password => $admin_password, library => 0,
	mark_new => 0, args => [ '--aclfile', $aclfile, '--appendonly', 'yes' ]);
is($redis->cli('ACL', 'WHOAMI'), 'default',
	'Redis started with it lets the administrator in with the password');
like(cli_as($redis, 'default', 'wrong', 'PING'), qr/WRONGPASS|invalid/,
	'and no one in without it');

# ---------------------------------------------------------------------------
# 2. The first steps, in the page's order

my $setup = SnowidTest::page_file('doc/redis.md', 'redis-setup.sh');
my ($password) = $setup =~ /ACL SETUSER snowid-dc3 .*'>([^']+)'/
  or die 'redis-setup.sh makes no user snowid-dc3 with a password';
like($setup, qr{^PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config }m,
	'redis-setup.sh names the pg_config of the installation');
$setup =~ s{^PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config}{PG_CONFIG='$bindir/pg_config'}m;
($ok, $out) = $redis->run_page_script($setup, $admin_password);
ok($ok, "redis-setup.sh runs, every command in its order answered without an error")
  or diag($out);
like($redis->cli('FUNCTION', 'LIST', 'LIBRARYNAME', 'snowid'), qr/snowid_3_claim/,
	'the library is loaded');
like(slurp_file($aclfile), qr/^user snowid-dc3 on .*#\Q@{[ sha256_hex($password) ]}\E/m,
	'the user is saved in the ACL file, its password hashed');
unlike(slurp_file($aclfile), qr/\Q$password\E|\Q$admin_password\E/,
	'the file holds no password in clear');

my $pwfile = PostgreSQL::Test::Utils::tempdir() . '/snowid-redis.pw';
PostgreSQL::Test::Utils::append_to_file($pwfile, "$password\n");
chmod 0600, $pwfile;
my $node = SnowidTest::new_server('documented',
	{
		'snowid.datacenter_id' => 3,
		'snowid.redis_url' => 'unix://snowid-dc3:@' . $redis->socket,
		'snowid.redis_password_file' => $pwfile,
		'snowid.checkin_interval' => 1000,
		# the quiet period a restart of Redis starts holds a restarting
		# server's claim back by this margin and twice the period: a second
		# keeps the wait short
		'snowid.clock_margin' => '1s',
	});
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, 'the server, as that user, takes its first id at once (the datacenter was marked new)')
  or diag($stderr);
my $worker = SnowidRedis::worker($node);
like($worker, qr/^\d+\|redis$/, "it claimed a worker id from Redis ($worker)");

# ---------------------------------------------------------------------------
# 3. Redis restarted

$redis->cli('ACL', 'SETUSER', 'unsaved', 'on', '>pw-Unsaved-8c', '~x', '+ping');
my $before = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $offset = -s $node->logfile;
$redis->stop;
$redis->start;
my $users = $redis->cli('ACL', 'USERS');
like($users, qr/^snowid-dc3$/m, 'after a restart of Redis the saved user is there');
unlike($users, qr/^unsaved$/m, 'a user made and not saved is not');
unlike(cli_as($redis, 'snowid-dc3', $password, 'HGETALL', '{snowid:dc:3}:owners'),
	qr/WRONGPASS|NOPERM/, 'the user logs in with its password and reads its keys');
ok( $node->poll_query_until('postgres',
		"SELECT coordinator_answered_at > '$before' FROM snowid_status()"),
	'the server checks in with Redis after its restart');
my $log = substr(slurp_file($node->logfile), $offset);
unlike($log, qr/WRONGPASS|authentication to redis server/,
	'and its log holds no failed login');
is($node->safe_psql('postgres', 'SELECT count(*) FROM (SELECT snowid_next()) s'), 1,
	'it issues ids');
$node->restart;
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowid_next()');
unlike($stderr, qr/28P01|authentication to redis server/,
	'a restarted PostgreSQL logs in to Redis');
# (its claim may wait out the quiet period Redis' restart started: the
# confirmed re-assertion rule, doc/internals.md)
ok( $node->poll_query_until('postgres',
		'SELECT count(*) = 1 FROM (SELECT snowid_next()) s'),
	'and issues ids, once any quiet period is over') or diag($stderr);
like(SnowidRedis::worker($node), qr/^\d+\|redis$/,
	'with a worker id claimed from Redis: ' . SnowidRedis::worker($node));
$worker = SnowidRedis::worker($node);

# What a server sees of a lost user, as after a restart of a Redis that
# kept none in a file: its check-ins refused, which the log says; the
# user back (here from the file, at a restart), they are answered again.
$offset = -s $node->logfile;
$redis->cli('ACL', 'DELUSER', 'snowid-dc3');
my $refused;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$log = substr(slurp_file($node->logfile), $offset);
	last if ($refused) = $log =~ /^(.*WARNING:  snowid could not check in .*\n(?:.*\n){0,2})/m;
	select(undef, undef, undef, 0.1);
}
like($refused // '', qr/DETAIL:  Redis refused AUTH \(WRONGPASS\)/,
	'with the user gone, a check-in is refused: the log says it could not log in')
  or diag($log);
$node->restart;
like(SnowidTest::psql_error($node, 'SELECT snowid_next()'),
	qr/ERROR:  28P01: authentication to redis server at \S+ failed/,
	'and a restarted server claims in vain: 28P01');
$redis->stop;
$redis->start;
ok( $node->poll_query_until('postgres',
		'SELECT count(*) = 1 FROM (SELECT snowid_next()) s'),
	'Redis restarted with the user from its file: the server claims and issues ids again');
$worker = SnowidRedis::worker($node);

# ---------------------------------------------------------------------------
# 4. Uninstalling, as install.md says

my $data = $node->data_dir;
ok(wait_files($data, qw(snowid_state snowid_worker snowid_store_state snowid_holder_secret)),
	'the server wrote its files into the data directory');
my @written = sort map { s{.*/}{}r } glob("$data/snowid*");

# every file of the data directory src/ names (SNOWID_*_FILE "snowid_...")
my %defined;
for my $c (split /\n/, `grep -rhE '^#define SNOWID_[A-Z_]*FILE[[:space:]]+"snowid_[a-z_]+"' '$top/src'`)
{
	$defined{$1} = 1 if $c =~ /"(snowid_[a-z_]+)"/;
}
my $remove = SnowidTest::page_file('doc/install.md', 'uninstall-files.sh');
my %named = map { $_ => 1 } $remove =~ /\b(snowid_[a-z_]+)\b/g;
# all but the mark, which the page keeps (it holds no secret, and keeps a
# server that comes back above the ids it issued)
is(join(' ', grep { !$named{$_} } grep { $_ ne 'snowid_state' } sort keys %defined), '',
	'install.md removes every file src/ names but the mark: ' . join(' ', sort keys %defined));
is(join(' ', grep { !$named{$_} } grep { $_ ne 'snowid_state' } @written), '',
	'and every file the server wrote but the mark: ' . join(' ', @written));
unlike($remove, qr/\bsnowid_state(?!\.tmp)\b/, 'uninstall-files.sh keeps snowid_state');

# step 1, then step 3: the settings out, a restart, the files removed
$node->safe_psql('postgres', 'DROP EXTENSION snowid');
my @settings = map { /^\s*(snowid\.[a-z_]+)\s*=/ ? $1 : () }
  split /\n/, slurp_file("$data/postgresql.conf");
$node->adjust_conf('postgresql.conf', $_, undef)
  for ('shared_preload_libraries', map { quotemeta } @settings);
$node->restart;
like($remove, qr{^cd /var/lib/postgresql/15/main }m,
	'uninstall-files.sh goes into the data directory');
$remove =~ s{^cd /var/lib/postgresql/15/main}{cd '$data'}m;
($ok, $out) = $redis->run_page_script($remove, $admin_password);
ok($ok, 'uninstall-files.sh runs') or diag($out);
is(join(' ', map { s{.*/}{}r } glob("$data/snowid*")), 'snowid_state',
	'no file of snowid is left in the data directory but its mark');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_settings WHERE name LIKE 'snowid.%'}),
	0, 'the server runs without snowid');
$node->stop;

# step 4: the worker id freed with redis.md's command (the margin its own:
# the server is stopped), then step 6
my ($free) = slurp_file("$top/doc/redis.md") =~
  /^(redis-cli FCALL snowid_3_free 3 .*?\\\n.*?)$/m
  or die 'redis.md has no command that frees a worker id';
(my $id) = $worker =~ /^(\d+)/;
$free =~ s/'4 61001'/'$id 1'/ or die "redis.md's free command frees no '4 61001'";
($ok, $out) = $redis->run_page_script($free, $admin_password);
ok($ok, "worker id $id is freed with redis.md's command") or diag($out);
($ok, $out) = $redis->run_page_script(
	SnowidTest::page_file('doc/install.md', 'uninstall-redis.sh'), $admin_password);
ok($ok, 'uninstall-redis.sh runs') or diag($out);
$redis->stop;
$redis->start;
is(join(' ', grep { $_ ne 'default' } split /\n/, $redis->cli('ACL', 'USERS')), '',
	'after a restart, Redis has no user but the administrator');
is($redis->cli('KEYS', '*snowid*'), '', 'no key of snowid');
is($redis->cli('FUNCTION', 'LIST', 'LIBRARYNAME', 'snowid'), '', 'and no function of it');
$redis->stop;

done_testing();
