# A pg_createsubscriber copy of a database of the SQL edition (issue 56;
# as copies-and-failover/pg_createsubscriber.pl for the C edition): pg_createsubscriber
# (PostgreSQL 17 and later) turns a physical standby into a logical
# subscriber that writes too, with its source's rows, sequences and
# configuration, and a new system identifier.
#
# The copy comes up without a worker id: its first call says so (55000,
# naming pg_createsubscriber among the copies it may be), and so do the
# calls after it and a column default, whatever its clock.  The copy keeps
# its source's sequences and filenodes: a copy whose clock lags its
# source's, so that the position it holds lies ahead of its clock within
# the 100 ms the common path accepts (the writers' 9 ms, more where its
# clock lags), took positions under its source's worker id there until
# the common path checked that a writer had compared the system identifier
# since the server started (snowid_sql_started, issue 56): its
# clock (SnowidTest::Clock) stands 1 to 99 ms before the position at each
# first call.  The publication that
# pg_createsubscriber makes (FOR ALL TABLES) carries the source's changes
# of snowid_config, which change nothing on the copy.  Given a worker id of
# its own, the copy issues ids beside its source, and no id of either
# repeats: the source's taken before and after the copy, and the copy's.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;

my $source = PostgreSQL::Test::Cluster->new('sql_source');
$source->init(allows_streaming => 'logical');
$source->start;
if ($source->safe_psql('postgres', 'SHOW server_version_num') < 170000)
{
	$source->stop;
	plan skip_all => 'pg_createsubscriber comes with PostgreSQL 17';
}
$source->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE ROLE clerk LOGIN;
	CREATE DATABASE appdb OWNER app;
});
my $app = $source->connstr('appdb') . ' user=app';
my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 4;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	GRANT SELECT, INSERT ON orders TO clerk;
	INSERT INTO orders (who) SELECT 'source' FROM generate_series(1, 1000)});
is($rc, 0, 'the source issues ids with worker id 4') or diag($err);

my $ids = SnowidTest::Ledger->new;

# The ids of appdb's orders of one kind, on a server
sub orders_of
{
	my ($node, $who) = @_;

	return split /\n/,
	  $node->safe_psql('appdb', "SELECT id FROM orders WHERE who = '$who'");
}
$ids->add(orders_of($source, 'source'));

# A standby of the source, turned into a subscriber of appdb
$source->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('sql_copy');
$copy->init_from_backup($source, 'copy', has_streaming => 1);
$copy->start;
$source->safe_psql('appdb',
	q{INSERT INTO orders (who) SELECT 'during' FROM generate_series(1, 100)});
$source->wait_for_catchup($copy);
$copy->stop;
SnowidTest::create_subscriber($copy, $source, 'appdb', 'copy_pub', 'copy_sub',
	'pg_createsubscriber turns a standby of the source into a subscriber');
my $clock = SnowidTest::Clock->new;
$clock->start_node($copy);
isnt($copy->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$source->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	'the copy has another system identifier');
is($copy->safe_psql('appdb', 'SELECT worker_id FROM snowid_config'),
	'4', 'and its source\'s row of snowid_config');
$ids->add(orders_of($source, 'during'));

# lag_clock MS: stops the copy's clock MS milliseconds before the position
# its sequence holds (its source's, as copied), in the millisecond the
# common path reads: a clock that lags its source's by the conversion's
# time and a little more
sub lag_clock
{
	my ($ms) = @_;
	my $at = $copy->safe_psql(
		'appdb', qq{
		SELECT (s.last_value >> f.sequence_bits) + f.epoch_ms - $ms
		FROM snowid_sql_private.snowid_position s, snowid_sql_private.snowid_sql_fixed() f});
	$clock->set(sprintf('@%d.%03d', int($at / 1000), $at % 1000));
	return;
}

my $copy_clerk = $copy->connstr('appdb') . ' user=clerk';
lag_clock(2);
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk, 'SELECT snowid_next()');
like($err, qr/ERROR:  55000: snowid has no worker id on this server\n/,
	'the copy\'s first call says it has no worker id, its clock 2 ms before its source\'s position')
  or diag("it issued $out");
like($err, qr/The worker id 4 of snowid_config was set on another server.* a pg_createsubscriber copy/,
	'naming its source\'s worker id, and pg_createsubscriber among the copies it may be');
for my $ms (1, 9, 50, 99)
{
	lag_clock($ms);
	($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk,
		'SELECT snowid_next() FROM generate_series(1, 3)');
	like($err, qr/55000: snowid has no worker id on this server/,
		"so does a first call with the clock $ms ms before the position")
	  or diag("it issued $out");
}
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk,
	q{INSERT INTO orders (who) SELECT 'copy' FROM generate_series(1, 1000)});
like($err, qr/55000: snowid has no worker id on this server/,
	'as a column default too');
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk,
	'SELECT count(snowid_next()) FROM generate_series(1, 5000)');
like($err, qr/55000: snowid has no worker id on this server/,
	'nor in the calls that follow');
$clock->set('+0');

# The publication carries the source's changes of snowid_config: they
# change nothing on the copy
$source->safe_psql('appdb', q{
	UPDATE snowid_config SET max_drift_ms = 5000;
	UPDATE snowid_config SET worker_id = 4;
	INSERT INTO orders (who) SELECT 'after' FROM generate_series(1, 1000)});
$source->wait_for_catchup('copy_sub');
is($copy->safe_psql('appdb', q{SELECT count(*) FROM orders WHERE who = 'after'}),
	'1000', 'the subscription brings the source\'s rows');
is($copy->safe_psql('appdb', 'SELECT max_drift_ms FROM snowid_config'),
	'1000', 'but not its changes of snowid_config');
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk, 'SELECT snowid_next()');
like($err, qr/55000: snowid has no worker id on this server/,
	'the source\'s worker id set again there does not hold on the copy');
$ids->add(orders_of($source, 'after'));

# A worker id of its own: the copy issues ids beside its source
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy->connstr('appdb') . ' user=app',
	'UPDATE snowid_config SET worker_id = 5');
is($rc, 0, 'the owner gives the copy a worker id of its own') or diag($err);
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk,
	q{INSERT INTO orders (who) SELECT 'copy' FROM generate_series(1, 1000)});
is($rc, 0, 'the copy issues ids') or diag($err);
$source->safe_psql('appdb',
	q{INSERT INTO orders (who) SELECT 'last' FROM generate_series(1, 1000)});
$source->wait_for_catchup('copy_sub');
is( $copy->safe_psql('appdb', q{
		SELECT count(*) FROM orders, snowid_decode(id) d
		WHERE who = 'copy' AND d.worker_id = 5}),
	'1000', 'with worker id 5');
is( $copy->safe_psql('appdb', q{
		SELECT count(*) FROM orders WHERE who = 'last'}),
	'1000', 'and the source\'s later rows arrive');
is( $copy->safe_psql('appdb', q{
		SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats}),
	'0', 'without a key conflict');
$ids->add(orders_of($copy, 'copy'));
$ids->add(orders_of($source, 'last'));
is($ids->count, 4100, 'every id of the source and the copy collected');
$ids->no_duplicates('no id repeats between the source and the copy');

$copy->stop;
$source->stop;
done_testing();
