# pg_partman in its integer mode on a snowid key: the recipe of
# doc/time-ranges.md.
#
# The server runs with snowid.epoch at midnight UTC, so that partitions
# snowid_span('1 day') wide, which pg_partman aligns to multiples of the
# interval (to the epoch), start at midnight of calendar days.  Under
# SnowidTest::Clock the clock moves on a day at a time; rows go in and
# run_maintenance() premakes the partitions ahead of the newest id; every
# row lies in the partition of its day.  Then a retention of two days'
# worth of ids drops the partitions that end more than two days of ids
# before the newest row, and nothing newer.
#
# pg_partman 4 (Debian 12's postgresql-15-partman) and 5 (built by
# test/tools/pgbuild partman for the other versions) differ in create_parent()'s
# p_type: 'native' in 4, 'range' in 5.  Without pg_partman for the
# server's version the test is skipped, saying so.
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

my $clock = SnowidTest::Clock->new;
my $node = SnowidTest::new_node(
	'partman',
	{
		'snowid.worker_id' => 1,
		'snowid.epoch' => '2026-01-01 00:00:00+00',
		'timezone' => 'UTC'
	});
$clock->start_node($node);

my $partman = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'pg_partman'");
if ($partman eq '')
{
	my $version = $node->safe_psql('postgres', 'SHOW server_version_num');
	$node->stop;
	my $major = int($version / 10000);
	SnowidTest::missing_tool("needs pg_partman for PostgreSQL $major"
		  . " (Debian package postgresql-$major-partman; test/tools/pgbuild --partman"
		  . ' builds it into its builds)');
}
my $type = $partman =~ /^4\./ ? 'native' : 'range';
note "pg_partman $partman, p_type => '$type'";

$node->safe_psql(
	'postgres', qq{
	CREATE EXTENSION snowid;
	CREATE SCHEMA partman;
	CREATE EXTENSION pg_partman SCHEMA partman;
	CREATE TABLE events (
		id bigint NOT NULL DEFAULT snowid_next(),
		at timestamptz NOT NULL DEFAULT clock_timestamp(),
		PRIMARY KEY (id)
	) PARTITION BY RANGE (id);
	SELECT partman.create_parent(
		p_parent_table => 'public.events',
		p_control => 'id',
		p_type => '$type',
		p_interval => snowid_span('1 day')::text,
		p_premake => 3,
		p_start_partition => snowid_from_time(date_trunc('day', now()))::text);});

# The partitions of events with their bounds, and rows in the wrong one
my $partitions = q{
	SELECT c.relname,
		(regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''?(\d+)''?\)'))[1]::bigint AS lo,
		(regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''?(\d+)''?\)'))[1]::bigint AS hi
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'events'::regclass};

is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) >= 4,
		bool_and(hi - lo = snowid_span('1 day')),
		bool_and(lo % snowid_span('1 day') = 0),
		bool_and(snowid_time(lo) = date_trunc('day', snowid_time(lo))),
		bool_or(lo = snowid_from_time(date_trunc('day', now())))
	FROM ($partitions) p WHERE lo IS NOT NULL}),
	't|t|t|t|t',
	'create_parent(): partitions a day of ids wide, from midnight UTC of today on');

# A day later each time: rows, then maintenance.
my $days = 6;
foreach my $day (0 .. $days - 1)
{
	$clock->set(sprintf('%+d', $day * 86400));
	$node->safe_psql(
		'postgres', q{
		INSERT INTO events (at) SELECT clock_timestamp() FROM generate_series(1, 100);
		SELECT partman.run_maintenance('public.events');});
	is( $node->safe_psql(
			'postgres', qq{
		SELECT count(*) FROM ($partitions) p
		WHERE lo > (SELECT max(id) FROM events)}),
		'3', "day $day: run_maintenance() keeps 3 partitions premade ahead of the newest id");
}

is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*),
		count(*) FILTER (WHERE p.relname IS NULL OR p.lo IS NULL
						 OR snowid_time(p.lo) <> date_trunc('day', snowid_time(e.id))),
		count(DISTINCT e.tableoid)
	FROM events e LEFT JOIN ($partitions) p ON p.relname = e.tableoid::regclass::text}),
	"@{[ 100 * $days ]}|0|$days",
	"every row lies in the partition of its day, none in the default");

# Retention: keep two days of ids below the newest.
$node->safe_psql(
	'postgres', q{
	UPDATE partman.part_config
	SET retention = snowid_span('2 days')::text, retention_keep_table = false
	WHERE parent_table = 'public.events';
	SELECT partman.run_maintenance('public.events');});
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FILTER (WHERE hi <= (SELECT max(id) FROM events) - snowid_span('2 days')),
		(SELECT count(DISTINCT date_trunc('day', snowid_time(id))) FROM events),
		(SELECT min(snowid_time(id)) >= date_trunc('day', now()) - interval '2 days' FROM events)
	FROM ($partitions) p WHERE lo IS NOT NULL}),
	'0|3|t',
	'retention dropped the partitions wholly older than two days of ids, kept the rest');

$node->stop;
done_testing();
