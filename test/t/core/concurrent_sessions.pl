# Four sessions take 250,000 ids each at the same time from one server:
# no duplicate, and each session's ids strictly increase.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $sessions = 4;
my $per_session = 250_000;

my $node = SnowidTest::new_server('concurrency', { 'snowid.worker_id' => 1 });

# the sessions queue behind an advisory lock (a gate), so that they all
# start taking ids at the same moment
SnowidTest::concurrent_sessions($node, $sessions, $per_session);

$node->stop;
done_testing();
