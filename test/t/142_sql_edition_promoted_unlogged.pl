# A standby of the SQL edition promoted right after it replayed the
# creation of the edition's claim marker (issue 56).  Version 1.2 notes
# each granted claim under the start of its server, where every claim
# check reads it (snowid_sql_claim_stale()), so that a restart, a crash
# restart or a promotion makes the claim stale: the next call re-asserts
# it before it issues.  A standby replays the marker's creation with the
# rest of CREATE EXTENSION, or of ALTER EXTENSION UPDATE from 1.1, and may
# be promoted at once (a failover right after an install or an update).
#
# Each round: a database of the primary installs the edition in claim
# mode (1.2 afresh, or 1.1 updated to 1.2) and claims its worker id; once
# the standby has replayed all of it (its replay LSN at the primary's
# insert LSN), the coordination server stops, the standby is promoted and
# called at once.  The promoted server must not crash; its claim is
# stale, and its first id fails while it cannot re-assert the claim,
# rather than issue under the primary's claim; once the coordination
# server is back, it re-asserts and issues.  Several rounds, as the first
# build (an UNLOGGED sequence, snowid_sql_claimed_run) failed only where
# the standby had not yet written its init fork to disk: PostgreSQL
# replays a sequence's page into shared buffers and, at the promotion,
# copies the init fork's file, a page of zeros, over the main fork; the
# first read of it failed an assertion (the special space of a page of
# zeros), in every round on 17beta2 (none of six on Debian's 18.6).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my $primary = PostgreSQL::Test::Cluster->new('sql_primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	GRANT clerk TO app;
});

my $rounds = 3;
for my $round (1 .. 2 * $rounds)
{
	my $how = $round % 2 ? 'install' : 'update';
	my $db = "appdb$round";
	my $what = $how eq 'install' ? "round $round (1.2 installed)" : "round $round (1.1 updated to 1.2)";

	$primary->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	$primary->safe_psql($db, 'CREATE EXTENSION dblink');
	$primary->backup("b$round");
	my $standby = PostgreSQL::Test::Cluster->new("sql_standby$round");
	$standby->init_from_backup($primary, "b$round", has_streaming => 1);
	# as a server with buffers to spare: nothing writes a replayed page
	# out before a restartpoint (the test's 1 MB of shared_buffers evicts
	# it at once, the background writer may write it)
	$standby->append_conf('postgresql.conf',
		"shared_buffers = 32MB\nbgwriter_lru_maxpages = 0\ncheckpoint_timeout = '1h'\n");
	$standby->start;

	# the install, in claim mode, and the first claim: as app (1.2), or
	# as a superuser (1.1, whose install a role that is no superuser owned
	# is not updated), whose first id claims before the update
	my $owner = $primary->connstr($db) . ($how eq 'install' ? ' user=app' : '');
	my ($rc, $out, $err) = SnowidSqlEdition::psql_as($owner,
		($how eq 'install' ? 'CREATE EXTENSION snowid_sql;' : q{CREATE EXTENSION snowid_sql VERSION '1.1';})
		  . SnowidSqlEdition::claim_config($conninfo, $password));
	is($rc, 0, "$what: the primary installs the edition in claim mode") or diag($err);
	my $w = SnowidSqlEdition::claim_when_quiet_ends($owner);
	like($w, qr/^\d+$/, "$what: the primary claims worker id $w");
	if ($how eq 'update')
	{
		($rc, $out, $err) = SnowidSqlEdition::psql_as($owner,
			'ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()');
		is($out, '1.2', "$what: the primary updates it") or diag($err);
	}

	# the standby replays it all; the coordination server stops; the
	# standby is promoted and called at once
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	$coord->stop;
	$standby->promote;
	my $caller = $standby->connstr($db) . ($how eq 'install' ? ' user=clerk' : '');
	($rc, $out, $err) = SnowidSqlEdition::psql_as($standby->connstr($db),
		'SELECT snowid_sql_private.snowid_sql_claim_stale()');
	is($out, 't', "$what: on the promoted standby, the primary's claim is stale") or diag($err);
	($rc, $out, $err) = SnowidSqlEdition::psql_as($caller,
		'SELECT (snowid_decode(snowid_next())).worker_id');
	isnt($rc, 0, "$what: its first id fails while it cannot re-assert the claim")
	  or diag("it issued with worker id $out");
	like($err, qr/could not connect to the coordination database/,
		"$what: saying it cannot reach the coordination database");
	unlike($err, qr/server closed the connection|terminated abnormally/,
		"$what: the promoted standby did not crash");
	($rc, $out, $err) = SnowidSqlEdition::psql_as($standby->connstr($db),
		'SELECT snowid_sql_private.snowid_sql_claim_stale()');
	is($out, 't', "$what: its claim is stale still") or diag($err);

	# the coordination server is back: the claim is re-asserted (the same
	# holder: the promoted standby takes over its primary's worker id)
	$coord->start;
	($rc, $out, $err) = SnowidSqlEdition::psql_as($caller,
		'SELECT (snowid_decode(snowid_next())).worker_id');
	is($out, $w, "$what: then it re-asserts worker id $w and issues") or diag($err);
	($rc, $out, $err) = SnowidSqlEdition::psql_as($standby->connstr($db),
		'SELECT snowid_sql_private.snowid_sql_claim_stale()');
	is($out, 'f', "$what: its claim is noted as this server's") or diag($err);
	# (fail_ok: a crashed standby is down already)
	$standby->stop('fast', fail_ok => 1);
}

$primary->stop;
done_testing();
