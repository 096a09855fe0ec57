# The worker-id protocol in brief (doc/internals.md; its model
# src/coord/protocol_min.pml) as either store keeps it: the functions
# snowid_4_claim, snowid_4_extend, snowid_4_release and snowid_4_free of
# Redis' library (src/redis/snowid.lua), or the procedures claim_4,
# extend_4, release_4 and the function free_4() of a coordination
# database (sql/snowid_coordinator/1.1/ranges.sql), the store of this run
# (SnowidCoord; test/run's coord part runs it against the second), called
# by hand with holder proofs made here as a server makes them, against a
# real store started, flushed, restarted and restored from a snapshot (a
# base backup) by the test.  Where time must pass, the store's clock
# stands still and the test moves it (SnowidMinStore, SnowidTest::Clock),
# so that every step falls where the rule bites however loaded the
# machine.  Both stores give the same answers (SnowidMinStore writes a
# coordination database's in the words of Redis' library).
#
# For each rule of the protocol, the steps of the path the model checker
# finds when the rule is off (doc/internals.md's table of switches:
# test/t/coordinator/protocol_min_whole_space.pl finds each), played
# against the store with the rule on: the call that would give a second
# server ranges overlapping the first's is refused, and the answers and the
# fences and holders the store keeps are as the rule says.
#
# The bounds (BOUND) are checked against what is installed, with the
# protocol's numbers (src/coord/store.h); the rules that wait for time to
# pass, against a copy the test makes from the store's source with
# test/tools/protocol as the Makefile does, from a copy of the headers
# whose longest range and clock margin are a few seconds (the harness
# changes a copy: what is installed holds no switch).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use SnowidCoord;
use SnowidMinStore;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();
SnowidTest::need_clock();

my $v = SnowidMinStore::numbers();
my ($range_max, $margin, $id_max) =
  @$v{qw(SNOWID_RANGE_MAX_MS SNOWID_RANGE_MARGIN_MS SNOWID_MAX_ID)};
ok($range_max && $margin, "the headers give the longest range ($range_max ms)"
	  . " and the margin ($margin ms)");

# The copy: the longest range R and the margin M a few seconds
my ($R, $M) = (3000, 2000);
my $fast_copy = SnowidMinStore::store_copy($R, $M);
is(join(' ', SnowidMinStore::copy_limits($fast_copy)), "$R $M",
	"the copy grants ranges of at most $R ms, with a margin of $M ms");

# -- calls ---------------------------------------------------------------

# The calls by their numbers, of datacenter $dc
sub claim
{
	my ($store, $dc, $name, %a) = @_;

	return call($store, 'claim', $dc, $name,
		join(' ', $a{max} // 0, $a{len} // $R, $a{good} // 1, $a{prefer} // -1),
		$a{secret});
}

sub extend
{
	my ($store, $dc, $name, %a) = @_;

	return call($store, 'extend', $dc, $name,
		join(' ', $a{id} // 0, $a{max} // 0, $a{end}, $a{len} // $R, $a{good} // 1),
		$a{secret});
}

sub release
{
	my ($store, $dc, $name, %a) = @_;

	return call($store, 'release', $dc, $name, join(' ', $a{id} // 0, $a{max} // 0),
		$a{secret});
}

# -- BOUND, against what is installed ---------------------------------------

my $store = SnowidCoord->new(mark_new => 0);
my $dc = 11;
my ($a, $b) = (holder($dc, 'a'), holder($dc, 'b'));
my $what = $store->source eq 'redis' ? 'Redis\'' : 'the coordination server\'s';

like(extend($store, $dc, $a, id => 0, max => 31, end => store_now($store), len => $range_max),
	qr/^ok 0 \d+ \d+$/,
	'a range as long as the longest is extended (a continuation: the datacenter is new,'
	  . ' in its first quiet period)');
my ($id, $end, $now) = granted(extend($store, $dc, $a, id => 0, max => 31,
		end => store_now($store), len => $range_max));
is($end, $now + $range_max, "its range ends the longest range past $what clock");
is(slot($store, $dc, 0), "$end good $a", 'the fence is its end, and its holder the caller');
my $before = kept($store, $dc);
my $other = 'c' x 64;
my %bad = (
	'a range 1 ms longer than the longest' =>
	  [ 'range_ms', sub { claim($store, $dc, $a, max => 31, len => $range_max + 1, secret => $other) } ],
	'a range of 0 ms' =>
	  [ 'range_ms', sub { extend($store, $dc, $a, max => 31, end => store_now($store), len => 0, secret => $other) } ],
	'a layout beyond the widest' =>
	  [ 'max', sub { claim($store, $dc, $a, max => $id_max + 1, secret => $other) } ],
	'a preferred worker id beyond the layout' =>
	  [ 'prefer', sub { claim($store, $dc, $a, max => 31, prefer => 32, secret => $other) } ],
	'an extend of a worker id beyond the layout' =>
	  [ 'worker_id', sub { extend($store, $dc, $a, id => 32, max => 31, end => store_now($store), secret => $other) } ],
	"an end 10 s past $what clock plus the longest range and the margin" =>
	  [ 'end_ms', sub { extend($store, $dc, $a, id => 0, max => 31,
			end => store_now($store) + $range_max + $margin + 10_000, secret => $other) } ],
	'a release of a worker id beyond the layout' =>
	  [ 'worker_id', sub { release($store, $dc, $a, id => 32, max => 31, secret => $other) } ]);
for my $what (sort keys %bad)
{
	my ($field, $sub) = @{ $bad{$what} };
	like($sub->(), qr/^SNOWID_USAGE $field must lie between /,
		"BOUND: $what is refused as out of bounds, before the proof (another secret)");
}
like(free($store, $dc, $id_max + 1), qr/^SNOWID_USAGE worker_id must lie between /,
	'BOUND: free() of a worker id beyond the widest layout is refused');
like(extend($store, $dc, $a, id => 0, max => 31, end => $end, secret => $other),
	qr/^SNOWID_WRONG_SECRET /, 'SECRET: in bounds, another secret is refused');
like(raw($store, 'extend', $dc, $a, "0 31 $end $R 1", secret($a)),
	qr/^SNOWID_USAGE a holder proof /, 'PROOF: the secret itself is refused, never taken');
is(kept($store, $dc), $before, 'and none of them changed a fence, a holder or the record');
$store->stop;

# -- the rules, against the copy --------------------------------------------

my $s = SnowidMinStore->new($fast_copy);
my $fast = $s->store;
is(store_now($fast), $s->base * 1000, 'the copy\'s store runs under a clock that stands still');

# Waits until the quiet period of datacenter $dc ends: a call (a release of
# nothing, under a name of its own) notices a possible loss, and no new
# range is granted until a margin past the end its record then names
sub wait_quiet_over
{
	my ($dc) = @_;
	my $probe = holder(0, 'probe');

	like(release($fast, $dc, $probe, id => 0, max => 0), qr/^ok 0$/,
		"datacenter $dc: a call notes the run of the store");
	my (undef, $til) = record($fast, $dc);
	$s->move_to($til + $M);
	return;
}

# Every datacenter below starts in a quiet period (it has no record): one
# wait for all
my @dcs = (1 .. 9);
release($fast, $_, holder(0, 'probe'), id => 0, max => 0) for @dcs;
wait_quiet_over($_) for @dcs;

# FENCE (the path of NO_FENCE: a lease granted, taken at once for good,
# both issue) and MARGIN (of NO_MARGIN: the same once the lease's end is
# past by the store's clock, not yet by the lease holder's)
$dc = 1;
($a, $b) = (holder(1, 'a'), holder(1, 'b'));
($id, $end, $now) = granted(claim($fast, $dc, $a, len => $R, good => 0));
is($id, 0, 'FENCE: a claims worker id 0 on lease');
is(slot($fast, $dc, 0), "$end lease $a", 'FENCE: its fence is its range\'s end');
is(claim($fast, $dc, $b), "SNOWID_FENCED 0 @{[ $end + $M ]}",
	'FENCE: b\'s claim at once is refused until a margin past the fence');
$s->move_to($end);
is(claim($fast, $dc, $b), "SNOWID_FENCED 0 @{[ $end + $M ]}",
	'MARGIN: once the fence is past by the store\'s clock, b\'s claim is still refused');
$s->move_to($end + $M);
my ($id_b, $end_b, $now_b) = granted(claim($fast, $dc, $b));
is($id_b, 0, 'MARGIN: a margin past the fence, b is granted worker id 0');
cmp_ok($now_b, '>=', $end + $M, 'MARGIN: its range starts a margin past a\'s end');
is(slot($fast, $dc, 0), "$end_b good $b", 'MARGIN: the fence rose to b\'s end');
is(extend($fast, $dc, $a, end => $end, good => 0), "SNOWID_ENDED $end",
	'OWN_END: a\'s extend of its range, over by every clock, is refused');
is(extend($fast, $dc, $a, end => store_now($fast), good => 0), "SNOWID_LOST $b",
	'an extend of the id b holds is refused, naming b');
is(release($fast, $dc, $a), 'ok 0', 'a\'s release of the id b holds does nothing');
is(slot($fast, $dc, 0), "$end_b good $b", 'b\'s fence and claim are as they were');
# a restart of b: past its range a new claim, which waits for its own
# range; within it, it extends it
is(claim($fast, $dc, $b), "SNOWID_FENCED 0 @{[ $end_b + $M ]}",
	'b\'s claim of the id it holds waits a margin past its own range');
($id, $end) = granted(extend($fast, $dc, $b, end => $end_b));
is($id, 0, 'b extends its range (a restart within it), keeping worker id 0');

# QUIET (the path of NO_QUIET: a holder for good issues; the store loses
# its data; another is granted the id at once)
$dc = 2;
($a, $b) = (holder(2, 'a'), holder(2, 'b'));
($id, $end) = granted(claim($fast, $dc, $a));
is($id, 0, 'QUIET: a claims worker id 0 for good');
SnowidMinStore::lose($fast, $dc);
my $lost_at = store_now($fast);
like(claim($fast, $dc, $b), qr/^SNOWID_QUIET (\d+)$/,
	'QUIET: the datacenter lost (an eviction, a FLUSHALL), b\'s claim is refused as quiet');
my ($run, $til) = record($fast, $dc);
is($run, run_id($fast), 'QUIET: the record names this run of the store');
cmp_ok($til, '>=', $lost_at + $R + 2 * $M,
	'QUIET: its quiet period runs the longest range and twice the margin');
is(claim($fast, $dc, $b), "SNOWID_QUIET @{[ $til + $M ]}",
	'QUIET: no claim until a margin past its end');
my ($id_a, $end_a) = granted(extend($fast, $dc, $a, end => $end));
is($id_a, 0, 'CONTINUATION: a\'s extend of worker id 0, which nobody holds now, is granted');
is(slot($fast, $dc, 0), "$end_a good $a", 'CONTINUATION: the fence rose to a\'s new end');
is(claim($fast, $dc, $b), "SNOWID_QUIET @{[ $til + $M ]}", 'QUIET: b\'s claim is still refused');

# OWN_END (the path of NO_OWN_END: a lease, run out; the id taken for good;
# the store loses its data; the old lease holder extends its ended range)
$dc = 4;
($a, $b) = (holder(4, 'a'), holder(4, 'b'));
($id, $end) = granted(claim($fast, $dc, $a, len => 1000, good => 0));
is($id, 0, 'OWN_END: a claims worker id 0 on a lease of 1 s');
$s->move_to($end + $M);
($id_b, $end_b) = granted(claim($fast, $dc, $b));
is($id_b, 0, 'OWN_END: its lease run out, b claims worker id 0 for good');
SnowidMinStore::lose($fast, $dc);
is(extend($fast, $dc, $a, end => $end, good => 0), "SNOWID_ENDED $end",
	'OWN_END: the datacenter lost, a\'s extend of its ended range is refused in the quiet period');
($id, $end) = granted(extend($fast, $dc, $b, end => $end_b));
is($id, 0, 'OWN_END: b\'s extend continues its range');
is(slot($fast, $dc, 0), "$end good $b", 'OWN_END: b holds worker id 0');

# REFUSAL_ENDS (the path of NO_REFUSAL_ENDS: free() of a running holder
# for good; its check-in refused, taken as no answer, it extends its own
# range; another is granted the id)
$dc = 5;
($a, $b) = (holder(5, 'a'), holder(5, 'b'));
($id, $end) = granted(claim($fast, $dc, $a));
is($id, 0, 'REFUSAL_ENDS: a claims worker id 0 for good');
is(free($fast, $dc, 0), "ok $end", 'free() of a running holder keeps its fence');
is(slot($fast, $dc, 0), $end, 'the holder is gone, the fence stays');
is(extend($fast, $dc, $a, end => $end), 'SNOWID_LOST ',
	'REFUSAL_ENDS: a\'s extend is refused: an answer, after which it drops the id');
is(claim($fast, $dc, $b), "SNOWID_FENCED 0 @{[ $end + $M ]}",
	'b\'s claim waits a margin past a\'s last range');
$s->move_to($end + $M);
is((granted(claim($fast, $dc, $b)))[0], 0, 'and then b is granted worker id 0');

# SECRET, PROOF: a call under a's name proves a's secret
$dc = 6;
($a, $b) = (holder(6, 'a'), holder(6, 'b'));
($id, $end) = granted(claim($fast, $dc, $a));
is($id, 0, 'SECRET: a claims worker id 0, registering its key');
is(extend($fast, $dc, $a, end => $end, secret => 'd' x 64) =~ s/ .*//r, 'SNOWID_WRONG_SECRET',
	'SECRET: an extend under a\'s name with another secret is refused');
my $numbers = "0 0 $end $R 1";
my $p = proof($fast, 'extend', $dc, $a, $numbers);
like(raw($fast, 'extend', $dc, $a, $numbers, $p), qr/^ok 0 /, 'PROOF: a\'s proof is taken');
like(raw($fast, 'extend', $dc, $a, $numbers, $p), qr/^SNOWID_STALE_PROOF /,
	'PROOF: the same proof again (read from a log) is refused');
$p = proof($fast, 'extend', $dc, $a, $numbers);
like(raw($fast, 'extend', $dc, $a, "0 0 $end 1 1", $p), qr/^SNOWID_WRONG_SECRET /,
	'PROOF: a proof of another call is refused');

# release: the holder goes, the fence stays
$dc = 7;
($a, $b) = (holder(7, 'a'), holder(7, 'b'));
($id, $end) = granted(claim($fast, $dc, $a, good => 0));
is(release($fast, $dc, $a), 'ok 1', 'a releases its lease');
is(slot($fast, $dc, 0), $end, 'the fence stays');
is(claim($fast, $dc, $b), "SNOWID_FENCED 0 @{[ $end + $M ]}",
	'b\'s claim waits a margin past the released lease\'s end');

# A Redis user that may not read Redis' run id: every call is refused (a
# coordination server's run, server_now(), is read by the extension's
# owner, as whom its functions run)
if ($fast->source eq 'redis')
{
	$fast->cli('ACL', 'SETUSER', 'noinfo', 'on', '>noinfo-pw', '~*', '+@all', '-info');
	my ($out, $err) = ('', '');
	IPC::Run::run([ $fast->cli_program, '-s', $fast->socket, '--user', 'noinfo', '--pass', 'noinfo-pw',
			'--no-auth-warning', 'FCALL', 'snowid_4_free', 1, SnowidMinStore::key(10), 'admin', 0 ],
		'<', \undef, '>', \$out, '2>', \$err);
	like($out . $err, qr/SNOWID_NO_RUN /,
		'a call whose run id Redis will not tell (no +info) is refused');
}

# RESTART_LOSS (the path of NO_RESTART_LOSS: a backup; a grant; the store
# down and up as the backup; the id granted again).  Worker id 0 of
# datacenter 9 is a's, held across the restart.
$dc = 3;
($a, $b) = (holder(3, 'a'), holder(3, 'b'));
my $a9 = holder(9, 'a');
# (a layout of two worker ids, which b's claim below runs too: a wider
# one is refused while a holds worker id 0, BOUND)
my ($id9, $end9) = granted(claim($fast, 9, $a9, max => 1));
$s->backup;
my $slot_before = slot($fast, $dc, 0);
($id, $end) = granted(claim($fast, $dc, $a));
is($id, 0, 'RESTART_LOSS: after a snapshot, a claims worker id 0');
my $was_run = run_id($fast);
$s->start('backup');
isnt(run_id($fast), $was_run, 'RESTART_LOSS: the store restarted from the snapshot, under a new run');
is(slot($fast, $dc, 0), $slot_before,
	'RESTART_LOSS: it shows worker id 0 as before a\'s claim');
like(claim($fast, $dc, $b), qr/^SNOWID_QUIET \d+$/,
	'RESTART_LOSS: b\'s claim is refused as quiet: the record is of another run');
($id, $end) = granted(extend($fast, $dc, $a, end => $end));
is($id, 0, 'RESTART_LOSS: a\'s extend continues its range, which the store forgot');
($id, $end) = granted(extend($fast, 9, $a9, max => 1, end => $end9));
is($id, 0, 'a restart that kept the data costs a running holder nothing: its extend is granted');
like(claim($fast, 9, holder(9, 'b'), max => 1), qr/^SNOWID_QUIET /,
	'and a new claim waits for the quiet period');

# CONTINUATION (the path of NO_CONTINUATION: a lease, run out; a backup;
# the id taken for good; the store up as the backup, showing the lease;
# the old lease holder's claim granted in the quiet period)
$dc = 8;
($a, $b) = (holder(8, 'a'), holder(8, 'b'));
wait_quiet_over($dc);
($id, $end) = granted(claim($fast, $dc, $a, len => 1000, good => 0));
is($id, 0, 'CONTINUATION: a claims worker id 0 on a lease of 1 s');
$s->move_to($end + $M);
$s->backup;
($id_b, $end_b) = granted(claim($fast, $dc, $b));
is($id_b, 0, 'CONTINUATION: its lease run out, b claims worker id 0 for good');
$s->start('backup');
is(slot($fast, $dc, 0), "$end lease $a", 'CONTINUATION: the store, back as the snapshot, shows a\'s lease');
like(claim($fast, $dc, $a, len => 1000, good => 0, prefer => 0), qr/^SNOWID_QUIET \d+$/,
	'CONTINUATION: a\'s claim of the id the store shows it holding is refused in the quiet period');
is(extend($fast, $dc, $b, end => $end_b), "SNOWID_LOST $a",
	'b\'s extend is refused (the store shows a): b drops the id, a denial, never a duplicate');

$fast->stop;
done_testing();
