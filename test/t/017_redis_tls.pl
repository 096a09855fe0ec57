# TLS (rediss://) against redis-server's TLS port, with certificates made
# here by openssl: a CA, a good server certificate (localhost and
# 127.0.0.1), one for another host name, an expired one, and a client
# certificate.  The good case claims, by name and by address; each bad case
# fails with its own message, SQLSTATE and hint; mutual TLS claims with the
# client certificate and fails without.  Built without TLS (hiredis 0.14),
# a rediss:// URL stops the server with a message saying what TLS needs.
# Which of the two a build must be is test/versions.sh's to say (the
# hiredis its PostgreSQL version is tested with), not the build's: a build
# that lost TLS where it should have it fails.
use strict;
use warnings;

use FindBin;
use IPC::Run;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $dc = 4;
my $node = SnowidTest::new_node('tls', { 'snowid.datacenter_id' => $dc });

my $tls = SnowidRedis::tls_expected($node);
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
		'snowid.redis_tls_key_file'  => $files{key} // '');
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
like($err, qr/ERROR:  28000: redis server at localhost:$other_port presented a certificate for another host name\nDETAIL:  The server's certificate does not name the host in snowid.redis_url\.\nHINT:  Name the server in snowid.redis_url as its certificate does/,
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

$err = claim_error("rediss://localhost:$port", ca => "$dir/missing.crt");
like($err, qr/ERROR:  F0000: could not set up TLS for redis server at localhost:$port\nDETAIL:  The CA file "[^"]+missing.crt" named by snowid.redis_tls_ca_file could not be read or holds no certificate\.\nHINT:  Check snowid.redis_tls_ca_file/,
	'CA file missing: a set-up error');

$err = claim_error("rediss://localhost:$port", ca => $good->{ca},
	key => $client->{key});
like($err, qr/ERROR:  F0000: could not set up TLS .*\nDETAIL:  snowid.redis_tls_cert_file and snowid.redis_tls_key_file must be set together\./,
	'key without certificate: a set-up error');

# A port without TLS: Redis reads the handshake as a command and waits for
# its end, so the claim runs out of time, and falls back to the cached id.
my $plain_port = $plain->port;
use_tls("rediss://localhost:$plain_port", ca => $good->{ca});
my ($ret, $out);
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/WARNING:  08006: redis server at localhost:$plain_port did not complete the worker id claim\nDETAIL:  The TLS handshake did not complete within snowid.redis_timeout_ms \(\d+ ms\); check that the port is Redis' TLS port \(tls-port\)\./,
	'rediss:// to a port without TLS: a clear message');

$node->stop;
unlike(slurp_file($node->logfile), qr/PRIVATE KEY/,
	'no key material in the server log');
$ids->no_duplicates;
done_testing();
