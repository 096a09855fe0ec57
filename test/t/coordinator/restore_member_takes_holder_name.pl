# After a restore of the coordination database that forgot a running
# holder, a member of the fleet's role can re-assert the holder's worker
# id under the holder's own name first: the store cannot tell the two
# apart, having forgotten the holder's claim and the hash of its secret
# alike (both came after the copy), and the member has the fleet's
# credentials (assumption 5 of the README's guarantees).  What must hold
# is the fail-safe the docs state (README, "Guarantees"; doc/security.md,
# "What the fleet's role can deny"): the holder stops issuing, never an id
# twice, and says what to do; the administrator's documented step
# (reset_secret() of its name, doc/coordinator.md, "A lost holder
# secret") gets it issuing again.  Found by the attack attack67d on
# 0a3f29d (issue 67): the member's re-assertion granted 0.4 s after the
# restore began, within C's check-in fence.
#
# The path: server C claims for good after the copy the database is later
# restored to.  A member learns C's name from the store itself (a claim of
# C's worker id is answered 'conflict', naming its holder) and, right
# after the restore, before C's next check-in (held still: a stalled
# process, a busy machine), re-asserts C's worker id under C's name with a
# secret of its own.  C's check-in is then refused for its secret (42501):
# C stops issuing, and every call of C is refused the same way until an
# administrator resets the name's secret.
#
# The coordination database only: a Redis user of the fleet may rewrite
# any claim directly, secrets included (doc/security.md, "What it guards,
# by store").
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
my $dc = 12;
my $fleet = SnowidStoreRestore->new($coord, $dc);
my ($a, $wa) = $fleet->start_a;

# the operator's copy, before C's first claim
$coord->copy_files;
sleep 2;
my ($c, $wc) = $fleet->start_c($wa);
my $ledger = SnowidTest::Ledger->new;
$ledger->take($c, 200, 'C before the restore');

# the member learns C's name from the store
my ($r, $o, $e) = $fleet->member_claim('dc=12 host=made-up port=1 sysid=1', $wc, 'false');
my @row = split /\|/, $o // '';
is($row[0], 'conflict', 'a claim of C\'s worker id is answered conflict');
my $c_name = $row[5] // '';
like($c_name, qr/^dc=$dc host=/, 'naming C, its holder');

# the restore; the member re-asserts C's worker id under C's name first
ok(defined $fleet->member_reasserts_first($c, $wc, $c_name),
	'after the restore, the member\'s re-assertion under C\'s name is granted before C checks in');

# C stops issuing with the id, and says why and what to do
my ($warning, $detail, $hint) = $fleet->wait_stopped($c, $wc);
ok(defined $warning, 'C logs that it stopped issuing ids with its worker id');
like($detail // '', qr/refused this server's holder secret: another secret is registered for this server's name/,
	'its detail says that the store refused its holder secret');
like($hint // '', qr/^Once sure that no other server claims under this server's holder name "\Q$c_name\E", an administrator resets the secret of that name \(doc\/security\.md, "Holder secrets"\)/,
	'its hint names the step: an administrator resets the secret of its name');
is(SnowidLease::worker_id($c), '', 'C holds no worker id');

# each call of C is refused, naming the step, until it is taken
($r, $o, $e) = $c->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($r, 0, 'C issues no id');
like($e, qr/ERROR:  42501: the coordination database at .* refused this server's holder secret/,
	'C\'s call is refused for its holder secret (42501)');
like($e, qr/HINT:  .*an administrator calls snowid_coordinator\.reset_secret\(\)/,
	'its hint names reset_secret()');

# the administrator's step: the name checked to be C's (the error's
# DETAIL names it, C's mark file holds its instance), its secret reset
$coord->db->sql('coord_admin',
	"SELECT snowid_coordinator.reset_secret($dc, '$c_name')");
my ($first, $issued) = $fleet->next_after_stop($c, 180);
note("C's first call after the reset: " . ($first eq '' ? 'issued' : $first));
ok($issued, 'after the reset, C issues again (once the quiet period the restore started ends)');
my $w = SnowidLease::worker_id($c);
note("C issues with worker id $w");
$ledger->take($c, 200, 'C after the reset');
$ledger->no_duplicates;

my $log = slurp_file($c->logfile);
unlike($log, qr/TRAP:|server process .* was terminated/, 'C\'s log shows no crash');

$_->stop for ($a, $c);
done_testing();
