# The update of a 1.2 that claimed its worker id to 1.4 keeps the claimed
# worker id as its configured one (1.2--1.4/claim.sql): the row of
# snowid_config had worker_id NULL and claim_worker_id on (1.2 read the
# claimed worker id from snowid_claimed, snowid_sql_claimed()), and the
# update writes the worker id into it.  A transaction whose snapshot was
# taken before the update (REPEATABLE READ, SERIALIZABLE, or a long
# statement) reads the row as it was: 1.4's snowid_sql_config() turns
# claim_worker_id off (1.4's fixes, for 1.2's calls in flight) but keeps
# that row's NULL worker id, so a call that reads the table for its
# worker id (snowid_next_batch(), and snowid_next() off its common path,
# a clock behind the position; snowid_serial() goes by the common path)
# fails with "snowid has no worker id" (55000) in a database that
# has one, and that issued with it a moment before in the same
# transaction.  1.4 keeps snowid_sql_claimed() for 1.2's own body in
# flight, which fills the worker id; its own reading does not.
#
# - 1.2 claiming its worker id from a coordination database; a session
#   opens a REPEATABLE READ transaction and reads a table of its own (its
#   snapshot taken; had it read snowid_config, its lock would make the
#   update refuse, as it does).
# - The owner updates to 1.4 (the claim confirmed: kept).
# - The open transaction takes a batch, and serials: it should get them,
#   as a new transaction does.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the batch fails with
# 55000 "snowid has no worker id" in 3 runs of 3 (and on 18); serials pass.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $node = PostgreSQL::Test::Cluster->new('update_claim_old_snapshot');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; GRANT pg_read_all_stats TO app; CREATE DATABASE claimed OWNER app');
$node->safe_psql('claimed', 'CREATE EXTENSION dblink');
my $app = $node->connstr('claimed') . ' user=app';
my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
	  . SnowidSqlEdition::claim_config($conninfo, $password)
	  . q{SELECT count(snowid_next())});
is($out, '1', '1.2 claims its worker id and issues') or diag($err);

my $open = $node->background_psql('claimed', on_error_stop => 0, extra_params => [ '-U', 'app' ]);
$open->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
like($open->query_safe('SELECT count(*) FROM pg_class WHERE oid > 0'), qr/^\d+$/m,
	'a REPEATABLE READ transaction takes its snapshot (reading a table of its own)');

# (the claim's re-assertion may meet a busy coordination database: tried
# again, as the update's hint says)
for (1 .. 5)
{
	($rc, $out, $err) = psql_as($app, q{BEGIN; DO $$BEGIN PERFORM snowid_claim(); END$$; ALTER EXTENSION snowid_sql UPDATE TO '1.4'; COMMIT;
		SELECT snowid_sql_version(), worker_id IS NOT NULL FROM snowid_config});
	last if $out =~ /^1\.4/;
	note("the update: $err");
}
is($out, '1.4|t', 'the update to 1.4 keeps the claimed worker id') or diag($err);
($rc, $out, $err) = psql_as($app, 'SELECT count(*) FROM snowid_next_batch(10)');
is($out, '10', 'a new transaction takes a batch') or diag($err);

# each in a savepoint, so that one's error leaves the transaction to the next
for my $call ([ 'SELECT count(*) FROM snowid_next_batch(10)', 'a batch' ],
	[ q{SELECT count(*) FROM (SELECT snowid_serial('INV-') FROM generate_series(1, 10)) s}, 'serials' ])
{
	$open->query('SAVEPOINT s');
	my ($got, $stderr) = $open->query($call->[0]);
	like($got, qr/^10$/m, "the transaction open across the update takes $call->[1]")
	  or diag($stderr);
	$open->query('ROLLBACK TO SAVEPOINT s');
}
$open->quit;

$node->stop;
done_testing();
