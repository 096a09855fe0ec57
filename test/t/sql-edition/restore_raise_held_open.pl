# A dump restored into a database whose worker id was set first (the
# install's steps, doc/managed.md: CREATE EXTENSION, the worker id, then
# the data): since 1.4's fifth fixes the restore marks the row, and the
# first call after it sets the worker id again "in the caller's
# transaction ... calls at once wait for it" (snowid_sql_raise_restored()).
# That caller's transaction then holds the row of snowid_config to its end:
# every other call waits on it (its own raise, an UPDATE of the same row),
# for as long as the transaction stays open, and so does the owner's
# UPDATE snowid_config.  The first caller may be any role: PUBLIC may call
# snowid_next().  A role granted nothing of the edition takes that first
# call in a transaction it leaves open, or PREPAREs
# (max_prepared_transactions > 0): then no id at all, across restarts,
# until it (or a superuser) ends it; the owner, no superuser on a managed
# cloud, cannot end it.  The same as the claim's lock of issue 68's second
# finding, which the retirement of the claim closed.
#
# - One server; app owns source (worker id 5, a table of 100 ids) and
#   target (worker id 6); source dumped (pg_dump -Fc) and restored into
#   target (pg_restore): the row is marked.
# - lesser, granted nothing, runs BEGIN; SELECT snowid_next() in target
#   and leaves it open: app's and clerk's calls (statement_timeout 10 s)
#   and the owner's UPDATE snowid_config must go on.
# - Again on a second restore, lesser's transaction PREPAREd and the
#   server restarted.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): every call and
# the owner's UPDATE fail after 10 s with 57014, "waiting for ShareLock on
# transaction ... while locking tuple (0,3) in relation snowid_config" in
# snowid_sql_raise_restored(); the same after the restart with the
# transaction prepared.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), no
# call raises after a restore: the restore of the row clears the worker id
# the target had, and the owner's setting of the worker id once the
# restore is over (doc/managed.md, "Dumps and restores": restore, then set
# the worker id) raised, until 1.4's last fixes, past the ids of its node the tables held, reading
# the tables in its own transaction.  This test now follows that step: the worker id set after the restore, a
# transaction of a role granted nothing left open or prepared with a call
# in it holds nothing other calls or the owner's UPDATE wait for.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_raise_held_open');
my $node = SnowidSqlEdition::new_server('restore_raise_held_open', [qw(app lesser clerk)],
	[qw(source target target2)], conf => "max_prepared_transactions = 5\n");
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source target target2);

my $file = SnowidSqlEdition::hundred_dumped($node, "$dir/source.dump");
my ($rc, $out, $err);

# the target installed and given its worker id, then the dump restored
sub restored
{
	my ($db) = @_;
	my ($rc, $out, $err) = psql_as($as{$db}, q{
		CREATE EXTENSION snowid_sql;
		UPDATE snowid_config SET worker_id = 6;
		GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO clerk;
		SELECT 1});
	is($out, '1', "$db: installed, worker id 6") or diag($err);
	$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $as{$db}, $file ],
		"$db: pg_restore restores the source's dump");
	SnowidSqlEdition::worker_set_after_restore($node, $db, 1, 6);
	return;
}

# the owner's and another role's calls, and the owner's UPDATE of the row,
# each within 10 s
sub others_go_on
{
	my ($db, $while) = @_;
	my ($rc, $out, $err) = psql_as($node->connstr($db) . ' user=clerk', SnowidSqlEdition::in_10s_sql('calls'));
	is($out, '100', "$while: another role's calls issue ids") or diag($err);
	($rc, $out, $err) = psql_as($as{$db}, SnowidSqlEdition::in_10s_sql('batch'));
	is($out, '100', "$while: so do the owner's") or diag($err);
	($rc, $out, $err) = psql_as($as{$db}, q{
		SET statement_timeout = '10s';
		UPDATE snowid_config SET max_wait_ms = max_wait_ms});
	is($rc, 0, "$while: and the owner's UPDATE snowid_config finishes") or diag($err);
	return;
}

restored('target');
my $open = $node->background_psql('target', extra_params => [ '-U', 'lesser' ]);
$open->query_safe(q{BEGIN; SELECT snowid_next()});
others_go_on('target', 'the first call after the restore in an open transaction of a role granted nothing');
$open->query_safe('COMMIT');
$open->quit;

restored('target2');
$open = $node->background_psql('target2', extra_params => [ '-U', 'lesser' ]);
$open->query_safe(q{BEGIN; SELECT snowid_next()});
$open->query_safe(q{PREPARE TRANSACTION 'held'});
$open->quit;
$node->restart;
others_go_on('target2', 'that transaction prepared, the server restarted');
is($node->safe_psql('target2', q{SELECT gid FROM pg_prepared_xacts}), 'held',
	'(the transaction is still prepared)');
$node->safe_psql('target2', q{ROLLBACK PREPARED 'held'});

$node->stop;
done_testing();
