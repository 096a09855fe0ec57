# What a fleet member declares is bounded (issue 55, item 3): a member of
# the servers' role (coordination database) or user (Redis) calls the
# store's functions by hand, under a new holder name of its own.
#
# - Impossible numbers are refused and change nothing: a quiet period
#   until the year 10000 (finding 3), a generation the store never made, a
#   time days past the store's clock, a lease longer than a day, a lease
#   claim whose fence (its generator plus its lease) would lie further past
#   the store's clock than the servers take one (issue 55, the attack
#   report's finding 9: the store wrote fences up to three days and an hour
#   ahead, which every server then refused as impossible).
# - A quiet period that does end impossibly far off (a store of an earlier
#   release took such a call) is reported by a server as what it is: 55006
#   naming that time, not a reply of unexpected shape.  An administrator's
#   end_quiet() ends it and forgets what the fleet declared, so the next
#   loss the store notices starts a quiet period as long as the servers
#   declare, not the one declared before.
# - A claim refused in a quiet period names when it can be granted: past
#   the floor the quiet period leaves, not its end.
# - No call lowers a fence (finding 4): an id freed 61 s ahead is re-made
#   as the member's lease by a renewal in a quiet period it started, then
#   given back with a final fence of 0; the fence stays.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();

my $dc = 12;
my $coord = SnowidCoord->new;
my $pg = $coord->source eq 'postgresql';
my $base = "{snowid:dc:$dc}";
my $member = "dc=$dc host=made-up port=1 sysid=1";
my $member_secret = 'b5' x 32;
my $token = '0123456789abcdef';

# The store's clock, Unix ms
sub store_now
{
	return $coord->db->now_ms if $pg;
	my ($s, $us) = split /\n/, $coord->cli('TIME');
	return $s * 1000 + int($us / 1000);
}

# Everything the store holds of the datacenter, to check that nothing
# changed
sub store_state
{
	return $coord->db->state if $pg;
	return join ';', map { join ',', $coord->cli('HGETALL', "$base:$_") }
	  qw(owners leases fences);
}

# The datacenter's state record: generation and counter
sub record
{
	if ($pg)
	{
		my ($g, $c) = split /\|/, $coord->db->sql(undef,
			"SELECT generation, counter FROM snowid_coordinator.datacenters WHERE datacenter = $dc");
		return ($g, $c);
	}
	my ($g, $c) = $coord->cli('HGET', "$base:owners", 'state') =~ /^(\w+) \S+ \d+ \d+ (\d+)/;
	return (hex $g, $c);
}

# A call of the member by hand: the function, its arguments as the
# coordination database's procedure takes them after identity and secret,
# and the same as the Redis library's numbers.  Returns the refusal
# ("SQLSTATE: message", "SNOWID_...") or the outcome ("ok ...", or
# "SNOWID_<OUTCOME> <fence_ms>").
sub member_call
{
	my ($function, $sql_args, $numbers) = @_;

	if ($pg)
	{
		my $sql = $coord->db->call_sql("$function($dc, '$member', $sql_args)",
			"'$member_secret'");
		my ($ret, $out, $err) = $coord->node->psql('coord', $sql,
			extra_params => [ '-U', 'coord_fleet', '-v', 'VERBOSITY=verbose' ]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		my ($outcome, @rest) = split /\|/, $out, -1;
		return $outcome eq 'ok' ? 'ok' : 'SNOWID_' . uc($outcome) . ' ' . $rest[2];
	}
	my $last = $function eq 'claim' ? $member_secret : "$token $member_secret";
	my @reply = eval {
		$coord->cli('FCALL', "snowid_2_$function", 3, "$base:owners", "$base:leases",
			"$base:fences", $member, $numbers, $last);
	};
	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	return 'ok';
}

# A claim for good of the member, with the numbers of the forgetting rule
sub member_claim
{
	my (%a) = @_;
	my $usable = $a{usable} // store_now();
	my $sql = "-1, 31, -1, $usable, quiet_ms => $a{quiet}";
	$sql .= ", seen_generation => $a{generation}, seen_counter => $a{counter}"
	  if defined $a{generation};
	$sql .= ", clock_margin_ms => $a{margin}" if defined $a{margin};
	return member_call('claim', $sql,
		join(' ', -1, 31, -1, 0, $usable, $a{quiet}, 0,
			map { $_ // '' } @a{qw(generation counter margin)}));
}

# An administrator ends the datacenter's quiet period
sub end_quiet
{
	if ($pg)
	{
		$coord->db->sql('coord_admin', "SELECT snowid_coordinator.end_quiet($dc)");
		return;
	}
	$coord->cli('FCALL', 'snowid_2_end_quiet', 3, "$base:owners", "$base:leases",
		"$base:fences", 'admin');
	return;
}

# -- impossible numbers are refused, and change nothing ----------------------

my ($gen, $counter) = record();
my $now = store_now();
my $before = store_state();
my $out_of_range = $pg ? qr/^22023: (\w+) is out of range/ : qr/^SNOWID_USAGE (\w+) must lie between/;

like(member_claim(quiet => 253402300800000, generation => 253402300000000, counter => 0,
		margin => 3600000),
	$out_of_range, 'a quiet period until the year 10000 and a generation then are refused');
like(member_claim(quiet => 90601001, margin => 1000), $out_of_range,
	'a quiet period longer than any server declares (90601000 ms) is refused');
like(member_claim(quiet => 9000, generation => $now + 7200000, counter => 0, margin => 1000),
	$out_of_range, 'a generation two hours past the store\'s clock is refused');
like(member_claim(usable => $now + 3 * 86400000, quiet => 9000, margin => 1000),
	$out_of_range, 'a usable time three days past the store\'s clock is refused');
like(member_call('lease_claim',
		"31, 86400001, $now, $now, -1, 0, '$token', 9000",
		"31 86400001 $now $now -1 0 9000"),
	$out_of_range, 'a lease longer than a day is refused');
like(member_call('lease_claim',
		"31, 600000, " . ($now + 3 * 86400000) . ", $now, -1, 0, '$token', 9000",
		"31 600000 " . ($now + 3 * 86400000) . " $now -1 0 9000"),
	$out_of_range, 'a generator three days past the store\'s clock is refused');
# the fence a lease claim writes, a lease past the generator, within what
# the servers take (their clock plus two days and an hour): before, a
# generator up to that far ahead was taken, its fence a day past it
like(member_call('lease_claim',
		"31, 86400000, " . ($now + 176400000 - 60000) . ", $now, -1, 0, '$token', 9000",
		"31 86400000 " . ($now + 176400000 - 60000) . " $now -1 0 9000"),
	$out_of_range, 'a lease of a day from a generator two days ahead, a fence past what servers take, is refused');
is(store_state(), $before, 'and none of them changed anything');
my ($gen_after) = record();
is($gen_after, $gen, 'nor started a quiet period');

# -- a quiet period that ends impossibly far off -------------------------------

# A server of the datacenter, holding a worker id; a check-in a second
my $node = $coord->new_node('server',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.checkin_interval' => '1s',
		'snowid.coordinator_timeout_ms' => 5000,
		'snowid.clock_margin' => '1s'
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $declared = 1000 + 5000 + 1000 + 1000;

# The record as a store of an earlier release keeps it after the call of
# finding 3: a quiet period until the year 10000, declared so
my $far = 253402300800000;
$now = store_now();
if ($pg)
{
	$coord->db->sql(undef, qq{
		UPDATE snowid_coordinator.datacenters
		SET quiet_from_ms = $now, quiet_until_ms = $far, longest_quiet_ms = $far - $now,
			widest_margin_ms = 3600000
		WHERE datacenter = $dc});
}
else
{
	my $state = $coord->cli('HGET', "$base:owners", 'state');
	my ($g, $run, $c) = $state =~ /^(\w+) (\S+) \d+ \d+ (\d+)/;
	$coord->cli('HSET', "$base:owners", 'state',
		"$g $run $now $far $c 0 " . ($far - $now) . ' 3600000');
}
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
like($err, qr/ERROR:  55006: snowid cannot claim a worker id of datacenter $dc until \d{5}-/,
	'a server refused in a quiet period that ends past the year 10000 reports 55006 with that time');
like($err, qr/DETAIL: .*further off than any quiet period of a snowid server lasts/s,
	'and says that no snowid server\'s quiet period lasts that long');

end_quiet();
my $q = $coord->quiet_record($dc);
is("$q->{longest} $q->{widest} $q->{floor}", '0 0 0',
	'end_quiet() forgets the quiet period, the clock margin and the floor the fleet declared');
my ($ret, $out, $again) = $node->psql('postgres', 'SELECT snowid_next()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
is($ret, 0, 'the server then claims') or diag($again);

# The store's next loss (a failover, as its record tells one): the quiet
# period lasts what the servers declare
if ($pg)
{
	$coord->db->sql(undef,
		"UPDATE snowid_coordinator.datacenters SET written_under = 'another server' WHERE datacenter = $dc");
}
else
{
	my $state = $coord->cli('HGET', "$base:owners", 'state');
	$state =~ s/^(\w+) \S+ /$1 0000000000000000000000000000000000000000 /;
	$coord->cli('HSET', "$base:owners", 'state', $state);
}
my $refused = member_claim(quiet => $declared, margin => 1000);
$q = $coord->quiet_record($dc);
is($q->{until} - $q->{from}, $declared,
	'the next failover starts a quiet period as long as the servers declare');

# -- a claim refused in a quiet period names when it can be granted -----------

like($refused, qr/^SNOWID_QUIET \d+$/, 'a new claim in that quiet period is refused');
my ($named) = $refused =~ /(\d+)$/;
is($named, $q->{floor},
	'naming when it can be granted: the floor the quiet period leaves, past its end');

# -- no call lowers a fence (finding 4) ---------------------------------------

my $fence = $coord->free($dc, 9, 61001);
cmp_ok($fence, '>', store_now() + 50000, 'worker id 9 freed, fenced a minute ahead');
# the member starts a quiet period (it saw a later counter: the store went
# back), re-makes id 9 as its lease in it (its generator past the fence),
# with a fence wanted of 0, then gives it back at 0
($gen, $counter) = record();
$counter += 1000;
$now = store_now();
my $client = $now + 120000;
my $renewed = member_call('lease_renew',
	"9, 600000, 0, '$token', quiet_ms => $declared, client_ms => $client, "
	  . "seen_generation => $gen, seen_counter => $counter, clock_margin_ms => 1000",
	"9 600000 0 $declared $client $gen $counter 1000");
my $lease = $coord->field($dc, 'leases', 9);
my ($floor) = ($lease // '') =~ /^\d+ (\d+) /;
ok(!defined $floor || $floor >= $fence,
	'a lease re-made in a quiet period starts at or above the id\'s fence')
  or diag("renewal: $renewed; lease: $lease");
member_call('lease_release', "9, 0, false, '$token'", '9 0');
cmp_ok($coord->field($dc, 'fences', 9) // 0, '>=', $fence,
	'giving it back with a final fence of 0 leaves the fence where free() put it');

$node->stop;
done_testing();
