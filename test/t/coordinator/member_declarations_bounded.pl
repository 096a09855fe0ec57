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
# - The second reading of issue 55: a quiet period shorter than any server
#   declares (0 ms, 1100 ms) is refused; a quiet period a member's word
#   starts while one runs ends no earlier; a member's word alone (a
#   counter ahead) starts a new generation and quiet period every time (a
#   denial the fleet's role has anyway: a store brought back to an older
#   state of itself again is noticed only so: second_store_restore.pl and
#   restore_after_member_call.pl); a word at the
#   bound (a generation an hour past the store's clock) leaves a state
#   later than the caller's, so that servers that saw at most that state
#   say no word again, no chain among honest servers; a generation past
#   the store's clock plus an hour, which the record holds, is refused when
#   sent back, so it goes no further.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidMember;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $dc = 12;
my $coord = SnowidCoord::start();
my $pg = $coord->source eq 'postgresql';
my $base = "{snowid:dc:$dc}";
my $member = SnowidMember->new($coord, $dc, 'made-up');
my $token = '0123456789abcdef';

# An administrator ends the datacenter's quiet period
sub end_quiet
{
	my $done = $member->admin('end_quiet', '');

	die "end_quiet(): $done" unless $done =~ /^ok/;
	return;
}

# The store fails over, as its record tells one: another server (Redis'
# run id, the coordination database's writer) wrote it
sub failover
{
	if ($pg)
	{
		$coord->db->sql(undef,
			"UPDATE snowid_coordinator.datacenters SET written_under = 'another server' WHERE datacenter = $dc");
		return;
	}
	my $state = $coord->cli('HGET', "$base:owners", 'state');
	$state =~ s/^(\w+) \S+ /$1 0000000000000000000000000000000000000000 /;
	$coord->cli('HSET', "$base:owners", 'state', $state);
	return;
}

# -- impossible numbers are refused, and change nothing ----------------------

my ($gen, $counter) = $member->record;
my $now = $member->store_now;
my $before = $member->state;
my $out_of_range = $pg ? qr/^22023: (\w+) is out of range/ : qr/^SNOWID_USAGE (\w+) must lie between/;

like($member->claim(quiet => 253402300800000, generation => 253402300000000, counter => 0,
		margin => 3600000),
	$out_of_range, 'a quiet period until the year 10000 and a generation then are refused');
like($member->claim(quiet => 90601001, margin => 1000), $out_of_range,
	'a quiet period longer than any server declares (90601000 ms) is refused');
like($member->claim(quiet => 9000, generation => $now + 7200000, counter => 0, margin => 1000),
	$out_of_range, 'a generation two hours past the store\'s clock is refused');
like($member->claim(usable => $now + 3 * 86400000, quiet => 9000, margin => 1000),
	$out_of_range, 'a usable time three days past the store\'s clock is refused');
# a restart's last granted call, by its clock: no later than the store's
# clock plus the margin the call declares (the confirmed re-assertion rule)
my $hour_ahead = $now + 3600000;
like($member->call('claim',
		"-1, 31, 0, $now, quiet_ms => 9000, reassert => true, seen_generation => 0, "
		  . "seen_counter => 0, clock_margin_ms => 1000, confirmed_ms => $hour_ahead",
		"-1 31 0 0 $now 9000 1 0 0 1000 $hour_ahead"),
	$out_of_range, 'a last granted call an hour past the store\'s clock is refused');
like($member->call('lease_claim',
		"31, 86400001, $now, $now, -1, 0, '$token', 9000",
		"31 86400001 $now $now -1 0 9000", $token),
	$out_of_range, 'a lease longer than a day is refused');
like($member->call('lease_claim',
		"31, 600000, " . ($now + 3 * 86400000) . ", $now, -1, 0, '$token', 9000",
		"31 600000 " . ($now + 3 * 86400000) . " $now -1 0 9000", $token),
	$out_of_range, 'a generator three days past the store\'s clock is refused');
# the fence a lease claim writes, a lease past the generator, within what
# the servers take (their clock plus two days and an hour): before, a
# generator up to that far ahead was taken, its fence a day past it
like($member->call('lease_claim',
		"31, 86400000, " . ($now + 176400000 - 60000) . ", $now, -1, 0, '$token', 9000",
		"31 86400000 " . ($now + 176400000 - 60000) . " $now -1 0 9000", $token),
	$out_of_range, 'a lease of a day from a generator two days ahead, a fence past what servers take, is refused');
is($member->state, $before, 'and none of them changed anything');
my ($gen_after) = $member->record;
is($gen_after, $gen, 'nor started a quiet period');

# -- a quiet period that ends impossibly far off -------------------------------

# A server of the datacenter, holding a worker id; a check-in a second
my $node = SnowidLease::start_node($coord, 'server',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.checkin_interval' => '1s',
		'snowid.coordinator_timeout_ms' => 5000,
		'snowid.clock_margin' => '1s'
	});
my $declared = 1000 + 5000 + 1000 + 1000;

# The record as a store of an earlier release keeps it after the call of
# finding 3: a quiet period until the year 10000, declared so
my $far = 253402300800000;
$now = $member->store_now;
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
failover();
my $refused = $member->claim(quiet => $declared, margin => 1000);
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
cmp_ok($fence, '>', $member->store_now + 50000, 'worker id 9 freed, fenced a minute ahead');
# the member starts a quiet period (it saw a later counter: the store went
# back), re-makes id 9 as its lease in it (its generator past the fence),
# with a fence wanted of 0, then gives it back at 0
($gen, $counter) = $member->record;
$counter += 1000;
$now = $member->store_now;
my $client = $now + 120000;
my $renewed = $member->call('lease_renew',
	"9, 600000, 0, '$token', quiet_ms => $declared, client_ms => $client, "
	  . "seen_generation => $gen, seen_counter => $counter, clock_margin_ms => 1000",
	"9 600000 0 $declared $client $gen $counter 1000", $token);
my $lease = $coord->field($dc, 'leases', 9);
my ($floor) = ($lease // '') =~ /^\d+ (\d+) /;
ok(!defined $floor || $floor >= $fence,
	'a lease re-made in a quiet period starts at or above the id\'s fence')
  or diag("renewal: $renewed; lease: $lease");
$member->call('lease_release', "9, 0, false, '$token'", '9 0', $token);
cmp_ok($coord->field($dc, 'fences', 9) // 0, '>=', $fence,
	'giving it back with a final fence of 0 leaves the fence where free() put it');

# -- a quiet period no declaration shortens, nor chains ----------------------

# (the server stopped: its check-ins move the counter)
$node->stop;

# The shortest quiet period a server declares is 1101 ms (a lease of
# 100 ms, a coordinator timeout of 1 ms, no drift budget, and a second): a
# shorter one, declared by the first call after a loss, ended the quiet
# period at once
$before = $member->state;
like($member->claim(quiet => 0, margin => 0), $out_of_range,
	'a quiet period of 0 ms is refused');
like($member->claim(quiet => 1100, margin => 0), $out_of_range,
	'one of 1100 ms, shorter than any server declares, is refused');
is($member->state, $before, 'and neither changed anything');

# A loss (a failover) noticed by a call that declares no quiet period (a
# server of release 1.2, or one by hand): a quiet period of 9 s, as long as
# the defaults, which the store keeps as no one's declaration
end_quiet();
failover();
$now = $member->store_now;
$member->call('claim', "-1, 31, -1, $now", "-1 31 -1 0 $now");
my $running = $coord->quiet_record($dc);
cmp_ok($running->{until}, '>', $member->store_now, 'a call that declares nothing starts a quiet period');
# a member says it saw a later counter, declaring the shortest quiet period
($gen, $counter) = $member->record;
$member->claim(quiet => 1101, generation => $gen, counter => $counter + 1000, margin => 0);
my ($gen_declared) = $member->record;
cmp_ok($gen_declared, '>', $gen, 'a member\'s word that it saw a later counter starts a new generation');
$q = $coord->quiet_record($dc);
cmp_ok($q->{until}, '>=', $running->{until},
	'and a new quiet period, which ends no earlier than the one that ran');
cmp_ok($q->{floor}, '>=', $running->{floor}, 'its floor no earlier either');

# The same again, with a counter ahead of the new record: every word
# counts (a store brought back to an older state of itself a second time
# is noticed only so), a new generation and quiet period, which ends no
# earlier
($gen, $counter) = $member->record;
$before = $coord->quiet_record($dc);
$member->claim(quiet => 1101, generation => $gen, counter => $counter + 1000, margin => 0);
my ($gen_again) = $member->record;
cmp_ok($gen_again, '>', $gen, 'a member\'s word again starts a new generation again');
$q = $coord->quiet_record($dc);
cmp_ok($q->{from}, '>', $before->{from}, 'and a new quiet period');
cmp_ok($q->{until}, '>=', $before->{until}, 'which ends no earlier than the one that ran');

# -- a word at the bound: no chain among honest servers -----------------------

# A caller that saw the generation the bound allows (the store's clock
# plus an hour, as one made at the bound before the store's clock went
# back), with a counter ahead: the new generation cannot pass the
# caller's, so the counter does.  Whether the call lands in the
# millisecond the caller read is luck: tried until it does
# (SnowidMember::land_word_at_bound says how each try aims).
my $seen_counter = 1000000;
my $at_bound = $member->land_word_at_bound($seen_counter);
my (undef, $counter_bound) = $member->record;
ok(defined $at_bound, 'a word at the bound lands in the millisecond it was sent for');
cmp_ok($counter_bound, '>', $seen_counter,
	'the generation held at the caller\'s by the bound, the counter passes the caller\'s');
# servers that saw at most that state call: the caller, one that saw an
# earlier counter, one that saw an earlier generation
$before = $coord->quiet_record($dc);
$member->claim(quiet => 1101, generation => $at_bound, counter => $seen_counter, margin => 0);
$member->claim(quiet => 1101, generation => $at_bound, counter => $seen_counter - 1, margin => 0);
$member->claim(quiet => 1101, generation => $gen_again, counter => $seen_counter, margin => 0);
my ($gen_after_bound) = $member->record;
is($gen_after_bound, $at_bound,
	'servers that saw at most the caller\'s state start no new generation');
is($coord->quiet_record($dc)->{from}, $before->{from}, 'nor another quiet period');

# A generation past the store's clock plus an hour, which the record holds
# (an earlier release let a member push it past, one past the other, at
# every call): a member sending it with a counter ahead is refused, so the
# generation goes no further, and every server can send what it saw after
# a loss
my $pushed = $member->store_now + 3600000 + 600000;
if ($pg)
{
	$coord->db->sql(undef,
		"UPDATE snowid_coordinator.datacenters SET generation = $pushed WHERE datacenter = $dc");
}
else
{
	my $state = $coord->cli('HGET', "$base:owners", 'state');
	$state =~ s/^\w+ /sprintf('%x ', $pushed)/e;
	$coord->cli('HSET', "$base:owners", 'state', $state);
	$coord->cli('HSET', "$base:$_", 'generation', sprintf('%x', $pushed))
	  for qw(leases fences);
}
($gen, $counter) = $member->record;
$before = $member->state;
like($member->claim(quiet => 9000, generation => $gen, counter => $counter + 1000, margin => 1000),
	$out_of_range, 'a generation an hour and ten minutes past the store\'s clock, sent back to it, is refused');
my ($gen_pushed) = $member->record;
is($gen_pushed, $pushed, 'and the generation is not pushed further');

done_testing();
