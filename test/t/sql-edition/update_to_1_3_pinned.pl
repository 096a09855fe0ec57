# The update of a claiming 1.2 database names its target, as migrations
# written when 1.3.0 was current do (ALTER EXTENSION snowid_sql UPDATE TO
# '1.3'; Flyway, Liquibase and Django migrations pin versions): the
# package still ships snowid_sql--1.2--1.3.sql "kept whole, as 1.3.0 made
# it" (CHANGELOG), whose check lacks every fix of the update since
# (update_reasserts_claim, update_claim_clock_back): it keeps the claimed
# worker id wherever the claim was answered since the server started.
# The 1.3 then updated to 1.4 (ALTER EXTENSION snowid_sql UPDATE) checks
# nothing more.  1.3's scripts were changed in place for the guard's
# privilege escalation; this update's duplicates stayed.
#
# - as update_reasserts_claim: appdb, 1.2, claims its worker id and issues
#   ids; the coordination database loses everything; after the quiet
#   period newdb (through the provisioning script) is given appdb's worker
#   id;
# - appdb is updated TO '1.3', then to the default version: it should
#   refuse (the claim is not this database's any more), or appdb should
#   stop issuing; both issuing at once for 3 s, no id may come twice.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): the update to 1.3
# exits 0 ("keeps worker id 0 of datacenter 4", newdb's), the update to
# 1.4 after it too, and 1,136 of 135,053 ids came twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my ($fleet, $conninfo, $password, $node, $script) =
  SnowidSqlEdition::claiming_12_server('update_to_1_3_pinned');
my $app = app_url($node, 'appdb');

my ($w, $w2, $err) = SnowidSqlEdition::claim_given_away($fleet, $conninfo, $password, $node, $script);
my ($rc, $out);
ok(defined $w2, 'after the quiet period, newdb claims worker id ' . ($w2 // 'none')) or diag($err);
note("appdb's worker id $w, newdb's " . ($w2 // 'none'));

($rc, $out, $err) = psql_as($app, q{ALTER EXTENSION snowid_sql UPDATE TO '1.3'});
isnt($rc, 0, 'the update to 1.3 of a claim given away is refused') or diag($err);
note("the update to 1.3: exit code $rc: $err");
($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()');
note("then the update: exit code $rc: $out $err");
note('appdb: ' . $node->safe_psql('appdb', 'SELECT datacenter_id, worker_id FROM snowid_config'));

SnowidSqlEdition::none_twice($node);

$node->stop;
done_testing();
