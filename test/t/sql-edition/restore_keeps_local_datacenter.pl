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
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_datacenter');

my $node = PostgreSQL::Test::Cluster->new('restore_datacenter');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE source OWNER app;
	CREATE DATABASE target OWNER app;
	CREATE DATABASE other OWNER app;
});
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source target other);

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
IPC::Run::run([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $as{source} ],
	'>', \$out, '2>', \$err)
  or diag($err);
$node->safe_psql('postgres', 'DROP DATABASE source');
IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $as{target}, "$dir/source.dump" ],
	'>', \$out, '2>', \$err);
is($? >> 8, 0, 'the source\'s dump is restored into target') or diag($err);
is($node->safe_psql('target', 'SELECT datacenter_id || \'/\' || worker_id FROM snowid_config'),
	'3/4', 'target keeps its datacenter and worker id');

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my $start = $node->safe_psql('postgres', q{SELECT clock_timestamp() + interval '2 s'});
my %run;
for my $db ('target', 'other')
{
	$run{$db}{out} = '';
	$run{$db}{err} = '';
	$run{$db}{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr($db) . ' user=app', '-c',
		  qq{CREATE TEMP TABLE ids (id bigint);
			 DO \$\$ BEGIN
				PERFORM pg_sleep_until('$start');
				WHILE clock_timestamp() < timestamptz '$start' + interval '3 s' LOOP
					INSERT INTO ids VALUES (snowid_next());
				END LOOP;
			 END \$\$;
			 SELECT id FROM ids} ],
		'<', \undef, '>', \$run{$db}{out}, '2>', \$run{$db}{err});
}
my %seen;
my ($n, $twice) = (0, 0);
for my $db ('target', 'other')
{
	$run{$db}{h}->finish;
	diag("$db: $run{$db}{err}") if $run{$db}{err};
	my %mine = map { $_ => 1 } split /\n/, $run{$db}{out};
	$n += keys %mine;
	$twice += grep { $seen{$_}++ } keys %mine;
}
is($twice, 0, "no id of target and other twice (of $n)");

$node->stop;
done_testing();
