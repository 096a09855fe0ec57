# snowid_4_claim of src/redis/snowid.lua grants worker id 0 for a
# preferred id of "-0" and keeps the grant under a field no call reads
# (found by the attack attack67x on 2cb02f4, issue 67).
#
# claim_4 takes prefer as -?%d+ and tonumber() makes "-0" the number -0,
# which lies within -1..max and equals 0 (so slots[-0] is slot 0's entry),
# but ms(-0) prints "-0": grant() writes the range's fence and its holder
# to the field "-0" of the datacenter's hash, which read_slots() never
# reads (^%d+$), and answers worker id 0.  Worker id 0's fence does not
# rise and it has no holder: the next claim is granted worker id 0 at
# once, while the first grant's range runs.  BOUND says every value a
# caller sends is bounded at entry, and FENCE that every grant raises the
# id's fence.  Seen on Redis 7 (2cb02f4): "ok 0 ...", worker id 0's field
# empty, a field "-0" holding the grant, and b granted worker id 0 next.
# A coordination database takes integers (-0 is 0).
#
# Redis only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

plan skip_all => 'Redis\' functions parse their numbers (test/run --part tap)'
  unless SnowidCoord::store() eq 'redis';
my ($R, $M) = (3000, 2000);
my $dc = 1;
my $s = SnowidMinStore->started($R, $M, $dc);
my $store = $s->store;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));

my $reply = call($store, 'claim', $dc, $a, "31 $R 1 -0");
my ($id, $end) = granted($reply);
if (defined $id)
{
	is(slot($store, $dc, $id) // '', "$end good $a",
		"a claim preferring \"-0\", granted worker id $id, raised its fence and named its holder");
	my ($id_b) = granted(call($store, 'claim', $dc, $b, "31 $R 1 -1"));
	isnt($id_b // -1, $id, "b is not granted worker id $id while a's range runs");
}
else
{
	like($reply, qr/^SNOWID_USAGE /, 'a claim preferring "-0" is refused as out of bounds');
}
note('the fields of the datacenter: ' . join ', ', split /\n/,
	$store->cli('HKEYS', SnowidMinStore::key($dc)));

$store->stop;
done_testing();
