# The update of a claiming 1.2 database to 1.3 keeps its claimed worker id
# where the claim was answered since the server started
# (sql/snowid_sql/1.2--1.4/claim.sql): "only a claim it holds now".  But an
# answer since the start is not a claim held now: the coordination database
# that forgot its claims (restored, failed over, emptied) gives a worker id
# nobody re-asserted within the quiet period to the next new claim, and a
# database whose schedule did not re-assert meanwhile (1.2 re-asserts at a
# scheduled snowid_claim() and after a restart only) still passes the
# update's check: it keeps the worker id another database now holds, and
# nothing re-asserts it any more (1.3 claims nothing).
#
# - appdb, 1.2, claims its worker id and issues ids;
# - the coordination database loses everything; after the quiet period a
#   new database (newdb, through the provisioning script) is given a worker
#   id: appdb's;
# - appdb is updated to 1.3: it should refuse (the claim is not this
#   database's any more), or appdb should stop issuing; both issuing
#   at once for 3 s, no id may come twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my ($fleet, $conninfo, $password, $node, $script) =
  SnowidSqlEdition::claiming_12_server('update_given_away');
my $cnode = $fleet->node;

my ($w, $w2, $err) = SnowidSqlEdition::claim_given_away($fleet, $conninfo, $password, $node, $script);
ok(defined $w2, 'after the quiet period, newdb claims worker id ' . ($w2 // 'none')) or diag($err);
diag("appdb's worker id $w, newdb's " . ($w2 // 'none'));

# the update, then both at once
SnowidSqlEdition::none_twice($node, 1);

$node->stop;
done_testing();
