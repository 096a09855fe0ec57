# A PostgreSQL coordination database (snowid.coordinator_url =
# 'postgresql://...'), what is its own: claims for good from several
# servers, the cached id while the database is down, a claim bounded by
# snowid.coordinator_timeout_ms and ended by a cancel while the database
# hangs (and nothing left running or locked there afterwards), a password
# in the URL refused without being shown, a password missing from the
# passfile or wrong with a hint that names the passfile, a role without
# grants and a database without the extension refused with what to do.  The lease and
# duplicate tests run against this store too (test/run --store postgresql).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidPgCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time);

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_program('openssl', 'openssl');

my $dc = 4;
my $coord = SnowidPgCoord->new;
my $ids = SnowidTest::Ledger->new;

# Two servers claim for good: distinct ids, each under its own name.
my @nodes = map {
	my $n = SnowidLease::start_node($coord, $_, { 'snowid.datacenter_id' => $dc },
		allows_streaming => 1);
	$ids->collect($n, 1000);
	$n;
} ('a', 'b');
my ($a, $b) = @nodes;
my ($wa, $source) = split /\|/, SnowidRedis::worker($a);
my ($wb) = split /\|/, SnowidRedis::worker($b);
is($source, 'postgresql', 'a claim for good names its store as the source');
isnt($wa, $wb, 'two servers claim two worker ids');
is_deeply($coord->owners($dc),
	{ $wa => SnowidRedis::identity($a, $dc), $wb => SnowidRedis::identity($b, $dc) },
	'the coordination database names each holder');
ok($a->log_contains(
		qr/snowid claimed worker id $wa of datacenter $dc in postgresql at \S+\/coord/),
	'the claim is logged with where it was made');

# A restart keeps the id.
$a->restart;
$ids->collect($a, 1000);
is(SnowidRedis::worker($a), "$wa|postgresql", 'a restart keeps the worker id');

# The database down: a known server that restarts issues no id until the
# database confirms its cached one, a new one fails clearly; both keep
# running.
$coord->stop;
$a->restart;
my $known_err = SnowidTest::psql_error($a, 'SELECT snowid_next()');
like($known_err,
	qr/WARNING:  08001: could not connect to the coordination database at \S+\/coord/,
	'the coordination database down: the failed claim is a WARNING that names the database');
like($known_err,
	qr/ERROR:  08006: snowid cannot confirm worker id $wa of datacenter $dc in postgresql\n/,
	'the coordination database down: the cached id is not used');
SnowidRedis::refused_runs($a, 'the coordination database down, a known server');
my $new = SnowidLease::start_node($coord, 'new', { 'snowid.datacenter_id' => $dc });
like(SnowidTest::psql_error($new, 'SELECT snowid_next()'),
	qr/ERROR:  08001: could not connect to the coordination database.*HINT:  Check that the coordination database is running/s,
	'a new server: 08001 with what to check');
is($new->safe_psql('postgres', 'SELECT 1'), '1', 'and it keeps running');
$coord->start;
# A restart of the coordination server counts as one that may have
# forgotten (its record holds the postmaster's start): its first call starts
# a quiet period.  This restart kept every write, so the administrator ends
# it, as coordinator.md allows for a planned restart (the claim would
# otherwise wait for the quiet period and its floor).
like(SnowidTest::psql_error($new, 'SELECT snowid_next()'),
	qr/55006: snowid cannot claim a worker id of datacenter $dc until/,
	'after the database\'s restart, a new claim waits for a quiet period');
$coord->db->sql('coord_admin', "SELECT snowid_coordinator.end_quiet($dc)");
$ids->collect($new, 100);
my ($wn) = split /\|/, SnowidRedis::worker($new);
ok($wn ne $wa && $wn ne $wb, 'once the database is back, the new server claims a free id');
$ids->collect($a, 100);
is(SnowidRedis::worker($a), "$wa|postgresql",
	'once the database is back, the known server\'s next call claims its cached id');

# The database hangs (every process stopped): a claim ends within
# snowid.coordinator_timeout_ms, and a cancel ends it at once.  Either
# would otherwise wait far longer (on a connection the hung postmaster
# never completes; for the cancel, until the 600 s timeout), so a bound
# this generous still tells the two apart and cannot be reached by what a
# slow machine adds to psql and the cancel; the figures measured are
# logged.
my $ends_within_s = 30;
my $hung = SnowidLease::start_node($coord, 'hung',
	{ 'snowid.datacenter_id' => $dc, 'snowid.coordinator_timeout_ms' => 1500 });
my $frozen = SnowidLease::freeze($coord->node);
my $t0 = time;
like(SnowidTest::psql_error($hung, 'SELECT snowid_next()'),
	qr/ERROR:  08001: could not connect to the coordination database at \S+\nDETAIL:  The coordination database did not answer within 1500 ms\./,
	'a hung database: 08001 after the timeout');
my $took = time - $t0;
cmp_ok($took, '<', $ends_within_s, 'the claim ended at its timeout, not hanging');
diag(sprintf('a claim against a hung database took %.2f s, timeout 1.5 s', $took));

$hung->append_conf('postgresql.conf', "snowid.coordinator_timeout_ms = 600000\n");
$hung->restart;
my $session = SnowidTest::start_psql($hung, 'SELECT snowid_next()');
$hung->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE wait_event = 'SnowidCoordinator' OR
		  (wait_event = 'Extension' AND query = 'SELECT snowid_next()')})
  or die 'the claim never waited on the coordinator';
$t0 = time;
$hung->safe_psql('postgres', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE query = 'SELECT snowid_next()'});
$session->finish;
like($session->stderr, qr/57014/, 'a cancel ends a claim waiting on a hung database');
$took = time - $t0;
note(sprintf('the cancelled claim ended after %.2f s', $took));
cmp_ok($took, '<', $ends_within_s, 'at once, not at its 600 s timeout');
SnowidLease::thaw($frozen);
$coord->node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE datname = 'coord'})
  or die 'a session of a snowid server stayed on the coordination database';
pass('nothing of the ended claims stays running on the database');
$ids->collect($hung, 100);

# A password in the URL: refused at start, never shown.
my $secret = 'S3cret-never-shown';
my $pw = $coord->new_node('pw', {});
SnowidTest::set_conf($pw, 'snowid.coordinator_url' =>
	  'postgresql://coord_fleet:' . $secret . '@127.0.0.1:1/coord');
SnowidTest::fails_to_start($pw, 'a password in the URL',
	qr/invalid value for parameter "snowid.coordinator_url"/,
	qr/The URL holds a password, which members of pg_read_all_settings can read/);
unlike(PostgreSQL::Test::Utils::slurp_file($pw->logfile), qr/\Q$secret\E/,
	'and the log never shows the password');

# The passphrase of a client key in the URL (sslpassword): refused the
# same way, with where the key goes instead.
my $phrase = 'Phr4se-never-shown';
SnowidTest::set_conf($pw, 'snowid.coordinator_url' =>
	  'postgresql://coord_fleet@127.0.0.1:1/coord?sslpassword=' . $phrase);
SnowidTest::fails_to_start($pw, 'a key passphrase in the URL',
	qr/invalid value for parameter "snowid.coordinator_url"/,
	qr/The URL holds sslpassword.*client key without a passphrase.*sslkey/);
unlike(PostgreSQL::Test::Utils::slurp_file($pw->logfile), qr/\Q$phrase\E/,
	'and the log never shows the passphrase');

# The URL without a database, and of no store at all.
my $bad = $coord->new_node('bad', {});
SnowidTest::set_conf($bad, 'snowid.coordinator_url' => 'postgresql://127.0.0.1:1');
SnowidTest::fails_to_start($bad, 'no database in the URL',
	qr/The URL names no database/);
SnowidTest::set_conf($bad, 'snowid.coordinator_url' => 'http://127.0.0.1:1/x');
SnowidTest::fails_to_start($bad, 'an unknown scheme',
	qr/The URL must start with redis:\/\/.* or postgresql:\/\/, postgres:\/\//);

# A role without grants, and a database without the extension.
$coord->db->sql(undef, 'CREATE ROLE stranger LOGIN; CREATE DATABASE empty');
my $url = $coord->url;
for my $case (
	[ 'stranger', $url =~ s/user=coord_fleet/user=stranger/r,
		qr/ERROR:  42501: the coordination database at \S+ refused the call.*HINT:  Grant the role/s ],
	[ 'empty', $url =~ s{:///coord}{:///empty}r,
		qr/ERROR:  (42883|3F000): the coordination database at \S+ refused the call.*HINT:  Run CREATE EXTENSION snowid_coordinator/s ])
{
	my ($name, $case_url, $want) = @$case;
	my $n = SnowidTest::new_server($name,
		{ 'snowid.coordinator_url' => $case_url, 'snowid.datacenter_id' => $dc });
	like(SnowidTest::psql_error($n, 'SELECT snowid_next()'), $want,
		"$name: refused with what to do");
	$n->stop;
}

# A role that may not read the URL learns the outcome, not the topology.
my $plain = $coord->new_node('plain', { 'snowid.datacenter_id' => $dc });
SnowidTest::set_conf($plain, 'snowid.coordinator_url' => $url =~ s{:///coord}{:///empty}r);
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowid; CREATE ROLE app LOGIN');
my ($ret, $out, $err) = $plain->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-U', 'app', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/snowid could not claim a worker id from its coordinator.*The server log says which/s,
	'a role without pg_read_all_settings gets the outcome');
unlike($err, qr{/coord|/empty|host=|\Q@{[$coord->node->host]}\E},
	'and nothing that names the database');

# TLS through libpq's sslmode, and the password from a passfile: the
# coordination server on 127.0.0.1 with a certificate for it, and a role
# that logs in with a password over TLS only.
my $certs = PostgreSQL::Test::Utils::tempdir_short();
my @newkey = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
	'-nodes');

sub openssl
{
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'openssl', @_ ], '<', \undef, '>', \$out, '2>', \$err)
	  or die "openssl @_ failed: $err";
	return;
}
openssl('req', '-x509', '-new', @newkey, '-keyout', "$certs/ca.key",
	'-out', "$certs/ca.crt", '-days', 30, '-subj', '/CN=snowid test CA');
for my $cert ([ 'good', 'IP:127.0.0.1' ], [ 'other', 'DNS:other.example' ])
{
	my ($name, $san) = @$cert;

	PostgreSQL::Test::Utils::append_to_file("$certs/$name.ext",
		"subjectAltName = $san\n");
	openssl('req', '-new', @newkey, '-keyout', "$certs/$name.key", '-out',
		"$certs/$name.csr", '-subj', "/CN=$name");
	openssl('x509', '-req', '-in', "$certs/$name.csr", '-CA', "$certs/ca.crt",
		'-CAkey', "$certs/ca.key", '-CAcreateserial', '-out',
		"$certs/$name.crt", '-days', 30, '-extfile', "$certs/$name.ext");
	chmod 0600, "$certs/$name.key";
}
my $cnode = $coord->node;
$coord->db->sql(undef, q{
	SET password_encryption = 'scram-sha-256';
	CREATE ROLE coord_pw LOGIN PASSWORD 'pw-in-a-passfile-3Kq' IN ROLE coord_fleet;
});
# first, before any trust line the test cluster may have
SnowidTest::prepend_hba($cnode, 'hostssl coord coord_pw 127.0.0.1/32 scram-sha-256',
	'host coord coord_pw 127.0.0.1/32 reject');
$cnode->append_conf('postgresql.conf', qq{
listen_addresses = '127.0.0.1'
ssl = on
ssl_cert_file = '$certs/good.crt'
ssl_key_file = '$certs/good.key'
log_connections = on
});
$cnode->restart;
# (a restart of the coordination server counts as one that may have
# forgotten; this one, for TLS, kept every write: the administrator ends
# the quiet period of datacenter 7 before its first claim)
$coord->db->sql('coord_admin', 'SELECT snowid_coordinator.end_quiet(7)');
my $pgpass = "$certs/pgpass";
PostgreSQL::Test::Utils::append_to_file($pgpass,
	'127.0.0.1:' . $cnode->port . ":coord:coord_pw:pw-in-a-passfile-3Kq\n");
chmod 0600, $pgpass;
my $tls_url = 'postgresql://coord_pw@127.0.0.1:' . $cnode->port
  . "/coord?sslmode=verify-full&sslrootcert=$certs/ca.crt&passfile=$pgpass";
my $tls = SnowidTest::new_server('tls',
	{ 'snowid.coordinator_url' => $tls_url, 'snowid.datacenter_id' => 7 });
$ids->collect($tls, 100);
like(SnowidRedis::worker($tls), qr/^\d+\|postgresql$/,
	'over TLS (verify-full) with the password from a passfile: claimed');
ok($cnode->log_contains(qr/connection authorized: user=coord_pw database=coord.*SSL enabled/),
	'(the connection was TLS, and logged in as the passfile\'s role)');

# A passfile libpq skips (here: none at the path; the same for one the
# server's user may not read, or others may), and a wrong password: the
# hint names the passfile, not whether the database runs.
my $wrong_pass = "$certs/wrong-pgpass";
PostgreSQL::Test::Utils::append_to_file($wrong_pass,
	'127.0.0.1:' . $cnode->port . ":coord:coord_pw:not-the-password\n");
chmod 0600, $wrong_pass;
for my $case ([ 'no password file', "$certs/no-such-pgpass",
		qr/no password supplied/, 'nopass' ],
	[ 'a wrong password', $wrong_pass, qr/password authentication failed/,
		'wrongpass' ])
{
	my ($what, $file, $detail, $name) = @$case;
	(my $url = $tls_url) =~ s/passfile=[^&]*/passfile=$file/;
	my $node = SnowidTest::new_server($name,
		{ 'snowid.coordinator_url' => $url, 'snowid.datacenter_id' => 7 });
	like(SnowidTest::psql_error($node, 'SELECT snowid_next()'),
		qr/ERROR:  08001: could not connect to the coordination database.*\nDETAIL:  .*$detail.*\nHINT:  The coordination database asked for a password\. .*passfile.*0600/,
		"$what: the hint names the passfile and its mode");
	$node->stop;
}

# A certificate for another name: verify-full refuses it, nothing is sent.
$cnode->append_conf('postgresql.conf', qq{
ssl_cert_file = '$certs/other.crt'
ssl_key_file = '$certs/other.key'
});
$cnode->reload;
my $tls2 = SnowidTest::new_server('tls2',
	{ 'snowid.coordinator_url' => $tls_url, 'snowid.datacenter_id' => 7 });
$cnode->poll_query_until('postgres', q{
	SELECT setting ~ 'other' FROM pg_settings WHERE name = 'ssl_cert_file'})
  or die 'the certificate was not reloaded';
like(SnowidTest::psql_error($tls2, 'SELECT snowid_next()'),
	qr/ERROR:  08001: could not connect to the coordination database.*\nDETAIL:  .*(certificate|server name|does not match)/,
	'a certificate for another name: refused by verify-full');
unlike(PostgreSQL::Test::Utils::slurp_file($tls2->logfile),
	qr/pw-in-a-passfile/, 'and no log line shows the password');

# A FIFO without a writer as a TLS file of the URL: refused at once (before,
# libpq opened it by name and the claim blocked for good, deaf to the
# statement_timeout and a cancel).  libpq reads the file snowid checked.
my $fifo = "$certs/root.fifo";
POSIX::mkfifo($fifo, 0600) or die "mkfifo: $!";
for my $keyword ('sslrootcert', 'sslcrl')
{
	my $fifo_url = $keyword eq 'sslcrl' ? "$tls_url&sslcrl=$fifo"
	  : $tls_url =~ s/sslrootcert=[^&]*/sslrootcert=$fifo/r;
	my $f = SnowidTest::new_server("tls_$keyword",
		{ 'snowid.coordinator_url' => $fifo_url, 'snowid.datacenter_id' => 7 });
	my ($ret, $out, $fifo_err) = $f->psql('postgres',
		"SET statement_timeout = '60s'; SELECT snowid_next()",
		extra_params => [ '-v', 'VERBOSITY=verbose' ],
		timeout => 90);
	like($fifo_err,
		qr/DETAIL:  The file named by the URL's $keyword: "\Q$fifo\E" is not a regular file\./,
		"a FIFO as the URL's $keyword: refused, not read");
	$f->stop;
}

$ids->no_duplicates('no id repeats across every server');
done_testing();
