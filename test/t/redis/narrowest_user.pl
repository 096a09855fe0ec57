# snowid under the narrowest Redis user, on Redis 7 and on Valkey 8: the
# user the documentation allows at the least,
#
#   reset on >PASSWORD ~{snowid:dc:N}* +@all -@admin -@dangerous -@scripting
#     +fcall +fcall_ro +info +role
#
# with snowid's function library loaded by an administrator from the
# installed file ($(pg_config --sharedir)/extension/snowid.lua).  Under that
# user a worker id on lease lives its whole life (claim, renewals, the
# holder named to another server, release, the id taken for good after it),
# and the user cannot CONFIG GET, EVAL, load a library or touch another
# datacenter's keys.  A user allowed FCALL alone cannot run the functions:
# Redis checks the commands inside them against the caller's ACL.  Without the library: a user that may EVAL still works
# (scripts run with EVALSHA/EVAL) and the server warns once a process; the
# narrow user fails with a clear error whose hint is the command that loads
# the library.  The user documented before the library (EVAL, no FCALL)
# keeps working, with a warning; a Redis 6 (a fake) gets EVALSHA and EVAL.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidFakeRedis;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $dc = 5;
my $other_dc = 6;
my $lease_ms = 2000;
# The narrow user's lease must hold for its whole life below (no renewal
# may fail, another server must find it held): 4 s, renewed every 1.3 s,
# holds on a busy machine, where a renewal may come up to 2.6 s late; and
# a call to Redis may take up to 4 s before it counts as failed.
my $narrow_lease_ms = 4000;
# Markers that must never show up in a log or an error
my $admin_password = 'pw-Acl-Admin-4q1k';
my $password = 'pw-Acl-Narrow-7w2k';
my $library = SnowidRedis::library_file();
my $not_loaded = qr/snowid's function library is not loaded in redis/;

ok(-f $library, "the library is installed as $library");

# Runs the server's client as user, returns its output and errors.
sub cli_as
{
	my ($server, $user, @args) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run(
		[ $server->cli_program, '-s', $server->socket, '--user', $user,
		  '--pass', $password, '--no-auth-warning', @args ],
		'<', \undef, '>', \$out, '2>', \$err);
	return "$out$err";
}

# A snowid.redis_url as user.
sub url
{
	my ($server, $user) = @_;

	return "unix://$user:$password\@" . $server->socket;
}

# What a narrow user may not do, and what it may.
sub check_refusals
{
	my ($server, $kind) = @_;
	my $key = SnowidRedis::owners_key($dc);
	my $other = SnowidRedis::owners_key($other_dc);

	like(cli_as($server, 'snowid', 'CONFIG', 'GET', 'requirepass'),
		qr/NOPERM.*'config\|get'/, "$kind: the user cannot CONFIG GET");
	like(cli_as($server, 'snowid', 'EVAL', 'return 1', '0'),
		qr/NOPERM.*'eval'/, "$kind: the user cannot EVAL");
	like(cli_as($server, 'snowid', 'EVALSHA', '0' x 40, '0'),
		qr/NOPERM.*'evalsha'/, "$kind: the user cannot EVALSHA");
	like(cli_as($server, 'snowid', 'FUNCTION', 'LOAD', 'REPLACE',
			"#!lua name=snowid\nredis.register_function('x', function() return 1 end)"),
		qr/NOPERM.*'function\|load'/,
		"$kind: the user cannot load or replace a library");
	like(cli_as($server, 'snowid', 'HGETALL', $other),
		qr/NOPERM/, "$kind: the user cannot read another datacenter's keys");
	like(cli_as($server, 'snowid', 'HSET', $other, '0', 'me'),
		qr/NOPERM/, "$kind: the user cannot write another datacenter's keys");
	like(cli_as($server, 'snowid', 'FCALL', 'snowid_3_claim', '3', $other,
			"${other}x", "${other}y", 'me', '-1 31 -1 0 9999999999999'),
		qr/NOPERM/,
		"$kind: the user cannot call a function on another datacenter's keys");
	is($server->cli('EXISTS', $other), '0',
		"$kind: another datacenter's keys untouched");
	unlike(cli_as($server, 'snowid', 'HGETALL', $key), qr/NOPERM/,
		"$kind: the user reads its own datacenter's keys");
	return;
}

# A started server of datacenter dc claiming as user, with the extension.
sub start_node
{
	my ($name, $server, $user, %settings) = @_;
	my $node = SnowidTest::new_node($name,
		{
			'snowid.datacenter_id' => $dc,
			'snowid.worker_bits' => 3,
			'snowid.max_drift_ms' => 5000,
			# the store is not marked new, so the first claim waits for a
			# quiet period: a second's clock margin keeps it short
			'snowid.clock_margin' => '1s',
			'snowid.redis_url' => url($server, $user),
			%settings
		});

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

# Every check on one kind of server (redis-server, or Valkey's).
sub run_on
{
	my ($kind, %programs) = @_;
	# no datacenter marked new, so that no key of another one exists
	my $server = SnowidRedis->new(%programs, password => $admin_password,
		library => 0, mark_new => 0);
	my %lease = ('snowid.worker_lease' => "${lease_ms}ms");
	my $ledger = SnowidTest::Ledger->new;

	note(join ' ',
		$server->cli('INFO', 'server') =~ /^((?:redis|valkey)_version:\S+)/mg);
	# The issue's user, exactly; and one that may run scripts.
	$server->cli('ACL', 'SETUSER', 'snowid', 'reset', 'on', ">$password",
		"~{snowid:dc:$dc}*", '+@all', '-@admin', '-@dangerous',
		'-@scripting', '+fcall', '+fcall_ro', '+info', '+role');
	$server->cli('ACL', 'SETUSER', 'scripter', 'reset', 'on', ">$password",
		"~{snowid:dc:$dc}*", '+@all', '-@admin', '-@dangerous', '+info',
		'+role');
	check_refusals($server, $kind);

	# No library, a user that may EVAL: leases work, as scripts, and the
	# lease renewer warns once.
	my $s = start_node("${kind}_scripter", $server, 'scripter', %lease);
	my $worker = SnowidLease::wait_lease($s);
	$s->poll_query_until('postgres', 'SELECT renewals >= 3 FROM snowid_status()')
	  or die 'no renewals without the library';
	$ledger->collect($s, 100);
	my $calls = $server->command_calls;
	# the first call runs the script with EVAL, Redis lacking it (sent
	# again by the same verb when the library asks for the holder's key, or
	# for a later proof): how many EVALs that takes depends on the
	# machine's pace; once Redis has the script, every call is EVALSHA
	cmp_ok($calls->{eval} // 0, '>=', 1,
		"$kind, no library: EVAL while Redis lacked the script");
	my $renewals = $s->safe_psql('postgres', 'SELECT renewals FROM snowid_status()');
	$s->poll_query_until('postgres',
		"SELECT renewals >= $renewals + 3 FROM snowid_status()")
	  or die 'no more renewals without the library';
	my $later = $server->command_calls;
	is($later->{eval} // 0, $calls->{eval} // 0,
		"$kind, no library: no EVAL once Redis has the script");
	cmp_ok(($later->{evalsha} // 0) - ($calls->{evalsha} // 0), '>=', 3,
		"$kind, no library: EVALSHA of the same script, for the renewals");
	my $log = slurp_file($s->logfile);
	is(scalar(() = $log =~ /WARNING:  $not_loaded, so snowid runs it with EVAL/g),
		1, "$kind, no library: the lease renewer warned once");
	like($log,
		qr/HINT:  Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < \Q$library\E /,
		"$kind, no library: the warning's hint loads the installed file");
	is($s->safe_psql('postgres', 'SELECT snowid_release_worker()'), $worker,
		"$kind, no library: the lease is given back");
	$s->stop;

	# No library, the narrow user: a clear error, whose hint loads it.
	my $p = start_node("${kind}_narrow_none", $server, 'snowid');
	my $err = SnowidTest::psql_error($p, 'SELECT snowid_next()');
	like($err, qr/ERROR:  42883: $not_loaded at unix:\S+\n/,
		"$kind, no library, narrow user: SQLSTATE 42883, a clear message");
	like($err,
		qr/DETAIL:  Redis has no function snowid_3_claim \(no snowid library is loaded there, or one of an earlier release\), and this Redis user may not run the library with EVALSHA or EVAL instead\./,
		"$kind, no library, narrow user: the detail says why");
	like($err,
		qr/HINT:  Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < \Q$library\E \(on every primary of a Redis Cluster\)\./,
		"$kind, no library, narrow user: the hint is the command that loads it");
	unlike($err, qr/\Q$password\E|\Q$admin_password\E/,
		"$kind, no library, narrow user: no password in the error");
	$p->stop;

	# An administrator loads the library from the installed file.
	$server->load_library;
	is(join(' ', sort grep { /^snowid_/ } split /\n/,
			$server->cli('FUNCTION', 'LIST', 'LIBRARYNAME', 'snowid')),
		'snowid_1_claim snowid_1_lease_claim snowid_1_lease_release snowid_1_lease_renew '
		  . 'snowid_2_claim snowid_2_end_quiet snowid_2_free snowid_2_lease_claim '
		  . 'snowid_2_lease_release snowid_2_lease_renew snowid_2_new_datacenter snowid_2_reset_secret '
		  . 'snowid_3_claim snowid_3_end_quiet snowid_3_free snowid_3_lease_claim '
		  . 'snowid_3_lease_release snowid_3_lease_renew snowid_3_lower_fence snowid_3_new_datacenter '
		  . 'snowid_3_reset_secret snowid_4_claim snowid_4_extend snowid_4_free snowid_4_release',
		"$kind: the administrator loaded the library from the installed file");

	# Redis checks the commands inside a function against the caller's
	# ACL: a user allowed FCALL alone cannot claim (so snowid's user must be
	# allowed HSET and HDEL on its keys, and can write them directly; see
	# doc/redis.md, "What one server can do to another's claim").
	$server->cli('ACL', 'SETUSER', 'fcall_only', 'reset', 'on', ">$password",
		"~{snowid:dc:$dc}:*", '+fcall');
	my $base = "{snowid:dc:$dc}";
	like(cli_as($server, 'fcall_only', 'FCALL', 'snowid_3_claim', '3',
			"$base:owners", "$base:leases", "$base:fences", 'me',
			'-1 31 -1 0 9999999999999', '0' x 64),
		qr/can't run this command|ACL failure in script|NOPERM/,
		"$kind: a user allowed FCALL alone cannot run the functions");

	# The user documented before the library: EVAL, no FCALL.  It still
	# works, running the library as a script, and says how to do better.
	$server->cli('ACL', 'SETUSER', 'old', 'reset', 'on', ">$password",
		'~{snowid:dc:*}:*', '+eval', '+hgetall', '+hget', '+hset', '+hdel',
		'+time', '+select', '+config|get');
	my $old = start_node("${kind}_old_user", $server, 'old');
	my ($ret, $out, $stderr) = $old->psql('postgres', 'SELECT snowid_next()');
	is($ret, 0, "$kind, the former user: the claim works");
	like($stderr,
		qr/WARNING:  the redis user may not call snowid's functions with FCALL, so snowid runs its library with EVAL
.*
HINT:  Allow the Redis user FCALL and take EVAL and EVALSHA away; the library is loaded with redis-cli -x FUNCTION LOAD REPLACE < \Q$library\E\./,
		"$kind, the former user: a warning says how to do better");
	$old->stop;
	$server->cli('ACL', 'DELUSER', 'old');

	my $before = $server->command_calls;

	# The whole life of a leased id under the narrow user.
	my $a = start_node("${kind}_lease", $server, 'snowid',
		'snowid.worker_lease' => "${narrow_lease_ms}ms",
		'snowid.coordinator_timeout_ms' => 4000);
	my $leased = SnowidLease::wait_lease($a);
	is($server->owners($dc)->{$leased}, 'lease ' . SnowidRedis::identity($a, $dc),
		"$kind, narrow user: the lease is claimed");
	$ledger->collect($a, 100);
	my $fence = SnowidLease::fence($server, $dc, $leased);
	$a->poll_query_until('postgres', 'SELECT renewals >= 3 FROM snowid_status()')
	  or die 'no renewals under the narrow user';
	is($a->safe_psql('postgres', q{
		SELECT worker_source, lease_expires_at > now(), fence_time > last_time,
			failed_renewals
		FROM snowid_status()}),
		'lease|t|t|0', "$kind, narrow user: renewals, none failed");
	cmp_ok(SnowidLease::fence($server, $dc, $leased), '>', $fence,
		"$kind, narrow user: the renewals moved the fence ahead");
	$ledger->collect($a, 100);

	# The holder, as another server sees it: the configured id is held.
	$p = start_node("${kind}_permanent", $server, 'snowid',
		'snowid.worker_id' => $leased);
	$err = SnowidTest::psql_error($p, 'SELECT snowid_next()');
	like($err,
		qr/ERROR:  55006: worker id $leased of datacenter $dc is held by another server\nDETAIL:  .*Redis has worker id $leased registered to "lease \Q@{[SnowidRedis::identity($a, $dc)]}\E"\./,
		"$kind, narrow user: another server is told who holds the leased id");

	# Release, and the id taken for good above the fence left.
	is($a->safe_psql('postgres', 'SELECT snowid_release_worker()'), $leased,
		"$kind, narrow user: the lease is given back");
	ok(!exists $server->owners($dc)->{$leased}
		  && defined $server->owners($dc)->{"fence:$leased"},
		"$kind, narrow user: the id is free, its fence left in the owners hash");
	$p->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM (SELECT snowid_next()) s})
	  or die 'the permanent server never took the released id';
	is(SnowidRedis::worker($p), "$leased|config",
		"$kind, narrow user: the released id is claimed for good");
	$ledger->collect($p, 100);
	$ledger->no_duplicates("$kind: no duplicate ids");

	# Another datacenter, through the SQL surface: refused.
	my $o = start_node("${kind}_other_dc", $server, 'snowid',
		'snowid.datacenter_id' => $other_dc);
	$err = SnowidTest::psql_error($o, 'SELECT snowid_next()');
	like($err, qr/ERROR:  42501: redis user may not claim a worker id at /,
		"$kind, narrow user: a server of another datacenter is refused");

	# Only functions ran, and nothing read the configuration.
	my $after = $server->command_calls;
	cmp_ok(($after->{fcall} // 0) - ($before->{fcall} // 0), '>=', 5,
		"$kind, narrow user: claims, renewals and the release ran with FCALL");
	is(($after->{eval} // 0) + ($after->{evalsha} // 0),
		($before->{eval} // 0) + ($before->{evalsha} // 0),
		"$kind, narrow user: no EVAL or EVALSHA");
	is(join(' ', grep { /^config/ && $after->{$_} } sort keys %$after), '',
		"$kind: nothing ever ran CONFIG");
	unlike(slurp_file($_->logfile), $not_loaded,
		"$kind, narrow user: no warning about the library in " . $_->name)
	  for ($a, $p);
	check_refusals($server, $kind);

	$_->stop for ($a, $p, $o);
	$server->stop;
	return;
}

run_on('redis');

# A Redis before 7 (a fake that knows no FCALL): the claim runs the library
# compiled in, with EVALSHA and, as Redis does not have it yet, EVAL of the
# text whose SHA1 EVALSHA named, without its #! line, the function's name
# first; and nothing warns, since Redis 6 cannot do better.
{
	my $fake = SnowidFakeRedis->new(
		FCALL   => 'perl:"-ERR unknown command `FCALL`, with args beginning with: \r\n"',
		EVALSHA => 'perl:$main::sha = $args->[1]; "-NOSCRIPT No matching script. Please use EVAL.\r\n"',
		EVAL    => 'perl:require Digest::SHA; Digest::SHA::sha1_hex($args->[1]) eq ($main::sha // "") && $args->[1] !~ /^#!/ && $args->[6] eq "snowid_3_claim" ? "*2\r\n:4\r\n:0\r\n" : "-ERR unexpected EVAL\r\n"');
	my $node = SnowidTest::new_node('redis6',
		{ 'snowid.datacenter_id' => $dc, 'snowid.redis_url' => $fake->url });

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	my ($ret, $out, $stderr) = $node->psql('postgres', 'SELECT snowid_next()');
	is($ret, 0, 'Redis 6: the claim runs with EVALSHA, then EVAL');
	is(SnowidRedis::worker($node), '4|redis',
		'Redis 6: EVAL ran the library whose SHA1 EVALSHA named');
	unlike($stderr, qr/WARNING/, 'Redis 6: no warning');
	$node->stop;
	$fake->stop;
}

SKIP:
{
	my %valkey = SnowidRedis::valkey();
	my $why = 'needs valkey-server and valkey-cli (Debian package valkey-server,'
	  . ' in bookworm-backports; or test/tools/pgbuild valkey, then'
	  . ' SNOWID_VALKEY_BIN=its bin directory)';

	# a missing tool is a failure under SNOWID_REQUIRE_TOOLS=1, as
	# SnowidTest::need_program's
	fail("valkey: $why: not found, and SNOWID_REQUIRE_TOOLS=1 counts a missing tool as a failure")
	  if !%valkey && $ENV{SNOWID_REQUIRE_TOOLS};
	skip $why, 1 unless %valkey;
	run_on('valkey', %valkey);
}

done_testing();
