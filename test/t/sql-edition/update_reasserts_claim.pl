# The update of a claiming 1.2 database to 1.3 keeps its claimed worker id
# where the claim was answered since the server started
# (sql/snowid_sql/1.2--1.4/claim.sql): "only a claim it holds now".  But an
# answer since the start is not a claim held now: the coordination database
# that forgot its claims (restored, failed over, emptied) gives a worker id
# nobody re-asserted within the quiet period to the next new claim, and a
# database whose schedule did not re-assert meanwhile (1.2 re-asserts at a
# scheduled snowid_claim() and after a restart only) still passes the
# update's check: it keeps the worker id another database now holds, and
# nothing re-asserts it any more (1.3 claims nothing).
#
# - appdb, 1.2, claims its worker id and issues ids;
# - the coordination database loses everything; after the quiet period a
#   new database (newdb, through the provisioning script) is given a worker
#   id: appdb's;
# - appdb is updated to 1.3: it should refuse (the claim is not this
#   database's any more), or appdb should stop issuing; both issuing
#   at once for 3 s, no id may come twice.
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
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('update_given_away'));
my %files = SnowidClients::recipes("$src/doc/managed.md");
my $script = "$dir/snowid-worker-id";
append_to_file($script, $files{'snowid-worker-id'});

my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $fleet->node;
my $coord_url = $cnode->connstr('coord');

my $node = PostgreSQL::Test::Cluster->new('update_given_away');
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

my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
	  . SnowidSqlEdition::claim_config($conninfo, $password));
is($rc, 0, 'the owner installs 1.2 and has it claim its worker id') or diag($err);
($rc, $out, $err) = psql_as($app, 'SELECT (snowid_decode(snowid_next())).worker_id');
my $w = $out;
like($w, qr/^\d+$/, "appdb claims worker id $w") or diag($err);

$fleet->wipe;
psql_as($node->connstr('newdb') . ' user=app', 'CREATE EXTENSION snowid_sql');
my $w2;
for (1 .. 240)
{
	($rc, $out, $err) = run_script('newdb', 'claim', 'sql newdb');
	($w2) = $out =~ /^worker id (\d+) of datacenter 4$/;
	last if defined $w2;
	select(undef, undef, undef, 0.5);
}
ok(defined $w2, 'after the quiet period, newdb claims worker id ' . ($w2 // 'none')) or diag($err);
diag("appdb's worker id $w, newdb's " . ($w2 // 'none'));

($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
diag("the update: exit code $rc: $err");

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
