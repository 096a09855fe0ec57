# A dump restored into a database whose worker id was set first (the
# install's steps; or the provisioning script's claim, doc/managed.md,
# which sets datacenter_id and worker_id) takes the source's datacenter id
# (snowid_sql_config_restore() updates the row "all but its worker id"):
# the database then issues as a node nobody gave it, the source's
# datacenter with its own worker id, which another server of that
# datacenter may hold.  The script's assert re-asserts the worker id in
# its own datacenter, and sees nothing.
#
# - other: datacenter 1, worker id 4, issuing;
# - the source: datacenter 1, worker id 9 (gone after its dump);
# - target: datacenter 3, worker id 4 (unique in datacenter 3), then the
#   source's dump restored: its datacenter id should stay 3, and, both
#   issuing at once for 3 s, no id of target and other may come twice.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), the
# restore of the row clears the worker id the target had and takes the
# dump's datacenter id with the rest of the row: the target issues nothing
# (no node at all, rather than one nobody gave it) until its owner sets
# both (doc/managed.md, "Dumps and restores": restore, then set the
# datacenter id and the worker id, as the first call's hint says).  This
# test now asserts that, then the owner's step (datacenter 3, worker id 4),
# then that no id of target and other comes twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_datacenter');

my $node = SnowidSqlEdition::new_server('restore_datacenter', ['app'], [qw(source target other)]);
my %as = map { $_ => app_url($node, $_) } qw(source target other);

psql_as($as{other}, q{CREATE EXTENSION snowid_sql; UPDATE snowid_config SET datacenter_id = 1, worker_id = 4});
my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_id = 1, worker_id = 9;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	INSERT INTO t DEFAULT VALUES;
	SELECT count(*) FROM t});
is($out, '1', 'the source (datacenter 1, worker id 9) issues') or diag($err);
($rc, $out, $err) = psql_as($as{target}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_id = 3, worker_id = 4});
is($rc, 0, 'target is given datacenter 3, worker id 4') or diag($err);
SnowidSqlEdition::dump_to($as{source}, "$dir/source.dump");
$node->safe_psql('postgres', 'DROP DATABASE source');
($rc, $err) = SnowidSqlEdition::restore_into($as{target}, "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'the source\'s dump is restored into target') or diag($err);
($rc, $out, $err) = psql_as($as{target}, 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id on this server.*HINT:  .*SET datacenter_id = D, worker_id = N/s,
	'the restore cleared the worker id: target issues as no node, and the hint says to set both');
($rc, $out, $err) = psql_as($as{target}, q{
	UPDATE snowid_config SET datacenter_id = 3, worker_id = 4;
	SELECT datacenter_id || '/' || worker_id FROM snowid_config});
is($out, '3/4', 'the restore over, the owner sets datacenter 3 and worker id 4 again') or diag($err);

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my ($n, $twice) = SnowidSqlEdition::issue_at_once($node, 'target', 'other');
is($twice, 0, "no id of target and other twice (of $n)");

$node->stop;
done_testing();
