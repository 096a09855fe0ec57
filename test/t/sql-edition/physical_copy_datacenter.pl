# A physical copy of a database of the SQL edition (doc/managed.md,
# "Physical copies issue at once, with their source's worker id": a
# snapshot restored, a clone, a fork, a branch) keeps its source's row,
# datacenter id and all, and the page says how to give it a worker id of
# its own: "as the owner, UPDATE snowid_config SET worker_id = N with an N
# unique among the live servers of the datacenter".  A copy made in
# another datacenter (a snapshot restored in another region) that follows
# it for the datacenter it is in issues as its source's datacenter with a
# worker id a server there may hold.  1.3.0's fixes made the restored
# row's hint say to set the datacenter id with the worker id (test 174's
# cause); this page was left.
#
# - other: datacenter 1, worker id 4, issuing;
# - the source: datacenter 1, worker id 9, copied by a base backup and
#   started as a server of its own (gone after);
# - the copy, in datacenter 3, given worker id 4 (unique there) as the
#   page says: no id of the copy and other may come twice (both issuing
#   for 3 s).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $source = PostgreSQL::Test::Cluster->new('physical_copy_source');
$source->init(allows_streaming => 1);
$source->start;
$source->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE appdb OWNER app;
	CREATE DATABASE other OWNER app;
});
my ($rc, $out, $err) = psql_as($source->connstr('appdb') . ' user=app', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_id = 1, worker_id = 9;
	SELECT count(snowid_next())});
is($out, '1', 'the source (datacenter 1, worker id 9) issues') or diag($err);
$source->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('physical_copy');
$copy->init_from_backup($source, 'copy');
$copy->start;
$source->stop;

# the page's step, for the datacenter the copy is in (datacenter 3, where
# the step names the datacenter id too)
my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my ($step) = slurp_file("$src/doc/managed.md") =~ /^(How, before the first id:.*?)\n\n/ms;
die 'managed.md has no step for a physical copy' unless defined $step;
my $set = $step =~ /datacenter_id/ ? 'datacenter_id = 3, worker_id = 4' : 'worker_id = 4';
($rc, $out, $err) = psql_as($copy->connstr('appdb') . ' user=app', "UPDATE snowid_config SET $set");
is($rc, 0, 'the copy is given worker id 4, unique in its datacenter 3, as the page says') or diag($err);
# another server of datacenter 1 (here a database of the copy's server)
psql_as($copy->connstr('other') . ' user=app',
	q{CREATE EXTENSION snowid_sql; UPDATE snowid_config SET datacenter_id = 1, worker_id = 4});

my $start = $copy->safe_psql('postgres', q{SELECT clock_timestamp() + interval '2 s'});
my %run;
for my $db ('appdb', 'other')
{
	$run{$db}{out} = '';
	$run{$db}{err} = '';
	$run{$db}{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $copy->connstr($db) . ' user=app', '-c',
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
for my $db ('appdb', 'other')
{
	$run{$db}{h}->finish;
	diag("$db: $run{$db}{err}") if $run{$db}{err};
	my %mine = map { $_ => 1 } split /\n/, $run{$db}{out};
	$n += keys %mine;
	$twice += grep { $seen{$_}++ } keys %mine;
}
is($twice, 0, "no id of the copy and other twice ($twice of $n)");

$copy->stop;
done_testing();
