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
# than a few times the first; the same for the protocol in brief's
# claim_4 over as many holders of its own table.  The coordination
# database only: Redis has no planner, and its functions read only the ids
# that have a holder or a fence (095_fence_beyond_layout.pl).
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
# id, past the 15,000), in ms, under the caller's settings given: $claim
# the CALL of new holder i, into o (of type $type)
sub shortest_claim
{
	my ($name, $settings, $type, $claim) = @_;
	my ($ret, $out, $err) = $db->node->psql('coord', qq{
$settings
DO \$do\$
DECLARE
	t timestamptz;
	o $type;
	shortest float8;
BEGIN
	FOR i IN 1 .. 3 LOOP
		t := clock_timestamp();
		$claim;
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

# Claims under the caller's settings as they are and with the planner's
# paths turned off: the second no slower than a few times the first.
# $claim is the CALL of new holder i named "<settings> i", into o (of
# type $type).
sub claims_bounded
{
	my ($what, $type, $claim) = @_;
	my $plain = shortest_claim('plain', '', $type, $claim =~ s/SETTINGS/plain/gr);
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
}, $type, $claim =~ s/SETTINGS/off/gr);
	note("$what over $holders holders: $plain ms with the caller's settings as they are, $off ms with the planner's paths turned off");
	cmp_ok($off, '<=', 4 * $plain + 1000,
		"$what: a caller that turns the planner's paths off makes its claim no slower than a few times one that does not");
	return;
}

claims_bounded('a claim', 'snowid_coordinator.outcome', qq{
		CALL snowid_coordinator.claim($dc, 'SETTINGS ' || i, md5('SETTINGS' || i) || md5(i::text),
			-1, 16777215, -1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
			@{[ join ', ', map { "$_ => o.$_" }
				qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter) ]})});

# The protocol in brief's claim (claim_4) over as many holders of its own
# table, written by hand with the datacenter's record of this run (its
# quiet period over) and the new names' keys; each call sends a holder
# proof made here, as a server makes it (doc/security.md)
$db->sql(undef, qq{
	INSERT INTO snowid_coordinator.ranges (datacenter, worker_id, fence_ms, holder, for_good)
	SELECT $dc, g, 0, 'made-up ' || g, true FROM generate_series(0, $holders) g;
	INSERT INTO snowid_coordinator.range_records (datacenter, run, quiet_until_ms)
	VALUES ($dc, snowid_coordinator.server_now(), 0);
	INSERT INTO snowid_coordinator.holders (datacenter, identity, secret_sha256)
	SELECT $dc, 'brief ' || s || ' ' || i, sha256(convert_to(md5('brief ' || s || i), 'UTF8'))
	FROM unnest(ARRAY['plain', 'off']) s, generate_series(1, 3) i;
	ANALYZE snowid_coordinator.ranges});
claims_bounded('a claim_4', 'snowid_coordinator.range_outcome', qq{
		DECLARE
			n bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
			made_for text := concat_ws(E'\\n', 'claim_4', $dc, 'brief SETTINGS ' || i, 16777215, 1000, 'true', -1);
			key text := encode(sha256(convert_to(md5('brief SETTINGS' || i), 'UTF8')), 'hex');
		BEGIN
			CALL snowid_coordinator.claim_4($dc, 'brief SETTINGS ' || i,
				n || ':' || encode(sha256(convert_to(concat_ws(E'\\n', key, n, made_for), 'UTF8')), 'hex'),
				16777215, 1000, true, -1, outcome => o.outcome, worker_id => o.worker_id,
				end_ms => o.end_ms, now_ms => o.now_ms, holder => o.holder);
		END});

done_testing();
