# A worker id beyond the datacenter's layout is refused (issue 67, item 6:
# ids up to 16,777,215 were accepted whatever the layout, and a fleet
# member made 15,000 holders of them, which every later call of the
# datacenter read under its lock).  The store records the layout (the
# highest worker id) a datacenter's grants declared; a claim that declares
# a wider one, while a holder other than the caller is live, is refused
# (a bound of the call's form, before its proof) and writes nothing, an
# id of the datacenter's layout free or not, so a datacenter has no more
# holders than its layout has worker ids.  A switch to a wider layout,
# once no other server holds an id (they are stopped and freed,
# doc/layouts.md), is taken.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMember;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $dc = 16;
my $beyond = $pg ? qr/^55000: worker id \d+ lies beyond the worker ids of datacenter $dc, 0 to 31/
  : qr/^SNOWID_LAYOUT 31 worker id \d+ lies beyond/;

# A server of the datacenter, of the default layout (worker ids 0 to 31)
my $node = $coord->new_node('server', { 'snowid.datacenter_id' => $dc });
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
$node->safe_psql('postgres', 'SELECT snowid_next()');
my ($held) = split /\|/, SnowidRedis::worker($node);
like($held, qr/^\d+$/, 'a server of 5 worker bits holds a worker id');

# A member claims ids beyond that layout, declaring wider ones
my $member = SnowidMember->new($coord, $dc, 'made-up');
my $now = $member->store_now;
my $before = $coord->owners($dc);
like($member->claim(want => 16777215, max => 16777215, quiet => 9000, margin => 1000),
	$beyond, 'worker id 16777215, declaring 24 worker bits, is refused');
like($member->claim(want => 1000, max => 1023, quiet => 9000, margin => 1000),
	$beyond, 'worker id 1000, declaring 10 worker bits, is refused');
like($member->lease_claim(max => 16777215, lease => 60000, client => $now, prefer => 70000,
		token => '0123456789abcdef'),
	$beyond, 'and so is a lease claim declaring 24 worker bits, preferring worker id 70000');
like($member->claim(max => 16777215, quiet => 9000, margin => 1000),
	$beyond, 'and a claim declaring 24 worker bits, though ids of 0 to 31 are free');
is_deeply($coord->owners($dc), $before, 'none of them took an id');
ok(!grep({ defined $coord->field($dc, 'fences', $_) } 1000, 16777215, 70000),
	'nor fenced one: the refusals write nothing');

# A server of 10 worker bits configured with worker id 1000
my $wide = $coord->new_node('wide',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.worker_bits' => 10,
		'snowid.sequence_bits' => 9,
		'snowid.worker_id' => 1000
	});
$wide->start;
$wide->safe_psql('postgres', 'CREATE EXTENSION snowid');
like(SnowidTest::psql_error($wide, 'SELECT snowid_next()'),
	qr/ERROR: .*(DETAIL|HINT): .*worker id 1000 lies beyond the (datacenter's )?worker ids/s,
	'a server configured with worker id 1000 is refused, told the datacenter\'s layout');
$wide->stop;

# Made-up holders, each declaring the datacenter's layout, take what is free
# of 0 to 31, and no more
my ($granted, $refusal) = (0, '');
for my $i (1 .. 40)
{
	my $reply = SnowidMember->new($coord, $dc, "made-up-$i")
	  ->claim(max => 31, quiet => 9000, margin => 1000);
	if ($reply !~ /^ok \d+\b/)
	{
		$refusal = $reply;
		last;
	}
	$granted++;
}
is($granted, 31, 'made-up holders take the 31 free ids of 0 to 31');
like($refusal, qr/^SNOWID_ALL_HELD\b/, 'and the next is refused: all are held');
my @ids = grep { /^\d+$/ } keys %{ $coord->owners($dc) };
is(scalar(@ids), 32, 'the datacenter has 32 holders, as many as its layout has ids');
ok(!grep({ $_ > 31 } @ids), 'none beyond worker id 31');

# The servers stopped and their ids freed (a layout switch, doc/layouts.md):
# a claim of a wider layout is taken
$node->stop;
$coord->free($dc, $_, 61001) for @ids;
like($member->claim(want => 1000, max => 1023, quiet => 9000, margin => 1000),
	qr/^ok 1000\b/, 'once no other holder is live, a switch to a wider layout is taken');

done_testing();
