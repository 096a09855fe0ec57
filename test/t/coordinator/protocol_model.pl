# The worker-id protocol, model checked: SPIN checks the model
# src/coord/protocol.pml (doc/internals.md, "The protocol, model checked").
# With each fix of the past switched off (-DNO_FIX_...), it must find the
# path that fix closed (two servers issuing with one worker id in one
# millisecond, or a quiet period without bound), searched
# breadth first (so the trail it writes is a shortest one) among the kinds
# of steps that path takes; the trail, replayed by spin, must name the step
# the path needs (a copy, a loss of the store, a call of another member of
# the fleet...).  The search with every fix on runs here bounded to 7
# steps without the other fleet member, and to its end among the kinds of
# steps of the confirmed re-assertion's path; doc/internals.md states the
# deeper searches, run by hand.  The trails are then replayed against both
# real stores: test/protocol-trail turns each into test/protocol-search's
# steps, which give the duplicate with protocol-search's matching switch
# off and none with it on (or, where the stores have no switch for the
# fix, none with every fix on; finding 3's gives a quiet period without
# bound, not a duplicate; forgetting 5's trail, which every fix leaves
# open, the model's and the stores' alike, the duplicate with every fix
# on).
#
# A run of several versions runs it once (test/run places it; alone, it runs
# with Debian's PostgreSQL): the replay starts its own PostgreSQL server for
# the coordination database (SnowidTest::search_pg_config), and a
# redis-server.
# Needs spin (Debian's package spin), a C compiler (also for the stores'
# clock preload, built once here by SnowidTest::need_clock and passed to
# protocol-search as SNOWID_CLOCK_LIBRARY), Perl's Redis module and
# redis-server: a missing one skips the test, naming its
# package (a failure under SNOWID_REQUIRE_TOOLS=1, as test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

SnowidTest::only_on('the model check runs once', 'debian');
SnowidTest::need_program('spin', 'spin');
SnowidTest::need_program('gcc', 'gcc');
# the replay of trails against both stores (test/protocol-search)
SnowidTest::need_protocol_search();

my $model = "$FindBin::RealBin/../../../src/coord/protocol.pml";
my $dir = PostgreSQL::Test::Utils::tempdir();
my ($out, $steps);

# Checks the model with the given -D flags: breadth first (bfs), depth
# first to a depth of 60 steps (dfs), or depth first through every state
# (full); returns the search's output and the trail's steps (empty without one).
sub check
{
	my ($name, $search, @flags) = @_;
	# the searches of millions of states (a clock past the margin) are
	# compiled with -O1 (4 s of CPU, where -O2 took 24 s; the search then
	# takes 60% of -O0's time), the others with -O0; no -DCOLLAPSE: the
	# model's states do not compress (to 99.6% of their size)
	my $opt = (grep { $_ eq '-DPAST_ONCE' } @flags) ? '-O1' : '-O0';

	return SnowidTest::spin_search(name => $name, model => $model, flags => \@flags,
		cc => [ $opt, '-DSAFETY', $search =~ /^bfs/ ? ('-DBFS') : (),
			'-DMEMLIM=4096' ],
		pan => [ '-E', '-c1',
			$search eq 'dfs' ? '-m60' : $search =~ /^bfs(\d+)$/ ? "-m$1" : '-m2000', '-w22' ]);
}

# Each fix off, and the kinds of steps its path takes (the others left
# out, -DNO_...), and a step its trail must take
my @forget = qw(-DNO_IMP -DNO_CHAOS -DNO_OFFLINE -DNO_COPY -DNO_DESYNC);
# the kinds of steps of the confirmed re-assertion's path: two servers for
# good, a loss and a backup restored, no issue step (the invariant checked
# one step ahead), the store's clock to 7
my @confirmed_kinds = qw(-DNO_IMP -DNO_LEASE -DNO_CHAOS -DNO_COPY -DNO_OFFLINE
  -DNO_DESYNC -DNO_REWIND_SAME -DTMAX=7 -DNO_THIRD -DNO_ISSUE -DNO_PAST_MARGIN);
# and with the first server's clock stepped past the margin once (the third
# attack's path), the store's clock to 9
my @past_kinds = ((grep { !/^-D(TMAX=|NO_PAST_MARGIN)/ } @confirmed_kinds),
	qw(-DPAST_ONCE -DTMAX=9));
my @paths = (
	[ 'a released lease taken for good (a claim for good that ignores fences)',
	  [ qw(-DNO_FIX_PERM_FENCE -DNO_IMP -DNO_CHAOS -DNO_LOSE -DNO_REWIND
		-DNO_DESYNC -DNO_OFFLINE -DNO_COPY) ],
	  qr/^stop 1$(?s:.*)^claim 0 -> 0 0$/m ],
	[ 'a copy on the same host name and port (no instance in the holder name)',
	  [ qw(-DNO_FIX_COPY_INSTANCE -DNO_IMP -DNO_LEASE -DNO_CHAOS -DNO_LOSE
		-DNO_REWIND -DNO_DESYNC -DNO_OFFLINE) ],
	  qr/^copy 0$/m ],
	[ 'a claim under another\'s holder name (no holder secret)',
	  [ qw(-DNO_FIX_HOLDER_SECRET -DIMP_AS_0 -DNO_LEASE -DNO_CHAOS -DNO_LOSE
		-DNO_REWIND -DNO_DESYNC -DNO_OFFLINE -DNO_COPY) ],
	  qr/^imp_/m ],
	[ 'the cancelled synchronous wait (an answer that warns taken as granted, as 1.2 without the forgetting rule)',
	  [ qw(-DNO_FIX_SYNC_WARN -DNO_FIX_RECALL_RUN -DNO_IMP -DNO_CHAOS -DNO_LOSE
		-DNO_REWIND -DNO_REWIND_SAME -DNO_OFFLINE -DNO_COPY -DNO_LEASE) ],
	  qr/^desync$(?s:.*)^rewind$/m ],
	[ 'the backup of a standby (a copy of a server never started keeps its name)',
	  [ qw(-DNO_FIX_STANDBY_INSTANCE -DNO_IMP -DNO_LEASE -DNO_CHAOS -DNO_LOSE
		-DNO_REWIND -DNO_DESYNC -DNO_OFFLINE) ],
	  qr/^copy 0$/m ],
	[ 'forgetting 1: the store loses everything, a holder for good idle',
	  [ qw(-DNO_FIX_RECALL_EMPTY -DNO_LEASE -DNO_REWIND -DNO_REWIND_SAME), @forget ],
	  qr/^lose$/m ],
	[ 'forgetting 2: the store loses everything, a lease holder busy',
	  [ qw(-DNO_FIX_RECALL_EMPTY -DNO_PERM -DNO_REWIND -DNO_REWIND_SAME), @forget ],
	  qr/^lose$/m ],
	[ 'forgetting 3: the store comes back from a backup',
	  [ qw(-DNO_FIX_RECALL_RUN -DNO_LEASE -DNO_LOSE -DNO_REWIND_SAME), @forget ],
	  qr/^backup$(?s:.*)^rewind$/m ],
	[ 'forgetting 5: the store goes back to an older copy of itself under the same identity',
	  [ qw(-DNO_FIX_RECALL_COUNTER -DNO_LEASE -DNO_LOSE), @forget ],
	  qr/^rewind_same$/m ],
	[ 'issue 55, finding 1: a holder renews a lease that ran out, after the store forgot',
	  [ qw(-DNO_FIX_OWN_DEADLINE -DNO_FIX_RENEW_LIVE -DNO_PERM -DNO_REWIND_SAME
		-DTMAX=4 -DFMAX=1), @forget ],
	  qr/^(lose|rewind)$(?s:.*)^renew \d -> 0$/m ],
	[ 'issue 55, finding 2: a stale cache file re-asserted after the store forgot',
	  [ qw(-DNO_FIX_STALE_CACHE -DNO_REWIND -DNO_REWIND_SAME -DTMAX=5 -DFMAX=1
		-DNO_THIRD), @forget ],
	  qr/^lease_claim (?s:.*)^lose$(?s:.*)^claim \d -> 0 \d$/m ],
	[ 'found by the model: a claim for good that the store, gone back to a backup, still records, granted at its old fence in the quiet period',
	  [ qw(-DNO_FIX_HELD_QUIET -DNO_LOSE -DNO_REWIND_SAME -DTMAX=13 -DFMAX=1
		-DNO_THIRD -DNO_ISSUE), @forget ],
	  qr/^backup$(?s:.*)^rewind$(?s:.*)^claim \d -> 0 \d$/m ],
	[ 'a quiet period of 0 declared right after a loss (no least quiet period)',
	  [ qw(-DNO_FIX_QUIET_LEAST -DIMP_OWN -DNO_CHAOS -DNO_REWIND -DNO_REWIND_SAME
		-DNO_DESYNC -DNO_OFFLINE -DNO_COPY -DNO_PERM -DTMAX=5 -DFMAX=1) ],
	  qr/^lose$(?s:.*)^imp_short -> \d$(?s:.*)^lease_claim \d -> 0 \d$/m ],
	[ 'a stopped server\'s cache file re-asserted after the store forgot, its id another\'s since an earlier loss (no confirmed_ms)',
	  [ @confirmed_kinds, '-DNO_FIX_CONFIRMED_REASSERT' ],
	  qr/^lose$(?s:.*)^claim (\d) -> 0 0$(?s:.*)^(?:lose|rewind)$(?s:.*)^claim (?!\1)\d -> 0 0$/m ],
	[ 'the third attack on issue 55: a clock stepped past the margin while a call was granted, then put right, left confirmed_ms that far ahead (the largest clock kept), and a restart re-asserted its cache file\'s id long after it stopped',
	  [ @past_kinds, '-DNO_FIX_CONFIRMED_BOUNDED' ],
	  qr/^clock (\d) far \d+$(?s:.*)^checkin \1 -> 0$(?s:.*)^clock \1 right \d+$(?s:.*)^lose$(?s:.*)^claim \1 -> 0 0$/m ],
	[ 'issue 55, finding 4: a lease made again by a renewal in a quiet period, its floor below the id\'s fence',
	  [ qw(-DNO_FIX_RENEW_LIVE -DNO_FIX_FENCE_LOWER -DIMP_OWN -DNO_CHAOS -DNO_LOSE
		-DNO_REWIND -DNO_DESYNC -DNO_OFFLINE -DNO_COPY -DNO_PERM) ],
	  qr/^imp_later(?s:.*)^imp_renew /m ],
	[ 'issue 55, finding 3: a fleet member declares a quiet period without bound',
	  [ qw(-DNO_FIX_BOUNDS -DIMP_OWN -DNO_CHAOS -DNO_LOSE -DNO_REWIND -DNO_DESYNC
		-DNO_OFFLINE -DNO_COPY -DNO_LEASE -DNO_PERM) ],
	  qr/^imp_huge/m ],
);

# each row's trail, by the row's name, for the replays below
my %trail_of;
for my $path (@paths)
{
	my ($name, $flags, $needs, $search) = @$path;
	# clock steps past the margin are searched by the rows that take them
	# (-DPAST_ONCE); the others leave them out, as other kinds of steps
	# their paths do not take
	my @far = grep({ $_ eq '-DPAST_ONCE' } @$flags) ? () : ('-DNO_PAST_MARGIN');
	($out, $steps) = check($name, $search // 'bfs', @$flags, @far);
	$trail_of{$name} = $steps;
	like($out, qr/errors: 1\b/, "$name: the model checker finds it");
	like($steps, $needs, "$name: its trail takes the step the path needs");
}

# Forgetting 5's trail (a new server claims right after the store went back
# under its own identity, before any holder that saw the later state
# calls) is one every fix leaves open: only a holder's word tells such a
# store, and none came (doc/internals.md, "The protocol, model checked").
# With every fix on, among the same kinds of steps, the checker takes the
# same trail; its replays below show the duplicate on both stores.
my ($same_name) = grep { /^forgetting 5:/ } map { $_->[0] } @paths;
($out, $steps) = check('forgetting 5 with every fix on', 'bfs',
	qw(-DNO_LEASE -DNO_LOSE -DNO_PAST_MARGIN), @forget);
like($out, qr/errors: 1\b/,
	'forgetting 5 with every fix on: the model checker finds it too (a path left open)');
is($steps, $trail_of{$same_name},
	'forgetting 5 with every fix on: the same trail as with the counter\'s fix off');

# The search with every fix on, bounded to fit CI: the servers, the store
# that loses, goes back to a backup, or fails over after its standby
# stopped (not the other fleet member), every sequence of 7 steps (8
# transitions of SPIN, the first setting up the fleet);
# doc/internals.md gives the deeper searches run by hand.
($out, $steps) = check('every fix on, 7 steps, the store\'s faults', 'bfs8',
	qw(-DNO_IMP -DNO_OFFLINE -DNO_REWIND_SAME));
like($out, qr/errors: 0\b/, 'every fix on: no path in 7 steps');
like($out, qr/depth reached 8\b/, 'every fix on: the search reached 7 steps');

# With every fix on, the kinds of steps of the confirmed re-assertion's path
# searched to their end (every sequence, whatever its length)
($out, $steps) = check('every fix on, the confirmed re-assertion\'s kinds of steps',
	'full', @confirmed_kinds);
like($out, qr/errors: 0\b/, 'confirmed re-assertion: no path with every fix on');
unlike($out, qr/Search not completed/,
	'confirmed re-assertion: the search with every fix on completed');

# and with a clock stepped past the margin, the store's clock to 8 (to 9:
# doc/internals.md)
($out, $steps) = check('every fix on, the third attack\'s kinds of steps',
	'full', (grep { !/^-DTMAX=/ } @past_kinds), '-DTMAX=8');
like($out, qr/errors: 0\b/, 'a clock past the margin: no path with every fix on');
unlike($out, qr/Search not completed/,
	'a clock past the margin: the search with every fix on completed');

# The trails, replayed against both real stores: each converted by
# test/protocol-trail into test/protocol-search's steps, with the settings
# that switch off the fix of the row (the same fix, where the search has
# it: its servers' side, a --store-fix, a copy's identity, the holder
# secret) it gives the duplicate on both (or its row's violation: a quiet
# period past the bound, protocol-search's check c); with them on, none.
# A row whose fix lives in the stores alone, with no switch there, is
# replayed with every fix on only (the stores must not follow the path);
# forgetting 5's trail, which every fix leaves open (above), gives the
# duplicate with every fix on as well.  Each row: a pattern naming one row
# of @paths, the settings that switch its fix off (undef: on only), those
# that switch it on, and what its replays show where it is not the
# duplicate with the fix off and none with it on (shows: the violation
# with the fix off; open: the violation with every fix on).
my $granted_twice = qr/^    check: VIOLATION: worker id \d granted to /m;
my $quiet_unbounded =
  qr/^    check: VIOLATION: .* keeps a quiet period of \d+ ms, .* past the longest a server declares/m;
# Two rows' fixes live in the servers' side, and the stores' restart rule
# (after a possible loss, a restart is a new claim: the record holds the
# store's run, its postmaster's start) closes their paths as well: with
# the servers' fix off, the stores still grant the id once.
my $restart_rule = 'the stores\' restart rule closes it as well';
my $trail_tool = "$FindBin::RealBin/../../protocol-trail";
my $search = "$FindBin::RealBin/../../protocol-search";
my @replays = (
	[ qr/^a released lease taken for good/, undef, [] ],
	[ qr/^a copy on the same host name and port/,
	  [ 'copy-identity=same' ], [ 'copy-identity=new' ] ],
	[ qr/^a claim under another's holder name/,
	  [ 'holder-secret=no' ], [ 'holder-secret=yes' ] ],
	[ qr/^the cancelled synchronous wait/, undef, [] ],
	[ qr/^the backup of a standby/,
	  [ 'copy-identity=same' ], [ 'copy-identity=new' ] ],
	[ qr/^forgetting 1:/, undef, [] ],
	[ qr/^forgetting 2:/, undef, [] ],
	[ qr/^forgetting 3:/, undef, [] ],
	[ qr/^forgetting 5:/, undef, [], { open => $granted_twice } ],
	[ qr/^issue 55, finding 1:/, undef, [] ],
	[ qr/^issue 55, finding 2:/,
	  [ 'lease-keeps-cache=yes' ], [ 'lease-keeps-cache=no' ],
	  { closed => $restart_rule } ],
	[ qr/^issue 55, finding 3:/,
	  [ 'store-fix=bounds=off' ], [ 'store-fix=bounds=on' ],
	  { shows => $quiet_unbounded } ],
	[ qr/^issue 55, finding 4:/, undef, [] ],
	[ qr/^found by the model: a claim for good that the store/,
	  [ 'store-fix=held_named=off' ], [ 'store-fix=held_named=on' ] ],
	[ qr/^a quiet period of 0 declared right after a loss/,
	  [ 'store-fix=quiet_min=off' ], [ 'store-fix=quiet_min=on' ] ],
	[ qr/^a stopped server's cache file re-asserted/,
	  [ 'store-fix=confirmed_reassert=off' ], [ 'store-fix=confirmed_reassert=on' ] ],
	[ qr/^the third attack on issue 55:/,
	  [ 'confirmed-kept=largest' ], [ 'confirmed-kept=bounded' ],
	  { closed => $restart_rule } ],
);
# the scripts: [ row's name, off or on, settings, file, what it shows ]
my @scripts;
for my $replay (@replays)
{
	my ($pattern, $off, $on, $shows) = @$replay;
	my @names = grep { $_ =~ $pattern } map { $_->[0] } @paths;
	die "the replay $pattern names " . scalar(@names) . " rows of \@paths, not one"
	  unless @names == 1;
	my $name = $names[0];
	my $trail = join '', map { "STEP $_\n" } split /\n/, $trail_of{$name};
	for my $fix ($off ? ([ off => $off ]) : (), [ on => $on ])
	{
		my ($state, $settings) = @$fix;
		my $file = "$dir/replay-" . (@scripts + 1) . "-$state.txt";
		my ($script, $err) = ('', '');
		IPC::Run::run([ $^X, $trail_tool, map { ('--set', $_) } @$settings ],
			'<', \$trail, '>', \$script, '2>', \$err);
		is($? >> 8, 0, "$name: the trail converts ("
			  . (@$settings ? "@$settings" : 'every fix on') . ')')
		  or diag($err);
		PostgreSQL::Test::Utils::append_to_file($file, $script);
		push @scripts, [ $name, $state, $settings, $file,
			$state eq 'off' && !$shows->{closed}
			? $shows->{shows} // $granted_twice : $shows->{open},
			$state eq 'off' ? $shows->{closed} : undef ];
	}
}
# every script in one run of protocol-search --store both (one
# redis-server, one PostgreSQL server), each replayed against the stores
# emptied and loaded anew: each step's calls go to both stores on one
# clock, and a call whose two answers differ is a violation, so the two
# stores answer every trail alike, answer for answer.  That run checks
# each store as a run against it alone would: the duplicate is found from
# the answers, the same from each store; the quiet period of check c is
# read from each store's own record.
for my $store (qw(both))
{
	my $replayed = '';
	IPC::Run::run([ $^X, $search, (map { ('--replay', $_->[3]) } @scripts),
			'--store', $store, '--pg-config', SnowidTest::search_pg_config() ],
		'<', \undef, '>&', \$replayed);
	my %out;
	for my $part (split /^(?=protocol-search: replaying )/m, $replayed)
	{
		$out{$1} = $part if $part =~ /^protocol-search: replaying (\S+)$/m;
	}
	for my $script (@scripts)
	{
		my ($name, $state, $settings, $file, $shows, $closed) = @$script;
		my $with = @$settings ? "@$settings" : 'every fix on';
		my $part = $out{$file} // '';
		if ($shows)
		{
			like($part, $shows,
				"$name: replayed against $store with $with, "
				  . ($shows == $granted_twice ? 'the id is granted twice'
					: 'a quiet period without bound')
				  . ($state eq 'on' ? ' (a path every fix leaves open)' : ''))
			  or diag($part ne '' ? $part : $replayed);
		}
		else
		{
			like($part, qr/^protocol-search: replay of \d+ steps: .* 0 violations/m,
				"$name: replayed against $store with $with, no violation"
				  . ($closed ? " ($closed)" : ''))
			  or diag($part ne '' ? $part : $replayed);
		}
	}
}

done_testing();
