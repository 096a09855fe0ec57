# An administrator's free() of a stopped server, another server's claim of
# its worker id, then the stopped server restarts while the store is down
# (a store restart, a restore in progress): the restarted server must not
# issue with the id the other server holds.
#
# 161 covers the path with the store up at the restart (the restart rule:
# a restart is a new claim after a loss).  With the store unreachable at
# the restart, releases up to 1.3 took the cache file's id with a WARNING,
# and the other server, a permanent holder, issued on with the same id: no
# loss of the store was needed at all.  The confirmation rule: a restart
# issues only once the store granted it a worker id; until then each call
# is refused (08006), naming the cached id, and the server runs on.  Once
# the store answers, the restarted server claims an id of its own.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/..";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();

# The store keeps its claims across its stop and start, as a real one does:
# for Redis an append-only file, written through on every write (a
# coordination database keeps them anyway).  Its restart is a possible
# loss all the same: a quiet period, which B's check-in continues.
my $coord = SnowidCoord->new(
	args => [ '--appendonly', 'yes', '--appendfsync', 'always' ]);
my $dc = 6;
my %common = ('snowid.datacenter_id' => $dc, 'snowid.clock_margin' => '1s');

my $a = SnowidLease::start_node($coord, 'a', {%common});
my $b = SnowidLease::start_node($coord, 'b', {%common});
my $burst = SnowidTest::Bursts->sql;
$_->safe_psql('postgres', $burst) for ($a, $b);

$a->safe_psql('postgres', 'SELECT snowid_next()');
my $wa = SnowidLease::worker_id($a);
note("A holds worker id $wa");
$a->stop;

# the administrator frees A's id, and B claims it
$coord->free($dc, $wa, 500);
$b->safe_psql('postgres', 'SELECT snowid_next()');
my $wb = SnowidLease::worker_id($b);
is($wb, $wa, 'B claims the worker id freed from A');

# the store goes down (a restart, a restore); A starts meanwhile
$coord->stop;
$a->start;
my ($ret, $out, $err) = $a->psql('postgres', 'SELECT snowid_next()');
my $first = SnowidLease::worker_id($a);
note("A's first call with the store down: ret $ret, worker id '$first'"
	  . ($err ne '' ? ", stderr: $err" : ''));
isnt($first, $wb, 'A, restarted while the store is down, does not take the worker id B holds');
isnt($ret, 0, 'A refuses to issue while the store is down');
like($err, qr/ERROR:  snowid cannot confirm worker id $wa of datacenter $dc in \w+\n/,
	'A\'s refusal names the cached worker id it cannot confirm');
like($err, qr/HINT:  This server issues no ids until .* answers; the next call claims again\./,
	'A\'s refusal says what it waits for');

my $bursts = SnowidTest::Bursts->new->start(
	{ a => $a->connstr('postgres'), b => $b->connstr('postgres') }, 3)->finish;
note("ids issued by both A and B: $bursts->{both}");
is($bursts->{both}, 0, 'no id is issued by both A and B');
is($bursts->{shared}, 0, 'no millisecond of one worker id is issued by both A and B');
ok(($bursts->{n}{b} // 0) > 0, 'B, the running holder, issues through the store outage');
ok(!$bursts->{n}{a}, 'A issues no id while the store is down');

# the store back: A's next call claims (after the quiet period its restart
# starts), an id other than B's, and B issued throughout
$coord->start;
$a->safe_psql('postgres', 'SELECT snowid_next()');
my $again = SnowidLease::worker_id($a);
isnt($again, $wb, 'the store back: A claims a worker id other than B\'s');
is(SnowidLease::worker_id($b), $wb, 'B still holds its worker id');
$bursts = SnowidTest::Bursts->new->start(
	{ a => $a->connstr('postgres'), b => $b->connstr('postgres') }, 3)->finish;
is($bursts->{both}, 0, 'the store back: no id is issued by both A and B');
$_->stop for ($a, $b);
done_testing();
