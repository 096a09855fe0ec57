# Issue 56's attack (item 2: the worker id is never copied into another
# database): CREATE DATABASE copydb TEMPLATE appdb copies appdb's files,
# its relfilenodes included, into a database of the same server.  The
# worker id's stamp (worker_server) names another database there, and a
# writer refuses it; but the common path compares only the filenode of
# snowid_position with snowid_sql_fixed(), and a template copy keeps both.
# Wherever appdb's position lay ahead of the clock when it was copied (a
# batch runs it ahead within max_drift_ms, as does a clock stepped back),
# the copy issues appdb's positions under appdb's worker id as soon as its
# clock comes within 100 ms of them, and appdb issues the same positions.
#
# Expected: the copy issues no id until it is given a worker id of its own
# (managed.md: "Anywhere else the worker id does not hold, and the first
# call says so"), so no id repeats.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('att_template');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN CREATEDB;
	CREATE DATABASE appdb OWNER app;
});
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4,
		max_drift_ms = 10000, max_wait_ms = 2000, worker_id = 5;
	CREATE TABLE ids (id bigint, who text);
	SELECT count(snowid_next()) FROM generate_series(1, 10)});
is($out, '10', 'appdb issues ids (51/0/6/4, max_drift_ms 10000, worker id 5)') or diag($err);

# appdb, busy: a batch runs its position ~3 s ahead of the clock
($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	INSERT INTO ids SELECT snowid_next_batch(48000), 'appdb before the copy';
	SELECT round(extract(epoch FROM snowid_time(max(id)) - clock_timestamp()), 1) > 0.3 FROM ids});
is($out, 't', 'appdb\'s position lies ahead of its clock') or diag($err);

# an operator copies appdb (for a test environment, say)
$node->safe_psql('postgres', 'CREATE DATABASE copydb TEMPLATE appdb OWNER app');
is( $node->safe_psql(
		'copydb', q{
	SELECT worker_server = snowid_sql_private.snowid_sql_here() FROM snowid_config}),
	'f', 'the copy\'s stamp names another database');

# appdb goes on at once, as its application would
$node->safe_psql('appdb', q{INSERT INTO ids SELECT snowid_next_batch(48000), 'appdb after'});

# the copy's application calls snowid_next() for 6 s, keeping what it gets
($rc, $out, $err) = SnowidSqlEdition::psql_as($node->connstr('copydb') . ' user=app', q{
	DO $$
	DECLARE
		until timestamptz := clock_timestamp() + interval '6 s';
		got bigint;
	BEGIN
		WHILE clock_timestamp() < until LOOP
			BEGIN
				got := snowid_next();
				INSERT INTO ids VALUES (got, 'copy');
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				NULL;
			END;
			PERFORM pg_sleep(0.001);
		END LOOP;
	END $$;
	SELECT count(*) FROM ids WHERE who = 'copy'});
my $copy_ids = $node->safe_psql('copydb', q{SELECT string_agg(id::text, ',') FROM ids WHERE who = 'copy'});
diag("ids the copy issued under appdb's worker id: $out");
is($out, '0', 'the copy issues no id under appdb\'s worker id') or diag($err);

if ($copy_ids ne '')
{
	my $repeated = $node->safe_psql('appdb',
		"SELECT count(*) FROM ids WHERE who = 'appdb after' AND id = ANY ('{$copy_ids}'::bigint[])");
	diag("of which appdb issued too: $repeated");
	is($repeated, '0', 'no id of the copy is one appdb issued');
}

$node->stop;
done_testing();
