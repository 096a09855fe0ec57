# The protocol in brief's claim grants worker ids beyond the layout of the
# datacenter's running holders, and so its rows grow without bound (found
# by the attack attack67x on 2cb02f4, issue 67; noted by cut67c).  Issue
# 67, item 6: "ids beyond the layout refused" and "no fleet call holds the
# datacenter's lock beyond a fixed bound"; the calls servers of this
# release make refuse a claim declaring a wider layout while another
# holder is live (coordinator/store_refuses_beyond_layout.pl).  The new
# calls (snowid_4_claim of src/redis/snowid.lua, claim_4 of
# sql/snowid_coordinator/1.1/ranges.sql) take the layout (max) each caller
# sends, up to 2^24 - 1, and record none: a fleet member under made-up
# names, each with a secret of its own, claims worker ids up to
# 16,777,215 while a server of 5 worker bits (0 to 31) holds one, one row
# a name, kept for good.  Every later call of the datacenter reads those
# rows under its lock (Redis: HGETALL of the whole hash, in choose(); a
# coordination database: choose_range()'s gap over every row).
#
# Seen on both stores (2cb02f4): the claim naming worker id 16,777,215 is
# granted, and 40 made-up names with max 16,777,215 are granted 40 worker
# ids, 32 to 40 beyond 31 once 1 to 31 are taken: the datacenter keeps 42
# rows for a layout of 32 ids, as many more as names are made up.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

my $v = SnowidMinStore::numbers();
my $id_max = $v->{SNOWID_MAX_ID};
my ($R, $M) = (3000, 2000);
my $dc = 1;
my $s = SnowidMinStore->started($R, $M, $dc);
my $store = $s->store;

# The worker-id rows the store keeps of the datacenter
sub rows
{
	return scalar grep { /^\d+$/ } split /\n/, $store->cli('HKEYS', SnowidMinStore::key($dc))
	  if $store->source eq 'redis';
	return SnowidMinStore::pg($store,
		"SELECT count(*) FROM snowid_coordinator.ranges WHERE datacenter = $dc");
}

my $server = holder($dc, 'server');
my ($id) = granted(call($store, 'claim', $dc, $server, "31 $R 1 -1"));
is($id, 0, 'a server of 5 worker bits (worker ids 0 to 31) is granted worker id 0 for good');

my $reply = call($store, 'claim', $dc, holder($dc, 'made-up 0'), "$id_max $R 1 $id_max");
unlike($reply, qr/^ok $id_max /,
	"a claim under a made-up name preferring worker id $id_max is not granted it while a"
	  . ' holder of the layout 0 to 31 is live');
note("the claim preferring $id_max: $reply");

my @beyond;
for my $i (1 .. 40)
{
	my ($w) = granted(call($store, 'claim', $dc, holder($dc, "made-up $i"), "$id_max $R 1 -1"));
	push @beyond, $w if defined $w && $w > 31;
}
is(scalar @beyond, 0,
	'40 claims under made-up names with the widest layout are granted no worker id beyond 31')
  or diag("granted beyond the layout: @beyond");
cmp_ok(rows(), '<=', 32, 'the datacenter keeps no more worker-id rows than its layout has ids');

$store->stop;
done_testing();
