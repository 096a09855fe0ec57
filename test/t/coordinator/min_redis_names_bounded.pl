# What every call of the protocol in brief reads in Redis grows without
# bound with the holder names that ever held an id (found by the attack
# attack67x on 2cb02f4, issue 67, item 6: "no fleet call holds the
# datacenter's lock beyond a fixed bound").
#
# snowid_4_claim (choose(), read_slots()) reads the datacenter's whole
# hash with HGETALL, Redis answering no one meanwhile.  Besides a field per
# worker id and the record, the hash keeps "secret <name>" and
# "proof <name>" for every name that was ever granted a range, released
# or freed or not: a fleet member that takes a short lease under a new
# made-up name, gives it back and waits a margin, again and again, adds
# two fields a turn for good, within any layout (here of one worker id).
# Seen on Redis 7 (2cb02f4): after 150 turns the hash of a datacenter of
# one worker id has 302 fields, each read by every later call.  A
# coordination database reads a name's key by its primary key (the
# holders table grows the same way, but no call reads all of it).
#
# Redis only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use Test::More;

plan skip_all => 'Redis\' functions read the whole hash (test/run --part tap)'
  unless SnowidCoord::store() eq 'redis';
my ($R, $M) = (1000, 100);
my $dc = 1;
my $s = SnowidMinStore->started($R, $M, $dc);
my $store = $s->store;
my $key = SnowidMinStore::key($dc);

my $turns = 150;
my $granted = 0;
for my $i (1 .. $turns)
{
	my $name = holder($dc, "made-up $i");
	my ($id, $end) = granted(call($store, 'claim', $dc, $name, "0 1 0 -1"));
	next unless defined $id;
	$granted++;
	call($store, 'release', $dc, $name, '0 0');
	$s->move_to($end + $M);
}
is($granted, $turns, "$turns made-up names each take worker id 0 on a lease of 1 ms and give it back");
my $fields = $store->cli('HLEN', $key);
cmp_ok($fields, '<=', 4,
	'the datacenter\'s hash, which every call reads whole, keeps no more than its one'
	  . ' worker id, the record and one holder\'s key and proof');
note("fields of $key: $fields");

$store->stop;
done_testing();
