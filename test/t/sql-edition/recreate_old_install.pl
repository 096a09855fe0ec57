# Issue 56's attack (managed.md "Updating from 1.0 or 1.1"): an install of
# 1.0 or 1.1 that the database owner made is not updated to 1.2; the page
# says to drop the extension and create it again in one transaction, and
# to wait until the clock has passed every id of the old install (which
# may lie up to max_drift_ms ahead of the clock) before its COMMIT.  The
# page's first version waited after the COMMIT: every other session (the
# application, which the page does not stop) took ids of the new install
# at once, at the clock, under the same worker id, below ids the old
# install issued (1,000 of 1,000).
#
# Here the old install (1.1, made by app) runs ahead of its clock within
# its drift bound: a batch under the layout 51/0/6/4 (16 ids a
# millisecond, max_drift_ms 10000) takes 100,000 ids, 6.25 s of positions.
# Then the page's steps run verbatim, as app, while the application keeps
# taking ids (each call waits for the steps' transaction, or fails at its
# end, and is tried again) until it has 1,000 of the new install.  None of
# them may have been issued before.
use strict;
use warnings;

use File::Spec;
use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = PostgreSQL::Test::Utils::tempdir('att_recreate');
my $version = SnowidSqlEdition::version();

my $node = SnowidSqlEdition::new_server('att_recreate', [qw(app clerk)], ['appdb']);
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

# managed.md's steps, as app, in the background
my ($steps) = slurp_file("$src/doc/managed.md")
  =~ /^### Updating from 1\.0 or 1\.1\n.*?^```sql\n(.*?)^```$/ms;
ok(defined $steps, 'managed.md says how to drop it and create it again');
like($steps, qr/pg_sleep.*^COMMIT;\n\z/ms, 'the steps wait before their COMMIT');
append_to_file("$dir/steps.sql", $steps);
my ($steps_out, $steps_err, $steps_ok, $attempts) = ('', '', 0, 0);
my $h;

sub start_steps
{
	$attempts++;
	($steps_out, $steps_err) = ('', '');
	$h = IPC::Run::start(
		[ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $app, '-f', "$dir/steps.sql" ],
		'<', \undef, '>', \$steps_out, '2>', \$steps_err);
	return;
}
start_steps();

# the application meanwhile, as it would be: 100 ids at a time, tried
# again after an error, until it has 1,000 of the new install.  The steps'
# DROP EXTENSION may deadlock with its sessions (they lock the old
# install's objects in another order); it then changed nothing, and is run
# again, as managed.md says.
my ($new, $failed) = (0, 0);
for my $try (1 .. 1200)
{
	$h->pump_nb if !$steps_ok && $h->pumpable;
	if (!$steps_ok && !$h->pumpable)
	{
		$steps_ok = $h->finish;
		if (!$steps_ok)
		{
			note("the steps failed (attempt $attempts): $steps_err");
			last if $steps_err !~ /deadlock detected/ || $attempts >= 10;
			start_steps();
		}
	}
	($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk, q{
		INSERT INTO app_ids SELECT snowid_next() FROM generate_series(1, 100);
		SELECT snowid_sql_version()});
	if ($rc != 0)
	{
		$failed++;
		select(undef, undef, undef, 0.05);
		next;
	}
	$new += 100 if $out eq $version;
	last if $new >= 1000;
}
$steps_ok ||= $h->finish;
ok($steps_ok, "the steps, run by app (attempts: $attempts)") or diag($steps_err);
is($new >= 1000, 1, 'the application took 1,000 ids of the new install');
note("the application's calls that failed meanwhile: $failed");

my $repeated = $node->safe_psql('appdb',
	'SELECT count(*) - count(DISTINCT id) FROM (SELECT id FROM old_ids UNION ALL SELECT id FROM app_ids) a');
is($repeated, '0', 'no id the application took came twice, nor was one the old install issued');

$node->stop;
done_testing();
