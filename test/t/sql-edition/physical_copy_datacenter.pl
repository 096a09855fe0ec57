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

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $source = SnowidSqlEdition::new_server('physical_copy_source', ['app'], [qw(appdb other)],
	allows_streaming => 1);
my ($rc, $out, $err) = psql_as(app_url($source, 'appdb'), q{
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
my ($step) = slurp_file("$SnowidTest::top/doc/managed.md") =~ /^(How, before the first id:.*?)\n\n/ms;
die 'managed.md has no step for a physical copy' unless defined $step;
my $set = $step =~ /datacenter_id/ ? 'datacenter_id = 3, worker_id = 4' : 'worker_id = 4';
($rc, $out, $err) = psql_as(app_url($copy, 'appdb'), "UPDATE snowid_config SET $set");
is($rc, 0, 'the copy is given worker id 4, unique in its datacenter 3, as the page says') or diag($err);
# another server of datacenter 1 (here a database of the copy's server)
psql_as(app_url($copy, 'other'),
	q{CREATE EXTENSION snowid_sql; UPDATE snowid_config SET datacenter_id = 1, worker_id = 4});

my ($n, $twice) = SnowidSqlEdition::issue_at_once($copy, 'appdb', 'other');
is($twice, 0, "no id of the copy and other twice ($twice of $n)");

$copy->stop;
done_testing();
