# Only a holder, or an administrator, changes its claims (issue 42, item 1):
# a member of the servers' role (coordination database) or user (Redis)
# that learns a running server's holder name cannot take its worker id,
# nor its lease, by calling the store's functions under that name.
#
# - A server V registers worker id 1.  An attacker with the fleet's
#   credentials calls the claim for good under V's name, with a max below
#   V's id and its own clock as usable_ms: before holder secrets, that
#   retired V's id, fenced at that time, and the next server W took it while
#   V kept issuing with it.  Now the call is refused (42501 in SQL,
#   SNOWID_WRONG_SECRET in Redis), V keeps its id and W takes another.
# - A server L holds a lease; a lease claim under L's name by the attacker
#   is refused, and L's lease keeps its token.
# - The secret file: mode 0600 in the data directory, never in a log.
# - A server that lost its secret file is refused, with a hint; an
#   administrator's reset lets its next claim register its new secret, and
#   it gets its id back.
# - A server holding its id for good whose check-in is refused for its
#   secret (another one registered for its name, as after a loss and an
#   attacker's call under the name) stops issuing with that id (issue 55).
# - Coordination database only: a call in a transaction left open (as a
#   simple query, with the extended protocol, or of the functions the
#   procedures call, directly or from a DO block) fails without keeping the
#   datacenter's lock: another server's claim goes through at once.
# - Coordination database only: an administrator's call left in an open
#   transaction does keep the lock; a server's claim meanwhile fails with
#   55P03, saying so, not that the database may be down (issue 55).
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();

my $dc = 4;
my $coord = SnowidCoord->new;
my $pg = $coord->source eq 'postgresql';
my $attacker_secret = 'a7' x 32;

# A started server of datacenter dc (4 worker ids) claiming from the store
sub start_node
{
	my ($name, %settings) = @_;
	my $node = $coord->new_node($name,
		{
			'snowid.datacenter_id' => $dc,
			'snowid.worker_bits' => 2,
			%settings
		});

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

# The store's answer to a call of the attacker (fleet credentials, its own
# secret) under another server's name: undef if it was granted, else the
# error (SQL: "SQLSTATE: message"; Redis: the error reply).
sub attack
{
	my ($function, $identity, $numbers, $token) = @_;

	if ($pg)
	{
		my %sql = (
			claim => sub {
				my ($want, $max, $usable) = @_;
				return "claim($dc, '$identity', $want, $max, -1, $usable)";
			},
			lease_claim => sub {
				my ($max, $usable) = @_;
				return "lease_claim($dc, '$identity', $max, 600000, $usable, "
				  . "$usable, -1, 0, '$token')";
			});
		return $coord->db->sql_error('coord_fleet',
			$coord->db->call_sql($sql{$function}->(split ' ', $numbers),
				"'$attacker_secret'"));
	}
	my ($want_or_max, @rest) = split ' ', $numbers;
	my $args = $function eq 'claim'
	  ? [ "$want_or_max $rest[0] -1 0 $rest[1]", $attacker_secret ]
	  : [ "$want_or_max 600000 $rest[0] $rest[0] -1 0",
		"$token $attacker_secret" ];
	my $base = "{snowid:dc:$dc}";
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			$coord->cli_program, '-s', $coord->socket,
			'FCALL', "snowid_3_$function", '3', "$base:owners",
			"$base:leases", "$base:fences", $identity, @$args
		],
		'<', \undef, '>', \$out, '2>', \$err);
	return $out =~ /^(?:ERR )?(SNOWID_\w+.*)$/m ? $1 : undef;
}

# An administrator's reset of the secret registered for a holder name
sub reset_secret
{
	my ($name) = @_;

	if ($pg)
	{
		is($coord->db->sql('coord_admin',
				"SELECT snowid_coordinator.reset_secret($dc, '$name')"),
			't', "the administrator resets the secret of $name");
		return;
	}
	my $base = "{snowid:dc:$dc}";
	is($coord->cli('FCALL', 'snowid_3_reset_secret', '3', "$base:owners",
			"$base:leases", "$base:fences", $name),
		'1', "the administrator resets the secret of $name");
	return;
}

my $refusal = $pg ? qr/^42501: wrong holder secret for identity/
  : qr/^SNOWID_WRONG_SECRET /;

# -- a claim under a running server's name ---------------------------------

my $v = start_node('v', 'snowid.worker_id' => 1);
my @v_ids = split /\n/, $v->safe_psql('postgres',
	'SELECT snowid_next() FROM generate_series(1, 100)');
is(SnowidRedis::worker($v), '1|config', 'V registered worker id 1');
my $v_name = SnowidRedis::identity($v, $dc);
is($coord->owners($dc)->{1}, $v_name, 'under its holder name');

my $secret_file = $v->data_dir . '/snowid_holder_secret';
ok(-f $secret_file, 'V keeps a holder secret in its data directory');
is((stat $secret_file)[2] & 07777, 0600, 'readable by its owner only');
my ($secret) = (-f $secret_file ? slurp_file($secret_file) : '')
  =~ /^snowid_holder_secret 1 ([0-9a-f]{64})\n\z/;
ok(defined $secret, 'one line: 64 lower-case hex digits');

# The attacker learned V's name (a conflict answer names it) and claims
# under it: ids up to 0 only, fenced at its clock, so that V's id 1 would be
# retired at that time.
my $now = int(time * 1000);
my $before = $coord->owners($dc);
like(attack('claim', $v_name, "-1 0 $now"), $refusal,
	"a claim under V's name with another secret is refused");
is_deeply($coord->owners($dc), $before, 'and changes no holder');
is($coord->field($dc, 'fences', 1), undef, "nor V's fence");

# The next server takes a free id, not V's
my $w = start_node('w');
$w->safe_psql('postgres', 'SELECT snowid_next()');
my ($w_id) = split /\|/, SnowidRedis::worker($w);
isnt($w_id, 1, "the next server W does not get V's worker id 1");
push @v_ids, split /\n/, $v->safe_psql('postgres',
	'SELECT snowid_next() FROM generate_series(1, 100)');
my %w_ids = map { $_ => 1 } split /\n/, $w->safe_psql('postgres',
	'SELECT snowid_next() FROM generate_series(1, 100)');
is(scalar(grep { $w_ids{$_} } @v_ids), 0, 'V and W issue no id twice');
is(SnowidRedis::worker($v), '1|config', 'V keeps worker id 1');
$w->stop;

# -- a lease claim under a lease holder's name ------------------------------

my $l = start_node('l', 'snowid.worker_lease' => '6s');
$l->safe_psql('postgres', 'SELECT snowid_next()');
my ($l_id) = split /\|/, SnowidRedis::worker($l);
my $l_name = SnowidRedis::identity($l, $dc);
my $lease = $coord->field($dc, 'leases', $l_id);
my ($l_token) = (split ' ', $lease)[2];
like(attack('lease_claim', $l_name, "3 $now", 'f' x 16), $refusal,
	"a lease claim under L's name with another secret is refused");
is((split ' ', $coord->field($dc, 'leases', $l_id))[2], $l_token,
	"L's lease keeps its token");
is($coord->owners($dc)->{$l_id}, "lease $l_name", 'and its holder');
$l->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidRedis::worker($l), "$l_id|lease", 'L goes on issuing on its lease');
$l->stop;

# -- a lost secret: refused until an administrator resets it ----------------

# A copy made with cp leaves the file readable by others: the server makes
# it 0600 again, and claims as before.
$v->stop;
chmod 0644, $secret_file or die "chmod $secret_file: $!";
$v->start;
$v->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidRedis::worker($v), '1|config', 'a secret file others could read is used');
is((stat $secret_file)[2] & 07777, 0600, 'once made readable by its owner only');

$v->stop;
unlink $secret_file or die "unlink $secret_file: $!";
$v->start;
my $err = SnowidTest::psql_error($v, 'SELECT snowid_next()');
like($err, qr/refused this server's holder secret/,
	'V, having lost its secret file, is refused');
like($err, qr/HINT:  .*reset_secret/, 'with the administrator\'s step as the hint');
ok(-f $secret_file, 'it made a new secret');
is($coord->owners($dc)->{1}, $v_name, 'and its id is still registered to it');
reset_secret($v_name);
$v->safe_psql('postgres', 'SELECT snowid_next()');
is(SnowidRedis::worker($v), '1|config', 'V registers worker id 1 again');
like(attack('claim', $v_name, "-1 0 $now"), $refusal,
	'under its new secret, which the attacker does not have either');

# -- a check-in refused for its secret stops the holder (issue 55) ----------

# Another secret registered for V's name (here after an administrator's
# reset; after a store that forgot, by the first caller under the name):
# the attacker's lease claim under V's name moves V's id onto its lease.
# V's next check-in is refused for its secret.  The id may be another
# server's by then (the attacker gives the lease back, and the next server
# takes it), so V stops issuing with it, as after a lost lease, rather than
# taking the refusal for a store that did not answer: until issue 55 it
# went on issuing with worker id 1 for good.
# (V stopped meanwhile, so that the attacker is the first to call under
# the name after the reset: V checks in every second)
my $frozen = SnowidLease::freeze($v);
reset_secret($v_name);
$now = int(time * 1000);
is(attack('lease_claim', $v_name, "3 $now", 'e' x 16), undef,
	"the attacker's lease claim under V's name is granted, with its own secret");
my $log_at = -s $v->logfile;
SnowidLease::thaw($frozen);
$v->wait_for_log(qr/snowid stopped issuing ids with worker id 1 of datacenter $dc/,
	$log_at);
like(substr(slurp_file($v->logfile), $log_at),
	qr/DETAIL:  (The coordination database|Redis) refused this server's holder secret/,
	'V says its check-in was refused for its secret');
isnt(SnowidRedis::worker($v), '1|config', 'V no longer issues with worker id 1');
like(SnowidTest::psql_error($v, 'SELECT snowid_next()'),
	qr/refused this server's holder secret/,
	'and takes no id under its name until an administrator resets the secret');

my $log = slurp_file($v->logfile);
my $store_log = $pg ? slurp_file($coord->node->logfile) : '';
for my $s ($secret, (slurp_file($secret_file) =~ / ([0-9a-f]{64})/))
{
	unlike($log, qr/\Q$s\E/, 'no holder secret in the server log');
	unlike($store_log, qr/\Q$s\E/,
		'nor in the log of the coordination server, which logs every statement')
	  if $pg;
}

# -- no call keeps the datacenter's lock past its statement (SQL) -----------

if ($pg)
{
	my $db = $coord->db;
	my $far = $coord->db->now_ms + 86400000;
	my $secret_a = "'" . SnowidCoordDb::secret_of("'a'") . "'";
	my $fleet = $coord->node->background_psql('coord',
		extra_params => [ '-U', 'coord_fleet' ], on_error_stop => 0);
	my @cases = (
		[ 'a CALL',
		  "CALL snowid_coordinator.claim(40, 'a', $secret_a, -1, 3, -1, $far)" ],
		[ 'a direct call of run_claim()',
		  "SELECT snowid_coordinator.run_claim(40, 'a', $secret_a, -1, 3, -1, $far)" ]);
	push @cases, [ 'a CALL with the extended protocol',
		"CALL snowid_coordinator.claim(\$1, \$2, \$3, -1, 3, -1, $far) "
		  . "\\bind 40 a $secret_a \\g" ]
	  if $coord->node->pg_version >= 16;

	for my $case (@cases)
	{
		my ($what, $sql) = @$case;

		$fleet->query('BEGIN');
		$fleet->query($sql);
		# another server's claim, while that transaction stays open
		is($db->sql_error('coord_fleet', "SET lock_timeout = '10s';\n"
				  . $db->call_sql("claim(40, 'other', -1, 3, -1, $far)")),
			undef,
			"$what in a transaction left open keeps no lock: another claim goes through");
		$fleet->query('ROLLBACK');
	}
	$fleet->quit;

	like($db->sql_error('coord_fleet', "BEGIN;\n" . $db->call_sql(
				"claim(40, 'a', -1, 3, -1, $far)")),
		qr/^2D000: invalid transaction termination/,
		'a CALL in a transaction block fails');
	like($db->sql_error('coord_fleet',
			"SELECT snowid_coordinator.run_claim(40, 'a', $secret_a, -1, 3, -1, $far)"),
		qr/^2D000: snowid_coordinator.run_claim is called only by CALL snowid_coordinator.claim$/,
		'run_claim() refuses any caller but its procedure');
	like($db->sql_error('coord_fleet',
			"DO \$\$ BEGIN PERFORM snowid_coordinator.run_claim(40, 'a', $secret_a, -1, 3, -1, $far); "
			  . "PERFORM pg_sleep(1); END \$\$"),
		qr/^2D000: snowid_coordinator.run_claim is called only by CALL/,
		'even from a DO block, which could keep the lock until it ends');
	is($db->call("claim(40, 'a', -1, 3, -1, $far)")->{outcome}, 'ok',
		'a CALL on its own is granted');
	is($db->sql_error('coord_admin',
			"SELECT snowid_coordinator.reset_secret($dc, 'x')"), undef,
		'reset_secret() is the administrator\'s');
	like($db->sql_error('coord_fleet',
			"SELECT snowid_coordinator.reset_secret($dc, 'x')"),
		qr/^42501: permission denied for function reset_secret/,
		'not the servers\' role\'s');

	# An administrator's function left in an open transaction keeps the
	# datacenter's lock (the attack report's finding 8): a server's claim
	# meanwhile says so (55P03), not that the database is down.
	my $admin = $coord->node->background_psql('coord',
		extra_params => [ '-U', 'coord_admin' ], on_error_stop => 0);
	$admin->query('BEGIN');
	$admin->query("SELECT snowid_coordinator.free($dc, 3, 0)");
	my $x = start_node('x', 'snowid.coordinator_timeout_ms' => 2000);
	my $locked = SnowidTest::psql_error($x, 'SELECT snowid_next()');
	like($locked, qr/ERROR:  55P03: the coordination database at .* did not lock datacenter $dc in time/,
		'a claim while an administrator\'s call holds the datacenter locked says it did not get the lock');
	like($locked, qr/HINT:  Find that session in pg_stat_activity/,
		'and where to find the session that holds it');
	unlike($locked, qr/is a primary, is up/, 'not that the database may be down');
	$admin->query('ROLLBACK');
	$admin->quit;
	$x->safe_psql('postgres', 'SELECT snowid_next()');
	isnt(SnowidRedis::worker($x), '', 'once it ends, the claim is granted');
	$x->stop;
}

done_testing();
