# A pg_createsubscriber copy of a database of the SQL edition in claim
# mode (issue 56; test 118 is the copy of a database with a worker id
# set): the source claimed its worker id w from a coordination database;
# pg_createsubscriber (PostgreSQL 17 and later) turns a physical standby
# of it into a logical subscriber that writes too, with its source's rows,
# sequences, holder and claim, and a new system identifier.
#
# The copy must not issue under w.  Its first calls, its clock 1 to 99 ms
# before the position it copied (where the common path would take one
# under its source's worker id, test 118), and a column default, issue
# nothing with w: each makes the copy a holder of its own (its holder was
# made on another server) that claims another worker id, or says the copy
# has no worker id (55000, naming pg_createsubscriber among the copies it
# may be, and snowid_claim() as the way out).  The owner's snowid_claim()
# (as its schedule runs it) then holds a worker id other than w, for the
# copy's own holder.  Then the source and the copy issue at once, three
# times (or until an id repeats): no id of the copy carries w, no id of
# either repeats, and no millisecond of one worker id is taken by both.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use SnowidTest;
use Test::More;
use Time::HiRes ();

my $version = `pg_config --version`;
plan skip_all => 'pg_createsubscriber comes with PostgreSQL 17'
  unless $version =~ /PostgreSQL (\d+)/ && $1 >= 17;

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my ($source, $app, $clerk) = SnowidSqlEdition::claim_server('sql_source',
	$conninfo, $password, undef, allows_streaming => 'logical');
my $w = SnowidSqlEdition::claim_when_quiet_ends($clerk);
like($w, qr/^\d+$/, "the source claims worker id $w");
my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), who text);
	GRANT SELECT, INSERT ON orders TO clerk});
is($rc, 0, 'the source has a table of orders') or diag($err);
($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk,
	q{INSERT INTO orders (who) SELECT 'source' FROM generate_series(1, 1000)});
is($rc, 0, 'and issues ids into it') or diag($err);
my $source_holder = $source->safe_psql('appdb', 'SELECT name FROM snowid_holder');

my $ids = SnowidTest::Ledger->new;

# The ids of appdb's orders of one kind, on a server
sub orders_of
{
	my ($node, $who) = @_;

	return split /\n/,
	  $node->safe_psql('appdb', "SELECT id FROM orders WHERE who = '$who'");
}

# The worker ids of a server's orders of one kind, as "w:count,..."
sub workers_of
{
	my ($node, $who) = @_;

	return $node->safe_psql('appdb', qq{
		SELECT string_agg(w || ':' || n, ',' ORDER BY w) FROM (
			SELECT (snowid_decode(id)).worker_id w, count(*) n
			FROM orders WHERE who = '$who' GROUP BY 1) x});
}
$ids->add(orders_of($source, 'source'));

# A standby of the source, turned into a subscriber of appdb
$source->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('sql_copy');
$copy->init_from_backup($source, 'copy', has_streaming => 1);
$copy->start;
($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk,
	q{INSERT INTO orders (who) SELECT 'during' FROM generate_series(1, 100)});
is($rc, 0, 'the source issues ids while its standby replays') or diag($err);
$source->wait_for_catchup($copy);
$copy->stop;
command_ok(
	[
		'pg_createsubscriber',
		'--pgdata' => $copy->data_dir,
		'--publisher-server' => $source->connstr('appdb'),
		# -s: --socketdir since 17beta3, --socket-directory before
		'-s' => $copy->host,
		'--subscriber-port' => $copy->port,
		'--database' => 'appdb',
		'--publication' => 'copy_pub',
		'--subscription' => 'copy_sub',
		'--recovery-timeout' => $PostgreSQL::Test::Utils::timeout_default
	],
	'pg_createsubscriber turns a standby of the source into a subscriber');
my $clock = SnowidTest::Clock->new;
$clock->start_node($copy);
isnt($copy->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$source->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	'the copy has another system identifier');
is($copy->safe_psql('appdb', 'SELECT name FROM snowid_holder'), $source_holder,
	'and its source\'s holder, as copied');
$ids->add(orders_of($source, 'during'));

# lag_clock MS: stops the copy's clock MS milliseconds before the position
# its sequence holds (its source's, as copied)
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

# The copy's first calls, its clock just before the position, and a
# column default: none issues with w; each claims another worker id for a
# holder of the copy's own, or says the copy has no worker id (55000,
# naming pg_createsubscriber among the copies it may be, and the claim)
my $copy_app = $copy->connstr('appdb') . ' user=app';
my $copy_clerk = $copy->connstr('appdb') . ' user=clerk';
my %said;

# what a first call of the copy did: its worker ids, or its error
sub first_call
{
	my ($what, $sql) = @_;
	my ($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk, $sql);

	if ($rc == 0)
	{
		ok(!grep({ $_ eq $w } split /\n/, $out),
			"$what: the copy issues no id with worker id $w") or diag("it issued $out");
		$said{'claimed another worker id'}++;
	}
	else
	{
		like($err, qr/ERROR:  55000: snowid has no worker id on this server\nDETAIL:  .* a pg_createsubscriber copy.*\nHINT:  .*claiming, SELECT snowid_claim\(\)/,
			"$what: the copy says it has no worker id, and how to get one");
		$said{'no worker id (55000)'}++;
	}
	return;
}
for my $ms (2, 1, 9, 50, 99)
{
	lag_clock($ms);
	first_call("its clock $ms ms before the position",
		'SELECT (snowid_decode(snowid_next())).worker_id FROM generate_series(1, 3)');
}
first_call('a column default', q{
	INSERT INTO orders (who) SELECT 'copy first' FROM generate_series(1, 1000);
	SELECT DISTINCT (snowid_decode(id)).worker_id FROM orders WHERE who = 'copy first'});
$clock->set('+0');
note('the copy\'s first calls: ' . join(', ', map { "$_ $said{$_} times" } sort keys %said));

# The owner's snowid_claim() (as its schedule runs it): the copy becomes a
# holder of its own, and claims a worker id of its own
my $w2 = '';
for (1 .. 180)
{
	($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_app, 'SELECT worker_id FROM snowid_claim()');
	if ($rc == 0) { $w2 = $out; last; }
	last unless $err =~ /55006: /;
	Time::HiRes::sleep(0.5);
}
like($w2, qr/^\d+$/, "the copy's owner claims worker id $w2 there") or diag($err);
isnt($w2, $w, 'not its source\'s');
my $copy_holder = $copy->safe_psql('appdb', 'SELECT name FROM snowid_holder');
isnt($copy_holder, $source_holder, 'as a holder of its own');
my $owners = $coord->owners(4);
is($owners->{$w}, "dc=4 $source_holder", "the coordination database has worker id $w held by the source");
is($owners->{$w2}, "dc=4 $copy_holder", "and $w2 by the copy");
($rc, $out, $err) = SnowidSqlEdition::psql_as($copy_clerk,
	q{INSERT INTO orders (who) SELECT 'copy' FROM generate_series(1, 1000)});
is($rc, 0, 'the copy issues ids into its orders') or diag($err);
is(workers_of($copy, 'copy'), "$w2:1000", "all with worker id $w2");

# The source and the copy issue at once, three times (or until an id comes
# twice)
my $took = SnowidSqlEdition::bursts_at_once({ source => $clerk, copy => $copy_clerk }, 1, 3);
my $copy_w = $took->{worker}{copy}{$w} // 0;
$ids->add(@{ $took->{ids} });
note(sprintf('bursts: the source issued %d ids, the copy %d; %d ms of one worker id by both',
	$took->{n}{source} // 0, $took->{n}{copy} // 0, $took->{shared}));
ok(($took->{n}{source} // 0) > 0 && ($took->{n}{copy} // 0) > 0, 'both issued ids at once');
is($copy_w, 0, "the copy issues no id with worker id $w while the source does");
is($took->{shared}, 0, 'no millisecond of one worker id is taken by both');

# The subscription brings the source's later rows, without a conflict
($rc, $out, $err) = SnowidSqlEdition::psql_as($clerk,
	q{INSERT INTO orders (who) SELECT 'after' FROM generate_series(1, 1000)});
is($rc, 0, 'the source issues ids after the copy') or diag($err);
$source->wait_for_catchup('copy_sub');
is($copy->safe_psql('appdb', q{SELECT count(*) FROM orders WHERE who = 'after'}),
	'1000', 'the subscription brings the source\'s rows');
is( $copy->safe_psql('appdb', q{
		SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats}),
	'0', 'without a key conflict');
is(workers_of($source, 'after'), "$w:1000", "the source's ids keep worker id $w");
$ids->add(orders_of($source, 'after'));
$ids->add(orders_of($copy, 'copy'));
$ids->add(orders_of($copy, 'copy first'));
$ids->no_duplicates('no id repeats between the source and the copy');

$copy->stop;
$source->stop;
done_testing();
