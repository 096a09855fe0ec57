# Failover between servers whose clocks disagree.
#
# A standby whose clock is 5 s behind its primary's is promoted: the marks
# it replayed keep it above every id the primary stored, although its clock
# says they lie 5 s in the future; its first call waits for its clock to
# come within its drift budget, and then it keeps going.  It crashes after
# a restartpoint and before the promotion, so that the marks come from its
# mark file, where replay wrote them.  Then the same
# with a standby of that server whose clock is 5 s ahead.  Each server
# stores its ids in a table with a primary key, which the standbys
# replicate, so that a repeated id fails the insert; the old primary is
# always stopped before the promotion.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

my $ids = SnowidTest::Ledger->new;
my %settings = (
	'snowid.worker_id' => 2,
	'snowid.max_wait_ms' => 20000);

# Takes n ids on a server in rounds of one call per id, storing them; each
# round checks that there are n, that they increase and that they lie above
# every id taken before, anywhere (three tests).
sub store_ids
{
	my ($node, $rounds, $name) = @_;

	for my $round (1 .. $rounds)
	{
		$ids->take($node, 100, "$name, round $round", q{
			INSERT INTO ids SELECT snowid_next() FROM generate_series(1, 100)
			RETURNING id});
	}
	return;
}

my $primary_clock = SnowidTest::Clock->new;
my $primary = SnowidTest::new_node('primary', \%settings,
	allows_streaming => 1);
$primary_clock->start_node($primary);
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowid; CREATE TABLE ids (id bigint PRIMARY KEY)');
store_ids($primary, 1, 'primary');
$primary->backup('backup');

my $behind_clock = SnowidTest::Clock->new;
$behind_clock->set('-5');
my $behind = PostgreSQL::Test::Cluster->new('behind');
$behind->init_from_backup($primary, 'backup', has_streaming => 1);
$behind_clock->start_node($behind);

store_ids($primary, 3, 'primary, standby 5 s behind');
$primary->wait_for_catchup($behind);

# A restartpoint past the last mark record, then a crash of the standby:
# replay resumes after the marks, so only its mark file still knows them.
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($behind);
$behind->safe_psql('postgres', 'CHECKPOINT');
$primary->stop('immediate');
SnowidTest::crash_server($behind);
$behind_clock->start_node($behind);

SnowidTest::promote($behind);
store_ids($behind, 3, 'promoted standby 5 s behind');
is($behind->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$ids->count, 'its table holds every id of both servers, once each');

# A standby of the promoted server, with a clock 5 s ahead of its own.
$behind->backup('backup');
my $ahead_clock = SnowidTest::Clock->new;
my $ahead = PostgreSQL::Test::Cluster->new('ahead');
$ahead->init_from_backup($behind, 'backup', has_streaming => 1);
$ahead_clock->start_node($ahead);

store_ids($behind, 2, 'new primary, standby 5 s ahead');
$behind->wait_for_catchup($ahead);
$behind->stop('immediate');

SnowidTest::promote($ahead);
store_ids($ahead, 3, 'promoted standby 5 s ahead');
is($ahead->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$ids->count, 'its table holds every id of all three servers, once each');

$ids->no_duplicates;
$ahead->stop;
done_testing();
