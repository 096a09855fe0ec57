# A worker id beyond the datacenter's layout is refused (issue 67, item 6:
# ids up to 16,777,215 were accepted whatever the layout, and a fleet
# member made 15,000 holders of them, which every later call of the
# datacenter read under its lock).  The store records the layout (the
# highest worker id) of a datacenter's grants; a claim that declares a
# wider one while a holder other than the caller is live is refused and
# writes nothing, so a datacenter has no more holders than its layout has
# worker ids.  A narrower one is taken (its ids lie within).  A switch to a
# wider layout, once no other server holds an id (they are stopped and
# freed, doc/layouts.md), is taken.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use SnowidCoord;
use SnowidMember;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $pg = $coord->source eq 'postgresql';
my $dc = 16;
my $layout = $pg ? qr/^55000: the worker ids of datacenter $dc are 0 to 31, not 0 to (\d+)/
  : qr/^SNOWID_LAYOUT 31 /;

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
my $before = $member->state;
like($member->claim(want => 16777215, max => 16777215, quiet => 9000, margin => 1000),
	$layout, 'worker id 16777215, declaring 24 worker bits, is refused');
like($member->claim(want => 1000, max => 1023, quiet => 9000, margin => 1000),
	$layout, 'worker id 1000, declaring 10 worker bits, is refused');
like($member->claim(max => 16777215, quiet => 9000, margin => 1000),
	$layout, 'any free id of 24 worker bits is refused');
like($member->lease_claim(max => 16777215, lease => 60000, client => $now,
		token => '0123456789abcdef'),
	$layout, 'and so is a lease of 24 worker bits');
is($member->state, $before, 'none of them wrote anything');
ok(!grep({ $_ > 31 } keys %{ $coord->owners($dc) }), 'no holder beyond worker id 31');
my ($narrow) = $member->claim(max => 15, quiet => 9000, margin => 1000) =~ /^ok (\d+)\b/;
ok(defined $narrow && $narrow <= 15, 'a claim of a narrower layout is granted an id within it');
like($member->claim(want => 1000, max => 1023, quiet => 9000, margin => 1000),
	$layout, 'and leaves the datacenter\'s layout as it was');

# A server of 10 worker bits is refused, told the datacenter's layout
my $wide = $coord->new_node('wide',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.worker_bits' => 10,
		'snowid.sequence_bits' => 9
	});
$wide->start;
$wide->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($wide, 'SELECT snowid_next()');
like($err, qr/ERROR: .*DETAIL: .*worker ids (of datacenter $dc )?are 0 to 31/s,
	'a server of 10 worker bits is refused, told the datacenter\'s worker ids are 0 to 31');
$wide->stop;

# A claim of the datacenter's layout is granted
like($member->claim(quiet => 9000, margin => 1000), qr/^ok \d+\b/,
	'a claim of the datacenter\'s layout is granted');

# The servers stopped and their ids freed (a layout switch, doc/layouts.md):
# a claim of another layout is taken
$node->stop;
$coord->free($dc, $held, 61001);
my ($mine) = $member->claim(quiet => 9000, margin => 1000) =~ /^ok (\d+)/;
$coord->free($dc, $mine, 61001);
like($member->claim(want => 1000, max => 1023, quiet => 9000, margin => 1000),
	qr/^ok 1000\b/, 'once no other holder is live, a layout switch is taken');

done_testing();
