# A private function of the SQL edition that the owner of the extension may
# call: snowid_sql_private.snowid_sql_raise_floor(floor_ms), SECURITY
# DEFINER, granted to the installing role because the trigger
# snowid_config_floor, which runs as that role, calls it
# (sql/snowid_sql/1.4/privileges.sql).  Called directly, it moves the
# generator to any time the layout holds, 2070 say: every later call waits
# for the clock, and fails, for decades; max_drift_ms (at most an hour)
# does not reach; only dropping the extension (and the column defaults
# with it) ends it.  A function of snowid_sql_private is "for the
# functions of the API alone".
#
# - The owner calls snowid_sql_raise_floor() with 2070: it should be
#   refused (42501), and the database should go on issuing ids.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('owner_raise_floor', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 1;
	SELECT count(snowid_next())});
is($out, '1', 'the owner installs it, sets a worker id and takes an id') or diag($err);
($rc, $out, $err) = psql_as($app, q{
	SELECT snowid_sql_private.snowid_sql_raise_floor(
		(extract(epoch FROM timestamptz '2070-01-01 00:00:00+00') * 1000)::bigint)});
like($err, qr/42501/, 'the owner may not call snowid_sql_raise_floor() itself');
($rc, $out, $err) = psql_as($app, q{SET statement_timeout = '10s'; SELECT count(snowid_next())});
is($out, '1', 'and the database goes on issuing ids') or diag($err);

$node->stop;
done_testing();
