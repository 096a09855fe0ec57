# test/t/sql-edition/update_from_1_0_under_load.pl
#
# The update of the SQL edition from 1.0 or 1.1 under load, where a
# superuser installed it (doc/managed.md, "Updating": such an install is
# updated with ALTER EXTENSION snowid_sql UPDATE, through 1.1--1.2 and
# 1.2--1.4).  The update from 1.2 under load once failed every call in
# flight with PostgreSQL's own 42703 (4 of 4 pgbench clients), and 1.4
# keeps 1.2's signatures so that such calls "plan their next statement and
# go on into 1.4's functions" (update_under_load, CHANGELOG 1.4); the
# update from 1.0 or 1.1 does not: a call of 1.0's or 1.1's snowid_next()
# in flight fails with "function public.snowid_sql_fixed() does not
# exist" (42883: 1.2 moved the edition's internal functions to
# snowid_sql_private, and the old body names them in public), and a batch
# through 1.1's snowid_next_batch() with "function
# public.snowid_sql_config_problem(public.snowid_config) does not exist".
#
# - 1.0 and 1.1, each installed by the bootstrap superuser in a database of
#   its own, worker id 3; pgbench's four clients (as app) insert one id a
#   statement, each its own transaction; the update runs among them.
# - No client's call should fail (pgbench stops a client at its first
#   error), and no id may come twice.
# - A write held open on such a table past the session's lock_timeout:
#   the update gives up (55P03), changing nothing, and runs once it ended.
# - A transaction that took an id, then inserts into such a table the
#   update holds: neither fails.
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): from 1.0 and from 1.1,
# 4 of 4 clients stopped at "function public.snowid_sql_fixed() does not
# exist" (with batches among the statements: at
# "public.snowid_sql_config_problem(public.snowid_config)"); no id twice
# (2,780 and about 2,700 ids), and calls after the update issue.  The same
# on 15 (Debian's 15.20).  Since, the updates from 1.0 and 1.1 first lock
# the tables whose column defaults take ids (1.1--1.2/writes.sql): the
# inserts wait for the update, then plan under the new version.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $version = SnowidSqlEdition::version();
my $node = SnowidSqlEdition::new_server('update_from_1_0_under_load', ['app'], []);

for my $from ('1.0', '1.1')
{
	my $db = 'su_' . ($from =~ s/\W/_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	my ($rc, $out, $err) = psql_as($node->connstr($db), qq{
		CREATE EXTENSION snowid_sql VERSION '$from';
		UPDATE snowid_config SET worker_id = 3;
		CREATE TABLE t (id bigint DEFAULT snowid_next(), s int);
		GRANT ALL ON t TO app;
		SELECT snowid_sql_version()});
	is($out, $from, "$from, installed by the superuser, with a worker id") or diag($err);

	my ($bench, $berr) = SnowidSqlEdition::pgbench_inserting($node, $db);
	($rc, $out, $err) = psql_as($node->connstr($db), q{ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()});
	is($out, $version, "from $from: the update to $version runs among them") or diag($err);
	$bench->finish;

	my @aborted = $$berr =~ /^pgbench: error: client \d+ .*aborted.*$/mg;
	is(scalar(@aborted), 0, "from $from: no session's call fails (" . scalar(@aborted)
		  . ' of 4 pgbench clients stopped: ' . ($aborted[0] // 'none') . ')');
	is($node->safe_psql($db, 'SELECT count(*) - count(DISTINCT id) FROM t'), '0', "from $from: no id twice");
}

# A new database $db owned by app, the superuser's install of 1.1 in it
# with worker id $worker and a table t whose default takes ids, granted
# to app (a test)
sub one_one_with_table
{
	my ($db, $worker) = @_;

	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	my ($rc, $out, $err) = psql_as($node->connstr($db), qq{
	CREATE EXTENSION snowid_sql VERSION '1.1';
	UPDATE snowid_config SET worker_id = $worker;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), s int);
	GRANT ALL ON t TO app});
	is($rc, 0, "$db: 1.1 with worker id $worker and a table whose default takes ids") or diag($err);
	return;
}

# A write held open on such a table: the update waits for it, trying
# again every half deadlock_timeout, and gives up at the session's
# lock_timeout, changing nothing; once the write has ended, it runs
one_one_with_table('held', 4);
my ($rc, $out, $err);
my $writer = $node->background_psql('held', extra_params => [ '-U', 'app' ]);
$writer->query_safe('BEGIN; INSERT INTO t DEFAULT VALUES');
($rc, $out, $err) = psql_as($node->connstr('held'),
	q{SET lock_timeout = '2s'; ALTER EXTENSION snowid_sql UPDATE});
like($err, qr/55P03: the tables whose defaults take ids were not free within lock_timeout/,
	'a write held open past lock_timeout: the update gives up');
is($node->safe_psql('held', 'SELECT snowid_sql_version()'), '1.1', 'and changed nothing');
$writer->query_safe('COMMIT');
$writer->quit;
($rc, $out, $err) = psql_as($node->connstr('held'),
	q{SET lock_timeout = '2s'; ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()});
is($out, $version, 'the write ended, the update runs') or diag($err);
is($node->safe_psql('held', 'SELECT count(*) - count(DISTINCT id) FROM t'), '0', 'no id twice');

# A transaction that took an id (its call locks the sequences to its end),
# then inserts into such a table once the update holds it: the update lets
# go of it rather than wait for the transaction's sequences, and the
# insert and the commit go through (before, the update locked the
# sequences outside its tries, and the deadlock detector ended the
# transaction, which waited first)
one_one_with_table('taken', 5);
my $taker = $node->background_psql('taken', extra_params => [ '-U', 'app' ]);
$taker->query_safe('BEGIN; SELECT snowid_next()');
my ($uout, $uerr) = ('', '');
my $update = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-d', $node->connstr('taken'),
	  '-c', 'ALTER EXTENSION snowid_sql UPDATE; SELECT snowid_sql_version()' ],
	'<', \undef, '>', \$uout, '2>', \$uerr);
$node->poll_query_until('taken', q{
	SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.relation = 't'::regclass AND l.mode = 'ShareLock' AND l.granted
	  AND a.query LIKE 'ALTER EXTENSION%'})
  or diag('the update did not lock t');
my ($tout, $tret) = $taker->query('INSERT INTO t DEFAULT VALUES; COMMIT');
is($tret, 0, 'a transaction that took an id inserts and commits while the update waits')
  or diag($taker->{stderr});
$taker->quit;
$update->finish;
chomp $uout;
is($uout, $version, 'and the update runs after it') or diag($uerr);

$node->stop;
done_testing();
