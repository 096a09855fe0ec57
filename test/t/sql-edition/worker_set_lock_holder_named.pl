# test/t/sql-edition/worker_set_lock_holder_named.pl
#
# The owner's step that sets the worker id read, before 1.4's last fixes,
# every table whose column took ids by its default, each locked first: a
# lock another held past lock_timeout refused the step with 55P03, and a
# role granted nothing of the edition but a schema of its own could hold
# such a lock in a PREPARED transaction (no process to end; only that role
# or a superuser may end it) or leave ALTER SCHEMA ... RENAME open (the
# schema's row locked).  The error then named the holder (this test's
# first form).  The step reads no table now: it raises the generator past
# the clock plus max_drift_ms (doc/managed.md, "The configuration"), and is
# taken while such locks are held.
#
# - lesser (granted nothing, a schema of its own) makes tables whose
#   defaults take ids (snowid_next(), snowid_from_time(now())) and locks
#   them in prepared transactions: the owner's step is taken meanwhile
#   (lock_timeout 30 s, so that a step that waited would fail, not hang).
# - lesser leaves its schema's rename open: the owner's step is taken.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $node = SnowidSqlEdition::new_server('worker_set_lock_holder_named', [qw(app lesser)], [qw(db renamed)],
	conf => 'max_prepared_transactions = 5');
my $lesser = $node->connstr('db') . ' user=lesser';

SnowidSqlEdition::install($node, 'db');
$node->safe_psql('db', 'CREATE SCHEMA mine AUTHORIZATION lesser');
# (psql -c sends its statements as one query, one transaction: the table
# is made in a call of its own)
my ($rc, $out, $err) = psql_as($lesser, q{
	CREATE TABLE mine.t (id bigint DEFAULT snowid_next());
	INSERT INTO mine.t VALUES (1);
	CREATE TABLE mine.u (id bigint DEFAULT snowid_from_time(now()));
	INSERT INTO mine.u DEFAULT VALUES;});
($rc, $out, $err) = psql_as($lesser, q{
	BEGIN;
	LOCK TABLE mine.t IN SHARE MODE;
	PREPARE TRANSACTION 'held';
	SELECT count(*) FROM pg_prepared_xacts});
is($out, '1', 'a role granted nothing locks its own table in a prepared transaction') or diag($err);

($rc, $out, $err) = psql_as(app_url($node, 'db'), q{
	SET lock_timeout = '30s';
	UPDATE snowid_config SET worker_id = 5 RETURNING worker_id});
is($out, '5', "the owner's step is taken while the prepared transaction holds mine.t") or diag($err);
psql_as($lesser, "ROLLBACK PREPARED 'held'");

($rc, $out, $err) = psql_as($lesser, q{
	BEGIN;
	LOCK TABLE mine.u IN ACCESS EXCLUSIVE MODE;
	PREPARE TRANSACTION 'held on u'});
($rc, $out, $err) = psql_as(app_url($node, 'db'), q{
	SET lock_timeout = '30s';
	UPDATE snowid_config SET worker_id = 6 RETURNING worker_id});
is($out, '6', 'and so is the next, beside an ACCESS EXCLUSIVE lock on mine.u') or diag($err);
psql_as($lesser, "ROLLBACK PREPARED 'held on u'");

# the schema's rename left open
$node->safe_psql('postgres', 'GRANT CREATE ON DATABASE renamed TO lesser');
SnowidSqlEdition::install($node, 'renamed');
my $renamer = $node->connstr('renamed') . ' user=lesser';
psql_as($renamer, 'CREATE SCHEMA mine');
psql_as($renamer, 'CREATE TABLE mine.t (id bigint DEFAULT snowid_next())');
my $session = SnowidTest::start_psql($node, 'BEGIN; ALTER SCHEMA mine RENAME TO theirs; SELECT pg_sleep(60); ROLLBACK',
	db => 'renamed', user => 'lesser');
$node->poll_query_until('renamed', q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'BEGIN; ALTER SCHEMA mine%' AND xact_start IS NOT NULL)})
  or die 'the rename did not start';
($rc, $out, $err) = psql_as(app_url($node, 'renamed'), q{
	SET lock_timeout = '30s';
	UPDATE snowid_config SET worker_id = 5 RETURNING worker_id});
is($out, '5', "the schema's rename open, the owner's step is taken") or diag($err);
$node->safe_psql('renamed', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'BEGIN; ALTER SCHEMA mine%'});
$session->finish;

$node->stop;
done_testing();
