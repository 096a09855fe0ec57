# A physical copy of a server that runs as a server of its own never claims
# as its original.  The holder name used to be the datacenter, host name,
# port and system identifier, all of which a copy keeps when it runs on the
# same host and port (a DR site or a second Kubernetes cluster whose pod is
# also pg-0 look the same): it claimed as the original, got its worker id
# back, and both issued the same ids (515,593 measured).  Now the holder
# name also carries the instance of the data directory, a random id in the
# mark file that a copy renews when it starts from a base backup (and at
# every takeover or change of system identifier).
#
# Exactly the case measured: a pg_basebackup of a running server that took
# worker id 0 from Redis on a unix socket, started on the same machine with
# the same port and another unix_socket_directories, both inserting 100,000
# ids at a time for a few seconds; and the same with a PostgreSQL
# coordination database as the store (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $dc = 1;
my $coord = SnowidCoord->new;
my $orig = $coord->new_node('orig', { 'snowid.datacenter_id' => $dc },
	allows_streaming => 1);
$orig->start;
$orig->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE ids (id bigint, who text)});
$orig->safe_psql('postgres',
	q{INSERT INTO ids SELECT snowid_next_batch(100000), 'orig'});
is(SnowidRedis::worker($orig), '0|' . $coord->source,
	'the original takes worker id 0');
my $orig_name = SnowidRedis::identity($orig, $dc);

$orig->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('copy', port => $orig->port,
	own_host => 1);
$copy->init_from_backup($orig, 'copy');
$copy->start;
is($copy->port, $orig->port, 'the copy runs on the same port');
isnt($copy->host, $orig->host, 'in another socket directory');
my $copy_name = SnowidRedis::identity($copy, $dc);
isnt($copy_name, $orig_name, 'the copy has a holder name of its own');

# Both insert 100,000 ids at a time for a few seconds.
my $until = Time::HiRes::time() + 4;
while (Time::HiRes::time() < $until)
{
	for my $node ($orig, $copy)
	{
		$node->safe_psql('postgres',
			'INSERT INTO ids SELECT snowid_next_batch(100000), '
			  . "'@{[ $node->name ]}'");
	}
}
my ($copy_worker) = split /\|/, SnowidRedis::worker($copy);
isnt($copy_worker, 0, "the copy claims a worker id of its own ($copy_worker)");
my $owners = $coord->owners($dc);
is_deeply([ sort grep { /^\d+$/ } keys %$owners ], [ sort(0, $copy_worker) ],
	'the store lists two holders');
is($owners->{0}, $orig_name, 'worker id 0 stays the original\'s');

my $dir = PostgreSQL::Test::Utils::tempdir();
$copy->safe_psql('postgres',
	"COPY (SELECT id FROM ids WHERE who = 'copy') TO '$dir/copy_ids'");
$orig->safe_psql('postgres', q{CREATE TABLE copy_ids (id bigint)});
$orig->safe_psql('postgres', "COPY copy_ids FROM '$dir/copy_ids'");
my ($n_orig, $n_copy, $both) = split /\|/, $orig->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM ids), (SELECT count(*) FROM copy_ids),
		(SELECT count(*) FROM copy_ids JOIN ids USING (id))});
note("the original issued $n_orig ids, the copy $n_copy of its own");
cmp_ok($n_copy, '>=', 100000, 'the copy issued ids of its own');
is($both, 0, 'no id was issued by both');

# A restart of either keeps its name, and so its worker id.
SnowidLease::restart_keeps_worker_ids($coord,
	[ $orig, 0, 'the original, restarted, keeps worker id 0' ],
	[ $copy, $copy_worker, 'the copy, restarted, keeps its own' ]);
$_->stop for $orig, $copy;

done_testing();
