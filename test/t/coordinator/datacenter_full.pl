# A full datacenter: once 32 servers hold worker ids 0-31, the 33rd server
# fails clearly (and keeps running); freeing the id of a decommissioned
# server (Redis: the library's snowid_3_free; a coordination database:
# snowid_coordinator.free()) lets it claim that id on its next call.
#
# The port is part of a server's identity, so a server restarted on a new
# port claims as a new server: two real clusters, each restarted on 16
# ports, are the first 32 servers, and a third cluster is the 33rd.
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

my $dc = 5;
my $coord = SnowidCoord::start();
my $source = $coord->source;
my $ids = SnowidTest::Ledger->new;

# Restarts a stopped server on a new port.  PostgreSQL::Test::Cluster has
# no way to change a node's port, so this sets the one it connects to.
sub start_on_new_port
{
	my $node = shift;
	my $port = PostgreSQL::Test::Cluster::get_free_port();

	$node->append_conf('postgresql.conf', "port = $port\n");
	$node->{_port} = $port;
	$node->start;
}

my %settings = ('snowid.datacenter_id' => $dc);
my @pair = map { $coord->new_node("full_$_", \%settings) } qw(a b);
$pair[0]->start;
$pair[0]->safe_psql('postgres', 'CREATE EXTENSION snowid');
$pair[0]->stop;
$pair[1]->start;
$pair[1]->safe_psql('postgres', 'CREATE EXTENSION snowid');
$pair[1]->stop;

my %port_of_worker;
my $claims_ok = 0;
for my $i (0 .. 31)
{
	my $node = $pair[ $i % 2 ];

	start_on_new_port($node);
	$ids->collect($node, 100);
	my $worker_id = $node->safe_psql('postgres',
		qq{SELECT worker_id FROM snowid_status() WHERE worker_source = '$source'});
	$claims_ok++ if $worker_id eq $i;
	$port_of_worker{$worker_id} = $node->port;
	$node->stop;
}
is($claims_ok, 32, 'the first 32 servers claimed worker ids 0 to 31 in order');

my $owners = $coord->owners($dc);
is_deeply([ sort { $a <=> $b } keys %$owners ], [ 0 .. 31 ],
	'the coordinator holds worker ids 0 to 31');
my %identities = map { $_ => 1 } values %$owners;
is(scalar keys %identities, 32, '32 distinct identities hold them');
is(scalar(grep { $owners->{$_} =~ / port=$port_of_worker{$_} / } keys %$owners),
	32, 'each id is held by the server (port) that claimed it');

# The 33rd server.
my $third = SnowidLease::start_node($coord, 'full_c', \%settings);
my $err = SnowidTest::psql_error($third, 'SELECT snowid_next()');
like($err, qr/ERROR:  53400: all 32 worker ids of datacenter $dc are held\n/,
	'the 33rd server: SQLSTATE 53400, message names the datacenter');
like($err,
	qr/HINT:  List the holders with \Q@{[$coord->list_command($dc)]}\E; once a server is stopped for good, free its id with \Q@{[$coord->free_command($dc, '<worker id>')]}\E\./,
	'the 33rd server: the hint says how to free an id');
is(SnowidRedis::worker($third), '|none', 'the 33rd server has no worker id');
is($third->safe_psql('postgres',
		'SELECT datacenter_id, worker_id, sequence FROM snowid_decode((1::bigint << 22) | (5 << 17) | (3 << 12) | 1)'),
	'5|3|1', 'the 33rd server runs and snowid_decode() works');

# Decommission the server that held 17, freeing its id with the store's
# function (a margin of 0: it stopped long ago); the 33rd claims 17 on its
# next call, above the fence the function left.
my $fence = $coord->free($dc, 17, 0);
ok(!exists $coord->owners($dc)->{17} && $fence > 0,
	'freeing worker id 17 leaves a fence');
$ids->collect($third, 100);
is(SnowidRedis::worker($third), "17|$source",
	'the next call claims the freed id, without a restart');
is(scalar(grep { /^\d+$/ } keys %{ $coord->owners($dc) }), 32,
	'the datacenter is full again');

$ids->no_duplicates;
$third->stop;
done_testing();
