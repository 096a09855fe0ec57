# No call of the fleet's role holds a datacenter's lock longer for its own
# settings (issue 67, item 6): a caller that turned the planner's index,
# bitmap, hash, merge and materialize paths off (and its costs up) made
# pick() run 4.5 to 6.2 s over 15,000 holders under the datacenter's lock,
# where a lease holder's renewal waited and its lease ran out.  Every
# function a role may be granted now runs under the planner's own
# settings (its SET clauses), so a claim costs the same whatever its
# caller set; and the holders of a datacenter are bounded by its layout
# (coordinator/store_refuses_beyond_layout.pl).
#
# Here a datacenter of 24 worker bits with 15,000 holders (a large fleet,
# or what a store of an earlier release let a member make), and new
# claims timed inside the coordination server, with the caller's settings
# as they are and with every path turned off: the second may take no more
# than a few times the first.  The coordination database only: Redis has
# no planner, and its functions read only the ids that have a holder or a
# fence (095_fence_beyond_layout.pl).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use Test::More;

my $db = SnowidCoordDb->new('coord');
$db->grant;
my $dc = 20;
my $holders = 15000;

# The datacenter marked new by an administrator; its first server, of 24
# worker bits, then its holders
$db->sql('coord_admin', "SELECT snowid_coordinator.new_datacenter($dc)");
my $o = $db->call("claim($dc, 'first', -1, 16777215, -1, @{[ $db->now_ms ]})");
is($o->{outcome}, 'ok', 'a server of 24 worker bits claims');
$db->sql(undef, qq{
	INSERT INTO snowid_coordinator.worker_ids (datacenter, worker_id, holder)
	SELECT $dc, g, 'made-up ' || g FROM generate_series(1, $holders) g
	ON CONFLICT DO NOTHING;
	ANALYZE snowid_coordinator.worker_ids});

# The shortest of three claims of new holders (each takes the lowest free
# id, past the 15,000), in ms, under the caller's settings given
sub shortest_claim
{
	my ($name, $settings) = @_;
	my $into = join(', ',
		map { "$_ => o.$_" }
		  qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter));
	my ($ret, $out, $err) = $db->node->psql('coord', qq{
$settings
DO \$do\$
DECLARE
	t timestamptz;
	o snowid_coordinator.outcome;
	shortest float8;
BEGIN
	FOR i IN 1 .. 3 LOOP
		t := clock_timestamp();
		CALL snowid_coordinator.claim($dc, '$name ' || i, md5('$name' || i) || md5(i::text),
			-1, 16777215, -1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
			$into);
		shortest := least(shortest, extract(epoch FROM clock_timestamp() - t) * 1000);
		RAISE NOTICE 'claim % %', o.outcome, o.worker_id;
	END LOOP;
	RAISE NOTICE 'shortest %', round(shortest::numeric, 1);
END
\$do\$},
		extra_params => [ '-U', 'coord_fleet' ]);
	my @claims = $err =~ /NOTICE:  claim (\w+ \d+)/g;
	my ($ms) = $err =~ /NOTICE:  shortest ([\d.]+)/
	  or die "claims under $name: $ret $out $err";
	is(scalar(grep { /^ok \d+$/ && (split / /)[1] > $holders } @claims), 3,
		"three claims under $name settings, each granted an id past the holders");
	return $ms;
}

my $plain = shortest_claim('plain', '');
my $off = shortest_claim('off', q{
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SET random_page_cost = 1000000;
SET cpu_index_tuple_cost = 1000;
SET max_parallel_workers_per_gather = 4;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
});
note("a claim over $holders holders: $plain ms with the caller's settings as they are, $off ms with the planner's paths turned off");
cmp_ok($off, '<=', 4 * $plain + 1000,
	'a caller that turns the planner\'s paths off makes its claim no slower than a few times one that does not');

done_testing();
