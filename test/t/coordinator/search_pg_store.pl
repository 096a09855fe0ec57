# The fence rule of the PostgreSQL coordination store, searched: a quick
# seeded run of test/protocol-search --store postgresql against the
# extension's script of this source tree (sql/snowid_coordinator--1.1.sql)
# finds no sequence of steps after which two servers may issue the same
# ids.  The search starts a PostgreSQL server (of the build under test,
# pg_config in PATH, or where that has assertions, of Debian's
# PostgreSQL: SnowidTest::search_pg_config) under the suite's clock preload (test/tools/clock_offset.c, at
# absolute times), whose clock it sets, and drives the extension's
# functions with the model of the servers that coordinator/search_redis_library.pl
# drives the Redis library with, its faults of issue 42 too (another member
# of the fleet calling under a holder's name, without its secret; answers
# lost at the store's failover, which the server takes as failures): every
# sequence of up to 4 steps over the default fleet, then 600 random
# sequences of 16 steps over fleets drawn from the seed (smaller on a
# build with assertions, see below).
#
# Then --store both runs the same kind of search against the Redis library
# and the extension side by side, on one clock: every call's two replies
# must agree, as must their effects (the model goes on with Redis').
#
# Last, the search must find a violation where there is one, as in search_redis_library.pl: an
# administrator who frees a worker id with free() and a margin of 0 ms, as
# soon as its holder stopped, lets the next holder start below ids that
# holder issued up to its drift budget ahead of its clock; the script it
# writes replays to the same violation.  And a server that takes a claim
# whose answer warned that it may not be on the synchronous standby as
# granted shares its id with the next claimer once the failover lost it.
#
# The stores' own fixes of issue 55's second reading, and the third
# attack's path of confirmed_ms after a clock stepped past the margin, are
# replayed as search_redis_library.pl replays them, against this store.
#
# Needs a C compiler for the clock preload (gcc; built once here by
# SnowidTest::need_clock and passed to every search as
# SNOWID_CLOCK_LIBRARY), and for --store both Perl's Redis module (Debian's
# libredis-perl) and redis-server (SNOWID_REDIS_SERVER, as test/lib.sh's
# snowid_redis_programs sets it, else redis-server on PATH): without
# the compiler the test skips itself, without the others its --store both
# part, naming the Debian package (a failure under SNOWID_REQUIRE_TOOLS=1,
# as test/run sets it).
use strict;
use warnings;

use File::Spec;
use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

$ENV{SNOWID_CLOCK_LIBRARY} = SnowidTest::need_clock();

my $extension = "$FindBin::RealBin/../../../sql/snowid_coordinator--1.1.sql";
my $library = "$FindBin::RealBin/../../../snowid.lua";
my $dir = PostgreSQL::Test::Utils::tempdir();
# test/protocol-search of this tree (each search names its store)
my $protocol_search = SnowidTest::protocol_search(
	[ $extension, "the extension's script is made in the source tree ($extension)" ]);
# (its server a build without assertions where one is installed:
# SnowidTest::search_pg_config)
my $pg_config = SnowidTest::search_pg_config();
my @store = ('--store', 'postgresql', '--library', $extension, '--pg-config', $pg_config);

# How much each search tries.  Against a PostgreSQL under test built
# without assertions (Debian's 15, in CI only where a run puts the file
# there), the full searches; against one built with them (in CI, the
# others), smaller ones of the same kinds (every sequence of 3 steps
# rather than 4 in the first, a quarter of the random sequences), their
# server Debian's 15 where it is installed (search_pg_config), else the
# version under test, with its assertions 3 to 4 times slower.  The
# searches that must find a violation are the same everywhere.
my $full = !SnowidTest::has_assertions();
my %random = $full ? (90 => 600, 92 => 300, 91 => 400) : (90 => 150, 92 => 75, 91 => 100);
my $depth90 = $full ? 4 : 3;
note($full
	? 'the full searches (PostgreSQL without assertions)'
	: 'smaller searches (PostgreSQL with assertions; the full ones run without)');

my $summary = SnowidTest::search_finds_none($protocol_search,
	'the protocol search of the PostgreSQL store finds no violation', '90',
	@store, '--depth', $depth90, '--random', $random{90}, '--length', '16',
	'--vary-fleet', '--copy-identity', 'new', '--ops', '-lose,-rewind,-lag',
	'--failure-file', "$dir/failure.txt");
like($summary, qr/\(snowid_coordinator on PostgreSQL \d+/,
	'it called the functions of the extension, on a PostgreSQL server');
like($summary, qr/; [1-9]\d* calls under another holder's name/,
	'it called under other holders\' names');
like($summary, qr/; [1-9]\d* failovers of the store/,
	'and failed the store over with answers not on its standby');

# The store that forgets (it loses its rows, goes back to an earlier state,
# fails over to a standby that missed its last writes), with servers that
# keep the forgetting rule: every sequence of 3 steps (of 4 the search takes
# minutes), then random ones.
my ($status, $out) = $protocol_search->(
	@store, '--seed', '92', '--depth', '3', '--random', $random{92}, '--length', '16',
	'--vary-fleet', '--copy-identity', 'new',
	'--failure-file', "$dir/forget.txt");
($summary) = $out =~ /^(protocol-search: seed 92,.*)$/m;
note($summary // 'no summary');
is($status, 0, 'a store that forgets: the search finds no violation')
  or diag($out);
like($summary // '', qr/; [1-9]\d* times the store forgot/,
	'the store forgot');

SKIP:
{
	# --store both talks to Redis through Perl's Redis module
	my $server = $ENV{SNOWID_REDIS_SERVER} || 'redis-server';
	my $why =
	    !eval { require Redis; 1 } ? "needs Perl's Redis (Debian package libredis-perl)"
	  : !($server =~ m{/} ? -x $server : grep { -x "$_/$server" } File::Spec->path)
	  ? "needs $server (Debian package redis-server)"
	  : undef;

	# a missing tool is a failure under SNOWID_REQUIRE_TOOLS=1, as
	# SnowidTest::need_program's
	fail("--store both: $why: not found, and SNOWID_REQUIRE_TOOLS=1 counts a missing tool as a failure")
	  if $why && $ENV{SNOWID_REQUIRE_TOOLS};
	skip "--store both $why", 4 if $why;
	($status, $out) = $protocol_search->(
		'--store', 'both', '--library', $library, '--extension', $extension,
		'--pg-config', $pg_config,
		'--seed', '91', '--depth', '3', '--random', $random{91}, '--length', '20',
		'--vary-fleet', '--copy-identity', 'new', '--max-worker-id', '2',
		'--failure-file', "$dir/both.txt");
	($summary) = $out =~ /^(protocol-search: seed 91,.*)$/m;
	note($summary // 'no summary');
	is($status, 0,
		'the Redis library and the extension, side by side: their replies always agree, and no violation')
	  or diag($out);
	like($summary // '', qr/\(snowid_3_\*, and \S+ on PostgreSQL \d+/,
		'it called both');
	like($summary // '', qr/ [1-9]\d* worker-id grants, 0 violations/,
		'and checked grants');

	# The differences the full search found, each as the steps it shrank
	# to, replayed side by side: the stores must answer alike.
	#   nopad: two servers' first calls after a loss, each sending its key
	#   under its pad and refused as quiet, then a copy's first call: the
	#   database kept the two pads of the refused calls and, as many as
	#   its layout (0 to 1) has ids, answered the copy 53400 where Redis
	#   answered the quiet period (a pad is now taken by the call that
	#   sends the key under it, whatever it answers).
	#   renewal: an administrator's reset_secret() of a lease holder's
	#   name, then its renewal: Redis asked the name for its key and
	#   registered it, the database renewed without asking (answers
	#   alike, keys kept apart: the search compares the names each store
	#   has a key for)
	my %differed = (
		nopad => [ 'set max-worker-id 1', 'set copy-identity new',
			'server a lease=2000 drift=250 skew=+0 release=1 wait=2000 margin=3000',
			'server b lease=2000 drift=2500 skew=-1500 release=0 wait=6000 margin=3000',
			'server c lease=3000 drift=0 skew=-3000 release=1 wait=0 margin=3000',
			'start c', 'lose', 'start b', 'start a', 'copy a' ],
		renewal => [ 'set max-worker-id 1',
			'server a lease=2000 drift=250 skew=+0 release=1 wait=2000 margin=3000',
			'start a', 'reset a', 'renew a', 'stop a' ]);
	for my $case (sort keys %differed)
	{
		my $file = "$dir/both-$case.txt";

		append_to_file($file, join("\n", @{ $differed{$case} }, ''));
		($status, $out) = $protocol_search->('--store', 'both', '--library', $library,
			'--pg-config', $pg_config, '--extension', $extension, '--replay', $file);
		like($out, qr/^protocol-search: replay of \d+ steps: .* 0 violations/m,
			"the stores answer alike: $case")
		  or diag($out);
	}
}

# A margin of 0 ms in free(): a violation, written as a script that names
# the store and replays to it, its calls printed as a psql script
$out = SnowidTest::search_finds_free_margin($protocol_search, $dir, 'free()', \@store,
	[ '--library', $extension, '--pg-config', $pg_config ]);
like(slurp_file("$dir/free.txt"), qr/^set store postgresql$/m,
	'the script it writes names the store');
like($out, qr/^SELECT \* FROM snowid_coordinator\.free\(1, \d, 0\);$/m,
	'and its calls are printed as a psql script');

# A claim whose answer warned that it may not be on the standby, taken as
# granted: a violation
SnowidTest::search_finds_warned_answer($protocol_search, $dir, \@store);

# Servers that do not re-assert their ids (--reassert no, as 1.2) and a
# store that forgets: it loses all its rows, goes back to an earlier
# state (a restore from an older backup), or fails over to an asynchronous
# standby that missed its last writes.  Each of them alone, the search
# finds a worker id granted while its holder still issues with it, once
# the quiet period the store holds the calls to (they declare none) and its
# floor have passed (every sequence of 5 steps of the kinds it takes).
SnowidTest::search_finds_forgetting($protocol_search, $dir, @store, '--seed', '90');
SnowidTest::search_finds_stale_holders($protocol_search, $dir, @store);

# The paths of the stores' own that issue 55's second reading found (the
# held claim of a backup, a quiet period declared to 0 ms, and in Redis a
# datacenter marked new after its owners hash was evicted): found with the
# store's fix off, none with it on.
SnowidTest::search_finds_store_fixes($protocol_search, $dir, 0, @store);

# confirmed_ms after a clock stepped past the margin (the third attack on
# issue 55): with the largest send time kept, a restart after two losses
# re-asserts the id another server took between them; bounded by the
# monotonic clock, it does not.
SnowidTest::search_finds_confirmed_clock_step($protocol_search, $dir, @store);

done_testing();
