# The update of a claiming 1.2 database to 1.4 keeps its claimed worker id
# only where the coordination database confirmed it in the update's own
# transaction (1.4's fix of update_claim_clock_back): the row of
# snowid_coordinator_state must have been written by a transaction "in
# progress", told by pg_xact_status() of its xmin
# (sql/snowid_sql/1.2--1.4/claim.sql).  pg_xact_status() returns NULL, not
# 'committed', for a transaction older than the commit log still kept
# (VACUUM truncates it once every database's datfrozenxid has passed a
# segment of 1,048,576 transactions: routine on a busy server), and the
# refusal is one IF over an OR of its conditions: with "NOT fresh" NULL and
# the others false, the IF is NULL, and the update goes on.  An answer of
# another transaction, made long ago, is then kept wherever the clock
# makes it look recent: the case update_claim_clock_back closed.
#
# - As update_claim_clock_back: appdb, 1.2, claims its worker id and issues
#   an id (the server runs under the clock preload); the coordination
#   database loses everything, and after its quiet period newdb (through
#   the provisioning script) is given appdb's worker id;
# - then 1,100,000 transactions (pgbench, SELECT pg_current_xact_id()) and
#   VACUUM FREEZE of every database (template0 too): the commit log before
#   appdb's last answer is truncated;
# - the server's clock steps back just far enough that appdb's last answer
#   lies 1 s within the quiet period again;
# - appdb is updated to 1.4 (ALTER EXTENSION snowid_sql UPDATE, in a
#   transaction of its own, without re-asserting): it should refuse; both
#   issuing at once for 3 s, no id may come twice.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): pg_xact_status() of
# the answer's xmin NULL after the freeze (before it, 'committed', and the
# update is refused as it should), the answer 110,225 ms past the quiet
# period, the clock stepped back 111.2 s: the update exits 0 with "keeps
# worker id 0 of datacenter 4" (newdb's), and 3,076 of 125,104 ids came
# twice.  The test takes about 2.5 minutes (the quiet period, pgbench).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();
my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('update_claim_clog_truncated');
my ($fleet, $conninfo, $password, $node, $script) =
  SnowidSqlEdition::claiming_12_server('update_claim_clog_truncated', $clock);
my $app = app_url($node, 'appdb');

my ($w, $w2, $err) = SnowidSqlEdition::claim_given_away($fleet, $conninfo, $password, $node, $script);
my ($rc, $out);
is($w2, $w, 'after the quiet period, newdb claims appdb\'s worker id') or diag($err);

# the commit log of appdb's last answer truncated: a busy server's routine
my $burn = "$dir/burn.sql";
PostgreSQL::Test::Utils::append_to_file($burn, "SELECT pg_catalog.pg_current_xact_id();\n");
$node->command_ok([ 'pgbench', '-n', '-M', 'prepared', '-c', '4', '-j', '2', '-t', '275000',
	'-f', $burn, '-d', $node->connstr('postgres') ], '1,100,000 transactions');
$node->safe_psql('postgres', 'ALTER DATABASE template0 WITH ALLOW_CONNECTIONS true');
$node->command_ok([ 'vacuumdb', '--all', '--freeze', '-q', '-h', $node->host, '-p', $node->port ],
	'VACUUM FREEZE of every database');
$node->safe_psql('postgres', 'ALTER DATABASE template0 WITH ALLOW_CONNECTIONS false');
$node->safe_psql('postgres', 'VACUUM FREEZE');
my $status = $node->safe_psql('appdb', q{
	SELECT coalesce(pg_xact_status(((pg_current_xact_id()::text::int8
		- ((pg_current_xact_id()::text::int8 - s.xmin::text::int8) & 4294967295))::text)::xid8), 'NULL')
	FROM snowid_sql_private.snowid_coordinator_state s});
note("pg_xact_status() of appdb's last answer: $status");

# how far past the quiet period appdb's last answer lies, by its clock
SnowidSqlEdition::clock_into_quiet($node, $clock);

($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
isnt($rc, 0, 'the update, not re-asserted in its own transaction, is refused') or diag($err);
note("the update: exit code $rc: $err");
note('appdb\'s worker id: ' . $node->safe_psql('appdb', 'SELECT datacenter_id, worker_id FROM snowid_config'));

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
SnowidSqlEdition::none_twice($node);

$node->stop;
done_testing();
