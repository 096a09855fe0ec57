# snowid.redis_url and its password: a wrong password fails clearly and the
# server keeps running; the URL forms work (unix socket, TCP with a
# password, with a user and a database); a malformed URL stops the server
# with a message naming the setting; and the password is never shown to a
# non-superuser, never in an error and never in the server log.  A member
# of pg_read_all_settings (pg_monitor) does read a password left in the
# URL; snowid.redis_password_file keeps it out of every setting: read at
# each connection, refused when others than the server's user may read it,
# empty or missing; it wins over a password left in the URL, with a warning.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 7;

# Markers that must never show up anywhere but in postgresql.conf
my $password = 'pw-Marker-4k1q';
my $wrong = 'pw-Wrong-9b2e';

my $redis = SnowidRedis->new(password => $password, tcp => 1);
my $tcp_url = 'redis://:' . $password . '@127.0.0.1:' . $redis->port;
my $ids = SnowidTest::Ledger->new;

# How many claims the owners hash key of Redis database db holds (its
# state record, the forgetting rule's, is not a claim).
sub claims
{
	my ($db, $key) = @_;

	return scalar grep { $_ ne 'state' } split /\n/,
	  $redis->cli('-n', $db, 'HKEYS', $key);
}

# Replaces the snowid.redis_url line of postgresql.conf.
sub set_url
{
	my ($node, $url) = @_;
	my $conf = $node->data_dir . '/postgresql.conf';
	my $text = slurp_file($conf);

	$text =~ s/^snowid\.redis_url = .*\n//mg;
	open(my $fh, '>', $conf) or die $!;
	print $fh $text, "snowid.redis_url = '$url'\n";
	close $fh;
}

# One machine, one clock: a clock margin of a second, so that a restart's
# re-assertion in a quiet period (see below) counts as recent if its last
# granted call was, and waits about 20 s if not, within a claim's minute
# (with the default minute of margin, every restart after a loss waits
# about 80 s)
my $node = $redis->new_node('auth',
	{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $redis->url($wrong),
	  'snowid.clock_margin' => '1s' }
);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

# A wrong password: a clear error without the password, and the server
# keeps working.
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  28P01: authentication to redis server at \Qunix:@{[$redis->socket]}\E failed/,
	'wrong password: SQLSTATE 28P01 and a message naming the server');
like($err, qr/HINT:  Check the user name in snowid.redis_url and the password in snowid.redis_password_file \(or in the URL\)\./,
	'wrong password: hint');
unlike($err, qr/\Q$wrong\E|\Q$password\E/, 'wrong password: not in the error');
is($node->safe_psql('postgres',
		'SELECT datacenter_id, worker_id, sequence FROM snowid_decode((1::bigint << 22) | (7 << 17) | (5 << 12) | 9)'),
	'7|5|9', 'wrong password: the server runs and snowid_decode() works');

# No password at all where one is needed.
set_url($node, $redis->url(''));
$node->restart;
$err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  28P01: authentication to redis server/,
	'no password: authentication error');

# The right password, over TCP.
set_url($node, $tcp_url);
$node->restart;
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'TCP URL with the right password: claimed');

# A user name and a database: the claim lands in that database.
set_url($node, 'redis://default:' . $password . '@localhost:' . $redis->port . '/3');
$node->restart;
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'URL with a user and database 3: claimed');
is(claims('3', SnowidRedis::owners_key($dc)), 1,
	'the claim is in database 3');

# A percent-encoded password, on the unix socket with a database.
my $encoded = $password =~ s/-/%2D/gr;
set_url($node, 'unix://:' . $encoded . '@' . $redis->socket . '?db=4');
$node->restart;
$ids->collect($node, 1000);
is(claims('4', SnowidRedis::owners_key($dc)), 1,
	'unix socket URL with an encoded password and ?db=4: claimed');

# Only superusers may see the URL.
$node->safe_psql('postgres', 'CREATE ROLE alice LOGIN');
is($node->safe_psql('postgres', 'SHOW snowid.redis_url'),
	'unix://:' . $encoded . '@' . $redis->socket . '?db=4',
	'a superuser sees snowid.redis_url');
my ($ret, $out);
($ret, $out, $err) = $node->psql('postgres', 'SHOW snowid.redis_url',
	extra_params => [ '-U', 'alice' ]);
# the wording is PostgreSQL's own, and changed in 16
like($err, qr/(must be superuser or have privileges of pg_read_all_settings to examine|permission denied to examine) "snowid.redis_url"/,
	'a non-superuser cannot SHOW snowid.redis_url');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT string_agg(name, ',' ORDER BY name) FROM pg_settings WHERE name LIKE 'snowid.redis%'},
	extra_params => [ '-U', 'alice' ]);
is($out, 'snowid.redis_key_prefix,snowid.redis_min_replicas,snowid.redis_timeout_ms',
	'pg_settings hides snowid.redis_url and the TLS files from a non-superuser');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT current_setting('snowid.redis_url')},
	extra_params => [ '-U', 'alice' ]);
isnt($ret, 0, 'current_setting() refuses snowid.redis_url to a non-superuser');
unlike($out . $err, qr/\Q$password\E/, 'a non-superuser never sees the password');

# A changed URL needs a restart; the reload says so without the value.
set_url($node, $redis->url($wrong));
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT pending_restart FROM pg_settings WHERE name = 'snowid.redis_url'})
  or die 'reload not seen';
ok($node->log_contains(
		qr/parameter "snowid.redis_url" cannot be changed without restarting the server/),
	'a changed URL is pending a restart');

# pg_monitor (so pg_read_all_settings) reads a password left in the URL:
# why the password belongs in a file.
$node->safe_psql('postgres', 'CREATE ROLE monitor LOGIN IN ROLE pg_monitor');
like($node->safe_psql('postgres', 'SHOW snowid.redis_url',
		extra_params => [ '-U', 'monitor' ]),
	qr/\Q$encoded\E/,
	'a member of pg_monitor reads the password left in snowid.redis_url');

# The password in snowid.redis_password_file: the URL holds none, and a
# member of pg_monitor sees the file's name only.
my $secrets = PostgreSQL::Test::Utils::tempdir_short();
my $pwfile = "$secrets/redis.pw";

sub write_file
{
	my ($file, $text, $mode) = @_;

	open(my $fh, '>', $file) or die $!;
	print $fh $text;
	close $fh;
	chmod $mode, $file or die $!;
	return;
}

write_file($pwfile, "$password\n", 0600);
$node->stop;
set_url($node, $redis->url(''));
SnowidTest::set_conf($node, 'snowid.redis_password_file' => $pwfile);
$node->start;
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'password from snowid.redis_password_file: claimed');
is($node->safe_psql('postgres',
		q{SELECT current_setting('snowid.redis_url') || ' ' || current_setting('snowid.redis_password_file')},
		extra_params => [ '-U', 'monitor' ]),
	$redis->url('') . " $pwfile",
	'a member of pg_monitor sees no password, only the file name');

# A file that others may read, an empty one and a missing one: a clear
# error naming the setting and the file, and nothing of the file.
sub password_file_error
{
	my ($text, $mode) = @_;

	$node->stop;
	if (defined $text)
	{
		write_file($pwfile, $text, $mode);
	}
	else
	{
		unlink $pwfile;
	}
	$node->start;
	return SnowidTest::psql_error($node, 'SELECT snowid_next()');
}

$err = password_file_error("$password\n", 0644);
like($err, qr/ERROR:  F0000: could not use the file named by snowid.redis_password_file\nDETAIL:  The file "\Q$pwfile\E" has mode 0644: others than its owner may read it\.\nHINT:  Make the file owned by the server's operating system user with no access for group or others \(chmod 0600\)/,
	'password file readable by others: refused, naming the file and the mode to set');
$err = password_file_error("$password\n", 0640);
like($err, qr/DETAIL:  The file "\Q$pwfile\E" has mode 0640: others than its owner may read it\./,
	'password file readable by its group: refused');
$err = password_file_error("\n$password\n", 0600);
like($err, qr/ERROR:  F0000: could not use the file named by snowid.redis_password_file\nDETAIL:  The first line of "\Q$pwfile\E" is empty\.\nHINT:  Write the secret alone on the first line of the file/,
	'password file with an empty first line: refused');
$err = password_file_error(('x' x 600) . "\n", 0600);
like($err, qr/DETAIL:  The first line of "\Q$pwfile\E" is too long\./,
	'password file with a first line too long: refused');
$err = password_file_error(undef);
like($err, qr/ERROR:  F0000: could not use the file named by snowid.redis_password_file\nDETAIL:  Could not open "\Q$pwfile\E": No such file or directory\.\nHINT:  Check the path in the setting/,
	'missing password file: refused');

# Read at each connection: a new file counts at the next claim.
write_file($pwfile, "$password\r\nignored second line\n", 0600);
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'password file fixed (a CRLF line end): claimed without a restart');

# An ACL user in the URL, written with a colon and no password, and the
# password in the file.
$node->stop;
set_url($node, 'redis://default:@127.0.0.1:' . $redis->port);
my $log_offset = -s $node->logfile;
$node->start;
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'a user in the URL ("default:@"), the password in the file: claimed');
ok(!$node->log_contains(qr/snowid.redis_url holds a password/, $log_offset),
	'a user written with a colon is not taken for a password');

# A password in the URL and a file: the file's counts, and the start warns
# that the URL's stays readable.
$node->stop;
set_url($node, 'redis://:' . $wrong . '@127.0.0.1:' . $redis->port);
$log_offset = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/WARNING:  snowid.redis_url holds a password, but snowid uses the one of snowid.redis_password_file\n[^\n]*HINT:  Remove the password from snowid.redis_url: in the URL, members of pg_read_all_settings can read it\./,
		$log_offset),
	'password in the URL and a password file: the start warns');
# (the claim re-asserts the id of the cache file: this server told
# database 0 of the later state record it saw in database 4, which starts
# a quiet period there, in which a claim that names no id is refused)
$ids->collect($node, 1000);
is(SnowidRedis::worker($node), '0|redis',
	'password in the URL and a password file: the file\'s is used');
$node->stop;
SnowidTest::set_conf($node, 'snowid.redis_password_file' => '',
	'snowid.redis_sentinel_password_file' => $pwfile);
set_url($node, $tcp_url);
$log_offset = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/WARNING:  snowid.redis_sentinel_password_file is not used: snowid.redis_url names no sentinels/,
		$log_offset),
	'a sentinels\' password file without sentinels: the start warns');
SnowidTest::set_conf($node, 'snowid.redis_sentinel_password_file' => '');

# Malformed settings stop the server with a message naming the setting,
# never the password.
sub fails_to_start
{
	my ($url, $pattern, $name) = @_;

	$node->stop;
	set_url($node, $url);
	SnowidTest::fails_to_start($node, $name, $pattern);
}

fails_to_start("redis://:$password\@localhost:99999",
	qr/FATAL:  invalid value for parameter "snowid.redis_url"\n[^\n]*DETAIL:  The port must be a number from 1 to 65535\./,
	'port out of range');
fails_to_start("http://:$password\@localhost",
	qr/FATAL:  invalid value for parameter "snowid.redis_url"\n[^\n]*DETAIL:  The URL must start with redis:\/\/, rediss:\/\/, unix:\/\/, redis-sentinel:\/\/ or rediss-sentinel:\/\/\./,
	'not a redis URL');
fails_to_start("redis://:$password\@local host",
	qr/FATAL:  invalid value for parameter "snowid.redis_url"\n[^\n]*DETAIL:  The host name may hold only/,
	'unencoded space');
fails_to_start("rediss://:$password\@localhost",
	qr/DETAIL:  TLS \(rediss:\/\/\) needs snowid built with hiredis 1\.x and its TLS library, hiredis_ssl; this build of snowid has no TLS\./,
	'TLS URL without TLS support')
  unless SnowidRedis::tls_expected($node);
fails_to_start("rediss-sentinel://127.0.0.1/mymaster",
	qr/DETAIL:  TLS \(rediss-sentinel:\/\/\) needs snowid built with hiredis 1\.x and its TLS library, hiredis_ssl; this build of snowid has no TLS\./,
	'TLS sentinel URL without TLS support')
  unless SnowidRedis::tls_expected($node);

fails_to_start("redis-sentinel://:$password\@127.0.0.1:26379,127.0.0.1:26380",
	qr/DETAIL:  A redis-sentinel:\/\/ URL names the master after the sentinels/,
	'sentinel URL without a master name');
fails_to_start("redis-sentinel://127.0.0.1/mymaster?sentinel_password=$password&db=1",
	qr/DETAIL:  The only parameters of a redis-sentinel:\/\/ URL are sentinel_user and sentinel_password/,
	'sentinel URL with an unknown parameter');
fails_to_start('redis-sentinel://' . join(',', ('127.0.0.1') x 9) . '/mymaster',
	qr/DETAIL:  A redis-sentinel:\/\/ URL may name at most 8 sentinels\./,
	'sentinel URL with nine sentinels');

set_url($node, $tcp_url);
$node->append_conf('postgresql.conf', "snowid.redis_key_prefix = 'a{b'\n");
SnowidTest::fails_to_start($node, 'key prefix with a brace',
	qr/invalid value for parameter "snowid.redis_key_prefix": "a\{b"/);
$node->append_conf('postgresql.conf', "snowid.redis_key_prefix = 'app1'\nsnowid.redis_timeout_ms = -1\n");
SnowidTest::fails_to_start($node, 'timeout -1',
	qr/invalid value for parameter "snowid.redis_timeout_ms": "-1"/);

$node->append_conf('postgresql.conf', "snowid.redis_timeout_ms = '3s'\nsnowid.redis_min_replicas = -1\n");
SnowidTest::fails_to_start($node, 'min_replicas -1',
	qr/invalid value for parameter "snowid.redis_min_replicas": "-1"/);

# Valid again, with another key prefix and a timeout in seconds.
$node->append_conf('postgresql.conf', "snowid.redis_min_replicas = 0\n");
$node->start;
$ids->collect($node, 1000);
is($node->safe_psql('postgres', 'SHOW snowid.redis_timeout_ms'), '3s',
	'timeout given in seconds');
is(claims('0', SnowidRedis::owners_key($dc, 'app1')), 1,
	'the claim uses snowid.redis_key_prefix');
$node->stop;

unlike(slurp_file($node->logfile), qr/\Q$password\E|\Q$wrong\E|\Q$encoded\E|xxxxxxxx/,
	'the password (of the URL or of the file) is nowhere in the server log');
$ids->no_duplicates;
done_testing();
