# A cancelled wait for the coordination database's synchronous standby is
# no grant.  The standby is down, so a call (a claim for good, a lease
# claim, a renewal) waits in SyncRep on the primary; an administrator
# cancels it (pg_cancel_backend), and the primary answers with "WARNING:
# canceling wait for synchronous replication", having committed the call
# locally only.  The snowid server must not take that answer: the primary
# then dies, the standby (which never got the call) is promoted, and
# another server claims the same worker id from it.  A wait that is not
# cancelled runs into snowid's own deadline, which is no grant either.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidPgCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;

# The coordination primary with its synchronous standby.
my $coord = SnowidPgCoord->new(standby => 1);
my $primary = $coord->node;
my $standby = $coord->{standby};

# Cancels, from another session of the coordination primary, as an
# administrator does with a stuck backend, the call of function $function
# of snowid_coordinator once it waits for the standby.
sub cancel_wait
{
	my ($function) = @_;

	$primary->poll_query_until('postgres', qq{
		SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		WHERE usename = 'coord_fleet' AND wait_event = 'SyncRep'
		  AND query LIKE '%snowid_coordinator.$function(%'})
	  or die "no call of $function waited for the synchronous standby";
	return;
}

my %settings = ('snowid.coordinator_timeout_ms' =>
	  1000 * $PostgreSQL::Test::Utils::timeout_default);

# Each case has a datacenter of its own: a call waiting for the standby
# holds its datacenter's lock, and one whose client has gone (the deadline
# passed) keeps waiting until the primary dies.
my %dc = (r => 8, a => 9, b => 9, l => 10, short => 11);

# A server on lease, while the standby is up: its lease is on the standby.
my $r = SnowidLease::start_node($coord, 'r',
	{ %settings, 'snowid.datacenter_id' => $dc{r}, 'snowid.worker_lease' => '6s' });
SnowidLease::wait_lease($r);

# The standby stops: every commit on the primary waits for it now.
$standby->stop('fast');

# A renewal, cancelled: a failed renewal, not a grant.  A renewal commits
# twice, each commit waiting for the standby: the holder's proof taken
# (prove(), which commits whatever the call then does), then the renewal;
# the administrator cancels each wait.
my $offset = -s $r->logfile;
cancel_wait('lease_renew');
cancel_wait('lease_renew');
ok( eval {
		$r->wait_for_log(
			qr/WARNING:  snowid could not renew the lease on worker id \d+ in [^\n]*\n[^\n]*DETAIL:  The coordination database answered with WARNING: canceling wait for synchronous replication/,
			$offset);
		1;
	},
	'a cancelled wait of a renewal: the renewal failed, and the log says why');

# A claim for good, cancelled: an error that says why, and no id.
my $a = SnowidLease::start_node($coord, 'a', { %settings, 'snowid.datacenter_id' => $dc{a} });
my $claim = SnowidTest::start_psql($a, 'SELECT snowid_next()');
cancel_wait('claim');
$claim->finish;
is($claim->stdout, '', 'a cancelled wait of a claim: no id');
like($claim->stderr,
	qr/ERROR:  08007: the coordination database at \S+ may not have replicated the call\n.*canceling wait for synchronous replication.*snowid takes nothing from this answer/s,
	'but an error that says the claim may not be on the standby');
like($claim->stderr, qr/HINT:  .*synchronous standbys/, 'and what to check');

# A lease claim, made by the lease renewer at start, cancelled the same
# way: the renewer reports it and holds no lease (it tries again, and
# waits for the standby again).
my $l = $coord->new_node('l',
	{ %settings, 'snowid.datacenter_id' => $dc{l}, 'snowid.worker_lease' => '10min' });
$l->start;
cancel_wait('lease_claim');
ok(eval { $l->wait_for_log(qr/may not have replicated the call/); 1 },
	'a cancelled wait of a lease claim: the log says why');
$l->safe_psql('postgres', 'CREATE EXTENSION snowid');
is($l->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowid_status()'),
	't', 'and the server holds no worker id');

# snowid's own deadline ends a claim that waits: no id either.
my $short = SnowidLease::start_node($coord, 'short',
	{ 'snowid.datacenter_id' => $dc{short}, 'snowid.coordinator_timeout_ms' => 2000 });
my $timed = SnowidTest::start_psql($short, 'SELECT snowid_next()');
$timed->finish;
is($timed->stdout, '', 'a wait past snowid.coordinator_timeout_ms: no id');
like($timed->stderr, qr/ERROR:  080(06|07): /,
	'but an error: the call did not complete, or its wait was cancelled by the statement_timeout snowid sets');

# The primary dies; the standby, which never got those calls, takes over.
$primary->stop('immediate');
$standby->start;
SnowidTest::promote($standby);
$coord->{db}{node} = $standby;
delete $coord->{standby};
is_deeply([ map { %{ $coord->owners($dc{$_}) } } qw(a l short) ], [],
	'the promoted standby knows none of the claims that waited for it');
# It had every commit (synchronous): an administrator ends the quiet period
# that a failover starts (the forgetting rule), which would otherwise last
# a 10 min lease and the timeouts of this test.
$coord->{db}->sql('coord_admin',
	"SELECT snowid_coordinator.end_quiet(d) FROM unnest(ARRAY[$dc{r}, $dc{a}, $dc{l}, $dc{short}]) d");

# Another server claims from it, then the first ones try again: each its
# own worker id, and no id repeats.
my $ids = SnowidTest::Ledger->new;
my $b = SnowidLease::start_node($coord, 'b', { %settings, 'snowid.datacenter_id' => $dc{b} });
$ids->collect($b, 1000);
# (r's lease may still run on the fence it had before the standby went
# down, which no renewal could move meanwhile: wait for one after the
# failover, a fence seconds ahead)
for my $n ($l, $r)
{
	$n->poll_query_until('postgres',
		q{SELECT snowid_next() > 0 AND (fence_time IS NULL
			OR fence_time > clock_timestamp() + interval '3 seconds')
		  FROM snowid_status()})
	  or die $n->name . ' issued no id after the failover';
}
$ids->collect($_, 1000) for $a, $l, $short, $r;
my %worker;
for my $n ($b, $a, $l, $short, $r)
{
	($worker{ $n->name }) = split /\|/, SnowidRedis::worker($n);
}
isnt($worker{a}, $worker{b},
	'the server whose claim was cancelled does not share the next server\'s worker id');
$ids->no_duplicates;

done_testing();
