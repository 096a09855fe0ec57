# The update of a claiming 1.2 database to 1.3, then the takeover of its
# claim into the provisioning script as doc/managed.md ("Updating to 1.3")
# says: an administrator resets the holder's secret under the name the
# update's warning gave, then the script's assert runs with HOLDER set to
# that whole name and a STATE_DIR of its own; from then on it re-asserts.
# Then the coordination database loses everything: the database re-asserts
# with assert, and a new database's claim must get another worker id; the
# two databases then issue no id twice.
#
# On main the script's assert never makes STATE_DIR or the secret (claim
# does, and claim refuses a database that has a worker id): every assert
# fails (cat: .../secret: No such file; invalid holder secret), nothing
# re-asserts, and after the loss the new database is given the same worker
# id, issuing the same ids.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('takeover'));
my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $fleet->node;
my $coord_url = $cnode->connstr('coord');

my $node = PostgreSQL::Test::Cluster->new('takeover');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	GRANT pg_read_all_stats TO app;
	CREATE DATABASE appdb OWNER app;
	CREATE DATABASE newdb OWNER app;
});
$node->safe_psql('appdb', 'CREATE EXTENSION dblink');
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
	  . SnowidSqlEdition::claim_config($conninfo, $password));
is($rc, 0, 'the owner installs 1.2 and has it claim its worker id') or diag($err);
($rc, $out, $err) = psql_as($app, 'SELECT (snowid_decode(snowid_next())).worker_id');
my $w = $out;
($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
is($rc, 0, 'the update to 1.3 goes through') or diag($err);
my ($holder) = $err =~ /claimed from the coordination database as '([^']*)'/;
ok(defined $holder, "the warning names the holder (" . ($holder // 'none') . ")") or diag($err);

# the takeover, as the page says
$cnode->safe_psql('coord', "SELECT snowid_coordinator.reset_secret(4, '$holder')",
	extra_params => [ '-U', 'coord_admin' ]);

sub run_script
{
	my ($db, $command, $holder_name) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV,
		DB_URL => $node->connstr($db) . ' user=app',
		COORD_URL => "$coord_url user=coord_fleet",
		ADMIN_URL => "$coord_url user=coord_admin",
		DATACENTER => 4, HOLDER => $holder_name, STATE_DIR => "$dir/state-$db",
		INTERVAL_MS => 1000, MARGIN_MS => 1000);
	my $ok = IPC::Run::run([ 'sh', $script, $command ], '<', \undef, '>', \$out, '2>', \$err);
	chomp $out;
	return ($ok ? 0 : $? >> 8, $out, $err);
}

($rc, $out, $err) = run_script('appdb', 'assert', $holder);
is($rc, 0, 'assert under the holder name re-asserts the worker id') or diag($err);
is($node->safe_psql('appdb', 'SELECT worker_id FROM snowid_config'), $w, 'the database keeps it');
($rc, $out, $err) = run_script('appdb', 'assert', $holder);
is($rc, 0, 'and again') or diag($err);

# the coordination database loses everything; the database re-asserts
$fleet->wipe;
($rc, $out, $err) = run_script('appdb', 'assert', $holder);
is($rc, 0, 'after the coordination database lost everything, assert re-asserts') or diag($err);
psql_as($node->connstr('newdb') . ' user=app', 'CREATE EXTENSION snowid_sql');
my $w2;
for (1 .. 120)
{
	($rc, $out, $err) = run_script('newdb', 'claim', 'sql newdb');
	($w2) = $out =~ /^worker id (\d+) of datacenter 4$/;
	last if defined $w2;
	run_script('appdb', 'assert', $holder);
	select(undef, undef, undef, 0.5);
}
ok(defined $w2 && $w2 ne $w, 'a new database gets another worker id (' . ($w2 // 'none') . ')')
  or diag($err);

# both at once: from a moment 2 s ahead, for 3 s, one id a statement
my $start = $node->safe_psql('postgres', q{SELECT clock_timestamp() + interval '2 s'});
my %run;
for my $db ('appdb', 'newdb')
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
for my $db ('appdb', 'newdb')
{
	$run{$db}{h}->finish;
	diag("$db: $run{$db}{err}") if $run{$db}{err};
	my %mine = map { $_ => 1 } split /\n/, $run{$db}{out};
	$n += keys %mine;
	$twice += grep { $seen{$_}++ } keys %mine;
}
is($twice, 0, "no id of the two databases twice (of $n)");

$node->stop;
done_testing();
