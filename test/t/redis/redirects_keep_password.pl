# The Redis password never follows a redirection to a server the operator
# did not name.  A sentinel's answer and a Redis Cluster redirection (MOVED,
# ASK) lead only to a host of the URL, to one that
# snowid.redis_redirect_hosts lists, or (over TLS) to any server whose
# certificate snowid.redis_tls_ca_file's CA signed.  Here a fake sentinel
# and a fake Cluster node name a listener of the test's own on 127.0.0.2,
# which no URL names: it must never see a connection's AUTH until the
# setting lists it.  Before, snowid logged in there with the password.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidFakeRedis;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $secret = 'the-master-password-7Qx';

# The listener: prints every AUTH it gets, says OK to everything.
my $listener = SnowidFakeRedis->new(
	host => '127.0.0.2',
	AUTH => 'perl:do { print "AUTH @$args\n"; "+OK\r\n" }',
	'*' => 'perl:"+OK\r\n"');
my $where = '127.0.0.2:' . $listener->port;

# A sentinel that names the listener as the master of "mymaster".
my $port = $listener->port;
my $sentinel = SnowidFakeRedis->new(
	SENTINEL => 'perl:"*2\r\n\$9\r\n127.0.0.2\r\n\$' . length($port)
	  . '\r\n' . $port . '\r\n"');

# A Cluster node that moves every call of snowid's functions to it.
my $moved = "perl:\"-MOVED 1234 $where\\r\\n\"";
my $node_fake = SnowidFakeRedis->new(
	FCALL => $moved,
	EVALSHA => $moved,
	EVAL => $moved);

my $pwfile = PostgreSQL::Test::Utils::tempdir() . '/redis.pw';
PostgreSQL::Test::Utils::append_to_file($pwfile, "$secret\n");
chmod 0600, $pwfile or die "chmod: $!";

my %cases = (
	sentinel => 'redis-sentinel://127.0.0.1:' . $sentinel->port . '/mymaster',
	cluster => 'redis://127.0.0.1:' . $node_fake->port);
my %servers;
for my $name (sort keys %cases)
{
	my $n = SnowidTest::new_server($name, {
		'snowid.datacenter_id' => 1,
		'snowid.redis_url' => $cases{$name},
		'snowid.redis_password_file' => $pwfile,
		'snowid.redis_timeout_ms' => 3000 });
	$servers{$name} = $n;
}

my %by = (
	sentinel => 'A sentinel',
	cluster => 'A Redis Cluster redirection');
for my $name (sort keys %servers)
{
	my $n = $servers{$name};
	my $err = SnowidTest::psql_error($n, 'SELECT snowid_next()');

	like($err,
		qr/ERROR:  28000: snowid did not follow redis to a server it may not trust \(\Q$where\E\)\nDETAIL:  $by{$name} named the server \Q$where\E, which is neither a host of the URL nor in snowid.redis_redirect_hosts; snowid sent it nothing\.\nHINT:  List the Redis servers/,
		"$name: the server it names is refused, with what to do");
	unlike($err, qr/\Q$secret\E/, "$name: the message shows no password");
}
unlike($listener->output, qr/AUTH/, 'the unnamed server got no AUTH');

# Listed (by address, then by network), the server is followed: it gets the
# password.
for my $list ('127.0.0.2', '10.1.2.0/24, 127.0.0.0/8', '*')
{
	for my $name (sort keys %servers)
	{
		my $n = $servers{$name};
		my $before = () = $listener->output =~ /AUTH/g;

		SnowidTest::reload_conf($n, 'snowid.redis_redirect_hosts' => $list);
		my $err = SnowidTest::psql_error($n, 'SELECT snowid_next()');
		unlike($err, qr/did not follow/,
			"$name, listed as '$list': followed");
		my $after = () = $listener->output =~ /AUTH/g;
		cmp_ok($after, '>', $before, "$name, listed as '$list': it got AUTH");
	}
}
like($listener->output, qr/AUTH \Q$secret\E/,
	'(so the password did reach the listed server)');

# Another port of a host of the URL: a sentinel (or a Cluster node) on
# 127.0.0.1 that names a listener on another port of 127.0.0.1 is not
# followed unless the setting lists that host (with that port, or none).
# Before, a host of the URL was followed to any of its ports, where anyone
# on that host may listen.
my $local = SnowidFakeRedis->new(
	AUTH => 'perl:do { print "AUTH @$args\n"; "+OK\r\n" }',
	'*' => 'perl:"+OK\r\n"');
my $lport = $local->port;
my $local_where = "127.0.0.1:$lport";
my $local_sentinel = SnowidFakeRedis->new(
	SENTINEL => 'perl:"*2\r\n\$9\r\n127.0.0.1\r\n\$' . length($lport)
	  . '\r\n' . $lport . '\r\n"');
my $local_moved = "perl:\"-MOVED 1234 $local_where\\r\\n\"";
my $local_node = SnowidFakeRedis->new(
	FCALL => $local_moved,
	EVALSHA => $local_moved,
	EVAL => $local_moved);
my %local_cases = (
	sentinel => 'redis-sentinel://127.0.0.1:' . $local_sentinel->port . '/mymaster',
	cluster => 'redis://127.0.0.1:' . $local_node->port);
for my $name (sort keys %local_cases)
{
	my $n = $servers{$name};
	my $auths = () = $local->output =~ /AUTH/g;

	SnowidTest::set_conf($n, 'snowid.redis_url' => $local_cases{$name},
		'snowid.redis_redirect_hosts' => '');
	$n->restart;
	for my $list ('', '127.0.0.1:' . ($lport == 65535 ? 1 : $lport + 1))
	{
		SnowidTest::reload_conf($n, 'snowid.redis_redirect_hosts' => $list);
		like(SnowidTest::psql_error($n, 'SELECT snowid_next()'),
			qr/ERROR:  28000: snowid did not follow redis to a server it may not trust \(\Q$local_where\E\)/,
			"$name: another port of the URL's host, listed as '$list': refused");
	}
	is(scalar(() = $local->output =~ /AUTH/g), $auths,
		"$name: the other port got no AUTH");
	for my $list ("127.0.0.1:$lport", '127.0.0.1')
	{
		SnowidTest::reload_conf($n, 'snowid.redis_redirect_hosts' => $list);
		unlike(SnowidTest::psql_error($n, 'SELECT snowid_next()'),
			qr/did not follow/, "$name: listed as '$list': followed");
	}
}
like($local->output, qr/AUTH \Q$secret\E/,
	'(so the password did reach the listed port)');

# Lists snowid refuses, and a name that matches only itself.
my $bad = SnowidTest::new_node('bad', { 'snowid.datacenter_id' => 1 });
for my $value ('10.0.0.0/33', 'host!name', 'a;b', '::1/129', 'x/8',
	'redis-a:0', 'redis-a:65536', 'redis-a:x', '[fd00::1', '[fd00::1]:')
{
	SnowidTest::set_conf($bad, 'snowid.redis_redirect_hosts' => $value);
	SnowidTest::fails_to_start($bad, "redis_redirect_hosts '$value'",
		qr/invalid value for parameter "snowid.redis_redirect_hosts"/);
}
my $good = 'redis-a.internal, 10.0.0.0/8, fd00::/8, redis-b:6379, 10.0.0.1:6380, [fd00::1]:6379, [fd00::/8]:26379';
SnowidTest::set_conf($bad, 'snowid.redis_redirect_hosts' => $good);
$bad->start;
is($bad->safe_psql('postgres', 'SHOW snowid.redis_redirect_hosts'),
	$good, 'names, networks and IPv6 are taken, each with a port or without');
$bad->stop;

done_testing();
