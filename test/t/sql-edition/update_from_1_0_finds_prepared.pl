# test/t/sql-edition/update_from_1_0_finds_prepared.pl
#
# The update from 1.0 or 1.1 under load (doc/managed.md, "Updating": it
# "first locks, in SHARE mode, every table (and view) whose column default
# calls a function of the edition ... then the edition's own tables and
# sequences ... Each try waits half of deadlock_timeout, then lets go and
# tries again ... for at most the session's lock_timeout if one is set"),
# where a prepared transaction holds a lock it needs.  The update to 1.4
# from 1.2 or 1.3 refuses there ("55006: a prepared transaction holds a
# lock on the tables of snowid_sql", rather than "wait for it for good":
# update_finds_prepared.pl); the update from 1.0 or 1.1 does not look for
# one.  Under the default lock_timeout (0) it tries again every half of
# deadlock_timeout for as long as the prepared transaction stays, which no
# process holds and only its owner or a superuser ends, saying nothing;
# and in each try it holds snowid_config and snowid_locks in ACCESS
# EXCLUSIVE mode while it waits for the sequence, so every call of
# snowid_next() meanwhile waits up to half of deadlock_timeout.
#
# A role granted nothing needs no more than PUBLIC's EXECUTE on 1.0's
# snowid_next(): a call locks snowid_position (ROW EXCLUSIVE) to the end
# of its transaction, which it prepares.  (A role granted INSERT on a
# table whose default takes ids holds the update so by a prepared insert
# too, and an idle transaction that took an id does, until it ends.)
#
# - 1.0, installed by the bootstrap superuser, worker id 3, a table t whose
#   default takes ids; a role granted nothing calls snowid_next() in a
#   transaction it prepares.
# - The superuser's ALTER EXTENSION snowid_sql UPDATE, given 30 s by the
#   test (statement_timeout), should be refused within them, naming the
#   prepared transaction, as the update from 1.2 or 1.3 is, not cancelled.
# - Meanwhile the owner's 20 inserts, each in a session of its own, should
#   end, none cancelled by its statement_timeout of 10 s (no wall-clock
#   bound beyond that: the test holds on a loaded machine).
# On main (0b4bcd5, snowid_sql 1.4, PostgreSQL 19): the update ran until
# the test's statement_timeout cancelled it (57014: "waiting for
# AccessExclusiveLock on relation ... ALTER SEQUENCE
# public.snowid_position"), the owner's 20 inserts took 10 s; by hand,
# pgbench's calls of snowid_next() fell
# from 872 to 4.3 a second (460 ms each) for as long as it ran.  The same
# on 15 (Debian's 15.20).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = SnowidSqlEdition::new_server('update_from_1_0_finds_prepared', [qw(app other)], [],
	conf => "max_prepared_transactions = 5\n");
$node->safe_psql('postgres', 'CREATE DATABASE su_1_0 OWNER app');
my $su = $node->connstr('su_1_0');
my $app = $node->connstr('su_1_0') . ' user=app';
my $other = $node->connstr('su_1_0') . ' user=other';

my ($rc, $out, $err) = psql_as($su, q{
	CREATE EXTENSION snowid_sql VERSION '1.0';
	UPDATE snowid_config SET worker_id = 3;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), s int);
	GRANT ALL ON t TO app;
	SELECT snowid_sql_version()});
is($out, '1.0', '1.0, installed by the superuser, with a worker id') or diag($err);
($rc, $out, $err) = psql_as($other, q{
	BEGIN;
	SELECT count(snowid_next());
	PREPARE TRANSACTION 'hold'});
is($rc, 0, 'a role granted nothing calls snowid_next() in a transaction it prepares') or diag($err);

my ($update, $uout, $uerr) = SnowidSqlEdition::update_waiting($node, 'su_1_0', $su);
my $done = 0;
for (1 .. 20)
{
	($rc, $out, $err) = psql_as($app, q{SET statement_timeout = '10s'; INSERT INTO t (s) VALUES (2)});
	$done++ if $rc == 0;
}
is($done, 20, "the owner's 20 inserts, each in a session of its own, end meanwhile, none cancelled by its 10 s statement_timeout")
  or diag($err);
$update->finish;
unlike($$uerr, qr/57014/, 'the update ends by itself within 30 s, not by the statement_timeout')
  or diag($$uerr);
like($$uerr, qr/55006: .*prepared transaction/,
	'the update is refused, naming the prepared transaction, as the update from 1.2 or 1.3 is');

$node->safe_psql('su_1_0', q{ROLLBACK PREPARED 'hold'});
$node->stop;
done_testing();
