# Time ranges under every layout and epoch, and partitions by month across
# a month's boundary.
#
# For several layouts and epochs (the default, a short timestamp with a
# wide node field, a long one, epochs at midnight and at noon):
# snowid_from_time(t) + n * snowid_span(d) = snowid_from_time(t + n * d),
# snowid_time() inverts snowid_from_time(), the longest span the layout
# holds is accepted and a millisecond more refused with a detail naming
# the layout.  Then a server under SnowidTest::Clock is moved to just before the
# first of next month and takes ids through midnight into a table
# partitioned by month (the recipe of doc/time-ranges.md): every row lies
# in the partition of the month its id decodes to, among them rows made in
# the last millisecond of the old month and the first of the new one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes ();

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_clock();

# -- the span property under each layout and epoch -------------------------

# datacenter, worker, sequence bits, epoch
my @layouts = (
	[ 5, 5, 12, '2010-11-04 01:42:54.657+00' ],
	[ 3, 9, 8, '2026-01-01 00:00:00+00' ],
	[ 10, 10, 4, '2020-02-29 12:00:00+00' ],
	[ 1, 1, 1, '1970-01-01 00:00:00+00' ],
	[ 0, 0, 0, '2000-01-01 00:00:00+00' ]);

# No preloading: the pure functions follow the configured layout anyway.
my $pure = PostgreSQL::Test::Cluster->new('layouts');
$pure->init;
$pure->append_conf('postgresql.conf', "timezone = 'UTC'\n");
$pure->start;
$pure->safe_psql('postgres', 'CREATE EXTENSION snowid');

foreach my $l (@layouts)
{
	my ($dc, $w, $seq, $epoch) = @$l;
	my $name = "$dc/$w/$seq, epoch $epoch";
	my $bits = $dc + $w + $seq;

	# the first and last millisecond the layout holds (days and ms apart,
	# so that no interval arithmetic loses a millisecond)
	my $lim = qq{
		SELECT first, first + (span_ms / 86400000) * interval '1 day'
			+ (span_ms % 86400000) * interval '1 ms' AS last
		FROM (SELECT timestamptz '$epoch' AS first,
				least(9223372036854775807 >> $bits,
					  253402300799999
					  - (extract(epoch FROM timestamptz '$epoch') * 1000)::bigint) AS span_ms) s};

	$pure->append_conf(
		'postgresql.conf', qq{
snowid.datacenter_bits = $dc
snowid.worker_bits = $w
snowid.sequence_bits = $seq
snowid.epoch = '$epoch'
});
	$pure->restart;

	# times from the epoch to the last millisecond, spans from 1 ms to a
	# year of days, steps that stay within the layout's range
	is( $pure->safe_psql(
			'postgres', qq{
		WITH lim AS ($lim),
		cases AS (
			SELECT t, d, n
			FROM lim,
				LATERAL unnest(ARRAY[first, first + interval '1 ms',
									 first + interval '1234 days 05:06:07.089',
									 '2026-12-31 23:59:59.999+00', '2027-01-01 00:00:00+00',
									 last - interval '400 days']) t,
				unnest(ARRAY['0', '1 ms', '7 ms', '1 second', '1 hour',
							 '1 day', '1 day 00:00:00.001', '30 days',
							 '365 days']::interval[]) d,
				generate_series(0, 9) n
			WHERE t >= first AND t + n * d <= last)
		SELECT count(*) > 400,
			count(*) FILTER (WHERE snowid_from_time(t) + n * snowid_span(d)
							 <> snowid_from_time(t + n * d)),
			count(*) FILTER (WHERE snowid_time(snowid_from_time(t + n * d)) <> t + n * d),
			count(*) FILTER (WHERE snowid_span(d) <> (extract(epoch FROM d) * 1000)::bigint << $bits)
		FROM cases}),
		't|0|0|0',
		"$name: from_time(t) + n * span(d) = from_time(t + n * d); time() inverts it");

	# the longest span the layout holds is last - first, and no more
	my ($ret, $out, $err) = $pure->psql(
		'postgres', qq{
		SELECT snowid_from_time(last) = snowid_from_time(first) + snowid_span(last - first)
		FROM ($lim) lim;
		SELECT snowid_span(last - first + interval '1 ms')
		FROM ($lim) lim});
	is($out, 't', "$name: the span of the whole range is accepted");
	like(
		$err,
		qr/out of range for snowid.*DETAIL:  A span of ids lasts from 0 to .* under the layout \d+\/$dc\/$w\/$seq\./s,
		"$name: a millisecond more is refused, naming the layout");
}
$pure->stop;

# -- a month's boundary, with the clock moved to it ------------------------

my $clock = SnowidTest::Clock->new;
my $node = SnowidTest::new_node('boundary',
	{ 'snowid.worker_id' => 1, 'timezone' => 'UTC' });
$clock->start_node($node);
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE events (id bigint NOT NULL DEFAULT snowid_next(), at timestamptz)
		PARTITION BY RANGE (id);
	-- a partition for each month sweep_midnight() below may reach
	DO $$
	DECLARE
		m timestamptz;
	BEGIN
		FOR m IN SELECT generate_series(date_trunc('month', now()),
										date_trunc('month', now()) + interval '23 months',
										interval '1 month')
		LOOP
			EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
						   'events_' || to_char(m, 'YYYY_MM'),
						   snowid_from_time(m), snowid_from_time(m + interval '1 month'));
		END LOOP;
	END
	$$;
	CREATE TABLE events_default PARTITION OF events DEFAULT;
	ALTER TABLE events ADD PRIMARY KEY (id);});

# Moves the clock to 3 s before the first of next month (time for psql to
# start the loop before midnight, also on a loaded machine) and inserts
# rows one after another through midnight, until 50 ms past it; returns
# midnight in Unix seconds and whether rows were made in both the last
# millisecond before it and the first one of it.  On a loaded machine a
# backend may sleep through a millisecond (with every core busy, about
# every other sweep): then the next month is tried.
sub sweep_midnight
{
	my $boundary = $node->safe_psql('postgres',
		"SELECT extract(epoch FROM date_trunc('month', now()) + interval '1 month')");

	$clock->set(sprintf('%+.6f', $boundary - 3.0 - Time::HiRes::time()));
	$node->safe_psql(
		'postgres', qq{
		DO \$\$
		BEGIN
			WHILE clock_timestamp() < to_timestamp($boundary) + interval '50 ms' LOOP
				INSERT INTO events (at) VALUES (clock_timestamp());
			END LOOP;
		END
		\$\$});
	return ($boundary, $node->safe_psql(
			'postgres', qq{
		SELECT count(*) FILTER (WHERE snowid_time(id) = to_timestamp($boundary) - interval '1 ms') > 0
			AND count(*) FILTER (WHERE snowid_time(id) = to_timestamp($boundary)) > 0
		FROM events}) eq 't');
}

my ($boundary, $both, $tries) = (0, 0, 0);
while (!$both && $tries++ < 20)    # the partitions reach 23 months ahead
{
	($boundary, $both) = sweep_midnight();
}
note "midnight swept $tries time(s)";
ok($both, 'rows made in the last millisecond of a month and the first of the next');

like( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) > 0,
		count(*) FILTER (WHERE tableoid::regclass::text <>
						 'events_' || to_char(snowid_time(id), 'YYYY_MM')),
		count(*) FILTER (WHERE snowid_time(id) IN (to_timestamp($boundary) - interval '1 ms',
												  to_timestamp($boundary))
						 AND tableoid::regclass::text <>
						 'events_' || to_char(snowid_time(id), 'YYYY_MM')),
		count(DISTINCT tableoid) >= 2
	FROM events}),
	qr/^t\|0\|0\|t$/,
	'ids made through midnight all lie in the partition of their month');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FILTER (WHERE snowid_time(id) > at + interval '1 second'
							OR snowid_time(id) < at - interval '1 second')
	FROM events}),
	'0', 'each id decodes to the faked time it was made at');

$node->stop;
done_testing();
