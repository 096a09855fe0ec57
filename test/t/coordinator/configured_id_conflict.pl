# snowid.worker_id together with a coordinator (Redis, or a coordination
# database: SnowidCoord): the configured id is registered there under the
# server's identity; an id another server holds is refused with an error
# naming both; a server that holds one id cannot switch to another without
# freeing it; and with the coordinator down, a configured id is used only
# if this server registered it before.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidCoord::need_store();

my $dc = 6;
my $coord = SnowidCoord->new;
my $source = $coord->source;
# How the messages name the coordinator in a sentence, and where a server
# holds an id
my ($title, $in_store) =
  SnowidCoord::store() eq 'redis'
  ? ('Redis', 'redis')
  : ('the coordination database', 'the coordination database');
my $ids = SnowidTest::Ledger->new;

# A restart with another snowid.worker_id.
sub restart_with_worker_id
{
	my ($node, $worker_id) = @_;

	$node->append_conf('postgresql.conf', "snowid.worker_id = $worker_id\n");
	$node->restart;
}

# Server A claims an id.
my $a_node = $coord->new_node('conflict_a', { 'snowid.datacenter_id' => $dc });
$a_node->start;
my $a_identity = SnowidRedis::identity($a_node, $dc);
$a_node->safe_psql('postgres', 'CREATE EXTENSION snowid');
$ids->collect($a_node, 1000);
is(SnowidRedis::worker($a_node), "0|$source", 'server A claimed worker id 0');

# Server B is configured with A's id: refused, naming both servers.
# B's drift budget is not the default: the hints' margins follow it.
my $b_drift = 7000;
my $b_node = $coord->new_node('conflict_b',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => 0,
	  'snowid.max_drift_ms' => $b_drift });
$b_node->start;
my $b_identity = SnowidRedis::identity($b_node, $dc);
$b_node->safe_psql('postgres', 'CREATE EXTENSION snowid');
is(SnowidRedis::worker($b_node), '|none',
	'with a coordinator, a configured worker id is not used before it is registered');
my $err = SnowidTest::psql_error($b_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55006: worker id 0 of datacenter $dc is held by another server\n/,
	'configured id held by another server: refused with SQLSTATE 55006');
like($err,
	qr/DETAIL:  This server is "\Q$b_identity\E"; $title has worker id 0 registered to "\Q$a_identity\E"\./,
	'the error names both servers');
like($err, qr/HINT:  Set snowid.worker_id to a free id or, once that server is stopped for good, free its id with \Q@{[$coord->free_command($dc, 0, $b_drift)]}\E\./,
	'the hint says what to do, with a margin from snowid.max_drift_ms');
SnowidRedis::refused_runs($b_node, 'the refused server');
is($coord->owners($dc)->{0}, $a_identity, 'A still holds worker id 0');

# A holder whose name is as long as the store takes (512 bytes): the
# conflict names it whole.
my $long_identity = 'dc=' . $dc . ' host=' . ('h' x 480) . ' port=1 sysid=1';
$long_identity .= 'x' x (512 - length($long_identity));
$coord->add_holder($dc, 21, $long_identity);
restart_with_worker_id($b_node, 21);
like(SnowidTest::psql_error($b_node, 'SELECT snowid_next()'),
	qr/DETAIL:  This server is "\Q$b_identity\E"; $title has worker id 21 registered to "\Q$long_identity\E"\./,
	'a conflict with a holder of a 512-byte name names it whole');
if (SnowidCoord::store() eq 'redis')
{
	# the library refuses a longer name, as the coordination database does
	my $keys = join ' ', map { "{snowid:dc:$dc}:$_" } qw(owners leases fences);
	eval {
		$coord->cli('FCALL', 'snowid_3_claim', 3, split(/ /, $keys),
			$long_identity . 'x', '-1 31 -1 0 0');
	};
	like($@, qr/SNOWID_USAGE an identity has 1 to 512 bytes/,
		'the Redis library refuses an identity of 513 bytes');
}

# A free configured id is registered under B's identity.
restart_with_worker_id($b_node, 9);
$ids->collect($b_node, 1000);
is(SnowidRedis::worker($b_node), '9|config',
	'a free configured id: worker_source config');
is($coord->owners($dc)->{9}, $b_identity,
	'the configured id is registered under the server\'s identity');
$b_node->restart;
$ids->collect($b_node, 1000);
is(SnowidRedis::worker($b_node), '9|config', 'a restart registers it again');
is(scalar keys %{ $coord->owners($dc) }, 3,
	'two claims in the coordinator, beside the holder of the long name');

# B cannot switch to another id while it holds 9.
restart_with_worker_id($b_node, 10);
$err = SnowidTest::psql_error($b_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  55000: this server holds worker id 9 of datacenter $dc in $in_store, not the configured worker id 10\n/,
	'switching ids while holding one: refused');
like($err, qr/HINT:  Set snowid.worker_id to 9, or free the old id with \Q@{[$coord->free_command($dc, 9, $b_drift)]}\E\./,
	'switching ids: the hint says how');
restart_with_worker_id($b_node, 9);
$ids->collect($b_node, 1000);

# The coordinator down: B registered 9 before, and issues with it only once
# the coordinator confirms it.
$coord->stop;
$b_node->restart;
$err = SnowidTest::psql_error($b_node, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  08006: snowid cannot confirm worker id 9 of datacenter $dc in $source\n/,
	'coordinator down: the registered configured id is not used unconfirmed');
like($err, qr/CONTEXT:  registering snowid.worker_id 9 in $source as "\Q$b_identity\E"/,
	'coordinator down: the context says what was tried');

# The coordinator down and a configured id never registered: refused as a
# new server's.
restart_with_worker_id($b_node, 11);
$err = SnowidTest::psql_error($b_node, 'SELECT snowid_next()');
like($err, qr/ERROR:  08001: \Q@{[$coord->unreachable]}\E\n/,
	'coordinator down, configured id changed: refused');
unlike($err, qr/worker id 9\b/,
	'coordinator down, configured id changed: the cached id is not named');
like($err, qr/CONTEXT:  registering snowid.worker_id 11 in $source as "\Q$b_identity\E"/,
	'coordinator down, configured id changed: the context says what was tried');

# A claimed its id from the coordinator: refused as well.
$a_node->restart;
like(SnowidTest::psql_error($a_node, 'SELECT snowid_next()'),
	qr/ERROR:  08006: snowid cannot confirm worker id 0 of datacenter $dc in $source\n/,
	'coordinator down: A does not use its cached id');
is(SnowidRedis::worker($a_node), '|none', 'coordinator down: A has no worker id');

$ids->no_duplicates;
$_->stop for ($a_node, $b_node);
done_testing();
