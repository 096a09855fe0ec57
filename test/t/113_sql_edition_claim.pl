# The SQL edition claims its worker id from a coordination database through
# dblink (doc/managed.md, "A worker id from a coordination database"), in
# servers with no snowid library, installed by a database owner who is no
# superuser:
#
# - bad configuration (no dblink, a conninfo that is not one, a wrong or
#   missing password, the coordination server down, a wrong holder
#   secret, a superuser's first call) is a clear error at the first call,
#   and no id is issued;
# - the claim at the first call of another role, once; the connection and
#   the holder secret readable by the owner alone, the secret in no log;
# - a second server gets another worker id; a C-edition server claiming
#   from the same coordination database gets a third, and the ids of the
#   three never collide;
# - the fence rule across a re-claim: a worker id freed with a fence ahead
#   of the clock is claimed again above it, and a re-claim passes a fence
#   below the generator's high-water mark;
# - a promoted standby keeps its primary's claim and issues above it; a
#   copy run beside it claims another once its owner made it a new holder;
# - an installation of 1.0 that claimed, updated: its claim and generator
#   kept;
# - the forgetting rule (doc/internals.md, "A coordinator that forgets"):
#   the coordination database restored from a dump taken before the claim
#   of a holder of the SQL edition: a new server's claim fails with 55006
#   saying until when, the holder's snowid_claim() re-asserts and keeps its
#   id, and the new server then claims another; the database's files
#   restored from an older copy: the holder notices the older state and
#   starts a quiet period; a re-assertion refused (the id given to another
#   server meanwhile) stops the holder issuing with that id.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

# The coordination server, where the fleet's role for the SQL edition logs
# in with a password over the unix socket (dblink lets a role that is no
# superuser connect only with one; SnowidSqlEdition::fleet_login); it logs
# every statement, as every server of the tests does.
my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $coord->node;
# where the coordination server's log goes on past the fleet login's
# statement (which names the password)
my $log_from = -s $cnode->logfile;

# A server with no snowid library and a database appdb owned by app, where
# app installed snowid_sql (version => '1.0': that version; by_superuser:
# the superuser installed it, and owns it, and the first connection string
# returned is the superuser's; an owner's install of 1.0 is not updated to
# 1.2, 110 and 115 check that); clerk takes
# ids, a role whose privileges app has (the first call claims only as
# such a role, 115 checks the others).  Returns the node and the
# connection strings of app and clerk.
sub sql_server
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(allows_streaming => $opt{allows_streaming} ? 1 : 0);
	$node->start;
	$node->safe_psql('postgres', q{
		CREATE ROLE app LOGIN;
		CREATE ROLE clerk LOGIN;
		GRANT clerk TO app;
		CREATE DATABASE appdb OWNER app;
	});
	$node->safe_psql('appdb', 'CREATE EXTENSION dblink')
	  unless $opt{no_dblink};
	my $app = $node->connstr('appdb') . ' user=app';
	my $clerk = $node->connstr('appdb') . ' user=clerk';
	$app = $node->connstr('appdb') if $opt{by_superuser};
	my ($rc, $out, $err) = psql_as($app, 'CREATE EXTENSION snowid_sql'
		  . ($opt{version} ? " VERSION '$opt{version}'" : ''));
	die "CREATE EXTENSION snowid_sql: $err" if $rc;
	return ($node, $app, $clerk);
}

# Runs sql as a role that must fail; returns its error, or dies
sub fails
{
	my ($connstr, $sql) = @_;
	my ($rc, $out, $err) = psql_as($connstr, $sql);

	die "\"$sql\" did not fail: $out" if $rc == 0;
	return $err;
}

# Runs sql in appdb of a node (coord on the coordination server) as the
# superuser; returns what it printed, or its error
sub query
{
	my ($node, $sql) = @_;
	my ($rc, $out, $err) =
	  $node->psql($node == $cnode ? 'coord' : 'appdb', $sql);

	return $rc ? "error: $err" : $out;
}

# Runs sql as a role; returns its error, or what it printed if it did not
# fail
sub error_of
{
	my ($connstr, $sql) = @_;
	my ($rc, $out, $err) = psql_as($connstr, $sql);

	return $rc ? $err : "no error: $out";
}

# ---------------------------------------------------------------------------
# Bad configuration: an error at the first call, no id
# ---------------------------------------------------------------------------

my ($sql1, $app1, $clerk1) =
  sql_server('sql1', allows_streaming => 1, no_dblink => 1);
my ($rc, $out, $err);
psql_as($app1, q{UPDATE snowid_config SET datacenter_id = 1, claim_worker_id = true});
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/55000: snowid_sql claims its worker id through dblink, which is not installed in this database\n.*\nHINT:  A superuser .* runs CREATE EXTENSION dblink/s,
	'without dblink, the first call says that it is missing');
$sql1->safe_psql('appdb', 'CREATE EXTENSION dblink');
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/55000: snowid_sql has no coordination database to claim a worker id from/,
	'without a coordination database, the first call says so');

like(
	fails($app1,
		q{INSERT INTO snowid_coordination (conninfo) VALUES ('postgresql://sql_fleet:secret@db/coord')}),
	qr/22023: invalid coordination database in snowid_coordination\nDETAIL:  conninfo is a URI/,
	'a URI is refused');
like(
	fails($app1,
		qq{INSERT INTO snowid_coordination (conninfo) VALUES ('$conninfo password=x')}),
	qr/DETAIL:  conninfo names a password; give it in the column password/,
	'a password in the conninfo is refused');
like(
	fails($app1,
		qq{INSERT INTO snowid_coordination (conninfo) VALUES ('$conninfo dbname=''coord')}),
	qr/DETAIL:  conninfo is not a list of libpq's keywords and values/,
	'a conninfo that is not one is refused');

psql_as($app1,
	qq{INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', 'wrong')});
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/08001: snowid_sql could not connect to the coordination database\nDETAIL:  dblink: .*password authentication failed for user "sql_fleet"/,
	'a wrong password: the first call says that the coordination server refused it');
psql_as($app1, q{UPDATE snowid_coordination SET password = NULL});
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/2F003: snowid_sql could not connect to the coordination database\n.*\nHINT:  dblink connects a role that is no superuser only with a password/s,
	'no password: the first call says that dblink needs one');
psql_as($app1, qq{UPDATE snowid_coordination SET password = '$password'});
like(
	fails($app1, 'UPDATE snowid_coordination SET clock_margin_ms = 3600001'),
	qr/22023: invalid coordination database in snowid_coordination\nDETAIL:  clock_margin_ms is 3600001; it runs from 0 to 3600000\./,
	'a clock margin over an hour is refused');
like(
	fails($app1, 'UPDATE snowid_coordination SET checkin_interval_ms = 999'),
	qr/DETAIL:  checkin_interval_ms is 999; it runs from 1000 to 3600000\./,
	'a check-in interval under a second is refused');

$coord->stop;
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/08001: snowid_sql could not connect to the coordination database\nDETAIL:  dblink: could not establish connection/,
	'the coordination server down: the first call says that it cannot connect');
$coord->start;

like(
	fails($sql1->connstr('appdb'), 'SELECT snowid_next()'),
	qr/42501: snowid_sql does not claim its worker id in a superuser's session\n.*\nHINT:  Have the owner of the extension run SELECT snowid_claim\(\) once/s,
	'a superuser\'s first call does not run the owner\'s claim');

# another holder registered a secret under this database's name
($rc, my $name1) = psql_as($app1, 'SELECT name FROM snowid_holder');
$name1 = "dc=1 $name1";
$coord->db->call("claim(1, '$name1', -1, 31, -1, 0)", 'coord_fleet',
	q{'} . ('ab' x 32) . q{'});
like(
	fails($clerk1, 'SELECT snowid_next()'),
	qr/42501: the coordination database refused this database's holder secret\nDETAIL:  The coordination database answered: wrong holder secret for identity '\Q$name1\E'/,
	'a wrong holder secret: the first call says so');
$coord->db->call("free(1, 0, 0)", 'coord_admin');
$coord->db->sql('coord_admin',
	"SELECT snowid_coordinator.reset_secret(1, '$name1')");

is($sql1->safe_psql('appdb',
		q{SELECT s.is_called AND s.last_value > 0 FROM snowid_sql_private.snowid_position s}),
	'f', 'no id was issued by the failed first calls');

# ---------------------------------------------------------------------------
# The claim
# ---------------------------------------------------------------------------

($rc, $out, $err) = psql_as($clerk1,
	'SELECT (snowid_decode(snowid_next())).worker_id, (snowid_status()).worker_source');
is($rc, 0, 'the first call of a role that is no superuser claims a worker id')
  or diag($err);
my ($w1, $source) = split /\|/, $out;
is($source, 'coordinator', 'snowid_status() says where the worker id came from');
is($coord->db->row(1, $w1)->{holder}, $name1,
	'the coordination database names this database as its holder');

my $calls = $coord->command_calls->{fcall};
psql_as($clerk1, 'SELECT snowid_next() FROM generate_series(1, 50)');
psql_as($clerk1, 'SELECT snowid_next_batch(50)');
psql_as($clerk1, q{SELECT snowid_serial('S')});
is($coord->command_calls->{fcall}, $calls, 'later calls claim nothing');

for my $object ('snowid_coordination', 'snowid_holder')
{
	like(fails($clerk1, "SELECT * FROM $object"),
		qr/42501: permission denied/, "another role does not read $object");
}
like(fails($clerk1, 'SELECT snowid_claim()'),
	qr/42501: permission denied/, 'another role does not claim again');
like(fails($clerk1, 'SELECT snowid_sql_private.snowid_sql_connstr()'),
	qr/42501: permission denied/,
	'another role does not read the connection string');

my $secret1 = $sql1->safe_psql('appdb', 'SELECT secret FROM snowid_holder');
unlike(slurp_file($cnode->logfile), qr/$secret1/,
	'the holder secret is in no statement the coordination server logs');
like(slurp_file($cnode->logfile), qr/CALL snowid_coordinator\.claim\(1, /,
	'(the coordination server logs the claims)');
unlike(slurp_file($sql1->logfile), qr/$secret1/,
	'nor in the log of the server that claimed');
unlike(substr(slurp_file($cnode->logfile), $log_from), qr/\Q$password\E/,
	'the coordination server logs no password');

# ---------------------------------------------------------------------------
# A second SQL-edition server and a C-edition server: other worker ids,
# no id in common
# ---------------------------------------------------------------------------

my ($sql2, $app2, $clerk2) = sql_server('sql2');
psql_as($app2, qq{
	UPDATE snowid_config SET datacenter_id = 1, claim_worker_id = true;
	INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', '$password');
});
($rc, $out, $err) = psql_as($app2, 'SELECT worker_id FROM snowid_claim()');
is($rc, 0, 'the owner claims with snowid_claim()') or diag($err);
my $w2 = $out;
isnt($w2, $w1, 'a second server gets another worker id');

my $cserver = $coord->new_node('cedition', { 'snowid.datacenter_id' => 1 });
$cserver->start;
$cserver->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $w3 = $cserver->safe_psql('postgres',
	'SELECT (snowid_decode(snowid_next())).worker_id');
ok($w3 ne $w1 && $w3 ne $w2,
	'a C-edition server claiming from the same database gets a third');

my %seen;
my $dups = 0;
for my $ids (
	[ $sql1, 'appdb' ], [ $sql2, 'appdb' ], [ $cserver, 'postgres' ])
{
	for my $id (split /\n/,
		$ids->[0]->safe_psql($ids->[1], 'SELECT snowid_next_batch(3000)'))
	{
		$dups++ if $seen{$id}++;
	}
}
is($dups, 0, 'the ids of the three servers never collide');
is( $sql2->safe_psql('appdb',
		'SELECT count(DISTINCT (snowid_decode(id)).worker_id) FROM unnest(\'{'
		  . join(',', keys %seen) . '}\'::bigint[]) id'),
	3, '(their ids carry three worker ids)');
# Stopped now: its check-in calls claim() every few seconds, which the
# counts of calls below would take for the SQL edition's.
$cserver->stop;

# ---------------------------------------------------------------------------
# The fence rule across a re-claim
# ---------------------------------------------------------------------------

# An administrator frees the worker id of sql1 with a fence 30 s ahead of
# the clock; its re-claim (max_drift_ms 60 s lets it start there) takes it
# again, and every id after lies at or above the fence.
psql_as($app1, 'UPDATE snowid_config SET max_drift_ms = 60000');
my $fence =
  $coord->db->call("free(1, $w1, 30000)", 'coord_admin')->{fence_ms};
($rc, $out, $err) = psql_as($app1,
	q{SELECT worker_id, floor(extract(epoch FROM floor_time) * 1000)::bigint FROM snowid_claim()});
is($rc, 0, 'the re-claim of a freed worker id succeeds') or diag($err);
my ($again, $floor) = split /\|/, $out;
is($again, $w1, 'it takes the worker id it held before');
is($floor, $fence, 'its floor is the fence');
is( $sql1->safe_psql('appdb',
		"SELECT bool_and(snowid_time(id) >= to_timestamp($fence / 1000.0)) FROM snowid_next_batch(100) id"
	),
	't',
	'every id after the re-claim lies at or above the fence');

# The same id freed again: its fence stays 30 s ahead (a fence never
# falls).  With max_drift_ms 1 s, only the generator's high-water mark,
# which lies above that fence, lets the re-claim keep the id.
psql_as($app1, 'UPDATE snowid_config SET max_drift_ms = 1000');
$coord->db->call("free(1, $w1, 1000)", 'coord_admin');
is($coord->db->row(1, $w1)->{fence_ms}, $fence, '(the fence stayed)');
($rc, $out, $err) = psql_as($app1, 'SELECT worker_id FROM snowid_claim()');
is($rc, 0, 'a re-claim below the high-water mark succeeds') or diag($err);
is($out, $w1,
	'it keeps its worker id: the claim passed the high-water mark as usable');
psql_as($app1, 'UPDATE snowid_config SET max_drift_ms = 60000');

# ---------------------------------------------------------------------------
# A promoted standby keeps the claim
# ---------------------------------------------------------------------------

my $last = $sql1->safe_psql('appdb',
	'CREATE TABLE t AS SELECT snowid_next() AS id FROM generate_series(1, 100); SELECT max(id) FROM t'
);
$sql1->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('sql1_standby');
$standby->init_from_backup($sql1, 'backup', has_streaming => 1);
$standby->start;
$sql1->wait_for_catchup($standby);
$sql1->stop('immediate');
SnowidTest::promote($standby);
$calls = $coord->command_calls->{fcall};
# its claim was granted under its primary's start: re-asserted first (the
# owner's schedule), once
($rc, $out, $err) = psql_as($standby->connstr('appdb') . ' user=app',
	'SELECT worker_id FROM snowid_claim()');
is($out, $w1, 'the owner\'s snowid_claim() on a promoted standby re-asserts its primary\'s worker id')
  or diag($err);
is( $standby->safe_psql('appdb',
		"SELECT (snowid_decode(id)).worker_id = $w1 AND id > $last FROM snowid_next() id"
	),
	't',
	'a promoted standby issues with its primary\'s worker id, above its stored ids'
);
is($coord->command_calls->{fcall}, $calls + 1, '(after that one re-assertion)');

# A copy of the same files run beside it (a snapshot restored as a second
# primary) is the same holder until its owner makes it another
my $clone = PostgreSQL::Test::Cluster->new('sql1_clone');
$clone->init_from_backup($sql1, 'backup');
$clone->start;
my $app_clone = $clone->connstr('appdb') . ' user=app';
($rc, $out, $err) = psql_as($app_clone, 'SELECT snowid_new_holder()');
is($rc, 0, 'the owner of a copy makes it another holder') or diag($err);
isnt("dc=1 $out", $name1, "(under another name)");
($rc, $out, $err) = psql_as($clone->connstr('appdb') . ' user=clerk',
	'SELECT (snowid_decode(snowid_next())).worker_id');
ok($rc == 0 && $out ne $w1 && $out ne $w2 && $out ne $w3,
	'the copy claims a worker id of its own at its next call')
  or diag("worker id $out: $err");

# ---------------------------------------------------------------------------
# An installation of 1.0 that claimed, updated
# ---------------------------------------------------------------------------

# The coordination database as it is before the claims below: restored
# later, it has forgotten them.
$coord->backup;
my ($sqla, $appa, $clerka) = sql_server('sqla', version => '1.0', by_superuser => 1);
psql_as($appa, qq{
	UPDATE snowid_config SET datacenter_id = 2, claim_worker_id = true;
	INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', '$password');
});
my $ids = SnowidTest::Ledger->new;
# n ids taken by a role (none if it fails, which is shown)
sub take_ids
{
	my ($connstr, $n) = @_;
	my ($rc, $out, $err) = psql_as($connstr,
		"SELECT snowid_next() FROM generate_series(1, $n)");

	diag("could not take ids: $err") if $rc;
	return $rc ? () : split /\n/, $out;
}
$ids->add(take_ids($clerka, 100));
my $wa = query($sqla, 'SELECT worker_id FROM snowid_status()');
like($wa, qr/^\d+$/, '1.0 claimed a worker id');
my ($version) = slurp_file("$FindBin::RealBin/../../snowid_sql.control") =~ /^default_version = '(.*)'$/m;
($rc, $out, $err) = psql_as($appa, "ALTER EXTENSION snowid_sql UPDATE TO '$version'; SELECT extversion FROM pg_extension WHERE extname = 'snowid_sql'");
is($out, $version, "the owner updates it to $version") or diag($err);
$calls = $coord->command_calls->{fcall};
is( query($sqla,
		"SELECT worker_id = $wa AND worker_source = 'coordinator' FROM snowid_status()"),
	't', 'the update keeps the claim');
$ids->add(take_ids($clerka, 100));
is($coord->command_calls->{fcall}, $calls, '(ids are issued without claiming again)');

# snowid_claim() re-asserts every second (pg_cron's schedule, doc/managed.md):
# a quiet period lasts 1 s + timeout_ms 2 s + max_drift_ms 1 s + 1 s; the
# clocks lie within a second of each other (one machine's)
psql_as($appa, 'UPDATE snowid_coordination SET checkin_interval_ms = 1000, clock_margin_ms = 1000');
($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'snowid_claim() re-asserts the worker id held') or diag($err);
is( query($cnode, q{
		SELECT longest_quiet_ms = 5000 AND widest_margin_ms = 1000
		FROM snowid_coordinator.datacenters WHERE datacenter = 2}),
	't', 'its claim declares its quiet period and its clock margin');
is( query($sqla, q{
		SELECT coordinator_generation > 0 AND coordinator_counter > 0
			AND coordinator_answered_at IS NOT NULL
			AND coordinator_forgot_at IS NULL AND coordinator_reassertions = 0
		FROM snowid_status()}),
	't', 'snowid_status() shows the state record the coordination database answered');
is( query($sqla, 'SELECT count(*) FROM snowid_coordinator_state'),
	'1', '(kept in snowid_coordinator_state)');
like(error_of($clerka, 'SELECT * FROM snowid_coordinator_state'),
	qr/42501: permission denied/, 'which another role does not read');

# ---------------------------------------------------------------------------
# The forgetting rule: the coordination database restored from a dump
# taken before the holder's claim
# ---------------------------------------------------------------------------

$coord->restore_backup;

# a new server of the same datacenter, whose first id claims
my ($sqlb, $appb, $clerkb) = sql_server('sqlb');
psql_as($appb, qq{
	UPDATE snowid_config SET datacenter_id = 2, claim_worker_id = true;
	INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', '$password');
});
psql_as($appb, 'UPDATE snowid_coordination SET checkin_interval_ms = 1000, clock_margin_ms = 1000');
like(
	error_of($clerkb, 'SELECT snowid_next()'),
	qr/55006: snowid_sql cannot claim a worker id of datacenter 2 until (\S+ \S+)\nDETAIL:  The coordination database may have forgotten its claims .*, and grants worker ids only to servers re-asserting theirs until \1\.\nHINT:  Try again then; no id was issued\./s,
	'restored: a new server\'s claim fails with 55006 saying until when');
is(query($sqlb, 'SELECT is_called FROM snowid_sql_private.snowid_position'),
	'f', '(and issues no id)');

($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'restored: the holder\'s snowid_claim() re-asserts and keeps its worker id')
  or diag($err);
is($coord->db->row(2, $wa)->{holder}, "dc=2 " . query($sqla, 'SELECT name FROM snowid_holder'),
	'(the coordination database has it again)');
is( query($sqla,
		'SELECT coordinator_forgot_at IS NOT NULL AND coordinator_reassertions = 1 FROM snowid_status()'),
	't', 'restored: snowid_status() of the holder shows that the database forgot');
$ids->add(take_ids($clerka, 100));

# The new server claims once the quiet period is over: another worker id.
# Returns its worker id, or '' if no claim succeeded within 60 s (each
# failure but 55006 is shown).
sub claim_when_quiet_ends
{
	my ($connstr) = @_;
	my $deadline = time + 60;

	while (time < $deadline)
	{
		my ($rc, $out, $err) = psql_as($connstr,
			'SELECT (snowid_decode(snowid_next())).worker_id');
		return $out if $rc == 0;
		diag($err) unless $err =~ /55006: /;
		sleep 0.5;
	}
	return '';
}
my $wb = claim_when_quiet_ends($clerkb);
ok($wb ne '' && $wb ne $wa,
	'restored: after the quiet period the new server claims another worker id')
  or diag("worker id '$wb'");
$ids->add(take_ids($clerkb, 100));

# ---------------------------------------------------------------------------
# The coordination database's files back from an older copy: the same
# server, its state record older than the holder saw
# ---------------------------------------------------------------------------

$coord->copy_files;
($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'the holder re-asserts after the copy') or diag($err);
my $generation = query($sqla, 'SELECT coordinator_generation FROM snowid_status()');
$coord->restore_files;
my $restored_at = $coord->db->now_ms;
($rc, $out, $err) = psql_as($appa, 'SELECT worker_id FROM snowid_claim()');
is($out, $wa, 'older copy: the holder re-asserts and keeps its worker id') or diag($err);
is( query($cnode, qq{
		SELECT quiet_from_ms >= $restored_at AND quiet_until_ms > quiet_from_ms
			AND generation > $generation
		FROM snowid_coordinator.datacenters WHERE datacenter = 2}),
	't',
	'older copy: the holder\'s state record, later than the database\'s, made it start a quiet period and a new generation');
is( query($sqla,
		"SELECT coordinator_generation > $generation AND coordinator_reassertions = 2 FROM snowid_status()"),
	't', 'older copy: snowid_status() of the holder shows the new generation');
$ids->add(take_ids($clerka, 100));

# ---------------------------------------------------------------------------
# A re-assertion refused: the database emptied, the id given to another
# server before the holder re-asserted
# ---------------------------------------------------------------------------

$coord->wipe;
$coord->add_holder(2, $wa, 'dc=2 host=elsewhere port=1 sysid=1');
like(
	error_of($appa, 'SELECT snowid_claim()'),
	qr/55006: snowid_sql stopped issuing ids with worker id $wa of datacenter 2\nDETAIL:  The coordination database refused this database's claim on it: Worker id $wa is held by dc=2 host=elsewhere port=1 sysid=1\.  .*\nHINT:  The next call claims another worker id; the ids issued so far lie below /s,
	'refused: the holder\'s re-assertion fails with a clear error');
is( query($sqla, 'SELECT worker_id IS NULL FROM snowid_status()'),
	't', 'refused: the holder no longer issues with that worker id');
my $moved = claim_when_quiet_ends($clerka);
ok($moved ne '' && $moved ne $wa, 'refused: its next id claims another worker id')
  or diag("worker id '$moved'");
$ids->add(take_ids($clerka, 100));
$ids->no_duplicates;

done_testing();
