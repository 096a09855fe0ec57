# The PostgreSQL coordination store (sql/snowid_coordinator--1.1.sql): the
# extension snowid_coordinator, created in a database by a role that is no
# superuser, hands out worker ids with the functions and the fence rule of
# the Redis function library (src/redis/snowid.lua, doc/internals.md "The
# fence rule"), on its own clock (clock_timestamp(), moved here with
# SnowidTest::Clock so that leases run out without waiting).
#
# - claim for good: keeps, conflicts, prefers, holds another, all held;
# - leases: renewals (the fence only rises), tokens, lost leases;
# - the fence rule, each path of fence_rule.pl: a lease taken over after its holder
#   crashed starts above its fence; a crashed holder keeps its own lease
#   within its wait or moves, leaving its fence; a release fences the id
#   just past its last id, never below its floor; park keeps the lease with
#   its fence lowered; free() raises a fence and never lowers it; a
#   permanent claim takes a lease run out, above its fence; no claim takes
#   an id fenced past usable_ms; ids beyond max are given up, their fences
#   kept;
# - every argument checked (SQLSTATE, and nothing written), and any
#   isolation level but read committed refused;
# - privileges: no one but the owner may call until granted; the servers'
#   role calls the claims but cannot free, read or write the tables;
# - concurrency: the lock is taken before the clock is read, a caller's
#   lock_timeout bounds the wait, concurrent claims for good on a new
#   datacenter and lease churn from many sessions never give one id to two
#   holders;
# - pg_dump keeps the claims and the fences.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $offset = 0;
my $db = SnowidCoordDb->new('coord', clock => $clock);

# Calls $call in the coordination database (a call, or [ call, role ]);
# passes if the fields @$fields of its outcome are @$expected ($name).
# Returns the outcome.
sub outcome_is
{
	my ($call, $fields, $expected, $name) = @_;
	my $o = $db->call(ref $call ? @$call : $call);

	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is_deeply([ @$o{@$fields} ], $expected, $name);
	return $o;
}
my $node = $db->node;

# Moves the coordination server's clock forward by s seconds
sub advance
{
	my ($s) = @_;

	$offset += $s;
	$clock->set("+$offset");
	return;
}

# A new lease token, quoted for SQL
my $tokens = 0;
sub tok { return sprintf("'%016x'", ++$tokens); }

# A usable_ms no fence lies past: two days ahead of the coordination
# server's clock, which only moves forward here (the functions refuse one
# more than two days and an hour ahead)
my $far = $db->now_ms + 172800000;

# -- installation ----------------------------------------------------------

is( $db->sql(undef, q{
		SELECT r.rolsuper, e.extowner::regrole, e.extversion
		FROM pg_extension e JOIN pg_roles r ON r.oid = e.extowner
		WHERE e.extname = 'snowid_coordinator'}),
	'f|coord_owner|' . (slurp_file("$FindBin::RealBin/../../../snowid_coordinator.control")
		=~ /^default_version = '([^']+)'/m)[0],
	'CREATE EXTENSION snowid_coordinator by a role that is no superuser: it owns the extension, of the default version');
is( $db->sql(undef, q{
		SELECT string_agg(p.proname || ' ' || p.prosecdef::int || ' '
						  || p.proowner::regrole || ' '
						  || p.proconfig[1], E'\n'
						  ORDER BY p.proname)
		FROM pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
		  AND p.proname IN ('run_claim', 'run_lease_claim', 'run_lease_renew',
							'run_lease_release', 'free', 'reset_secret')}),
	join("\n",
		map { "$_ 1 coord_owner search_path=pg_catalog, pg_temp" }
		  qw(free reset_secret run_claim run_lease_claim run_lease_release
		  run_lease_renew)),
	'the six functions that write run as the owner, with search_path pg_catalog, pg_temp');
is( $db->sql(undef, q{
		SELECT count(*) FROM pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace AND p.prosecdef
		  AND p.proconfig @> '{enable_indexscan=on,enable_seqscan=on,enable_nestloop=on,jit=off,max_parallel_workers_per_gather=0}'}),
	$db->sql(undef, q{
		SELECT count(*) FROM pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace AND p.prosecdef}),
	'and every function a role may be granted runs under the planner\'s own settings, whatever its caller\'s');
is( $db->sql(undef, q{
		SELECT string_agg(p.proname || ' ' || p.prokind::text || ' ' || p.prosecdef::int
						  || ' ' || coalesce(array_to_string(p.proconfig, ','), '-'),
						  E'\n' ORDER BY p.proname)
		FROM pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
		  AND p.proname IN ('claim', 'lease_claim', 'lease_renew',
							'lease_release')}),
	join("\n", map { "$_ p 0 -" }
		  qw(claim lease_claim lease_release lease_renew)),
	'the servers\' four entry points are procedures that run as their caller and can commit');
$db->sql(undef, 'CREATE ROLE coord_stranger LOGIN');
is( $db->sql(undef, q{
		SELECT count(*) FROM pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
		  AND has_function_privilege('coord_stranger', p.oid, 'EXECUTE')}),
	0, 'no function of the extension may be called by PUBLIC');

# A schema of the extension's name that exists already is not adopted:
# another role's (who could drop or replace the tables), or one holding
# objects.  The installing role's default privileges grant no one anything
# on the extension's objects.
$node->safe_psql('postgres', q{
	CREATE DATABASE adopted OWNER coord_owner;
	CREATE DATABASE defaults OWNER coord_owner;
});
$node->safe_psql('adopted', q{
	CREATE SCHEMA snowid_coordinator AUTHORIZATION coord_stranger;
	GRANT ALL ON SCHEMA snowid_coordinator TO coord_owner;
});
sub install_error
{
	my ($dbname) = @_;
	my ($ret, $out, $err) = $node->psql($dbname,
		'CREATE EXTENSION snowid_coordinator',
		extra_params => [ '-U', 'coord_owner', '-v', 'VERBOSITY=verbose' ]);

	return $ret == 0 ? 'installed' : $err;
}
like(install_error('adopted'),
	qr/ERROR:  42P06: schema "snowid_coordinator" exists already\n.*DETAIL:  It is owned by coord_stranger/s,
	'a schema of its name that another role owns is refused');
$node->safe_psql('adopted', q{
	ALTER SCHEMA snowid_coordinator OWNER TO coord_owner;
	CREATE TABLE snowid_coordinator.worker_ids_old (x int);
	ALTER TABLE snowid_coordinator.worker_ids_old OWNER TO coord_owner;
});
like(install_error('adopted'), qr/ERROR:  42P06: schema "snowid_coordinator" exists already/,
	'so is one of its own that holds objects');
$node->safe_psql('defaults', q{
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT ALL ON TABLES TO coord_stranger;
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT ALL ON FUNCTIONS TO coord_stranger;
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT ALL ON SCHEMAS TO coord_stranger;
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT ALL ON TYPES TO coord_stranger;
});
is(install_error('defaults'), 'installed',
	'installed by a role with default privileges');
is( $node->safe_psql('defaults', q{
		SELECT count(*) FROM (
			SELECT a.grantee FROM pg_namespace n, aclexplode(n.nspacl) a
			WHERE n.nspname = 'snowid_coordinator'
			UNION ALL
			SELECT a.grantee FROM pg_class c, aclexplode(c.relacl) a
			WHERE c.relnamespace = 'snowid_coordinator'::regnamespace
			UNION ALL
			SELECT a.grantee FROM pg_proc p, aclexplode(p.proacl) a
			WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
			UNION ALL
			SELECT a.grantee FROM pg_type t, aclexplode(t.typacl) a
			WHERE t.typnamespace = 'snowid_coordinator'::regnamespace) g
		WHERE g.grantee = 'coord_stranger'::regrole}),
	0, 'which grant no one anything on its schema, tables, functions or types');
my ($ret, $out, $err) = $node->psql('defaults',
	'SELECT count(*) FROM snowid_coordinator.worker_ids',
	extra_params => [ '-U', 'coord_stranger' ]);
like($err, qr/permission denied for schema snowid_coordinator/,
	'a role the default privileges named cannot read the claims');
is($node->safe_psql('defaults', q{
		SELECT count(*) FROM snowid_coordinator.worker_ids}, extra_params => [ '-U', 'coord_owner' ]),
	0, 'while the owner can');
$db->grant;
# The datacenters the calls below claim in, marked brand new by an
# administrator before their first claim (the forgetting rule): a call
# that declares no quiet period, as these do, keeps the rule too, and a
# datacenter with no record would start a quiet period at its first call.
# (Datacenter 99 is never used.)
$db->sql('coord_admin',
	'SELECT count(snowid_coordinator.new_datacenter(d)) FROM '
	  . 'unnest(ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 20, 21, 30]) d');

# -- claims for good --------------------------------------------------------

my $o = outcome_is("claim(1, 'a', -1, 3, -1, $far)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, 0 ],
	'a claim for good takes the lowest free id, with floor 0 (no fence)');
my $before = $db->state;
$o = outcome_is("claim(1, 'a', -1, 3, -1, $far)", [qw(outcome worker_id)], [ 'ok', 0 ],
	'a claims again: it keeps its id');
is($db->state, $before, 'and nothing is written');
$o = outcome_is("claim(1, 'b', 0, 3, -1, $far)",
	[qw(outcome worker_id holder)], [ 'conflict', 0, 'a' ],
	'b configured with the id a holds: conflict, naming a');
is($db->state, $before, 'a refusal writes nothing');
$o = outcome_is("claim(1, 'b', -1, 3, 2, $far)", [qw(outcome worker_id)], [ 'ok', 2 ],
	'b with a preferred id that is free takes it');
$o = outcome_is("claim(1, 'a', 1, 3, -1, $far)", [qw(outcome worker_id)], [ 'holds_other', 0 ],
	'a configured with another id than the one it holds: holds_other, naming its id');
$db->call("claim(1, 'c', -1, 3, -1, $far)");
$o = outcome_is("claim(1, 'd', -1, 3, 0, $far)", [qw(outcome worker_id)], [ 'ok', 3 ],
	'a preferred id that is held is passed by for the lowest free one');
$before = $db->state;
$o = $db->call("claim(1, 'e', -1, 3, -1, $far)");
is_deeply($o,
	{ outcome => 'all_held', worker_id => undef, floor_ms => undef,
	  fence_ms => undef, lease_ms => undef, holder => undef,
	  generation => undef, counter => undef },
	'with every id held: all_held, and nothing else');
is($db->state, $before, 'and nothing is written');
like($db->sql_error('coord_fleet',
		$db->call_sql("claim(1, 'e', 4, 3, -1, $far)")),
	qr/^22023: worker id 4 exceeds the highest worker id 3$/,
	'a configured id past max is an error');
is( $db->sql('coord_admin',
		"SELECT holder, on_lease, live, lease_expires IS NULL, fence IS NULL, fence_ms"
		  . ' FROM snowid_coordinator.workers WHERE datacenter = 1 ORDER BY worker_id'),
	"a|f|t|t|t|0\nc|f|t|t|t|0\nb|f|t|t|t|0\nd|f|t|t|t|0",
	'the view workers shows who holds what');

# -- one call at a time per datacenter ---------------------------------------

# A call waits for the lock of its datacenter, which another holds until it
# commits (here the owner, by hand: no call keeps it past its CALL, see
# 106); the caller's lock_timeout bounds the wait.  (Tested while the
# server's clock is not offset: libfaketime, which moved this clock before
# SnowidTest::Clock did, delayed the server's timers by the offset.)
my $lock_dc30 = 'BEGIN; SELECT * FROM snowid_coordinator.datacenters'
  . ' WHERE datacenter = 30 FOR UPDATE';
$db->call("claim(30, 'h', -1, 3, -1, $far)");
my $holder = $node->background_psql('coord');
$holder->query_safe($lock_dc30);
my $waiter = $db->start_psql('coord_fleet',
	"SET lock_timeout = '200ms';\n"
	  . $db->call_sql("claim(30, 'w2', -1, 3, -1, $far)") . ";\n");
is($waiter->finish, 3, 'with lock_timeout set by the caller, the wait ends');
like($waiter->stderr, qr/ERROR:  55P03: canceling statement due to lock timeout/,
	'with lock_not_available');
$holder->query_safe('COMMIT');

# -- concurrency ------------------------------------------------------------

# Before the clock is moved: libfaketime, which moved this clock before
# SnowidTest::Clock did, delayed the server's timers by the offset, the
# deadlock check of a lock wait among them.  A CI run hung an
# hour in the lease churn below, which ran then with the clock 192 s ahead
# (one of the 8 sessions never ended; what it waited for was not logged).
# Here the sessions run on the server's own clock, and one that does not
# end within 180 s fails the test, showing what each session waits for.

# Claims for good from 12 sessions at once, on a datacenter no call used
# yet (whose lock row they all insert): 8 ids, 8 holders.
my $gate = $db->close_gate;
my @sessions = map {
	$db->start_psql('coord_fleet',
		$db->call_sql("claim(20, 'perm $_', -1, 7, -1, $far)") . ";\n",
		1)
} 1 .. 12;
$db->open_gate($gate, 12);
my (%ids, %outcomes, $failed);
for my $s (@sessions)
{
	$failed++ if $s->finish != 0;
	diag($s->stderr) if $s->stderr ne '';
	my ($out, $id) = split /\|/, (split /\n/, $s->stdout)[-1] // '';
	$outcomes{ $out // 'none' }++;
	$ids{$id}++ if ($out // '') eq 'ok';
}
ok(!$failed, '12 sessions claim for good at once on a new datacenter, without error');
is_deeply(\%outcomes, { ok => 8, all_held => 4 }, '8 are granted an id, 4 find all held');
is_deeply([ sort { $a <=> $b } keys %ids ], [ 0 .. 7 ],
	'each of the 8 ids once');

# Lease churn: 8 sessions over 4 ids, each call a transaction of its own.
# Each grant is mirrored in the table held once granted, and removed from
# it before it is given back; the table's primary key admits one holder
# per id: a second grant of a held id would fail the session.  Renewals
# and releases of a lease never find it lost (leases do not run out here).
$db->sql(undef, q{
	CREATE TABLE public.held (worker_id integer PRIMARY KEY, who text NOT NULL);
	CREATE TABLE public.tally (who text, grants integer, all_held integer);
	GRANT SELECT, INSERT, DELETE ON public.held, public.tally TO coord_fleet;
});
# the outcome of a CALL into record v, as named arguments
my $into = sub {
	my ($v) = @_;
	return join(', ',
		map { "$_ => $v.$_" }
		  qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter));
};
my $churn = sub {
	my ($i) = @_;
	return qq{
DO \$do\$
DECLARE
	secret text := '@{[ SnowidCoordDb::secret_of("'churn $i'") ]}';
	o snowid_coordinator.outcome;
	r snowid_coordinator.outcome;
	tok text;
	grants integer := 0;
	held integer := 0;
BEGIN
	FOR i IN 1..60 LOOP
		tok := substr(md5(random()::text), 1, 16);
		CALL snowid_coordinator.lease_claim(21, 'churn $i', secret, 3, 600000, 0, $far, -1, 0, tok,
			@{[ $into->('o') ]});
		IF o.outcome = 'ok' THEN
			INSERT INTO public.held VALUES (o.worker_id, 'churn $i');
			grants := grants + 1;
		ELSIF o.outcome = 'all_held' THEN
			held := held + 1;
		ELSE
			RAISE EXCEPTION 'lease claim: %', o;
		END IF;
		COMMIT;
		CONTINUE WHEN o.outcome <> 'ok';
		CALL snowid_coordinator.lease_renew(21, 'churn $i', secret, o.worker_id, 600000, 1, tok,
			@{[ $into->('r') ]});
		IF r.outcome <> 'ok' THEN
			RAISE EXCEPTION 'renewal of worker id % lost: %', o.worker_id, r;
		END IF;
		DELETE FROM public.held WHERE worker_id = o.worker_id;
		COMMIT;
		CALL snowid_coordinator.lease_release(21, 'churn $i', secret, o.worker_id, 1, false, tok,
			@{[ $into->('r') ]});
		IF r.outcome <> 'ok' THEN
			RAISE EXCEPTION 'release of worker id % lost: %', o.worker_id, r;
		END IF;
	END LOOP;
	INSERT INTO public.tally VALUES ('churn $i', grants, held);
END
\$do\$;
};
};
$gate = $db->close_gate;
@sessions = map { $db->start_psql('coord_fleet', $churn->($_), 1) } 1 .. 8;
$db->open_gate($gate, 8);
$failed = 0;
for my $s (@sessions)
{
	next if $s->finish == 0;
	$failed++;
	diag($s->stderr);
}
is($failed, 0,
	'8 sessions churning leases over 4 ids: no id granted to two holders, no lease lost');
my ($grants, $all_held) = split /\|/,
  $db->sql(undef, 'SELECT sum(grants), sum(all_held) FROM public.tally');
is($grants + $all_held, 480, 'every session made its 60 claims');
note("$grants grants, $all_held claims found all 4 ids held");
cmp_ok($grants, '>=', 60, 'and many were granted');
is($db->sql(undef, q{
	SELECT count(*) FROM snowid_coordinator.worker_ids
	WHERE datacenter = 21 AND holder IS NOT NULL}), 0, 'every lease was given back');

# The lock comes before the clock: a call that waited for the lock reads
# the clock once it has it.
$holder->query_safe($lock_dc30);
my $t0 = $db->now_ms;
$waiter = $db->start_psql('coord_fleet',
	$db->call_sql("lease_claim(30, 'waiter', 3, 10000, 0, $far, -1, 0, @{[ tok() ]})") . ";\n");
$node->poll_query_until('coord', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE datname = 'coord' AND wait_event_type = 'Lock'})
  or die 'the lease claim did not wait for the lock';
advance(100);
$holder->query_safe('COMMIT');
is($waiter->finish, 0, 'a lease claim waits for the lock a claim holds');
like($waiter->stdout, qr/^ok\|/, 'and is granted once it is let go');
my $wid = $db->sql(undef, q{
	SELECT worker_id FROM snowid_coordinator.worker_ids
	WHERE datacenter = 30 AND holder = 'waiter'});
cmp_ok($db->row(30, $wid)->{lease_expires_ms}, '>=', $t0 + 100000 + 10000,
	'its lease runs from the clock after the wait: the clock is read once the lock is taken');
$holder->quit;

# -- leases, renewals, tokens -------------------------------------------------

my $t = $db->now_ms;
my $tok_l1 = tok();
$o = $db->call("lease_claim(2, 'l1', 1, 60000, $t, $t, -1, 0, $tok_l1)");
is_deeply([ @$o{qw(outcome worker_id floor_ms fence_ms lease_ms)} ],
	[ 'ok', 0, 0, $t + 60000, 60000 ],
	'a lease claim: the lowest free id, floor 0, its fence a lease past where its generator is');
my $r = $db->row(2, 0);
cmp_ok($r->{lease_expires_ms}, '>=', $t + 60000,
	"the lease runs out a lease from the coordination server's clock");
is_deeply([ @$r{qw(holder on_lease lease_floor_ms fence_ms)} ],
	[ 'l1', 't', 0, $t + 60000 ], 'and is kept with its floor and fence');

# (a fence 600 s on, so that once the clock has moved 61 s below, the lease
# has run out and the fence is still ahead, even if the calls in between
# take minutes)
$o = $db->call("lease_renew(2, 'l1', 0, 60000, @{[ $t + 600000 ]}, $tok_l1)");
is_deeply([ @$o{qw(outcome worker_id floor_ms fence_ms lease_ms)} ],
	[ 'ok', 0, 0, $t + 600000, 60000 ],
	'a renewal moves the fence up to the one wanted');
$o = outcome_is("lease_renew(2, 'l1', 0, 60000, @{[ $t + 1 ]}, $tok_l1)",
	[qw(outcome fence_ms)], [ 'ok', $t + 600000 ],
	'never down: a lower one is answered with the fence as it is');
$before = $db->state;
$o = outcome_is("lease_renew(2, 'l1', 0, 60000, @{[ $t + 610000 ]}, @{[ tok() ]})",
	[qw(outcome worker_id holder)], [ 'lost', 0, 'lease l1' ],
	'a renewal under another token: lost, naming the holder');
$o = outcome_is("lease_renew(2, 'l1', 1, 60000, @{[ $t + 610000 ]}, $tok_l1)",
	[qw(outcome worker_id holder)], [ 'lost', 1, undef ],
	'of an id no one holds: lost, no holder');
$o = $db->call("lease_release(2, 'l1', 0, $t, false, @{[ tok() ]})");
is($o->{outcome}, 'lost', 'a release under another token: lost');
$o = outcome_is("lease_renew(99, 'l1', 0, 60000, $t, $tok_l1)",
	[qw(outcome holder)], [ 'lost', undef ],
	'a renewal in a datacenter never used: lost');
is($db->state, $before, 'and none of them writes anything');

my $tok_l2 = tok();
$t = $db->now_ms;
$o = outcome_is("lease_claim(2, 'l2', 1, 60000, $t, $t, -1, 0, $tok_l2)",
	[qw(outcome worker_id)], [ 'ok', 1 ], 'l2 leases the other id');
$o = $db->call("lease_claim(2, 'l3', 1, 60000, $t, $t, -1, 0, @{[ tok() ]})");
is($o->{outcome}, 'all_held', 'l3: every id is leased, all_held');
$o = outcome_is("claim(2, 'p', 0, 1, -1, $far)", [qw(outcome holder)], [ 'conflict', 'lease l1' ],
	'a claim for good configured with a live lease\'s id: conflict, with "lease " before the holder');

# -- the fence rule -------------------------------------------------------------

# A lease holder crashes (l1: no release, no renewal); once its lease has run
# out, the next holder starts above its fence.  (l2 renews, once for two
# minutes before the clock moves: its lease stays.)  A lease that ran out is
# not renewed, even if no one took it: its holder may have been stopped past
# it while another took the id, which the database then forgot.
my $fence = $db->row(2, 0)->{fence_ms};
$o = $db->call("lease_renew(2, 'l2', 1, 120000, @{[ $t + 1 ]}, $tok_l2)");
is($o->{outcome}, 'ok', 'a renewal may ask for a longer lease');
advance(61);
my $now = $db->now_ms;
$o = $db->call("lease_renew(2, 'l2', 1, 60000, @{[ $now + 60000 ]}, $tok_l2)");
is($o->{outcome}, 'ok', 'a lease renewed before it ran out is renewed');
my $l2_fence = $o->{fence_ms};
cmp_ok($now, '<', $fence, 'the lease of l1 ran out, its fence still ahead');
$before = $db->state;
$o = outcome_is("lease_renew(2, 'l1', 0, 60000, @{[ $now + 60000 ]}, $tok_l1)",
	[qw(outcome worker_id holder)], [ 'lost', 0, 'lease l1' ],
	'a lease that ran out and that no one took is not renewed: lost');
is($db->state, $before, 'and nothing is written');
$before = $db->state;
$o = outcome_is("lease_claim(2, 'l3', 1, 60000, $now, @{[ $now + 1000 ]}, -1, 0, @{[ tok() ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 0, $fence ],
	'l3, which cannot start above that fence yet: fenced, naming the id and its fence');
$o = outcome_is("claim(2, 'p', -1, 1, -1, @{[ $now + 1000 ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 0, $fence ],
	'and so is a claim for good');
is($db->state, $before, 'and neither writes anything');
my $tok_l3 = tok();
$o = outcome_is("lease_claim(2, 'l3', 1, 60000, $now, $fence, -1, 0, $tok_l3)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, $fence ],
	'l3, once it can start at the fence, takes the id of the crashed lease with its fence as floor');
cmp_ok($o->{fence_ms}, '>=', $fence + 60000, 'and a fence a lease past it');
$o = outcome_is("lease_renew(2, 'l1', 0, 60000, $now, $tok_l1)",
	[qw(outcome holder)], [ 'lost', 'lease l3' ],
	'l1, back, finds its lease lost to l3');

# A crashed holder starting again keeps its own lease if it can start above
# its fence within its wait; else it moves, and the id it leaves keeps its
# fence.
$before = $db->state;
$o = outcome_is("lease_claim(2, 'l2', 1, 60000, $now, @{[ $now + 1000 ]}, -1, 0, @{[ tok() ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 1, $l2_fence ],
	'l2 crashed and claims again, its own fence past where it can start and no other id free: fenced');
is($db->state, $before, 'and nothing is written');
$o = outcome_is("lease_claim(2, 'l2', 1, 60000, $now, @{[ $now + 1000 ]}, -1, 60000, @{[ tok() ]})",
	[qw(outcome worker_id floor_ms)], [ 'ok', 1, $l2_fence ],
	'with a wait that reaches its fence, it keeps its id, its own fence as floor');
$now = $db->now_ms;
$o = $db->call("lease_claim(3, 'm', 2, 60000, @{[ $now + 100000 ]}, @{[ $now + 1000 ]}, -1, 0, @{[ tok() ]})");
my $m_fence = $o->{fence_ms};
is_deeply([ @$o{qw(outcome worker_id)} ], [ 'ok', 0 ], 'm, 100 s ahead, leases an id');
$o = outcome_is("lease_claim(3, 'm', 2, 60000, $now, @{[ $now + 1000 ]}, 0, 0, @{[ tok() ]})",
	[qw(outcome worker_id floor_ms)], [ 'ok', 1, 0 ],
	'm crashed, its fence past its wait: it leases another id, even preferring its own');
$r = $db->row(3, 0);
is_deeply([ @$r{qw(holder on_lease fence_ms)} ], [ undef, 'f', $m_fence ],
	'the id it left is no one\'s, its fence kept');

# A release fences the id just past the holder's last id, never below the
# floor it took the id with.
$t = $db->now_ms;
my $tok_r = tok();
$db->call("lease_claim(4, 'r', 0, 60000, $t, $t, -1, 0, $tok_r)");
$o = outcome_is("lease_release(4, 'r', 0, @{[ $t + 500 ]}, false, $tok_r)",
	[qw(outcome worker_id fence_ms)], [ 'ok', 0, $t + 500 ],
	'a release leaves the fence just past the last id, lowered from a lease ahead');
$r = $db->row(4, 0);
is_deeply([ @$r{qw(holder on_lease lease_token fence_ms)} ],
	[ undef, 'f', undef, $t + 500 ], 'and the id is no one\'s');
$o = outcome_is("lease_release(4, 'r', 0, $t, false, $tok_r)",
	[qw(outcome holder)], [ 'lost', undef ],
	'a second release: lost');
my $tok_s = tok();
$o = outcome_is("lease_claim(4, 's', 0, 60000, $t, @{[ $t + 1000 ]}, -1, 0, $tok_s)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, $t + 500 ],
	'the next holder starts just past the last id of the one before');
$o = $db->call("lease_release(4, 's', 0, 5, false, $tok_s)");
is($o->{fence_ms}, $t + 500,
	'a release below the floor leaves the fence at the floor');

# Park: the lease stays, its fence lowered to just past the last id (never
# below the floor); the same server takes it back at once.
$t = $db->now_ms;
my $tok_k = tok();
$db->call("lease_claim(5, 'k', 0, 60000, $t, $far, -1, 0, $tok_k)");
$db->call("lease_renew(5, 'k', 0, 60000, @{[ $t + 90000 ]}, $tok_k)");
$r = $db->row(5, 0);
$o = outcome_is("lease_release(5, 'k', 0, @{[ $t + 300 ]}, true, $tok_k)",
	[qw(outcome fence_ms)], [ 'ok', $t + 300 ],
	'park: the fence is lowered to just past the last id');
my $parked = $db->row(5, 0);
is_deeply(
	[ @$parked{qw(holder on_lease lease_token lease_expires_ms lease_floor_ms)} ],
	[ @$r{qw(holder on_lease lease_token lease_expires_ms lease_floor_ms)} ],
	'and the lease is kept as it was: holder, token, expiry, floor');
$o = $db->call("lease_claim(5, 'j', 0, 60000, $t, $far, -1, 0, @{[ tok() ]})");
is($o->{outcome}, 'all_held', 'no other server takes a parked lease');
$now = $db->now_ms;
$tok_k = tok();
$o = outcome_is("lease_claim(5, 'k', 0, 60000, $t, @{[ $t + 300 ]}, -1, 0, $tok_k)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, $t + 300 ],
	'k, started again, takes its parked lease back at once, above its last id');
$o = $db->call("lease_release(5, 'k', 0, 1, true, $tok_k)");
is($o->{fence_ms}, $t + 300, 'a park below the floor leaves the fence at the floor');

# free(): the administrator's repair raises the fence to the clock plus a
# margin, never lowers it.
$t = $db->now_ms;
$db->call("claim(6, 'p', -1, 1, -1, $far)");
my $tok_q = tok();
$db->call("lease_claim(6, 'q', 1, 60000, @{[ $t + 600000 ]}, $far, -1, 0, $tok_q)");
my $q_fence = $db->row(6, 1)->{fence_ms};
like($db->sql_error('coord_fleet',
		'SELECT * FROM snowid_coordinator.free(6, 0, 5000)'),
	qr/^42501: permission denied for function free$/,
	'the servers\' role may not free an id');
my $t1 = $db->now_ms;
$o = $db->call('free(6, 0, 5000)', 'coord_admin');
my $t2 = $db->now_ms;
is_deeply([ @$o{qw(outcome worker_id holder)} ], [ 'ok', 0, 'p' ],
	'an administrator frees a permanent holder\'s id, naming who held it');
ok($o->{fence_ms} >= $t1 + 5000 && $o->{fence_ms} <= $t2 + 5000,
	"its fence is the coordination server's clock plus the margin");
my $p_fence = $o->{fence_ms};
is($db->row(6, 0)->{holder}, undef, 'and the id is no one\'s');
$o = $db->call('free(6, 0, 0)', 'coord_admin');
is($o->{fence_ms}, $p_fence, 'freed again with a smaller margin: the fence is not lowered');
$o = outcome_is([ 'free(6, 1, 0)', 'coord_admin' ], [qw(holder fence_ms)], [ 'lease q', $q_fence ],
	'a lease freed: its fence, a lease past its holder\'s clock, is kept');
$o = outcome_is("lease_renew(6, 'q', 1, 60000, $t, $tok_q)",
	[qw(outcome holder)], [ 'lost', undef ], 'and its holder has lost it');
$o = outcome_is("claim(6, 'p', -1, 1, -1, @{[ $p_fence - 1 ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 0, $p_fence ],
	'p claims again: both ids fenced past where it can start, it is told of the one fenced least far');
$o = outcome_is("claim(6, 'p', -1, 1, -1, $p_fence)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, $p_fence ],
	'and takes it, with its fence as floor, once it can start there');

# A permanent claim takes a lease that ran out, above its fence, never a
# live one.
$t = $db->now_ms;
my $tok_v = tok();
$o = $db->call("lease_claim(7, 'v', 0, 30000, @{[ $t + 20000 ]}, $far, -1, 0, $tok_v)");
$fence = $o->{fence_ms};
$o = outcome_is("claim(7, 'w', 0, 0, -1, $far)", [qw(outcome holder)], [ 'conflict', 'lease v' ],
	'a claim for good of a live lease\'s id: conflict');
advance(31);
$before = $db->state;
$o = outcome_is("claim(7, 'w', 0, 0, -1, @{[ $fence - 1 ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 0, $fence ],
	'the lease ran out: a configured claim that cannot start above its fence is fenced');
$o = $db->call("claim(7, 'w', -1, 0, -1, @{[ $fence - 1 ]})");
is($o->{outcome}, 'fenced', 'and so is a free choice');
is($db->state, $before, 'and nothing is written');
$o = outcome_is("claim(7, 'w', 0, 0, -1, $fence)",
	[qw(outcome worker_id floor_ms)], [ 'ok', 0, $fence ],
	'a permanent claim takes the lease that ran out, with its fence as floor');
$r = $db->row(7, 0);
is_deeply([ @$r{qw(holder on_lease lease_token fence_ms)} ],
	[ 'w', 'f', undef, $fence ], 'held for good, the lease gone, the fence kept');
$o = outcome_is("lease_renew(7, 'v', 0, 30000, $t, $tok_v)",
	[qw(outcome holder)], [ 'lost', 'w' ], 'v has lost it to w');

# No claim takes an id fenced past usable_ms: a free choice passes it by.
$db->call("claim(8, 'x', -1, 2, -1, $far)");
$o = $db->call('free(8, 0, 100000000)', 'coord_admin');
$fence = $o->{fence_ms};
$now = $db->now_ms;
$o = outcome_is("claim(8, 'y', -1, 2, 0, @{[ $now + 1000 ]})",
	[qw(outcome worker_id floor_ms)], [ 'ok', 1, 0 ],
	'a free choice passes the fenced id by, preferred or not');
$o = outcome_is("lease_claim(8, 'z', 2, 60000, $now, @{[ $now + 1000 ]}, 0, 0, @{[ tok() ]})",
	[qw(outcome worker_id)], [ 'ok', 2 ], 'and so does a lease claim');
$before = $db->state;
$o = outcome_is("claim(8, 'u', 0, 2, -1, @{[ $now + 1000 ]})",
	[qw(outcome worker_id fence_ms)], [ 'fenced', 0, $fence ],
	'a configured claim of the fenced id is refused');
is($db->state, $before, 'and writes nothing');

# Ids beyond max (a layout made narrower) are given up, fenced at what
# their holder may have issued: never lower than they were.
$now = $db->now_ms;
$db->call("claim(12, 'a', 5, 7, -1, $far)");
$db->call("lease_claim(12, 'b', 7, 60000, @{[ $now + 1000000 ]}, $far, 6, 0, @{[ tok() ]})");
my $b_fence = $db->row(12, 6)->{fence_ms};
$o = outcome_is("claim(12, 'a', -1, 3, -1, @{[ $now + 1000 ]})",
	[qw(outcome worker_id)], [ 'ok', 0 ],
	'a, holding an id beyond the new max, claims one within it');
$r = $db->row(12, 5);
is_deeply([ $r->{holder}, $r->{fence_ms} ], [ undef, $now + 1001 ],
	'and gives the other up, fenced just past its usable_ms (which it may have issued at), as free() asks');
$o = outcome_is("lease_claim(12, 'b', 3, 60000, $now, @{[ $now + 1000 ]}, 6, 0, @{[ tok() ]})",
	[qw(outcome worker_id)], [ 'ok', 1 ], 'so does a lease holder');
$r = $db->row(12, 6);
is_deeply([ $r->{holder}, $r->{fence_ms} ], [ undef, $b_fence ],
	'whose fence beyond max is kept, not lowered');

# An identity of 512 bytes is taken; 513 is not (below)
$o = $db->call("claim(13, repeat('é', 256), -1, 0, -1, $far)");
is($o->{outcome}, 'ok', 'an identity of 512 bytes is taken');

# -- the arguments are checked ----------------------------------------------

$before = $db->state;
my $tk = tok();
for my $case (
	[ "claim(NULL, 'a', -1, 3, -1, 0)", '22004', 'datacenter must not be null' ],
	[ "claim(-1, 'a', -1, 3, -1, 0)", '22023', 'datacenter is out of range: -1' ],
	[ "claim(16777216, 'a', -1, 3, -1, 0)", '22023', 'datacenter is out of range: 16777216' ],
	[ "claim(1, NULL, -1, 3, -1, 0)", '22004', 'identity must not be null' ],
	[ "claim(1, '', -1, 3, -1, 0)", '22023', 'invalid identity of 0 bytes' ],
	[ "claim(1, repeat('x', 513), -1, 3, -1, 0)", '22023', 'invalid identity of 513 bytes' ],
	[ "claim(1, repeat('é', 257), -1, 3, -1, 0)", '22023', 'invalid identity of 514 bytes' ],
	[ "claim(1, E'a\\nb', -1, 3, -1, 0)", '22023', 'invalid identity' ],
	[ "claim(1, E'a\\x7fb', -1, 3, -1, 0)", '22023', 'invalid identity' ],
	[ "claim(1, 'lease a', -1, 3, -1, 0)", '22023', "invalid identity 'lease a'" ],
	[ "claim(1, 'a', -2, 3, -1, 0)", '22023', 'want is out of range: -2' ],
	[ "claim(1, 'a', NULL, 3, -1, 0)", '22004', 'want must not be null' ],
	[ "claim(1, 'a', -1, -1, -1, 0)", '22023', 'max is out of range: -1' ],
	[ "claim(1, 'a', -1, 3, -2, 0)", '22023', 'prefer is out of range: -2' ],
	[ "claim(1, 'a', -1, 3, -1, -1)", '22023', 'usable_ms is out of range: -1' ],
	[ "claim(1, 'a', -1, 3, -1, 253402300800001)", '22023', 'usable_ms is out of range: 253402300800001' ],
	[ "claim(1, 'a', -1, 3, -1, NULL)", '22004', 'usable_ms must not be null' ],
	[ "claim(1, 'a', -1, 3, -1, 0, quiet_ms => -1)", '22023', 'quiet_ms is out of range: -1' ],
	[ "claim(1, 'a', -1, 3, -1, 0, clock_margin_ms => -1)", '22023', 'clock_margin_ms is out of range: -1' ],
	[ "claim(1, 'a', -1, 3, -1, 0, clock_margin_ms => 3600001)", '22023', 'clock_margin_ms is out of range: 3600001' ],
	[ "lease_claim(1, 'a', 3, 1000, 0, 0, -1, 0, $tk, clock_margin_ms => 3600001)", '22023', 'clock_margin_ms is out of range: 3600001' ],
	[ "lease_renew(1, 'a', 0, 1000, 0, $tk, clock_margin_ms => 3600001)", '22023', 'clock_margin_ms is out of range: 3600001' ],
	[ "lease_claim(1, 'a', 3, 0, 0, 0, -1, 0, $tk)", '22023', 'lease_ms is out of range: 0' ],
	[ "lease_claim(1, 'a', 3, 1000, -1, 0, -1, 0, $tk)", '22023', 'client_ms is out of range: -1' ],
	[ "lease_claim(1, 'a', 3, 1000, 0, 0, -1, -1, $tk)", '22023', 'wait_ms is out of range: -1' ],
	[ "lease_claim(1, 'a', NULL, 1000, 0, 0, -1, 0, $tk)", '22004', 'max must not be null' ],
	[ "lease_claim(1, 'a', 3, 1000, 0, 0, -1, 0, NULL)", '22004', 'token must not be null' ],
	[ "lease_claim(1, 'a', 3, 1000, 0, 0, -1, 0, '0123456789ABCDEF')", '22023', "invalid lease token '0123456789ABCDEF'" ],
	[ "lease_claim(1, 'a', 3, 1000, 0, 0, -1, 0, '0123456789abcde')", '22023', "invalid lease token '0123456789abcde'" ],
	[ "lease_renew(1, 'a', -1, 1000, 0, $tk)", '22023', 'worker_id is out of range: -1' ],
	[ "lease_renew(1, 'a', 0, NULL, 0, $tk)", '22004', 'lease_ms must not be null' ],
	[ "lease_renew(1, 'a', 0, 1000, -5, $tk)", '22023', 'want_ms is out of range: -5' ],
	[ "lease_release(1, 'a', 0, 0, NULL, $tk)", '22004', 'park must not be null' ],
	[ "lease_release(1, 'a', 0, -1, false, $tk)", '22023', 'final_ms is out of range: -1' ],
	[ "lease_release(1, 'a', 0, 0, false, 'g123456789abcdef')", '22023', "invalid lease token 'g123456789abcdef'" ],
	[ 'free(1, NULL, 0)', '22004', 'worker_id must not be null' ],
	[ 'free(1, 0, -1)', '22023', 'margin_ms is out of range: -1' ],
	[ 'free(1, 16777216, 0)', '22023', 'worker_id is out of range: 16777216' ])
{
	my ($call, $state, $msg) = @$case;
	is($db->sql_error(undef, $db->call_sql($call)),
		"$state: $msg", "$call: $state");
}
like($db->sql_error(undef, "SET default_transaction_isolation = 'repeatable read';\n"
		  . $db->call_sql("claim(1, 'a', -1, 3, -1, 0)")),
	qr/^0A000: snowid_coordinator cannot run at the repeatable read isolation level$/,
	'a call at the repeatable read isolation level is refused');
is($db->state, $before, 'no refused call wrote anything');

# -- privileges -------------------------------------------------------------

like($db->sql_error('coord_stranger',
		$db->call_sql("claim(1, 'a', -1, 3, -1, 0)")),
	qr/^42501: permission denied for schema snowid_coordinator$/,
	'a role without grants may not call the claims');
$db->sql(undef, 'GRANT USAGE ON SCHEMA snowid_coordinator TO coord_stranger');
like($db->sql_error('coord_stranger',
		$db->call_sql("claim(1, 'a', -1, 3, -1, 0)")),
	qr/^42501: permission denied for procedure claim$/,
	'not even with the schema granted');
for my $case (
	[ 'UPDATE snowid_coordinator.worker_ids SET fence_ms = 0', 'table worker_ids' ],
	[ 'DELETE FROM snowid_coordinator.worker_ids', 'table worker_ids' ],
	[ 'SELECT * FROM snowid_coordinator.worker_ids', 'table worker_ids' ],
	[ 'INSERT INTO snowid_coordinator.datacenters VALUES (50)', 'table datacenters' ],
	[ 'SELECT * FROM snowid_coordinator.workers', 'view workers' ],
	[ 'SELECT snowid_coordinator.retire(1, 0, 0)', 'function retire' ],
	[ 'CREATE TABLE snowid_coordinator.t (i int)', 'schema snowid_coordinator' ])
{
	my ($sql, $what) = @$case;
	like($db->sql_error('coord_fleet', $sql),
		qr/^42501: permission denied for \Q$what\E$/,
		"the servers' role, granted the claims: $sql is denied");
}
is($db->state, $before, 'and nothing was written');

# -- pg_dump keeps the claims and the fences --------------------------------

my $dump = PostgreSQL::Test::Utils::tempdir() . '/coord.sql';
$node->command_ok([ 'pg_dump', '-f', $dump, '-d', $node->connstr('coord') ],
	'pg_dump of the coordination database');
$node->safe_psql('postgres', 'CREATE DATABASE coord2 OWNER coord_owner');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d', $node->connstr('coord2') ],
	'restored into another database');
my $tables = 'SELECT * FROM snowid_coordinator.datacenters ORDER BY 1;'
  . ' SELECT * FROM snowid_coordinator.worker_ids ORDER BY 1, 2';
is($node->safe_psql('coord2', $tables), $node->safe_psql('coord', $tables),
	'with every claim, lease and fence');

done_testing();
