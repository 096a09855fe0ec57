# TLS (rediss://) against redis-server's TLS port, with certificates made
# here by openssl: a CA, a good server certificate (localhost and
# 127.0.0.1), one for another host name, an expired one, and a client
# certificate.  The good case claims, by name and by address; each bad case
# fails with its own message, SQLSTATE and hint; mutual TLS claims with the
# client certificate and fails without; an encrypted key needs the
# passphrase of snowid.redis_tls_key_passphrase_file (never a prompt); a
# key or passphrase file others may read is refused.  rediss-sentinel://
# reaches a TLS sentinel and the master it names, and a rogue sentinel, a
# rogue master or the rogue target of a MOVED (a certificate that does not
# name the host) never gets AUTH.  Built without TLS (hiredis 0.14),
# a rediss:// URL stops the server with a message saying what TLS needs.
# Which of the two a build must be is test/versions.sh's to say (the
# hiredis its PostgreSQL version is tested with), not the build's: a build
# that lost TLS where it should have it fails.
use strict;
use warnings;

use FindBin;
use IPC::Run;
use POSIX ();
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $dc = 4;
my $node = SnowidTest::new_node('tls', { 'snowid.datacenter_id' => $dc });

my $tls = SnowidRedis::tls_expected($node);

# What the TLS tests need beyond PostgreSQL: a skip naming the Debian
# package where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
if ($tls)
{
	SnowidRedis::need_redis();
	SnowidTest::need_program('openssl', 'openssl');
	SnowidTest::need_program('faketime', 'faketime');
	SnowidTest::need_program('/usr/bin/python3', 'python3');
}
is(SnowidRedis::tls_linked($node), $tls,
	$tls
	? 'snowid is built with TLS (hiredis_ssl), as test/versions.sh says for this version'
	: 'snowid is built without TLS, as test/versions.sh says for this version');
if (!$tls)
{
	SnowidTest::set_conf($node, 'snowid.redis_url' => 'rediss://localhost:6380');
	SnowidTest::fails_to_start($node, 'rediss:// without TLS support',
		qr/FATAL:  invalid value for parameter "snowid.redis_url"/,
		qr/DETAIL:  TLS \(rediss:\/\/\) needs snowid built with hiredis 1\.x and its TLS library, hiredis_ssl; this build of snowid has no TLS\./);
	done_testing();
	exit;
}

# Certificates; EC keys, which are quick to make.
my $dir = PostgreSQL::Test::Utils::tempdir_short();
my @newkey = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
	'-nodes');

sub openssl
{
	my (@args) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([@args], '<', \undef, '>', \$out, '2>', \$err)
	  or die "@args failed: $err";
	return;
}

# A certificate named $name signed by the CA, for the given names
# (subjectAltName), valid for $days days from now, or as of $faketime.
sub certificate
{
	my ($name, $san, %opt) = @_;
	my @faketime = $opt{faketime} ? ('faketime', $opt{faketime}) : ();

	open(my $fh, '>', "$dir/$name.ext") or die $!;
	print $fh "subjectAltName = $san\n",
	  "extendedKeyUsage = serverAuth, clientAuth\n";
	close $fh;
	openssl('openssl', 'req', '-new', @newkey, '-keyout', "$dir/$name.key",
		'-out', "$dir/$name.csr", '-subj', "/CN=$name");
	openssl(@faketime, 'openssl', 'x509', '-req', '-in', "$dir/$name.csr",
		'-CA', "$dir/ca.crt", '-CAkey', "$dir/ca.key", '-CAcreateserial',
		'-out', "$dir/$name.crt", '-days', $opt{days} // 30,
		'-extfile', "$dir/$name.ext");
	chmod 0600, "$dir/$name.key";
	return { cert => "$dir/$name.crt", key => "$dir/$name.key",
		ca => "$dir/ca.crt" };
}

openssl('openssl', 'req', '-x509', '-new', @newkey, '-keyout',
	"$dir/ca.key", '-out', "$dir/ca.crt", '-days', 30, '-subj',
	'/CN=snowid test CA');
my $good = certificate('localhost', 'DNS:localhost, IP:127.0.0.1');
my $other = certificate('other', 'DNS:other.example');
my $expired = certificate('expired', 'DNS:localhost, IP:127.0.0.1',
	faketime => '2020-01-01 00:00:00', days => 30);
my $client = certificate('client', 'DNS:snowid-client');

my $redis = SnowidRedis->new(tls => $good);
my $redis_other = SnowidRedis->new(tls => $other);
my $redis_expired = SnowidRedis->new(tls => $expired);
my $redis_mtls = SnowidRedis->new(tls => { %$good, auth_clients => 'yes' });
my $plain = SnowidRedis->new(tcp => 1);
my $ids = SnowidTest::Ledger->new;

# Restarts the node with these TLS settings ('' for unset).
my $running = 0;

sub use_tls
{
	my ($url, %files) = @_;

	$node->stop if $running;
	$running = 1;
	SnowidTest::set_conf($node,
		'snowid.redis_url'           => $url,
		'snowid.redis_tls_ca_file'   => $files{ca} // '',
		'snowid.redis_tls_cert_file' => $files{cert} // '',
		'snowid.redis_tls_key_file'  => $files{key} // '',
		'snowid.redis_tls_key_passphrase_file' => $files{passphrase} // '',
		'snowid.redis_password_file' => $files{password} // '',
		'snowid.redis_sentinel_password_file' =>
		  $files{sentinel_password} // '');
	$node->start;
	return;
}

# The error of the first call, after a restart with these settings.
sub claim_error
{
	use_tls(@_);
	return SnowidTest::psql_error($node, 'SELECT snowid_next()');
}

my $port = $redis->tls_port;
use_tls("rediss://localhost:$port", ca => $good->{ca});
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
$ids->collect($node, 100);
is(SnowidRedis::worker($node), '0|redis', 'good certificate, by host name: claimed');
is_deeply($redis->owners($dc), { 0 => SnowidRedis::identity($node, $dc) },
	'the claim is in Redis');

use_tls("rediss://127.0.0.1:$port", ca => $good->{ca});
$ids->collect($node, 100);
is(SnowidRedis::worker($node), '0|redis', 'good certificate, by IP address: claimed');

my $err = claim_error("rediss://localhost:$port");
like($err, qr/ERROR:  28000: redis server at localhost:$port presented a certificate that is not trusted\nDETAIL:  The server's certificate is not signed by a trusted CA: [^\n]+\.\nHINT:  Set snowid.redis_tls_ca_file to the CA certificate/,
	'no CA file: the system CAs do not trust the test CA');

my $other_port = $redis_other->tls_port;
$err = claim_error("rediss://localhost:$other_port", ca => $good->{ca});
like($err, qr/ERROR:  28000: redis server at localhost:$other_port presented a certificate for another host name\nDETAIL:  The server's certificate does not name "localhost", the host connected to \(the one in snowid.redis_url, or one that a sentinel or a Redis Cluster redirection named\); nothing was sent to it\.\nHINT:  Name the server in snowid.redis_url as its certificate does/,
	'certificate for another host name: refused');

my $expired_port = $redis_expired->tls_port;
$err = claim_error("rediss://localhost:$expired_port", ca => $good->{ca});
like($err, qr/ERROR:  28000: redis server at localhost:$expired_port presented a certificate outside its validity period\nDETAIL:  The server's certificate is expired\.\nHINT:  Renew the Redis server's certificate/,
	'expired certificate: refused');

my $mtls_port = $redis_mtls->tls_port;
$err = claim_error("rediss://localhost:$mtls_port", ca => $good->{ca});
like($err, qr/ERROR:  28000: redis server at localhost:$mtls_port refused this server's TLS client certificate\nDETAIL:  The server (refused the TLS connection \([^)]+\): it requires a client certificate that it trusts|asked for a client certificate, none is set, and the server then closed the connection)\.\nHINT:  Set snowid.redis_tls_cert_file and snowid.redis_tls_key_file/,
	'mutual TLS without a client certificate: refused');

use_tls("rediss://localhost:$mtls_port", %$client, ca => $good->{ca});
$ids->collect($node, 100);
is(SnowidRedis::worker($node), '0|redis',
	'mutual TLS with a client certificate: claimed');
is($redis_mtls->owners($dc)->{0}, SnowidRedis::identity($node, $dc),
	'mutual TLS: the claim is in that Redis');

# An encrypted client key: without its passphrase a clear error at once
# (OpenSSL must not prompt on the server's terminal), with it mutual TLS.
# The passphrase, like a password, lives in a file only the server's user
# may read; so does the key.
sub secret_file
{
	my ($name, $text, $mode) = @_;

	open(my $fh, '>', "$dir/$name") or die $!;
	print $fh $text;
	close $fh;
	chmod $mode // 0600, "$dir/$name" or die $!;
	return "$dir/$name";
}

my $passphrase = 'pp-Marker-31d7';
openssl('openssl', 'pkey', '-in', $client->{key}, '-out',
	"$dir/client-enc.key", '-aes256', '-passout', "pass:$passphrase");
chmod 0600, "$dir/client-enc.key";
my $encrypted = { %$client, key => "$dir/client-enc.key" };
my $ppfile = secret_file('passphrase', "$passphrase\n");
my $wrong_ppfile = secret_file('wrong-passphrase', "pp-Wrong-0c55\n");

$err = claim_error("rediss://localhost:$mtls_port", %$encrypted,
	ca => $good->{ca});
like($err, qr/ERROR:  F0000: could not set up TLS for redis server at localhost:$mtls_port\nDETAIL:  The private key "[^"]+client-enc.key" named by snowid.redis_tls_key_file is encrypted, and snowid.redis_tls_key_passphrase_file names no file with its passphrase\./,
	'encrypted key without a passphrase: a clear error, no prompt');
$err = claim_error("rediss://localhost:$mtls_port", %$encrypted,
	ca => $good->{ca}, passphrase => $wrong_ppfile);
like($err, qr/DETAIL:  The private key "[^"]+client-enc.key" named by snowid.redis_tls_key_file could not be decrypted with the passphrase of snowid.redis_tls_key_passphrase_file\./,
	'encrypted key with a wrong passphrase: a clear error');
use_tls("rediss://localhost:$mtls_port", %$encrypted, ca => $good->{ca},
	passphrase => $ppfile);
$ids->collect($node, 100);
is(SnowidRedis::worker($node), '0|redis',
	'encrypted key with snowid.redis_tls_key_passphrase_file: claimed');

chmod 0644, $ppfile;
$err = claim_error("rediss://localhost:$mtls_port", %$encrypted,
	ca => $good->{ca}, passphrase => $ppfile);
like($err, qr/ERROR:  F0000: could not use the file named by snowid.redis_tls_key_passphrase_file\nDETAIL:  The file "[^"]+passphrase" has mode 0644: others than its owner may read it\.\nHINT:  Make the file owned by the server's operating system user/,
	'passphrase file readable by others: refused');
chmod 0600, $ppfile;
chmod 0644, $client->{key};
$err = claim_error("rediss://localhost:$mtls_port", %$client,
	ca => $good->{ca});
like($err, qr/ERROR:  F0000: could not use the file named by snowid.redis_tls_key_file\nDETAIL:  The file "[^"]+client.key" has mode 0644: others than its owner may read it\./,
	'key file readable by others: refused, as PostgreSQL refuses its ssl_key_file');
chmod 0600, $client->{key};

# A FIFO without a writer as the CA file or the client certificate: refused
# at once (before, opened by name, it blocked the claim for good, deaf to
# the statement_timeout and a cancel).  Every TLS file is read from the
# descriptor its checks were made on.
my $fifo = "$dir/tls.fifo";
POSIX::mkfifo($fifo, 0600) or die "mkfifo: $!";
for my $case ([ 'snowid.redis_tls_ca_file', ca => $fifo ],
	[ 'snowid.redis_tls_cert_file', %$client, ca => $good->{ca}, cert => $fifo ])
{
	my ($setting, %files) = @$case;

	use_tls("rediss://localhost:$mtls_port", %files);
	my ($ret, $out, $fifo_err) = $node->psql('postgres',
		"SET statement_timeout = '60s'; SELECT snowid_next()",
		extra_params => [ '-v', 'VERBOSITY=verbose' ],
		timeout => 90);
	like($fifo_err,
		qr/ERROR:  F0000: could not set up TLS for redis server at localhost:$mtls_port\nDETAIL:  The file named by \Q$setting\E: "\Q$fifo\E" is not a regular file\./,
		"a FIFO as $setting: refused, not read");
}

# Sentinels over TLS (rediss-sentinel://): the sentinel and the master it
# names are each checked (CA and host name) before anything is sent, the
# password included.  A master with a password, read from a file.
my $password = 'pw-Marker-8k2w';
my $pwfile = secret_file('redis.pw', "$password\n");
my $redis_pw = SnowidRedis->new(tls => $good, password => $password);
my $sentinel = SnowidRedis::Sentinel->new(master_port => $redis_pw->tls_port,
	quorum => 1, tls => $good);
use_tls('rediss-sentinel://127.0.0.1:' . $sentinel->port . '/mymaster',
	ca => $good->{ca}, password => $pwfile);
$ids->collect($node, 100);
is(SnowidRedis::worker($node), '0|redis',
	'rediss-sentinel://: claimed from the master the TLS sentinel names');
is_deeply($redis_pw->owners($dc), { 0 => SnowidRedis::identity($node, $dc) },
	'rediss-sentinel://: the claim is on that master');

# A rogue master: the sentinel names a server whose certificate (signed by
# the CA, but for another host) does not name the address it gave.  The
# TLS check refuses it, and it never sees AUTH.  As a control, a server
# that is sent the password does count an AUTH.
my $rogue = SnowidRedis->new(tls => $other);
my $named_rogue = SnowidRedis::Sentinel->new(
	master_port => $rogue->tls_port, quorum => 1, tls => $good);
$err = claim_error('rediss-sentinel://127.0.0.1:' . $named_rogue->port
	  . '/mymaster', ca => $good->{ca}, password => $pwfile);
like($err, qr/ERROR:  28000: redis server at 127\.0\.0\.1:@{[$rogue->tls_port]} presented a certificate for another host name\nDETAIL:  The server's certificate does not name "127\.0\.0\.1", the host connected to/,
	'a sentinel naming a rogue master: its certificate is refused');
ok(!exists $rogue->command_calls->{auth},
	'the rogue master named by a sentinel never got AUTH');

# A rogue sentinel: its certificate does not name the host of the URL;
# it never gets the sentinels' password.
my $rogue_sentinel = SnowidRedis->new(tls => $other);
use_tls('rediss-sentinel://localhost:' . $rogue_sentinel->tls_port
	  . '/mymaster', ca => $good->{ca}, password => $pwfile,
	sentinel_password => $pwfile);
unlink $node->data_dir . '/snowid_worker';
$err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: could not reach any redis sentinel to find master "mymaster"\nDETAIL:  The last one tried, at localhost:@{[$rogue_sentinel->tls_port]}: The server's certificate does not name "localhost"/,
	'a rogue sentinel: its certificate is refused');
ok(!exists $rogue_sentinel->command_calls->{auth},
	'the rogue sentinel never got AUTH');

use_tls('rediss://localhost:' . $rogue->tls_port, ca => $good->{ca},
	password => $pwfile);
$err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  28000: .* presented a certificate for another host name/,
	'rediss:// to the rogue by a name its certificate lacks: refused');
ok(!exists $rogue->command_calls->{auth}, 'and it never got AUTH');
my $control = SnowidRedis->new();
use_tls($control->url, password => $pwfile);
SnowidTest::psql_error($node, 'SELECT snowid_next()');
ok(exists $control->command_calls->{auth},
	'control: a server that is sent the password counts an AUTH');

# A rogue redirection: a TLS node (trusted, python3's ssl module) answers
# every command but AUTH with MOVED to another address.  To the master
# above, snowid follows and claims there; to the rogue, whose certificate
# does not name the address, it sends nothing, AUTH included.
my $redirector = <<'PY';
import socket, ssl, sys
cert, key, port, target = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(port)))
srv.listen(8)
print("ready", flush=True)
while True:
    raw, _ = srv.accept()
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
        f = conn.makefile("rb")
        while True:
            line = f.readline()
            if not line:
                break
            args = []
            for _ in range(int(line[1:])):
                n = int(f.readline()[1:])
                args.append(f.read(n + 2)[:-2])
            if args[0].upper() == b"AUTH":
                conn.sendall(b"+OK\r\n")
            else:
                conn.sendall(b"-MOVED 1234 " + target.encode() + b"\r\n")
    except Exception:
        pass
    finally:
        raw.close()
PY
my @redirectors;

# stopped at the end, also when the test dies
END
{
	local $?;

	$_->kill_kill for @redirectors;
}

sub redirector
{
	my ($target) = @_;
	my $rport = PostgreSQL::Test::Cluster::get_free_port();
	my ($out, $rerr) = ('', '');
	my $h = IPC::Run::start(
		[ '/usr/bin/python3', '-c', $redirector, $good->{cert},
		  $good->{key}, $rport, $target ],
		'<', \undef, '>', \$out, '2>', \$rerr);

	push @redirectors, $h;
	$h->pump until $out =~ /ready/ || !$h->pumpable;
	die "redirector did not start: $rerr" unless $out =~ /ready/;
	return $rport;
}

# The calls of snowid's functions (FCALL, or EVAL without the library)
sub function_calls
{
	my $calls = $redis_pw->command_calls;

	return ($calls->{fcall} // 0) + ($calls->{eval} // 0);
}

my $calls_before = function_calls();
my $to_master = redirector('127.0.0.1:' . $redis_pw->tls_port);
use_tls("rediss://localhost:$to_master", ca => $good->{ca},
	password => $pwfile);
unlink $node->data_dir . '/snowid_worker';
$ids->collect($node, 100);
like(SnowidRedis::worker($node), qr/^\d+\|redis$/,
	'MOVED over TLS to a node whose certificate names it: claimed there');
cmp_ok(function_calls(), '>', $calls_before,
	'MOVED over TLS: the claim ran on the node redirected to');
my $to_rogue = redirector('127.0.0.1:' . $rogue->tls_port);
$err = claim_error("rediss://localhost:$to_rogue", ca => $good->{ca},
	password => $pwfile);
like($err, qr/ERROR:  28000: redis server at 127\.0\.0\.1:@{[$rogue->tls_port]} presented a certificate for another host name\nDETAIL:  The server's certificate does not name "127\.0\.0\.1", the host connected to/,
	'MOVED over TLS to a rogue: its certificate is refused');
ok(!exists $rogue->command_calls->{auth},
	'the rogue a MOVED named never got AUTH');
$_->kill_kill for splice(@redirectors);

# A good claim again, so that the cached worker id is this server's.  The
# server's files name the id the MOVED claim took in another Redis and the
# state that Redis was in; to this one, which never granted that id and
# never was in that state, they say it lost claims, and a restart's
# re-assertion then waits for a quiet period (internals.md, "A re-assertion
# after a loss must be recent").  Without them the claim is a new one.
use_tls("rediss://localhost:$port", ca => $good->{ca});
$node->stop;
unlink $node->data_dir . "/$_" for qw(snowid_worker snowid_store_state);
$node->start;
$ids->collect($node, 100);

$err = claim_error("rediss://localhost:$port", ca => "$dir/missing.crt");
like($err, qr/ERROR:  F0000: could not set up TLS for redis server at localhost:$port\nDETAIL:  The file named by snowid.redis_tls_ca_file: Could not open "[^"]+missing.crt": No such file or directory\.\nHINT:  Check snowid.redis_tls_ca_file/,
	'CA file missing: a set-up error');

$err = claim_error("rediss://localhost:$port", ca => $good->{ca},
	key => $client->{key});
like($err, qr/ERROR:  F0000: could not set up TLS .*\nDETAIL:  snowid.redis_tls_cert_file and snowid.redis_tls_key_file must be set together\./,
	'key without certificate: a set-up error');

# A port without TLS: Redis reads the handshake as a command and waits for
# its end, so the claim runs out of time, and the cached id is not used.
my $plain_port = $plain->port;
use_tls("rediss://localhost:$plain_port", ca => $good->{ca});
my ($ret, $out);
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/WARNING:  08006: redis server at localhost:$plain_port did not complete the worker id claim\nDETAIL:  The TLS handshake did not complete within snowid.redis_timeout_ms \(\d+ ms\); check that the port is Redis' TLS port \(tls-port\)\./,
	'rediss:// to a port without TLS: a clear message');

$node->stop;
unlike(slurp_file($node->logfile), qr/PRIVATE KEY|\Q$passphrase\E|pp-Wrong|\Q$password\E/,
	'no key material, passphrase or password in the server log');
$ids->no_duplicates;
done_testing();
