# snowid.redis_url and its password: a wrong password fails clearly and the
# server keeps running; the URL forms work (unix socket, TCP with a
# password, with a user and a database); a malformed URL stops the server
# with a message naming the setting; and the password is never shown to a
# non-superuser, never in an error and never in the server log.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $dc = 7;

# Markers that must never show up anywhere but in postgresql.conf
my $password = 'pw-Marker-4f1c';
my $wrong = 'pw-Wrong-9b2e';

my $redis = SnowidRedis->new(password => $password, tcp => 1);
my $tcp_url = 'redis://:' . $password . '@127.0.0.1:' . $redis->port;
my $ids = SnowidTest::Ledger->new;

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

my $node = $redis->new_node('auth',
	{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $redis->url($wrong) }
);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

# A wrong password: a clear error without the password, and the server
# keeps working.
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  28P01: authentication to redis server at \Qunix:@{[$redis->socket]}\E failed/,
	'wrong password: SQLSTATE 28P01 and a message naming the server');
like($err, qr/HINT:  Check the user name and password in snowid.redis_url\./,
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
is($redis->cli('-n', '3', 'HLEN', SnowidRedis::owners_key($dc)), 1,
	'the claim is in database 3');

# A percent-encoded password, on the unix socket with a database.
my $encoded = $password =~ s/-/%2D/gr;
set_url($node, 'unix://:' . $encoded . '@' . $redis->socket . '?db=4');
$node->restart;
$ids->collect($node, 1000);
is($redis->cli('-n', '4', 'HLEN', SnowidRedis::owners_key($dc)), 1,
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
	qr/FATAL:  invalid value for parameter "snowid.redis_url"\n[^\n]*DETAIL:  The URL must start with redis:\/\/, rediss:\/\/, unix:\/\/ or redis-sentinel:\/\/\./,
	'not a redis URL');
fails_to_start("redis://:$password\@local host",
	qr/FATAL:  invalid value for parameter "snowid.redis_url"\n[^\n]*DETAIL:  The host name may hold only/,
	'unencoded space');
fails_to_start("rediss://:$password\@localhost",
	qr/DETAIL:  TLS \(rediss:\/\/\) needs snowid built with hiredis 1\.x and its TLS library, hiredis_ssl; this build of snowid has no TLS\./,
	'TLS URL without TLS support')
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
$node->append_conf('postgresql.conf', "snowid.redis_key_prefix = 'app1'\nsnowid.redis_timeout_ms = 0\n");
SnowidTest::fails_to_start($node, 'timeout 0',
	qr/invalid value for parameter "snowid.redis_timeout_ms": "0"/);

$node->append_conf('postgresql.conf', "snowid.redis_timeout_ms = '3s'\nsnowid.redis_min_replicas = -1\n");
SnowidTest::fails_to_start($node, 'min_replicas -1',
	qr/invalid value for parameter "snowid.redis_min_replicas": "-1"/);

# Valid again, with another key prefix and a timeout in seconds.
$node->append_conf('postgresql.conf', "snowid.redis_min_replicas = 0\n");
$node->start;
$ids->collect($node, 1000);
is($node->safe_psql('postgres', 'SHOW snowid.redis_timeout_ms'), '3s',
	'timeout given in seconds');
is($redis->cli('HLEN', SnowidRedis::owners_key($dc, 'app1')), 1,
	'the claim uses snowid.redis_key_prefix');
$node->stop;

unlike(slurp_file($node->logfile), qr/\Q$password\E|\Q$wrong\E|\Q$encoded\E/,
	'the password is nowhere in the server log');
$ids->no_duplicates;
done_testing();
