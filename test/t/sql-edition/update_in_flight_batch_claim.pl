# The update of the SQL edition from 1.2 to 1.4 under load, by the paths
# test 184 (update_under_load.pl) does not take: calls of
# snowid_next_batch(), and a 1.2 that claimed its worker id.  The update
# keeps what 1.2's calls in flight need to plan their next statement
# (snowid_sql_claim_stale(), 1.2's signatures of the generator), but:
#
# - 1.2's snowid_next_batch() runs snowid_sql_claim_first() as the caller,
#   which calls snowid_sql_claim_stale(); 1.4 grants that to no role, and
#   a batch in flight fails with PostgreSQL's "permission denied for
#   function snowid_sql_claim_stale" (42501), also with a worker id set;
# - in a 1.2 that claimed its worker id, 1.2's snowid_sql_next() reads
#   snowid_sql_claimed_run, which the update drops: a call in flight fails
#   with "could not open relation with OID ..." (XX000, no errcode of the
#   edition's), and one that reads the row of its snapshot, where
#   claim_worker_id is still on, with 1.4's "invalid snowid configuration"
#   (22023) about a row the update has just corrected.
#
# - 1.2 with worker id 3, and 1.2 claiming its worker id from a
#   coordination database; pgbench's six clients (prepared statements) insert one id a
#   statement or a batch of 20, each its own transaction; the update runs
#   among them.
# - No client's call should fail (pgbench stops a client at its first
#   error), and no id may come twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $node = PostgreSQL::Test::Cluster->new('update_in_flight_batch_claim');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; GRANT pg_read_all_stats TO app');
my $dir = PostgreSQL::Test::Utils::tempdir('update_in_flight_batch_claim');
append_to_file("$dir/insert.sql", "INSERT INTO t DEFAULT VALUES;\n");
append_to_file("$dir/batch.sql", "INSERT INTO t SELECT snowid_next_batch(20);\n");

for my $claim (0, 1)
{
	my $db = $claim ? 'claimed' : 'fixed';
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	$node->safe_psql($db, 'CREATE EXTENSION dblink') if $claim;
	my $app = $node->connstr($db) . ' user=app';
	my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
		  . ($claim ? SnowidSqlEdition::claim_config($conninfo, $password)
			  : 'UPDATE snowid_config SET worker_id = 3;')
		  . q{CREATE TABLE t (id bigint DEFAULT snowid_next(), s int);
		SELECT count(snowid_next())});
	is($out, '1', "$db: 1.2 issues") or diag($err);

	my ($bout, $berr) = ('', '');
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-M', 'prepared', '-h', $node->host, '-p', $node->port, '-U', 'app',
		  '-c', '6', '-T', '12', '-f', "$dir/insert.sql\@5", '-f', "$dir/batch.sql\@1", $db ],
		'<', \undef, '>', \$bout, '2>', \$berr);
	$node->poll_query_until($db, 'SELECT count(*) >= 2000 FROM t')
	  or diag('the sessions did not issue');
	# (the claim's re-assertion may meet a busy coordination database:
	# tried again, as the update's hint says)
	for (1 .. 5)
	{
		# (a claim re-asserted in the update's transaction, as the hint says)
		($rc, $out, $err) = psql_as($app, ($claim ? 'BEGIN; DO $$BEGIN PERFORM snowid_claim(); END$$; ' : 'BEGIN; ')
			. q{ALTER EXTENSION snowid_sql UPDATE TO '1.4'; COMMIT; SELECT snowid_sql_version()});
		last if $out eq '1.4';
		note("the update: $err");
	}
	is($out, '1.4', "$db: the update to 1.4 runs among them") or diag($err);
	$bench->finish;

	my @aborted = $berr =~ /^pgbench: error: client \d+ .*aborted.*$/mg;
	is(scalar(@aborted), 0, "$db: no session's call fails (" . scalar(@aborted)
		  . ' of 6 pgbench clients stopped: ' . ($aborted[0] // 'none') . ')');
	my ($n, $twice) = split /\|/,
	  $node->safe_psql($db, 'SELECT count(*), count(*) - count(DISTINCT id) FROM t');
	is($twice, '0', "$db: no id twice (of $n)");
}

$node->stop;
done_testing();
