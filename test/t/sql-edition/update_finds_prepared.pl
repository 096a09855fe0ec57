# The update to 1.3 refuses where a prepared transaction holds a lock on
# the edition's tables (doc/managed.md: "refuses where a prepared
# transaction holds one (55006, naming it)"), rather than wait for it for
# good.  Its check joins pg_locks on virtualtransaction '-1/<xid>'; a
# prepared transaction's locks are listed under its own virtual
# transaction (here, on every version tested), and one that only read
# snowid_config, which PUBLIC may, is not found.  The update then waits
# for it for good, holding snowid_locks meanwhile, so every snowid_next()
# of the database waits behind it; and only a superuser or the role that
# prepared it may end it.
#
# - 1.2, its worker id set; another role, granted nothing, reads
#   snowid_config in a transaction it prepares;
# - the owner's ALTER EXTENSION snowid_sql UPDATE should be refused
#   (55006) within 30 s;
# - meanwhile another session's snowid_next() should finish within 10 s.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = SnowidSqlEdition::new_server('update_prepared_read', [qw(app other)], ['appdb'],
	conf => "max_prepared_transactions = 5\n");
my $app = $node->connstr('appdb') . ' user=app';
my $other = $node->connstr('appdb') . ' user=other';

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql VERSION '1.2';
	UPDATE snowid_config SET worker_id = 3;
	SELECT count(snowid_next())});
is($out, '1', 'the owner installs 1.2 and sets its worker id') or diag($err);
($rc, $out, $err) = psql_as($other, q{
	BEGIN;
	SELECT count(*) FROM snowid_config;
	PREPARE TRANSACTION 'hold'});
is($rc, 0, 'another role reads snowid_config in a transaction it prepares') or diag($err);

# the update, given at most 30 s; meanwhile an id
my ($update, $uout, $uerr) = SnowidSqlEdition::update_waiting($node, 'appdb', $app);
($rc, $out, $err) = psql_as($other, q{SET statement_timeout = '10s'; SELECT count(snowid_next())});
is($out, '1', 'another session takes an id within 10 s meanwhile') or diag($err);
$update->finish;
like($$uerr, qr/55006: a prepared transaction holds a lock on the tables of snowid_sql/,
	'the update is refused, naming the prepared transaction');

$node->safe_psql('appdb', q{ROLLBACK PREPARED 'hold'});
$node->stop;
done_testing();
