# The worker-id protocol cut to its invariant, model checked: SPIN searches
# the whole reachable state space of src/coord/protocol_min.pml
# (doc/internals.md, "The worker-id protocol in brief") with every rule on,
# no depth bound, and finds no duplicate; with each rule switched off
# (-DNO_<RULE>), and with each assumption broken (-DOUT_<...>), it finds
# one, a shortest path (breadth first) among the kinds of steps the path
# takes, whose trail must take the step the path needs.
#
# Needs spin (Debian's package spin) and a C compiler: a missing one skips
# the test, naming its package (a failure under SNOWID_REQUIRE_TOOLS=1, as
# test/run sets it).  It starts no PostgreSQL server; a run of several
# versions runs it once.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

SnowidTest::only_on('the model check runs once', 'debian');
SnowidTest::need_program('spin', 'spin');
SnowidTest::need_program('gcc', 'gcc');

my $model = "$FindBin::RealBin/../../../src/coord/protocol_min.pml";

# Searches the model breadth first with the given -D flags, every state
# (no depth bound: -m bounds only the queue's depth, and a search that
# reached it says "Search not completed"); returns the search's output and
# the trail's steps (empty without one).  No -DCOLLAPSE: the whole state
# space took a third more time and a sixth more memory with it.
sub check
{
	my ($name, @flags) = @_;

	return SnowidTest::spin_search(name => $name, model => $model, flags => \@flags,
		cc => [ '-O2', '-w', '-DSAFETY', '-DBFS', '-DMEMLIM=4096' ],
		pan => ['-w24']);
}

# The kinds of steps left out (to find a path in few states): the fleet
# member, the copy, the store's backup, the administrator's free()
my %out = (member => '-DNO_MEMBER', copy => '-DNO_COPY',
	backup => '-DNO_BACKUP', admin => '-DNO_ADMIN');
sub without { return map { $out{$_} } @_ }
my @servers = without(qw(member copy backup admin));

# Every rule on, the whole reachable state space: two servers, the store
# down and back with its data or without, its data lost while it runs, a
# millisecond passing at any step, clocks stepping within the margin
my ($out, $steps) = check('every rule on, the whole state space', @servers);
like($out, qr/errors: 0\b/, 'every rule on: no duplicate');
unlike($out, qr/Search not completed|max search depth too small/,
	'every rule on: the search visited every reachable state');

# Each rule off, and each assumption broken: the path found, and a step its
# trail must take
my @paths = (
	[ 'FENCE: a lease taken while its range runs', [ '-DNO_FENCE', @servers ],
	  qr/^claim 1 -> 0 0$(?s:.*)^claim 0 -> 0 0$/m ],
	[ 'MARGIN: an id granted while a clock behind is still before its fence',
	  [ '-DNO_MARGIN', @servers ], qr/^claim 1 -> 0 0$(?s:.*)^claim 0 -> 0 0$/m ],
	[ 'QUIET: a grant right after the store lost its data', [ '-DNO_QUIET', @servers ],
	  qr/^store loses its data$(?s:.*)^claim 1 -> 0 0$/m ],
	[ 'RESTART_LOSS: the store back as a backup, not counted as a loss',
	  [ '-DNO_RESTART_LOSS', without(qw(member copy admin)) ],
	  qr/^store backup$(?s:.*)^store up as the backup$(?s:.*)^claim \d -> 0 0$/m ],
	[ 'CONTINUATION: a claim of the id a restored store shows, granted in the quiet period',
	  [ '-DNO_CONTINUATION', without(qw(member copy admin)) ],
	  qr/^store up as the backup$(?s:.*)^claim \d -> 0 0$/m ],
	[ 'OWN_END: a range past its end extended after the store forgot',
	  [ '-DNO_OWN_END', @servers ], qr/^store loses its data$(?s:.*)^extend past its end \d -> 0$/m ],
	[ 'BOUND: a lease longer than the quiet period covers',
	  [ '-DNO_BOUND', @servers ], qr/^store loses its data$(?s:.*)^claim \d -> 0 0$/m ],
	[ 'REFUSAL_ENDS: a refused holder for good extends its own range',
	  [ '-DNO_REFUSAL_ENDS', without(qw(member copy backup)) ],
	  qr/^admin free 0$(?s:.*)^extend 0 -> 1$/m ],
	[ 'outside assumption 1: a clock behind the margin',
	  [ '-DOUT_CLOCK', @servers ], qr/^clock \d -$/m ],
	[ 'outside assumption 2: the store back to a backup unseen',
	  [ '-DOUT_REWIND_SAME', without(qw(member copy admin)) ],
	  qr/^store back to the backup unseen$/m ],
	[ 'outside assumption 3: a copy under its original\'s name',
	  [ '-DOUT_COPY', without(qw(member backup admin)) ], qr/^copy \d, same name$/m ],
	[ 'outside assumption 4: a holder for good cut off while the store answers others',
	  [ '-DOUT_PARTITION', without(qw(member copy backup)) ], qr/^partition 0$/m ],
);
for my $path (@paths)
{
	my ($name, $flags, $needs) = @$path;
	($out, $steps) = check($name, @$flags);
	like($out, qr/errors: 1\b/, "$name: the model checker finds a duplicate");
	like($steps, $needs, "$name: its trail takes the step the path needs");
}

done_testing();
