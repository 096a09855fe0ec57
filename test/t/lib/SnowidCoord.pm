# The coordinator of a lease or duplicate TAP test: Redis (SnowidRedis), or
# a PostgreSQL coordination database (SnowidPgCoord) when SNOWID_STORE is
# "postgresql" (test/run --store postgresql).  Both offer new_node, url,
# setting, source, owners, field, free, remove_holder, command_calls, stop
# and start, so that one test file tests the fence rule of both stores.
package SnowidCoord;

use strict;
use warnings;

use SnowidPgCoord;
use SnowidRedis;
use SnowidTest;

# The store the tests run against: "redis" or "postgresql".
sub store
{
	my $store = $ENV{SNOWID_STORE} || 'redis';

	die "SNOWID_STORE must be redis or postgresql, not $store"
	  unless $store eq 'redis' || $store eq 'postgresql';
	return $store;
}

# For the top of a test file: what the store needs beyond PostgreSQL
# (Redis: SnowidRedis::need_redis), or a skip naming the package.
sub need_store
{
	SnowidRedis::need_redis() if store() eq 'redis';
	return;
}

# SnowidCoord->new(%params): starts the store; the parameters are the
# store's own (SnowidRedis->new, SnowidPgCoord->new).
sub new
{
	my ($class, %params) = @_;

	return store() eq 'postgresql'
	  ? SnowidPgCoord->new(%params)
	  : SnowidRedis->new(%params);
}

# SnowidCoord::start(%params): the top of a test file of both stores, in
# place of need_store() and new(): skips (or, under SNOWID_REQUIRE_TOOLS=1,
# fails) naming the Debian package where what the store needs beyond
# PostgreSQL is missing, and with need_clock => 1 where the clock library
# cannot be built (SnowidTest::need_clock); then starts the store, the
# other parameters new()'s.
sub start
{
	my (%params) = @_;
	my $clock = delete $params{need_clock};

	need_store();
	SnowidTest::need_clock() if $clock;
	return SnowidCoord->new(%params);
}

# The start of a store's answer to a call refused as malformed ('usage':
# SNOWID_USAGE, 22023) or as another holder's ('wrong': SNOWID_WRONG_SECRET,
# 42501), as a pattern, for the store of this run (store():
# SnowidCoord::refused_as('usage'))
sub refused_as
{
	my ($why) = @_;
	my %answer = (
		usage => [ '22023: ', 'SNOWID_USAGE ' ],
		wrong => [ '42501: ', 'SNOWID_WRONG_SECRET ' ]);
	my $start = $answer{$why}[ store() eq 'postgresql' ? 0 : 1 ]
	  // die "refused_as: no answer '$why'";

	return qr/^\Q$start\E/;
}

# Passes if the hint of a claim refused in a quiet period ($err, psql's
# error output) leads with waiting, leaves ending the period sooner to an
# administrator, for a store known to have lost nothing, naming the page of
# $coord's store that says when, and gives no command to run (three tests)
sub quiet_hint_ok
{
	my ($coord, $err) = @_;
	my ($hint) = $err =~ /^HINT:  (.*)$/m;
	my $page = $coord->source eq 'postgresql'
	  ? 'doc/coordinator.md, "When the coordination database forgets"'
	  : 'doc/redis.md, "Ending a quiet period"';

	$hint //= '';
	Test::More::like($hint, qr/^Call again after that time: the claim then succeeds by itself/,
		'the hint says to call again then, when the claim succeeds by itself');
	Test::More::like($hint,
		qr/Ending the quiet period sooner is an administrator's decision, only for a store known to have lost nothing, such as a brand-new datacenter .*\(\Q$page\E\)\.$/,
		'and names ending the quiet period as an administrator\'s decision, by the page that says when it applies');
	Test::More::unlike($hint, qr/redis-cli|FCALL|EVAL|SELECT|snowid_\d_|snowid_coordinator\.|\{snowid:/,
		'with no command to run');
	return;
}

1;
