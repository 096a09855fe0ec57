# Attack (issue 56, item 4, and managed.md "Updating from 1.0 or 1.1"): an
# install of 1.0 or 1.1 that the database owner made is not updated to 1.2;
# the page says to drop the extension and create it again in one
# transaction, and then (its last line, after COMMIT) to wait in that
# session until the clock has passed the last id of the old install,
# which may lie up to max_drift_ms ahead of the clock.  But the new worker
# id is committed before the wait: every other session (the application,
# which the page does not stop) takes ids of the new install at once, at
# the clock, under the same worker id, below ids the old install issued.
#
# Here the old install (1.1, made by app) runs ahead of its clock within
# its drift bound: a batch under the layout 51/0/6/4 (16 ids a
# millisecond, max_drift_ms 10000) takes 100,000 ids, 6.25 s of positions.
# Then the page's steps run verbatim, as app; right after their COMMIT,
# the application takes 1,000 ids; then the page's wait.  Expected: none
# of the application's ids was issued before.  On the current code every
# one of them was.
use strict;
use warnings;

use File::Spec;
use FindBin;
use lib $FindBin::RealBin;

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../..");
my $dir = PostgreSQL::Test::Utils::tempdir('att_recreate');

my $node = PostgreSQL::Test::Cluster->new('att_recreate');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	CREATE DATABASE appdb OWNER app;
});
my $app = $node->connstr('appdb') . ' user=app';
my $clerk = $node->connstr('appdb') . ' user=clerk';

my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE EXTENSION snowid_sql VERSION '1.1';
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4,
		max_drift_ms = 10000, max_wait_ms = 2000, worker_id = 5;
	CREATE TABLE old_ids (id bigint PRIMARY KEY);
	GRANT SELECT, INSERT ON old_ids TO clerk;
	CREATE TABLE app_ids (id bigint);
	GRANT SELECT, INSERT ON app_ids TO clerk;
	SELECT snowid_sql_version()});
is($out, '1.1', 'app installs 1.1 (51/0/6/4, max_drift_ms 10000, worker id 5)') or diag($err);

# the application, busy: one batch (its positions run up to 6.25 s ahead
# of the clock, within the drift bound)
($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk, q{
	INSERT INTO old_ids SELECT snowid_next_batch(100000);
	SELECT count(*), round(extract(epoch FROM snowid_time(max(id)) - clock_timestamp()), 1) > 2
	FROM old_ids});
is($out, '100000|t', 'the old install issued 100,000 ids, running seconds ahead of its clock')
  or diag($err);

# managed.md's steps, as app, split at their COMMIT
my ($steps) = slurp_file("$src/doc/managed.md")
  =~ /^### Updating from 1\.0 or 1\.1\n.*?^```sql\n(.*?)^```$/ms;
ok(defined $steps, 'managed.md says how to drop it and create it again');
my ($to_commit, $after) = $steps =~ /\A(.*?^COMMIT;\n)(.*)\z/ms;
ok(defined $after && $after =~ /pg_sleep/, 'the steps wait after their COMMIT');
append_to_file("$dir/part1.sql", $to_commit . "\\echo LAST :last_id\n");
my $ok = IPC::Run::run(
	[ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $app, '-f', "$dir/part1.sql" ],
	'<', \undef, '>', \$out, '2>', \$err);
ok($ok, 'the steps up to COMMIT, run by app') or diag($err);
my ($last_id) = $out =~ /LAST (\d+)/;

# the application, right after the COMMIT, as it would be
($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk, q{
	INSERT INTO app_ids SELECT snowid_next() FROM generate_series(1, 1000);
	SELECT snowid_sql_version(), count(*) FROM app_ids});
is($out, '1.2|1000', 'the application takes 1,000 ids of the new install') or diag($err);

# the page's wait, in the session that ran the steps
append_to_file("$dir/part2.sql", "\\set last_id $last_id\n" . $after);
$ok = IPC::Run::run(
	[ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $app, '-f', "$dir/part2.sql" ],
	'<', \undef, '>', \$out, '2>', \$err);
ok($ok, 'the steps\' wait') or diag($err);

my $repeated = $node->safe_psql('appdb',
	'SELECT count(*) FROM app_ids a JOIN old_ids o USING (id)');
diag("ids of the new install that the old one issued: $repeated of 1000");
is($repeated, '0', 'no id the application took after the steps\' COMMIT was issued before');

$node->stop;
done_testing();
