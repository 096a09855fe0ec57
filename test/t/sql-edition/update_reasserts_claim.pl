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

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $fleet->node;
my $script = SnowidSqlEdition::provisioning_script('update_given_away', $cnode,
	DATACENTER => 4, INTERVAL_MS => 1000, MARGIN_MS => 1000);

# app, who sees every session's transactions (as release needs), owns
# appdb (where 1.2 claims through dblink) and newdb
my $node = SnowidSqlEdition::new_server('update_given_away', ['app'], [qw(appdb newdb)]);
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
$node->safe_psql('appdb', 'CREATE EXTENSION dblink');
my $app = app_url($node, 'appdb');

# The script for a database, as holder $holder_name
sub run_script
{
	my ($db, $command, $holder_name) = @_;
	return $script->run($command, app_url($node, $db), $db, HOLDER => $holder_name);
}

my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
	  . SnowidSqlEdition::claim_config($conninfo, $password));
is($rc, 0, 'the owner installs 1.2 and has it claim its worker id') or diag($err);
($rc, $out, $err) = psql_as($app, 'SELECT (snowid_decode(snowid_next())).worker_id');
my $w = $out;
like($w, qr/^\d+$/, "appdb claims worker id $w") or diag($err);

$fleet->wipe;
psql_as(app_url($node, 'newdb'), 'CREATE EXTENSION snowid_sql');
my $w2;
for (1 .. 240)
{
	($rc, $out, $err) = run_script('newdb', 'claim', 'sql newdb');
	($w2) = $out =~ /^worker id (\d+) of datacenter 4$/;
	last if defined $w2;
	select(undef, undef, undef, 0.5);
}
ok(defined $w2, 'after the quiet period, newdb claims worker id ' . ($w2 // 'none')) or diag($err);
diag("appdb's worker id $w, newdb's " . ($w2 // 'none'));

($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
diag("the update: exit code $rc: $err");

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my ($n, $twice) = SnowidSqlEdition::issue_at_once($node, 'appdb', 'newdb');
is($twice, 0, "no id of the two databases twice (of $n)");

$node->stop;
done_testing();
