# A dump of a plain-script install of the SQL edition holds the row of
# snowid_config whole (its datacenter id, worker id and stamp: no
# extension's restore trigger takes the worker id out), and restored
# elsewhere its first call says "snowid has no worker id on this server"
# (snowid_sql_elsewhere()) with the hint "UPDATE snowid_config SET
# worker_id = N, with N unique among the servers of the datacenter".  The
# row keeps its source's datacenter id: the owner who follows the hint
# for the datacenter the database is in issues as the source's datacenter
# with its own worker id, which a server there may hold.  1.3.0's fixes
# made the hint of a restored row without a worker id say to set the
# datacenter id with it (snowid_sql_config(), test 174's cause); this one
# was left.
#
# - other: datacenter 1, worker id 4, issuing;
# - the source, through the plain script: datacenter 1, worker id 9, then
#   dumped and gone;
# - target: the dump restored; its first call's hint should name the
#   datacenter id; following it for datacenter 3 (worker id 4, unique
#   there), no id of target and other may come twice (both issuing for 3 s).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $src = $SnowidTest::top;
my $dir = PostgreSQL::Test::Utils::tempdir('plain_dump_datacenter');
my $version = SnowidSqlEdition::version();
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain.sql") == 0
  or die 'could not make the plain script';

my $node = SnowidSqlEdition::new_server('plain_dump_datacenter', ['app'], [qw(source target other)]);
my %as = map { $_ => app_url($node, $_) } qw(source target other);

psql_as($as{other}, q{CREATE EXTENSION snowid_sql; UPDATE snowid_config SET datacenter_id = 1, worker_id = 4});
my ($out, $err);
IPC::Run::run([ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $as{source}, '-f', "$dir/plain.sql" ],
	'>', \$out, '2>', \$err)
  or die "the plain script failed: $err";
my $rc;
($rc, $out, $err) = psql_as($as{source}, q{
	UPDATE snowid_config SET datacenter_id = 1, worker_id = 9;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	INSERT INTO t DEFAULT VALUES;
	SELECT count(*) FROM t});
is($out, '1', 'the source (a plain script\'s install, datacenter 1, worker id 9) issues') or diag($err);
SnowidSqlEdition::dump_to($as{source}, "$dir/source.dump");
$node->safe_psql('postgres', 'DROP DATABASE source');
($rc, $err) = SnowidSqlEdition::restore_into($node->connstr('target'), "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'the source\'s dump is restored into target') or diag($err);

($rc, $out, $err) = psql_as($as{target}, 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id on this server/, 'target\'s first call says it has no worker id');
like($err, qr/HINT: .*datacenter_id/, 'the hint says to set its datacenter id with the worker id')
  or diag($err);

# the hint followed for the datacenter target is in (datacenter 3, where
# it names the datacenter id too)
my $set = $err =~ /HINT: .*datacenter_id/ ? 'datacenter_id = 3, worker_id = 4' : 'worker_id = 4';
($rc, $out, $err) = psql_as($as{target}, "UPDATE snowid_config SET $set");
is($rc, 0, 'target is given worker id 4, unique in its datacenter 3') or diag($err);

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my ($n, $twice) = SnowidSqlEdition::issue_at_once($node, 'target', 'other');
is($twice, 0, "no id of target and other twice ($twice of $n)");

$node->stop;
done_testing();
