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

my $node = SnowidTest::new_node('concurrency', { 'snowid.worker_id' => 1 });
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE UNLOGGED TABLE ids (session int, n int, id bigint);
});

# A gate: the sessions queue behind an advisory lock held here, so that
# they all start taking ids at the same moment.
my $gate = SnowidTest::Gate->new($node);
my @runs = map {
	$gate->psql(qq{
		INSERT INTO ids SELECT $_, g, snowid_next()
		FROM generate_series(1, $per_session) g;
	})
} 1 .. $sessions;
$gate->wait_for($sessions);
$gate->release;

for my $run (@runs)
{
	is($run->finish, 0, 'session finished without error')
	  or diag($run->stderr);
}

is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$sessions * $per_session, 'every session took all its ids');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'),
	0, 'no duplicate among all ids');
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
		FROM ids) x
	WHERE id <= prev}), 0, 'each session\'s ids strictly increase');

# The sessions really ran at the same time: their id ranges overlap.
is( $node->safe_psql(
		'postgres', q{
	WITH r AS (SELECT session, min(id) AS lo, max(id) AS hi
			   FROM ids GROUP BY session)
	SELECT count(*) > 0 FROM r a JOIN r b
		ON a.session < b.session AND a.lo < b.hi AND b.lo < a.hi}),
	't', 'sessions overlapped in time');

$node->stop;
done_testing();
