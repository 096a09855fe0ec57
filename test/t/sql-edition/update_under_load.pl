# The update of the SQL edition from 1.2 under load (fixed worker id), by
# the path PostgreSQL takes: straight to the newest version (1.3.0's update
# to 1.3, kept whole, has the fault below).  1.3.0's update dropped the
# attribute claim_worker_id of the type snowid_sql_fixed and made the
# functions anew, and a call of 1.2's functions in flight meanwhile (its
# writer waits for the update's lock on snowid_locks, then goes on in
# 1.2's body) failed with PostgreSQL's own "column "claim_worker_id" not
# found in data type snowid_sql_private.snowid_sql_fixed" (42703): no
# errcode or message of the edition's, and every application session
# issuing at the time lost a call (pgbench's clients, which stop at an
# error, all stopped).  Test 173 checks the update waits at most 10 s;
# nothing checks the calls it meets.
#
# - 1.2 with worker id 3 (and, apart, 1.3 as 1.3.0 installed it, whose
#   update to 1.4 makes the type snowid_sql_fixed anew); pgbench's four
#   clients insert one id a statement, each its own transaction; the
#   update runs among them.
# - No client's call should fail (pgbench stops a client at its first
#   error), and no id may come twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $version = SnowidSqlEdition::version();

my $node = SnowidSqlEdition::new_server('update_in_flight', ['app'], []);

for my $from ('1.2', '1.3')
{
	my $db = 'app_' . ($from =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	my $app = $node->connstr($db) . ' user=app';

	my ($rc, $out, $err) = psql_as($app, qq{
		CREATE EXTENSION snowid_sql VERSION '$from';
		UPDATE snowid_config SET worker_id = 3;
		CREATE TABLE t (id bigint DEFAULT snowid_next(), s int);
		SELECT snowid_sql_version()});
	is($out, $from, "$from with a worker id") or diag($err);

	my ($bench, $berr) = SnowidSqlEdition::pgbench_inserting($node, $db);
	($rc, $out, $err) = psql_as($app, q{ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()});
	is($out, $version, "from $from: the update to $version runs among them") or diag($err);
	$bench->finish;

	my @aborted = $$berr =~ /^pgbench: error: client \d+ .*aborted.*$/mg;
	is(scalar(@aborted), 0, "from $from: no session's call fails (" . scalar(@aborted)
		  . ' of 4 pgbench clients stopped: ' . ($aborted[0] // 'none') . ')');
	is( $node->safe_psql($db, 'SELECT count(*) - count(DISTINCT id) FROM t'),
		'0', "from $from: no id twice");
}

$node->stop;
done_testing();
