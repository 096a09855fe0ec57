# The SQL edition without its claim mode (issue 68): a database that
# claimed its worker id from a coordination database in 1.2, updated to the
# newest version, keeps that worker id as its configured one, and what the
# claim mode left open is closed.
#
# The update: refused where the claim was made before the server last
# started (it may have been given to another server meanwhile), naming
# what to do; after the owner's snowid_claim() re-asserted it, the update
# keeps the worker id, which the coordination database still records as
# the database's holder's.  So from 1.1, through 1.2.
#
# Finding 1 (a granted role read the holder secret and took the fleet's
# login): a role the owner has been granted (clerk; managed.md advised
# granting the roles that take ids to the owner) cancels its own calls
# after a restart at 1, 2, 3... ms (statement_timeout), as the first call
# of 1.2 claimed, and connected, then; after each, its session must hold
# no dblink connection and no holder secret, nor read one through a
# connection.  Where one is left (1.2 on 15, whose dblink connects
# uncancellably, and on 19 at 19 ms), the role changes the password of the
# fleet's login through it, after which no database of the fleet could
# claim.  And the edition holds no secret, no password and no code that
# connects.
#
# Finding 2 (one open transaction stopped every re-assertion): after a
# restart, the application's transaction takes an id and stays open (1.2:
# its first call re-asserted the claim, holding the row 'claim' of
# snowid_locks to its end); then it is prepared, and the server restarted
# (1.2: the prepared transaction kept the row across the restart, and no
# session issued an id).  Meanwhile other sessions' ids, the owner's and
# the owner's scheduled statements (snowid_claim() where the installed
# version has it, snowid_status(), a change of snowid_config) must each
# finish within 10 s.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $version = SnowidSqlEdition::version();

# the coordination server, and the fleet's login there (with a password,
# as dblink needs)
my ($fleet, $conninfo, $password) = SnowidSqlEdition::claim_fleet();
my $cnode = $fleet->node;

my $node = SnowidSqlEdition::new_server('claim_retired', [qw(app clerk)], ['appdb'],
	conf => "max_prepared_transactions = 5\n");
$node->safe_psql('postgres', 'GRANT clerk TO app');
$node->safe_psql('appdb', 'CREATE EXTENSION dblink');
my $app = $node->connstr('appdb') . ' user=app';
my $clerk = $node->connstr('appdb') . ' user=clerk';

# 1.2, claiming its worker id, as the owner set it up then
my ($w, $err) = SnowidSqlEdition::install_claiming_12($app, $conninfo, $password);
like($w, qr/^\d+$/, "its first id claims worker id $w") or diag($err);
my ($rc, $out);

# ---------------------------------------------------------------------------
# The update
# ---------------------------------------------------------------------------

$node->restart;
($rc, $out, $err) = psql_as($app, 'ALTER EXTENSION snowid_sql UPDATE');
like(
	$err,
	qr/55000: snowid_sql cannot be updated to \Q$version\E while its claimed worker id is not confirmed\n.*claimed before the server last started.*\nHINT:  .*SELECT snowid_claim\(\), then the update as it was installed: ALTER EXTENSION snowid_sql UPDATE/s,
	'the update of a claim made before the server started is refused, saying what to do');
# (re-asserted in the update's transaction, as the hint says: an answer
# of another transaction is not taken, test update_claim_clock_back)
($rc, $out, $err) = psql_as($app, 'SELECT worker_id FROM snowid_claim()');
is($out, $w, 'the owner re-asserts the claim') or diag($err);
($rc, $out, $err) = psql_as($app, 'BEGIN; DO $$BEGIN PERFORM snowid_claim(); END$$; ALTER EXTENSION snowid_sql UPDATE; COMMIT');
is($rc, 0, 'then the update goes through, in the transaction that re-asserts it') or diag($err);
like($err, qr/WARNING:  01000: snowid_sql keeps worker id $w of datacenter 4 as its configured worker id\nDETAIL:  It was claimed from the coordination database as 'dc=4 sql [^']*', which keeps the claim/,
	'and says it keeps the worker id');
is( $node->safe_psql(
		'appdb', q{
	SELECT snowid_sql_version(), worker_id, claim_worker_id, worker_server = snowid_sql_private.snowid_sql_here()
	FROM snowid_config}),
	"$version|$w|f|t", "it is $version, with the worker id it claimed as its configured one, set here");
is( $cnode->safe_psql(
		'coord', qq{
	SELECT live, holder LIKE 'dc=4 sql %' FROM snowid_coordinator.workers
	WHERE datacenter = 4 AND worker_id = $w}),
	't|t', 'the coordination database still records the claim, as the database\'s holder\'s');

# The update from 1.1 (a superuser's install, which the update to 1.2
# takes): 1.1 re-asserted at no start, and the update to 1.2 notes the
# claim it finds under the server's run without asking; so the claim must
# also have been answered since the server started.  After a restart, the
# update refuses; once updated to 1.2 and re-asserted, it goes through.
$node->safe_psql('postgres', 'CREATE DATABASE olddb');
$node->safe_psql('olddb', q{CREATE EXTENSION dblink; CREATE EXTENSION snowid_sql VERSION '1.1';}
	  . SnowidSqlEdition::claim_config($conninfo, $password));
my $w11 = $node->safe_psql('olddb', 'SELECT (snowid_decode(snowid_next())).worker_id');
like($w11, qr/^\d+$/, "1.1: its first id claims worker id $w11");
$node->restart;
($rc, $out, $err) = $node->psql('olddb', 'ALTER EXTENSION snowid_sql UPDATE',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: snowid_sql cannot be updated to \Q$version\E while its claimed worker id is not confirmed/,
	'1.1: the update of a claim made before the server started is refused');
($rc, $out, $err) = $node->psql('olddb', q{
	ALTER EXTENSION snowid_sql UPDATE TO '1.2';
	BEGIN;
	SELECT worker_id FROM snowid_claim();
	ALTER EXTENSION snowid_sql UPDATE;
	COMMIT;
	SELECT snowid_sql_version(), worker_id, claim_worker_id FROM snowid_config},
	extra_params => [ '-v', 'ON_ERROR_STOP=1' ]);
is($out, "$w11\n$version|$w11|f",
	'1.1: updated to 1.2 and re-asserted, the update keeps its worker id') or diag($err);

# ---------------------------------------------------------------------------
# Finding 1: no connection or secret left in a caller's session
# ---------------------------------------------------------------------------

is( $node->safe_psql(
		'appdb', q{
	SELECT (SELECT count(*) FROM pg_proc p
			JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
			JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowid_sql'
			WHERE p.prosrc ~* 'dblink|secret|password'
			   OR coalesce(pg_get_function_sqlbody(p.oid), '') ~* 'dblink|secret|password'),
		   (SELECT count(*) FROM pg_attribute a
			JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = a.attrelid AND d.deptype = 'e'
			JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowid_sql'
			WHERE a.attname ~* 'secret|password' AND NOT a.attisdropped)}),
	'0|0', 'the edition has no code that connects, and keeps no secret or password');

# Each call in a session of its own, cancelled at $ms ms; then, in that
# session, the connections and the secret it holds, and the attack through
# any connection left: the fleet's login changed.  Three restarts, each
# followed by calls cancelled later and later until one goes through (the
# window is a few milliseconds wide where dblink connects cancellably).
my ($left, $calls) = (0, 0);
ROUND: for my $round (1 .. 3)
{
	$node->restart;
	for my $ms (1 .. 200)
	{
		my ($stdout, $stderr) = ('', '');
		IPC::Run::run(
			[
				'psql', '-XAtq', '-d', $clerk,
				'-c', "SET statement_timeout = $ms",
				'-c', 'SELECT snowid_next()',
				'-c', 'RESET statement_timeout',
				'-c', q{SELECT 'left ' || coalesce(array_length(dblink_get_connections(), 1), 0)
						   || ' ' || (current_setting('snowid_holder.secret', true) IS NOT NULL)
						   || ' ' || EXISTS (SELECT FROM unnest(dblink_get_connections()) c,
								dblink(c, 'SELECT current_setting(''snowid_holder.secret'', true)') AS t(s text)
								WHERE t.s IS NOT NULL)},
				'-c', q{SELECT dblink_exec(c, 'ALTER ROLE sql_fleet PASSWORD ''taken''')
						FROM unnest(dblink_get_connections()) c}
			],
			'<', \undef, '>', \$stdout, '2>', \$stderr);
		$calls++;
		# the connections left, whether the session holds the secret, and
		# whether it reads it through a connection (never the secret itself)
		my ($state) = $stdout =~ /^left (.*)$/m;
		$state //= '?';
		if ($state ne '0 false false')
		{
			$left++;
			diag("cancelled at $ms ms, the session held: $state");
			last ROUND;
		}
		last if $stdout =~ /^\d+$/m && $ms > 20;
	}
}
is($left, 0,
	"a granted role's calls cancelled at 1 ms and on ($calls sessions) leave no connection or secret in its session");
my ($crc, $cout, $cerr) = psql_as("$conninfo password='$password'", 'SELECT current_user');
is($cout, 'sql_fleet', 'the fleet\'s login still logs in with its password') or diag($cerr);
# (put back where the attack changed it, for what follows)
$cnode->safe_psql('postgres', "ALTER ROLE sql_fleet PASSWORD '$password'");

# ---------------------------------------------------------------------------
# Finding 2: an open or prepared transaction that took ids blocks nothing
# ---------------------------------------------------------------------------

# Each of what other sessions do, within 10 s: another role's ids, the
# owner's, and the owner's scheduled statements
sub others_go_on
{
	my ($while) = @_;
	my ($rc, $out, $err) = psql_as($clerk, q{
		SET statement_timeout = '10s';
		SELECT count(DISTINCT id), min(w) = max(w) FROM (
			SELECT id, (snowid_decode(id)).worker_id AS w
			FROM (SELECT snowid_next() AS id FROM generate_series(1, 100)) s) t});
	is($out, '100|t', "$while: another role's calls issue ids") or diag($err);
	($rc, $out, $err) = psql_as($app, q{
		SET statement_timeout = '10s';
		SELECT count(*) FROM snowid_next_batch(100)});
	is($out, '100', "$while: so do the owner's") or diag($err);
	($rc, $out, $err) = psql_as($app, q{
		SET statement_timeout = '10s';
		DO $$ BEGIN
			IF to_regprocedure('snowid_claim()') IS NOT NULL THEN
				EXECUTE 'SELECT snowid_claim()';
			END IF;
		END $$;
		SELECT count(*) FROM snowid_status();
		UPDATE snowid_config SET max_wait_ms = max_wait_ms});
	is($rc, 0, "$while: and the owner's scheduled statements finish") or diag($err);
	return;
}

$node->restart;
my $open = $node->background_psql('appdb', extra_params => [ '-U', 'clerk' ]);
$open->query_safe(q{BEGIN; SELECT snowid_next()});
others_go_on('the first transaction after a restart open');
$open->query_safe(q{PREPARE TRANSACTION 'held'});
$open->quit;
$node->restart;
others_go_on('that transaction prepared, the server restarted');
is($node->safe_psql('appdb', q{SELECT gid FROM pg_prepared_xacts}), 'held',
	'(the transaction is still prepared)');
$node->safe_psql('appdb', q{ROLLBACK PREPARED 'held'});

$node->stop;
$fleet->stop;
done_testing();
