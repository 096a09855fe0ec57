# The coordinator down: a server that claimed its worker id before, and
# restarts, issues no id until the coordinator confirms it (an
# administrator may have freed it while the server was stopped, and another
# server claimed it: free_then_restart_store_down), a clear error, and it
# keeps running; a new server fails clearly and keeps running; and a copy
# of a data directory (here a base backup started on another port) is told
# nothing of the id its original cached.  Once the coordinator answers,
# the next call claims the cached id back.  A hung coordinator costs one
# session the timeout, not every session queued behind it.  If the
# coordinator loses the claims, a restarting server takes its cached id
# again when free.  Against Redis, or a coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $dc = 2;
my $err;
# The coordinator keeps its claims across a stop and start, as a real one
# does: for Redis an append-only file, written through on every write (a
# coordination database keeps them anyway).
my $coord = SnowidCoord->new(
	args => [ '--appendonly', 'yes', '--appendfsync', 'always' ]);
my $source = $coord->source;
my $ids = SnowidTest::Ledger->new;
# The servers share one machine and its clock (a clock margin of a second):
# a claim after the coordinator's restart waits for a quiet period and its
# floor.
my %margin = ('snowid.clock_margin' => '1s');

my $known = SnowidLease::start_node($coord, 'known', { 'snowid.datacenter_id' => $dc, %margin },
	allows_streaming => 1);

# Another server holds worker id 0, so the known server gets 1.
$coord->add_holder($dc, 0, 'dc=2 host=elsewhere port=5432 sysid=1');
$ids->collect($known, 1000);
my $worker_id = $known->safe_psql('postgres',
	'SELECT worker_id FROM snowid_status()');
is($worker_id, 1, 'the known server claimed the lowest free worker id');
my ($identity) =
  slurp_file($known->data_dir . '/snowid_worker') =~ /identity=(.*)\n/;

# A copy of its data directory, cache file included.
$known->backup('copy');
ok(-f $known->backup_dir . '/copy/snowid_worker',
	'the base backup holds the cache file');

$coord->stop;
my $unreachable = $coord->unreachable;

# The known server restarts without the coordinator: it refuses to issue
# with its cached id, says why and what to do, and keeps running.
my $log_offset = -s $known->logfile;
$known->restart;
$err = SnowidTest::psql_error($known, 'SELECT snowid_next()');
like($err, qr/WARNING:  08001: \Q$unreachable\E\n/,
	'coordinator down, known server: the failed claim is a WARNING');
like($err,
	qr/ERROR:  08006: snowid cannot confirm worker id $worker_id of datacenter $dc in $source\n/,
	'coordinator down, known server: refused, naming its cached id');
like($err, qr/DETAIL:  This server claimed that worker id at an earlier start; while it was stopped, an administrator may have freed it and another server claimed it, which only /,
	'coordinator down, known server: the detail says why');
like($err, qr/HINT:  This server issues no ids until .* answers; the next call claims again\./,
	'coordinator down, known server: the hint says what to do');
SnowidRedis::refused_runs($known, 'coordinator down, known server');
ok(-f $known->data_dir . '/snowid_worker',
	'coordinator down, known server: its cache file is kept');

# A new server cannot get a worker id: a clear error, and it keeps running.
my $new = SnowidLease::start_node($coord, 'new', { 'snowid.datacenter_id' => $dc, %margin });
$err = SnowidTest::psql_error($new, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: \Q$unreachable\E\n/,
	'coordinator down, new server: the error names where the coordinator should be');
like($err,
	SnowidCoord::store() eq 'redis'
	? qr/HINT:  Check that Redis is running and that snowid.redis_url names it\./
	: qr/HINT:  Check that the coordination database is running, that snowid.coordinator_url names it, and that it answers within snowid.coordinator_timeout_ms \(\d+ ms\)\./,
	'coordinator down, new server: hint');
like($err, qr/CONTEXT:  claiming a snowid worker id from $source as "dc=$dc host=\S+ port=@{[$new->port]} sysid=\d+ instance=[0-9a-f]{16}"/,
	'coordinator down, new server: the context names the claiming server');
SnowidRedis::refused_runs($new, 'coordinator down, new server');
is($new->safe_psql('postgres', 'SELECT snowid_from_time(now()) > 0'),
	't', 'coordinator down, new server: snowid_from_time() works');

# The copy has the cache file of the known server, but another port: it
# must not use that worker id.
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($known, 'copy');
$copy->start;
$err = SnowidTest::psql_error($copy, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: \Q$unreachable\E/,
	'copied data directory: with the coordinator down it fails as a new server');
unlike($err, qr/worker id $worker_id\b/,
	'copied data directory: the error says nothing of the original\'s id');

# The coordinator back, with the claims of the other server (0) and of the
# known server.
$coord->start;
is_deeply($coord->owners($dc),
	{ 0 => 'dc=2 host=elsewhere port=5432 sysid=1', $worker_id => $identity },
	'coordinator back: it kept the claims');

# The known server's next call claims its cached id back.
$ids->collect($known, 1000);
is(SnowidRedis::worker($known), "$worker_id|$source",
	'coordinator back: the next call of the known server claims its cached id');

# The new server gets a worker id on its next call, without a restart.
$ids->collect($new, 1000);
is(SnowidRedis::worker($new), "2|$source",
	'coordinator back: the next call of the new server claims');

# The copy claims an id of its own.
$ids->collect($copy, 1000);
is(SnowidRedis::worker($copy), "3|$source",
	'coordinator back: the copy claims an id of its own');

# A hung coordinator (stopped with SIGSTOP: it accepts connections but
# never answers).  Sessions queued behind a claim that timed out fail at
# once instead of each waiting out the timeout again.  Redis accepts the
# connection and never answers the claim (08006); the postmaster of a
# coordination database never completes the connection (08001).  The
# timeout is long enough for all four sessions to queue behind the first
# claim before it runs out, also on a loaded machine (a session that
# arrives after the failure was counted rightly claims again itself); only
# the first session waits it out.
my $timed_out_state = SnowidCoord::store() eq 'redis' ? '08006' : '08001';
# Like the others, it declares the one machine's clock margin of a second:
# with the default of a minute, its check-in reaching the store first after
# the loss below made the store take the known server's re-assertion as
# stale (a margin longer than any quiet period lets none pass, see
# internals.md), and the test relied on the known server's restart calling
# first, which a loaded machine, taking 4 s to restart it, did not.
my $hung = SnowidLease::start_node($coord, 'hung',
	{ 'snowid.datacenter_id' => $dc, 'snowid.coordinator_timeout_ms' => 10000, %margin });
$coord->freeze;

my $gate = SnowidTest::Gate->new($hung);
my @calls = map { $gate->psql('SELECT snowid_next()') } 1 .. 4;
$gate->wait_for(4);
$gate->release;
my ($timed_out, $gave_up) = (0, 0);
for my $call (@calls)
{
	$call->finish;
	$timed_out++ if $call->stderr =~ /ERROR:  $timed_out_state: /;
	$gave_up++
	  if $call->stderr =~ /ERROR:  55000: snowid has no worker id\nDETAIL:  Another session failed to get one while this session waited for it/;
}
$coord->thaw;
my $thawed = $known->safe_psql('postgres', 'SELECT now()');
is($timed_out, 1, 'hung coordinator: one session timed out claiming');
is($gave_up, 3, 'hung coordinator: the sessions queued behind it fail at once');
$ids->collect($hung, 1000);
is($hung->safe_psql('postgres', 'SELECT worker_source FROM snowid_status()'),
	$source, 'coordinator answering again: the next call claims');

# The coordinator loses every claim (Redis: FLUSHALL, eviction or a restart
# without persistence; a coordination database: a restore or a failover
# that lost them).  The restarting server asks for the id in its cache and
# gets it back, not the lowest free id (0), which a server still running
# may use.  Its re-assertion counts as its own only if its last call the
# coordinator granted lies within a quiet period of the loss (a server
# stopped longer ago may have lost its id to another, a grant the
# coordinator forgot: internals.md, "A re-assertion after a loss must be
# recent").  The known server's check-ins failed while the coordinator was
# frozen, so the loss waits for its first check-in since.
# The loss follows a check-in of the known server closely: its re-assertion
# counts only if that check-in was sent within the quiet period less the
# margin (8 s) before the store notices the loss, which the next check-in of
# any server (every 5 s) or the restart's claim does; a check-in seen a few
# seconds late by a loaded machine's polling would leave too little.
my $since = $known->safe_psql('postgres', 'SELECT now()');
$known->poll_query_until('postgres',
	"SELECT coordinator_answered_at > '$since' FROM snowid_status()")
  or die 'the known server did not check in after the coordinator answered again';
$coord->wipe;
$known->restart;
$ids->collect($known, 1000);
is(SnowidRedis::worker($known), "$worker_id|$source",
	'claims lost: a restart gets the cached id back');
# (The servers still running check theirs in again meanwhile: the
# forgetting rule, 105.)
is($coord->owners($dc)->{$worker_id}, $identity,
	'claims lost: the coordinator holds it again for this server');

$ids->no_duplicates;
$_->stop for ($known, $new, $copy, $hung);
done_testing();
