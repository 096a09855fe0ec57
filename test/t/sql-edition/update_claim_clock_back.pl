# The update of a claiming 1.2 database to 1.4 keeps its claimed worker id
# only where the coordination database confirmed it within the quiet
# period of its claims (sql/snowid_sql/1.2--1.4/claim.sql: answered_at no
# earlier than clock_timestamp() less checkin_interval_ms + timeout_ms +
# max_drift_ms + 1 s), so that "no other database can have been granted
# the worker id since" (1.4's fix of update_reasserts_claim).  Both times
# are this server's wall clock, read months apart: a clock stepped back
# since the last answer (NTP, a VM restored) makes an answer older than the
# quiet period look recent, and the update keeps a worker id the
# coordination database has meanwhile given to another database.
#
# - appdb, 1.2, claims its worker id and issues an id; the server runs
#   under the clock preload;
# - the coordination database loses everything; after its quiet period a
#   new database (newdb, through the provisioning script) is given a
#   worker id: appdb's;
# - the server's clock steps back just far enough that appdb's last
#   answer lies 1 s within the quiet period again (appdb's one id still
#   behind the clock);
# - appdb is updated to 1.4: it should refuse (the claim is not this
#   database's any more), or appdb should stop issuing; both issuing at
#   once for 3 s, no id may come twice.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the last answer lay 6,508 ms
# past the quiet period, the clock stepped back 7.5 s, the update kept worker
# id 0 of datacenter 4 (newdb's too), and 214 of 64,973 ids came twice (on
# 18: 6,287 ms, 4,989 of 141,762).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();
my $clock = SnowidTest::Clock->new;
my ($fleet, $conninfo, $password, $node, $script) =
  SnowidSqlEdition::claiming_12_server('update_claim_clock_back', $clock);

my ($w, $w2, $err) = SnowidSqlEdition::claim_given_away($fleet, $conninfo, $password, $node, $script);
is($w2, $w, 'after the quiet period, newdb claims appdb\'s worker id') or diag($err);

# how far past the quiet period appdb's last answer lies, by its clock
SnowidSqlEdition::clock_into_quiet($node, $clock);

# the update, then both at once
SnowidSqlEdition::none_twice($node, 1);

$node->stop;
done_testing();
