# The fence rule of snowid's Redis function library, searched: a quick
# seeded run of test/protocol-search against the library of this source
# tree (src/redis/snowid.lua) finds no sequence of steps after which two
# servers may issue the same ids.  The search drives the library in a
# redis-server whose clock it sets through the suite's clock preload
# (test/tools/clock_offset.c, at absolute times), with a model of the
# servers that call it (claims on lease and for good with the numbers the C
# side sends, ids issued, renewals, clean stops and crashes, frozen holders,
# clock steps, leases running out, copied data directories, an operator's
# HDEL and an administrator's snowid_3_free), and the faults of issue 42:
# another member of the fleet calling under a holder's name (its claim with
# max below the holder's id, its lease claim, renewal and release: refused,
# as it lacks the holder's secret), and answers lost at the store's
# failover (the synchronous standby stops, every answer since says it may
# not be on it, the primary dies: the server takes such an answer as a
# failure): every sequence of up to 4 steps over the default fleet, then
# 600 random sequences of 16 steps over fleets drawn from the seed.  No
# PostgreSQL server is started.
#
# Then the search must find a violation where there is one: an
# administrator who frees a worker id with snowid_3_free and a margin of 0
# ms, as soon as its holder stopped, lets the next holder start below ids
# that holder issued up to its drift budget ahead of its clock; and a
# server that takes an answer that may not be on the standby as granted
# (as releases up to 1.2 did) shares its id with the next claimer once the
# failover lost its claim.
#
# The stores' own fixes of issue 55's second reading are switched off one
# at a time (--store-fix NAME=off): replayed, each path is found with its
# fix off, and none with it on (SnowidTest::search_finds_store_fixes).
#
# The third attack's path of confirmed_ms after a clock stepped past the
# margin is replayed with the servers' confirmed_ms kept as the largest
# send time (--confirmed-kept largest, before the fix: a violation) and
# bounded by the monotonic clock (bounded: none)
# (SnowidTest::search_finds_confirmed_clock_step).
#
# Copies are searched with --copy-identity new: a copy of a data directory
# that claims under its original's identity ("dc=... host=... port=...
# sysid=...", the same for a copy on a host of the same name and port) is
# handed the worker id its original holds for good, a known open path until
# copies get identities of their own.  Search it by hand with
#
#   test/protocol-search --copy-identity same
#
# which finds it at once.  Needs Perl's Redis module (Debian's
# libredis-perl), a C compiler for the clock preload (gcc; built once here
# by SnowidTest::need_clock and passed to every search as
# SNOWID_CLOCK_LIBRARY) and redis-server (SNOWID_REDIS_SERVER, as
# test/lib.sh's snowid_redis_programs sets it, else redis-server on PATH):
# a missing one skips the test, naming its Debian package (a failure under
# SNOWID_REQUIRE_TOOLS=1, as test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# It starts no PostgreSQL: every version would run the same search.  CI
# runs it once (test/run places it; alone, with Debian's PostgreSQL).
SnowidTest::only_on('the search of the Redis library starts no PostgreSQL',
	'debian');
SnowidTest::need_protocol_search();

my $library = "$FindBin::RealBin/../../../snowid.lua";
my $dir = PostgreSQL::Test::Utils::tempdir();
# test/protocol-search with the library of this tree
my $protocol_search = SnowidTest::protocol_search(
	[ $library, "the function library is made in the source tree ($library)" ],
	'--library', $library);

my $summary = SnowidTest::search_finds_none($protocol_search,
	'the protocol search finds no violation', '84',
	'--depth', '4', '--random', '600', '--length', '16',
	'--vary-fleet', '--copy-identity', 'new',
	'--failure-file', "$dir/failure.txt");
like($summary, qr/\(snowid_3_\*\)/,
	'it called the functions this release\'s servers call, snowid_3_* (with holder proofs)');
like($summary, qr/; [1-9]\d* calls under another holder's name/,
	'it called under other holders\' names');
like($summary, qr/; [1-9]\d* failovers of the store/,
	'and failed the store over with answers not on its standby');

# A margin of 0 ms in snowid_3_free: a violation, written as a script that
# replays to it
SnowidTest::search_finds_free_margin($protocol_search, $dir, 'snowid_3_free', [], []);

# An answer that may not be on the standby taken as granted: a violation,
# written as a script that replays to it
my ($violation, $script) = SnowidTest::search_finds_warned_answer($protocol_search, $dir, []);
my (undef, $out) = $protocol_search->('--replay', $script);
like($out, qr/^    check: VIOLATION: \Q$violation\E$/m,
	'the script replays to the same violation');

# Servers that do not re-assert their ids (--reassert no, as 1.2) and a
# store that forgets: it loses all its data, goes back to an earlier
# state, or fails over to a replica that missed its last writes.  Each of
# them alone, the search finds a worker id granted while its holder still
# issues with it: once the quiet period the store holds the servers' calls
# to (they declare none) and its floor have passed, so after a claim
# refused, a wait and the claim again (every sequence of 5 steps of the
# kinds it takes).
SnowidTest::search_finds_forgetting($protocol_search, $dir, '--seed', '84');

# Holders that come back stale after the store forgot (issue 55): a cache
# file naming an id given away since, a lease holder frozen past its lease.
SnowidTest::search_finds_stale_holders($protocol_search, $dir);

# The paths of the stores' own that issue 55's second reading found (the
# held claim of a backup, a quiet period declared to 0 ms, and in Redis a
# datacenter marked new after its owners hash was evicted): found with the
# store's fix off, none with it on.
SnowidTest::search_finds_store_fixes($protocol_search, $dir, 1);

# confirmed_ms after a clock stepped past the margin (the third attack on
# issue 55): with the largest send time kept, a restart after two losses
# re-asserts the id another server took between them; bounded by the
# monotonic clock, it does not.
SnowidTest::search_finds_confirmed_clock_step($protocol_search, $dir);

done_testing();
