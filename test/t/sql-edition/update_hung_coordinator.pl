# The update of a claiming 1.2 database to 1.4 (sql/snowid_sql/1.2--1.4/
# claim.sql) takes the edition's tables in ACCESS EXCLUSIVE mode (waiting
# at most 10 s for them), then re-asserts the claim through 1.2's dblink
# client, holding them.  The claim's connection bounds the connect
# (connect_timeout) and the coordination server's statement (its own
# statement_timeout), but nothing bounds the wait for an answer on this
# side: a coordination server that stops answering once connected (a
# paused VM, a partition that drops packets) holds the update for good.
# Meanwhile every writer of the generator (a call of snowid_next() that
# moves the position, one every 10 ms) waits for the tables with no
# timeout of its own, so the application stops taking ids.  On 15 and 16
# dblink's wait cannot be cancelled either.
#
# - appdb, 1.2, claims its worker id (timeout_ms 60000, which its owner may
#   set); the coordination server's claims are held (a lock on its
#   datacenters table), the update begins and sends the claim, and the
#   coordination server is frozen (SIGSTOP) while the claim waits there.
# - An application's snowid_next() should answer, an id or an error, within
#   20 s (on main it waits until the coordination server thaws).
# - A cancel of the update should end it within 20 s.
# 1.4's update connects nowhere: it keeps a claim the coordination
# database confirmed in the update's own transaction, within the claims'
# quiet period, or refuses; the test re-asserts in the update's
# transaction (as the hint says) before the coordination server's claims
# are held, and checks that no session of the fleet's role starts while
# the update runs.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidLease;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $fleet->node;

my $node = SnowidSqlEdition::claiming_server('update_hung_coordinator', 'appdb');
my $app = app_url($node, 'appdb');

my ($w, $err) = SnowidSqlEdition::install_claiming_12($app, $conninfo, $password,
	sql => q{UPDATE snowid_coordination SET timeout_ms = 60000;}, who => 'app');
like($w, qr/^\d+$/, "it claims worker id $w") or diag($err);
my ($rc, $out);

my $update = $node->background_psql('appdb', extra_params => [ '-U', 'app' ]);
$update->query_safe(q{SET application_name = 'the update'; BEGIN; DO $$BEGIN PERFORM snowid_claim(); END$$});
$fleet->hold_writes;
my $since = $cnode->safe_psql('coord', 'SELECT now()');
my $uerr = $update->query(q{ALTER EXTENSION snowid_sql UPDATE; COMMIT});
$update->quit;
# 1.4's update connects nowhere (it keeps a claim the coordination
# database confirmed within the claims' quiet period, else refuses): no
# session of the fleet's role starts there while it runs (up to 20 s)
my $fleet_sessions = 0;
for my $try (1 .. 200)
{
	$fleet_sessions += $cnode->safe_psql('coord', qq{
		SELECT count(*) FROM pg_stat_activity
		WHERE usename = 'sql_fleet' AND backend_start >= '$since'});
	last if $try > 10 && $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity WHERE application_name = 'the update'}) eq '0';
	select(undef, undef, undef, 0.1);
}
is($fleet_sessions, 0,
	'the update connects nowhere: no session of the fleet\'s role in the coordination database')
  or diag($uerr);
my $frozen = SnowidLease::freeze($cnode);

# the application, 2 s later (its next call is a writer)
sleep 2;
my $t0 = time;
($rc, $out, $err) = psql_as($app, q{SET statement_timeout = '60s'; SELECT count(snowid_next())});
my $took = time - $t0;
note("snowid_next(): $took s, exit code $rc: $out $err");
cmp_ok($took, '<', 20, "an application's snowid_next() answers within 20 s (it took $took s)");

$node->safe_psql('postgres', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'the update'});
my $ended = 0;
for (1 .. 200)
{
	$ended = $node->safe_psql('postgres', q{
		SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'the update'}) eq 't';
	last if $ended;
	select(undef, undef, undef, 0.1);
}
ok($ended, 'a cancel ends the update within 20 s');

SnowidLease::thaw($frozen);
$fleet->release_writes;
note("the update: $uerr");

$node->stop;
done_testing();
