# The update of a claiming 1.2 database to 1.3, then the takeover of its
# claim into the provisioning script as doc/managed.md ("Updating to 1.3")
# says: an administrator resets the holder's secret under the name the
# update's warning gave, then the script's assert runs with HOLDER set to
# that whole name and a STATE_DIR of its own; from then on it re-asserts.
# Then the coordination database loses everything: the database re-asserts
# with assert, and a new database's claim must get another worker id; the
# two databases then issue no id twice.
#
# On main the script's assert never makes STATE_DIR or the secret (claim
# does, and claim refuses a database that has a worker id): every assert
# fails (cat: .../secret: No such file; invalid holder secret), nothing
# re-asserts, and after the loss the new database is given the same worker
# id, issuing the same ids.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my ($fleet, $conninfo, $password, $node, $script) =
  SnowidSqlEdition::claiming_12_server('takeover');
my $cnode = $fleet->node;
my $app = app_url($node, 'appdb');

my ($w) = SnowidSqlEdition::install_claiming_12($app, $conninfo, $password);
my ($rc, $out, $err) = psql_as($app, 'BEGIN; DO $$BEGIN PERFORM snowid_claim(); END$$; ALTER EXTENSION snowid_sql UPDATE; COMMIT');
is($rc, 0, 'the update to 1.3 goes through') or diag($err);
my ($holder) = $err =~ /claimed from the coordination database as '([^']*)'/;
ok(defined $holder, "the warning names the holder (" . ($holder // 'none') . ")") or diag($err);

# the takeover, as the page says
$cnode->safe_psql('coord', "SELECT snowid_coordinator.reset_secret(4, '$holder')",
	extra_params => [ '-U', 'coord_admin' ]);

($rc, $out, $err) = $script->run('assert', 'appdb', HOLDER => $holder);
is($rc, 0, 'assert under the holder name re-asserts the worker id') or diag($err);
is($node->safe_psql('appdb', 'SELECT worker_id FROM snowid_config'), $w, 'the database keeps it');
($rc, $out, $err) = $script->run('assert', 'appdb', HOLDER => $holder);
is($rc, 0, 'and again') or diag($err);

# the coordination database loses everything; the database re-asserts
$fleet->wipe;
($rc, $out, $err) = $script->run('assert', 'appdb', HOLDER => $holder);
is($rc, 0, 'after the coordination database lost everything, assert re-asserts') or diag($err);
psql_as(app_url($node, 'newdb'), 'CREATE EXTENSION snowid_sql');
(my $w2, $err) = $script->claim_until_granted('newdb', 120,
	sub { $script->run('assert', 'appdb', HOLDER => $holder) });
ok(defined $w2 && $w2 ne $w, 'a new database gets another worker id (' . ($w2 // 'none') . ')')
  or diag($err);

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my ($n, $twice) = SnowidSqlEdition::issue_at_once($node, 'appdb', 'newdb');
is($twice, 0, "no id of the two databases twice (of $n)");

$node->stop;
done_testing();
