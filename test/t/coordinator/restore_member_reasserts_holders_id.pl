# After a restore of the coordination database that forgot a running
# holder, a member of the fleet's role can re-assert the holder's worker
# id under a name it makes up, first: in the quiet period the store grants
# each worker id to whoever re-asserts it, and it cannot tell the member
# from the holder, having forgotten the holder's claim (it came after the
# copy); the member needs nothing but the fleet's credentials (assumption
# 5 of the README's guarantees) and the worker id (0 to the layout's
# last: it may re-assert them all).  What must hold is the fail-safe the
# docs state (README, "Guarantees"; doc/security.md, "What the fleet's
# role can deny"): the holder stops issuing, never an id twice, and says
# what to do; once the quiet period ends, its next call claims another
# worker id by itself.  Found by the attack attack67d on 0a3f29d (issue
# 67): the member's re-assertion granted 0.7 s after the restore began,
# within C's check-in fence.
#
# The path: server C claims for good after the copy the database is later
# restored to.  Right after the restore, before C's next check-in (held
# still: a stalled process, a busy machine), the member re-asserts C's
# worker id under a made-up name with a secret of its own.  C's check-in
# then finds the id another's: C stops issuing with it, and its calls are
# refused as any new claim in a quiet period until it ends.
#
# The coordination database only: a Redis user of the fleet may rewrite
# any claim directly (doc/security.md, "What it guards, by store").
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidLease;
use SnowidStoreRestore;
use SnowidTest;
use Test::More;
use Time::HiRes qw(sleep);


my $coord = SnowidPgCoord->new;
my $dc = 13;
my $fleet = SnowidStoreRestore->new($coord, $dc);
my ($a, $wa) = $fleet->start_a;

# the operator's copy, before C's first claim
$coord->copy_files;
sleep 2;
my ($c, $wc) = $fleet->start_c($wa);
my $ledger = SnowidTest::Ledger->new;
$ledger->take($c, 200, 'C before the restore');

# the restore; the member re-asserts C's worker id under a name of its own
# first
my $made_up = 'dc=13 host=made-up port=1 sysid=1';
ok(defined $fleet->member_reasserts_first($c, $wc, $made_up),
	'after the restore, the member\'s re-assertion of C\'s worker id is granted before C checks in');

# C stops issuing with the id, and says why and what happens next
my ($warning, $detail, $hint) = $fleet->wait_stopped($c, $wc);
ok(defined $warning, 'C logs that it stopped issuing ids with its worker id');
like($detail // '', qr/refused this server's claim on it \(.*\): it forgot the claim and gave the id to another server meanwhile/,
	'its detail says that the store gave the id to another');
like($hint // '', qr/^This server claims another worker id at its next id, once the store grants one; its ids so far lie below /,
	'its hint says that it claims another worker id');
is(SnowidLease::worker_id($c), '', 'C holds no worker id');

# the id is the member's now, as the store's administrators see it
is($coord->db->sql('coord_admin',
		"SELECT holder FROM snowid_coordinator.workers WHERE datacenter = $dc AND worker_id = $wc"),
	$made_up, 'the administrators\' view names the member\'s made-up holder of that id');

# C's calls wait out the quiet period, as any new claim after a restore,
# and name when it ends; then C claims another worker id by itself
my ($first, $issued) = $fleet->next_after_stop($c, 180);
like($first, qr/ERROR:  55006: snowid cannot claim a worker id of datacenter $dc until /,
	'C\'s call in the quiet period is refused (55006), naming when it ends');
like($first, qr/HINT:  Call again after that time: the claim then succeeds by itself/,
	'its hint says to call again then');
ok($issued, 'once the quiet period ends, C issues again');
my $w = SnowidLease::worker_id($c);
isnt($w, $wc, 'with another worker id than the member took');
$ledger->take($c, 200, 'C with its new worker id');
$ledger->no_duplicates;

$_->stop for ($a, $c);
done_testing();
