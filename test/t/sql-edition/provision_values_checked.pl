# The provisioning script of doc/managed.md reads the database's layout,
# worker id and max_drift_ms (read_db: SELECT ... FROM snowid_config c,
# snowid_status() s, unqualified, as the owner of snowid_sql) and writes
# what it read, unchecked, into the SQL it sends to the coordination
# database as the fleet's role (call_claim: quiet_ms => ... + $drift + ...)
# and, at release, as the administrator (free(..., $drift + ...)).  The
# owner of the database, whose login the script uses (DB_URL), resolves
# those names: a schema of its own name comes first in the default
# search_path, and a view snowid_config there with a max_drift_ms of text
# (and an operator + (bigint, text) beside it) hands the script any text
# without blanks.  The database's owner is not the fleet's: the edition
# keeps it from the generator's sequences, locks and private functions
# (doc/security.md), and the page runs the script from a host that reaches
# both, "never from a database itself".
#
# - db1 claims a worker id; its owner plants the view and the operator.
# - assert runs, as cron runs it: the fleet's role should not be changed
#   (here the owner's text sets default_transaction_read_only on for the
#   fleet's role, ALTER ROLE CURRENT_USER SET, which any role may do to
#   itself; a password would do as well).
# - Another database's claim should still be granted.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidPgCoord;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $coord = SnowidPgCoord->new;
my $cnode = $coord->node;
my $script = SnowidSqlEdition::provisioning_script('provision_injection', $cnode,
	DATACENTER => 3, INTERVAL_MS => 60000, MARGIN_MS => 1000);

my $node = SnowidSqlEdition::new_server('provision_injection', ['app'], [qw(db1 db2)]);
SnowidSqlEdition::install($node, $_) for qw(db1 db2);
$script->databases(map { $_ => app_url($node, $_) } qw(db1 db2));

my ($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
like($out, qr/^worker id \d+ of datacenter 3$/, "claim: db1 takes a worker id ($out)") or diag($err);

# the owner of db1 plants its own snowid_config, first in its search_path
($rc, $out, $err) = psql_as(app_url($node, 'db1'), q{
	CREATE SCHEMA app;
	CREATE FUNCTION app.plus(bigint, text) RETURNS bigint LANGUAGE sql IMMUTABLE RETURN $1 + 1000;
	CREATE OPERATOR app.+ (LEFTARG = bigint, RIGHTARG = text, FUNCTION = app.plus);
	CREATE VIEW app.snowid_config AS
	SELECT c.worker_bits, c.worker_id,
		'0,reassert=>true,seen_generation=>0,seen_counter=>0,clock_margin_ms=>60000);'
		|| 'ALTER/**/ROLE/**/CURRENT_USER/**/SET/**/default_transaction_read_only=on;SELECT/**/(0'
		AS max_drift_ms
	FROM public.snowid_config c});
is($rc, 0, 'the owner of db1 makes a view snowid_config in a schema of its name') or diag($err);

# the fleet's role's settings as the coordination server's setup left
# them (SnowidCoordDb sets log_parameter_max_length = 0 for it)
my $role_settings = q{
	SELECT coalesce(string_agg(array_to_string(s.setconfig, ','), ';'), '')
	FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
	WHERE r.rolname = 'coord_fleet'};
my $settings_before = $cnode->safe_psql('coord', $role_settings);
($rc, $out, $err) = $script->run('assert', 'db1', limit => 120);
note("assert: exit code $rc, $out $err");
is($cnode->safe_psql('coord', $role_settings), $settings_before,
	'assert changes nothing of the fleet\'s role');

($rc, $out, $err) = $script->run('claim', 'db2', limit => 120);
like($out, qr/^worker id \d+ of datacenter 3$/, 'another database\'s claim is still granted')
  or diag("exit code $rc: $err");

$node->stop;
done_testing();
