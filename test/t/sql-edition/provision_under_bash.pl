# The provisioning script of doc/managed.md under bash, /bin/sh on Red
# Hat, Fedora and Amazon Linux hosts: read_db takes the database's
# worker_bits into shell arithmetic, max=$(( (1 << $1) - 1 )), and bash
# expands an array subscript there, command substitutions included.  The
# owner of the database, whose login the script uses (DB_URL), resolves
# the unqualified snowid_config of read_db's query: a view of that name in
# a schema of its own name (first in the default search_path) hands the
# script a worker_bits of any text without blanks, and the next assert
# (cron, every INTERVAL_MS) runs the owner's command on the host that
# keeps every holder's secret and reaches the coordination database as
# its administrator (test 180 is the same reading sent on as SQL).
#
# - db1 claims a worker id; its owner plants the view, whose worker_bits
#   is HOME[$(cp${IFS}<STATE_DIR/secret>${IFS}<a file of its choosing>)].
# - assert runs under bash: it should run no command of the owner's (the
#   file is not made, the holder's secret is not copied).
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
my $script = SnowidSqlEdition::provisioning_script('provision_bash', $cnode,
	DATACENTER => 3, INTERVAL_MS => 60000, MARGIN_MS => 1000, shell => 'bash');
my $dir = $script->dir;

my $node = SnowidSqlEdition::new_server('provision_bash', ['app'], ['db1']);
SnowidSqlEdition::install($node, 'db1');
$script->databases(db1 => app_url($node, 'db1'));

my ($rc, $out, $err) = $script->run('claim', 'db1', limit => 120);
like($out, qr/^worker id \d+ of datacenter 3$/, "claim: db1 takes a worker id ($out)") or diag($err);

# the owner of db1 plants its own snowid_config, first in its search_path
my $copied = "$dir/copied";
($rc, $out, $err) = psql_as(app_url($node, 'db1'), qq{
	CREATE SCHEMA app;
	CREATE VIEW app.snowid_config AS
	SELECT 'HOME[\$(cp\${IFS}$dir/state-db1/secret\${IFS}$copied)]'::text AS worker_bits,
		c.worker_id, c.max_drift_ms
	FROM public.snowid_config c});
is($rc, 0, 'the owner of db1 makes a view snowid_config in a schema of its name') or diag($err);

($rc, $out, $err) = $script->run('assert', 'db1', limit => 120);
note("assert: exit code $rc, $out $err");
ok(!-e $copied, 'assert, under bash, runs no command of the database owner\'s (the holder\'s secret is not copied)');

$node->stop;
done_testing();
