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

1;
