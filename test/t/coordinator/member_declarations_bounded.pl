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

use IO::Socket::UNIX;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidMember;
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
		$coord->cli('FCALL', "snowid_3_$function", 3, "$base:owners", "$base:leases",
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

# The member's claim saying it saw the generation the store's bound allows
# now (its clock plus an hour, plus ahead ms: the call may land a few
# milliseconds later) and counter seen_counter, the clock read and the call
# sent at once.  Returns the generation sent.
#
# The word lands only if the store reads its clock exactly ahead ms after
# the caller did.  Before, the coordination database's clock was read in
# one psql statement and the claim called in the next: a round trip apart,
# which a loaded machine stretched past 7 ms every time (200 tries, none
# landed).  Now both are one DO block, with no round trip between the
# clock read and the CALL, which says the word again up to 20 times while
# the store reads its clock later than aimed (a new generation past the
# one sent), so that the jitter of a loaded machine is sampled at the
# cost of a call rather than a psql; a word the store refuses (its clock
# read sooner than aimed) ends the block.  The last generation sent comes
# back as a notice.  On Redis, TIME and FCALL go one after the other on
# one open socket, the command built in between: no process started, one
# local round trip.
sub word_at_bound
{
	my ($ahead, $seen_counter) = @_;

	if ($pg)
	{
		my $into = join(', ',
			map { "$_ => o.$_" }
			  qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter));
		my ($ret, $out, $err) = $coord->node->psql('coord', qq{
DO \$do\$
DECLARE
	n bigint;
	seen bigint;
	o snowid_coordinator.outcome;
BEGIN
	FOR i IN 1 .. 20 LOOP
		n := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
		seen := n + 3600000 + $ahead;
		RAISE NOTICE 'seen %', seen;
		CALL snowid_coordinator.claim($dc, '$member', '$member_secret', -1, 31, -1, n,
			quiet_ms => 1101, seen_generation => seen, seen_counter => $seen_counter,
			clock_margin_ms => 0, $into);
		EXIT WHEN o.generation <= seen;
	END LOOP;
END
\$do\$},
			extra_params => [ '-U', 'coord_fleet' ]);
		my @seen = $err =~ /NOTICE:  seen (\d+)/g
		  or die "word at the bound: $ret $out $err";
		return $seen[-1];
	}
	my $sock = IO::Socket::UNIX->new(Peer => $coord->socket)
	  or die "cannot connect to Redis: $!";
	my ($s, $us) = @{ SnowidMember::resp($sock, 'TIME') };
	my $now = $s * 1000 + int($us / 1000);
	my $seen = $now + 3600000 + $ahead;
	SnowidMember::resp($sock, 'FCALL', 'snowid_3_claim', 3, "$base:owners", "$base:leases",
		"$base:fences", $member,
		join(' ', -1, 31, -1, 0, $now, 1101, 0, $seen, $seen_counter, 0), $member_secret);
	close $sock;
	return $seen;
}

# An administrator ends the datacenter's quiet period
sub end_quiet
{
	if ($pg)
	{
		$coord->db->sql('coord_admin', "SELECT snowid_coordinator.end_quiet($dc)");
		return;
	}
	$coord->cli('FCALL', 'snowid_3_end_quiet', 3, "$base:owners", "$base:leases",
		"$base:fences", 'admin');
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
# a restart's last granted call, by its clock: no later than the store's
# clock plus the margin the call declares (the confirmed re-assertion rule)
my $hour_ahead = $now + 3600000;
like(member_call('claim',
		"-1, 31, 0, $now, quiet_ms => 9000, reassert => true, seen_generation => 0, "
		  . "seen_counter => 0, clock_margin_ms => 1000, confirmed_ms => $hour_ahead",
		"-1 31 0 0 $now 9000 1 0 0 1000 $hour_ahead"),
	$out_of_range, 'a last granted call an hour past the store\'s clock is refused');
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
failover();
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

# -- a quiet period no declaration shortens, nor chains ----------------------

# (the server stopped: its check-ins move the counter)
$node->stop;

# The shortest quiet period a server declares is 1101 ms (a lease of
# 100 ms, a coordinator timeout of 1 ms, no drift budget, and a second): a
# shorter one, declared by the first call after a loss, ended the quiet
# period at once
$before = store_state();
like(member_claim(quiet => 0, margin => 0), $out_of_range,
	'a quiet period of 0 ms is refused');
like(member_claim(quiet => 1100, margin => 0), $out_of_range,
	'one of 1100 ms, shorter than any server declares, is refused');
is(store_state(), $before, 'and neither changed anything');

# A loss (a failover) noticed by a call that declares no quiet period (a
# server of release 1.2, or one by hand): a quiet period of 9 s, as long as
# the defaults, which the store keeps as no one's declaration
end_quiet();
failover();
$now = store_now();
member_call('claim', "-1, 31, -1, $now", "-1 31 -1 0 $now");
my $running = $coord->quiet_record($dc);
cmp_ok($running->{until}, '>', store_now(), 'a call that declares nothing starts a quiet period');
# a member says it saw a later counter, declaring the shortest quiet period
($gen, $counter) = record();
member_claim(quiet => 1101, generation => $gen, counter => $counter + 1000, margin => 0);
my ($gen_declared) = record();
cmp_ok($gen_declared, '>', $gen, 'a member\'s word that it saw a later counter starts a new generation');
$q = $coord->quiet_record($dc);
cmp_ok($q->{until}, '>=', $running->{until},
	'and a new quiet period, which ends no earlier than the one that ran');
cmp_ok($q->{floor}, '>=', $running->{floor}, 'its floor no earlier either');

# The same again, with a counter ahead of the new record: every word
# counts (a store brought back to an older state of itself a second time
# is noticed only so), a new generation and quiet period, which ends no
# earlier
($gen, $counter) = record();
$before = $coord->quiet_record($dc);
member_claim(quiet => 1101, generation => $gen, counter => $counter + 1000, margin => 0);
my ($gen_again) = record();
cmp_ok($gen_again, '>', $gen, 'a member\'s word again starts a new generation again');
$q = $coord->quiet_record($dc);
cmp_ok($q->{from}, '>', $before->{from}, 'and a new quiet period');
cmp_ok($q->{until}, '>=', $before->{until}, 'which ends no earlier than the one that ran');

# -- a word at the bound: no chain among honest servers -----------------------

# A caller that saw the generation the bound allows (the store's clock
# plus an hour, as one made at the bound before the store's clock went
# back), with a counter ahead: the new generation cannot pass the
# caller's, so the counter does.  Whether the call lands in the
# millisecond the caller read is luck: tried until it does.  The store
# reads its clock some milliseconds after the caller (its procedure
# commits, checks its arguments and takes the datacenter's lock first):
# under 1 ms on an idle machine, 1 to 20 ms and more on a loaded one.
# Before, each try aimed at 0 to 7 ms in turn, and a loaded machine
# never landed in 200 tries (on such a machine a DO block's read and the
# store's lay 23 ms apart); now each try aims by what the last one found:
# after a generation past the one sent (the store read its clock later
# than aimed) it aims later, by a step that doubles while the store stays
# later, and after a refusal (sooner) a millisecond sooner.
my $seen_counter = 1000000;
my ($at_bound, $gen_bound, $counter_bound);
my ($ahead, $step) = (0, 1);
for my $try (1 .. 200)
{
	my $s = word_at_bound($ahead, $seen_counter);
	($gen_bound, $counter_bound) = record();
	if ($gen_bound == $s)
	{
		$at_bound = $s;
		note("a word at the bound landed at try $try, $ahead ms ahead");
		last;
	}
	if ($gen_bound > $s)
	{
		$ahead += $step;
		$step *= 2;
	}
	else
	{
		$step = 1;
		$ahead-- if $ahead > 0;
	}
}
ok(defined $at_bound, 'a word at the bound lands in the millisecond it was sent for');
cmp_ok($counter_bound, '>', $seen_counter,
	'the generation held at the caller\'s by the bound, the counter passes the caller\'s');
# servers that saw at most that state call: the caller, one that saw an
# earlier counter, one that saw an earlier generation
$before = $coord->quiet_record($dc);
member_claim(quiet => 1101, generation => $at_bound, counter => $seen_counter, margin => 0);
member_claim(quiet => 1101, generation => $at_bound, counter => $seen_counter - 1, margin => 0);
member_claim(quiet => 1101, generation => $gen_again, counter => $seen_counter, margin => 0);
my ($gen_after_bound) = record();
is($gen_after_bound, $at_bound,
	'servers that saw at most the caller\'s state start no new generation');
is($coord->quiet_record($dc)->{from}, $before->{from}, 'nor another quiet period');

# A generation past the store's clock plus an hour, which the record holds
# (an earlier release let a member push it past, one past the other, at
# every call): a member sending it with a counter ahead is refused, so the
# generation goes no further, and every server can send what it saw after
# a loss
my $pushed = store_now() + 3600000 + 600000;
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
($gen, $counter) = record();
$before = store_state();
like(member_claim(quiet => 9000, generation => $gen, counter => $counter + 1000, margin => 1000),
	$out_of_range, 'a generation an hour and ten minutes past the store\'s clock, sent back to it, is refused');
my ($gen_pushed) = record();
is($gen_pushed, $pushed, 'and the generation is not pushed further');

done_testing();
