# test/t/sql-edition/worker_set_lock_holder_named.pl
#
# The owner's step that sets the worker id reads every table whose column
# takes ids by its default, each locked first (snowid_sql_lock_read()); a
# lock another holds past lock_timeout refuses the step with 55P03,
# "naming the process: end its transaction, as a role that may signal it,
# then repeat the step" (doc/security.md, "The SQL edition").  A role
# granted nothing of the edition but a schema of its own (its table's
# default need not even issue: snowid_from_time(now()), which PUBLIC may
# call, is "a default that takes ids") that locks its table in a PREPARED
# transaction (max_prepared_transactions > 0) holds the lock in no process:
# the detail says "(process )", and the hint's pg_terminate_backend()
# ends nothing; the lock outlives restarts, and only that role or a
# superuser (which the owner is not, on a managed cloud) may end it.
#
#
# And a role that may rename its schema (CREATE on the database) and
# leaves ALTER SCHEMA ... RENAME open: the reader locks the schema's row
# first (FOR KEY SHARE on pg_namespace), whose wait ends at lock_timeout in
# PostgreSQL's own "canceling statement due to lock timeout", naming
# neither the table nor the process.
#
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19, by hand and here): the
# owner's first UPDATE snowid_config SET worker_id = 5 of a new install
# fails after 10 s with "Another session holds a lock on it (process ) and
# did not let it go within lock_timeout", hint pg_terminate_backend(); and,
# the schema's rename open, with "canceling statement due to lock timeout"
# (context: "while locking tuple (0,10) in relation pg_namespace"); the
# same on 15 (Debian's 15.20).
#
# Since fix68i (issue 68) the step reads only columns whose default issues
# ids (snowid_next(), snowid_next_batch(), snowid_serial(prefix)): a default
# of snowid_from_time(now()) issues none, so its table is not read and its
# lock holds nothing up (asserted below).  The tables locked here take
# snowid_next() by their default, which PUBLIC may call, so that a role
# granted nothing still makes one; the names of the holders are what is
# tested.
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

($rc, $out, $err) = psql_as(app_url($node, 'db'), 'UPDATE snowid_config SET worker_id = 5');
like($err, qr/cannot read mine\.t for the ids it holds/, "the owner's step is refused, naming the table");
like($err, qr/DETAIL:.*(process \d+|prepared transaction)/,
	'and its detail names who holds the lock (a process, or the prepared transaction)');
unlike($err, qr/HINT:.*pg_terminate_backend/, 'its hint does not send the owner to end a process that holds nothing');

psql_as($lesser, "ROLLBACK PREPARED 'held'");
($rc, $out, $err) = psql_as(app_url($node, 'db'), 'UPDATE snowid_config SET worker_id = 5 RETURNING worker_id');
is($out, '5', 'the prepared transaction rolled back, the step passes') or diag($err);

($rc, $out, $err) = psql_as($lesser, q{
	BEGIN;
	LOCK TABLE mine.u IN SHARE MODE;
	PREPARE TRANSACTION 'held on u'});
($rc, $out, $err) = psql_as(app_url($node, 'db'), q{
	SET lock_timeout = '1s';
	UPDATE snowid_config SET worker_id = 6 RETURNING worker_id});
is($out, '6', 'a table whose default issues no id (snowid_from_time()) is not read: its lock holds nothing up')
  or diag($err);
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
($rc, $out, $err) = psql_as(app_url($node, 'renamed'), 'UPDATE snowid_config SET worker_id = 5');
like($err, qr/cannot read mine\.t for the ids it holds/,
	"the schema's rename open, the owner's step is refused naming the table");
like($err, qr/DETAIL:.*process \d+/, 'and the process that holds it');
$node->safe_psql('renamed', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'BEGIN; ALTER SCHEMA mine%'});
$session->finish;

$node->stop;
done_testing();
