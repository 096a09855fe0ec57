# snowid behind PgBouncer in transaction and statement pooling: many
# clients through few server connections, and nothing in snowid depends on
# a session outliving its transaction.
#
# One pgbouncer (Debian's) listens on a socket directory of its own, with
# two pools of the same database: "tx" (pool_mode = transaction, 4 server
# connections) and "st" (pool_mode = statement, 2).
#
# 1. One client through "tx" while its server connection changes under it
#    (RECONNECT on the console, a server backend terminated): its next
#    transaction runs on another backend and takes larger ids; keys taken in
#    one transaction go in through another backend; a client holding a
#    transaction open keeps its server, the others use the rest.
# 2. Through "st": snowid_next(), snowid_next_batch(), DEFAULT
#    snowid_next() and an order with its lines in one statement work; a
#    transaction block is refused by pgbouncer and took no id.
# 3. pgbench through "tx": 8 clients, 4 server connections, 16,000
#    master/detail transactions (keys from snowid_next_batch(4) first, then
#    the order and its lines, and one line keyed by the column default, in
#    one transaction), a RECONNECT of the pool while they run; then the same
#    over the extended protocol (unnamed statements).  Through "st": 8
#    clients, 2 server connections, the order and its lines in one
#    statement.
# 4. Every id the clients got, in the ledger: none twice; every order has
#    its four lines, each keyed above the order; every id from this server.
#
# Without pgbouncer the test skips itself (SNOWID_REQUIRE_TOOLS=1 fails).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes;

my $pgbouncer = SnowidTest::need_program('pgbouncer', 'pgbouncer');

my $tx_pool = 4;         # server connections of pool "tx"
my $st_pool = 2;         # server connections of pool "st"
my $clients = 8;         # pgbench clients of each run
my $tx_per_client = 2000;   # master/detail transactions, simple protocol
my $ext_per_client = 125;   # the same, extended protocol
my $st_per_client = 250;    # orders in one statement, statement pooling
my $worker_id = 7;

my $node = SnowidTest::new_node('pgbouncer',
	{ 'snowid.worker_id' => $worker_id, 'max_connections' => 30 });
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE TABLE orders (
		id             bigint PRIMARY KEY DEFAULT snowid_next(),
		mode           text NOT NULL,
		client         int NOT NULL,
		key_backend    int NOT NULL,    -- where the keys were taken
		insert_backend int NOT NULL);   -- where the order went in
	CREATE TABLE order_lines (
		id       bigint PRIMARY KEY DEFAULT snowid_next(),
		order_id bigint NOT NULL REFERENCES orders,
		product  text NOT NULL);
	CREATE TABLE events (
		id      bigint PRIMARY KEY DEFAULT snowid_next(),
		mode    text NOT NULL,
		client  int NOT NULL,
		backend int NOT NULL);
});
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# -- pgbouncer --------------------------------------------------------------

my $dir = PostgreSQL::Test::Utils::tempdir('pgbouncer');
my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $server = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

PostgreSQL::Test::Utils::append_to_file("$dir/userlist.txt", qq{"$user" ""\n});
PostgreSQL::Test::Utils::append_to_file(
	"$dir/pgbouncer.ini", qq{[databases]
tx = $server pool_mode=transaction pool_size=$tx_pool
st = $server pool_mode=statement pool_size=$st_pool

[pgbouncer]
unix_socket_dir = $sockdir
listen_port = $port
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = $user
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
max_client_conn = 100
ignore_startup_parameters = extra_float_digits
});

my $bouncer_out = '';
my $bouncer = IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
	'<', \undef, '>&', \$bouncer_out);

# pgbouncer stops with the test, however it ends: SIGTERM, then SIGKILL.
sub stop_bouncer
{
	return unless $bouncer;
	$bouncer->kill_kill(grace => 10);
	undef $bouncer;
	return;
}

END
{
	local $?;
	stop_bouncer();
}

# PostgreSQL 19 beta's libpq asks for a made-up protocol version first, to
# catch servers and proxies that do not negotiate it ("grease");
# pgbouncer 1.18 does not, and refuses the connection ("bad packet
# header").  Clients of 18 and 19 ask for 3.0, the default of 18's libpq.
my $protocol = $node->pg_version >= 18 ? ' max_protocol_version=3.0' : '';

sub bouncer_connstr
{
	my ($db) = @_;

	return "host=$sockdir port=$port dbname=$db user=$user$protocol";
}

# Runs sql (one simple query) through pgbouncer; returns (exit code,
# stdout, stderr).
sub bouncer_psql
{
	my ($db, $sql, @opts) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run(
		[
			'psql', '-XAq', '-v', 'ON_ERROR_STOP=1', '-P', 'footer=off',
			@opts, '-d', bouncer_connstr($db), '-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$out =~ s/\n\z//;
	return ($? >> 8, $out, $err);
}

# A command of pgbouncer's console; dies if it fails.
sub console
{
	my ($command) = @_;
	my ($rc, $out, $err) = bouncer_psql('pgbouncer', $command, '-t');

	die "pgbouncer console, $command: $err" if $rc != 0;
	return $out;
}

# The rows of a SHOW command of the console, as { column => value }.
sub console_rows
{
	my ($command) = @_;
	my ($rc, $out, $err) = bouncer_psql('pgbouncer', $command);
	my ($header, @rows) = split /\n/, $out;
	my @names = split /\|/, $header // '';

	die "pgbouncer console, $command: $err" if $rc != 0;
	return map {
		my @v = split /\|/, $_, -1;
		+{ map { $names[$_] => $v[$_] } 0 .. $#names }
	} @rows;
}

# Waits until pgbouncer holds no server connection to backend pid.
sub wait_server_gone
{
	my ($pid) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (grep { $_->{remote_pid} eq $pid } console_rows('SHOW SERVERS'))
	{
		die "pgbouncer still holds a connection to backend $pid"
		  if time > $deadline;
		Time::HiRes::usleep(50_000);
	}
	return;
}

# A psql session in the background, through pgbouncer's pool db: the last
# -d wins over the node's own.
sub client
{
	my ($db) = @_;

	return $node->background_psql('postgres',
		extra_params => [ '-d', bouncer_connstr($db) ]);
}

# One row of a background session's answer, split into its columns.
sub row
{
	my ($session, $sql) = @_;
	my $out = $session->query_safe($sql);

	$out =~ s/\s+\z//;
	return split /\|/, $out;
}

{
	my $socket = "$sockdir/.s.PGSQL.$port";
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	Time::HiRes::usleep(100_000) until -S $socket || time > $deadline;
	my ($rc, $out, $err) = bouncer_psql('pgbouncer', 'SHOW VERSION', '-t');
	is($rc, 0, 'pgbouncer takes connections on its own socket directory')
	  or BAIL_OUT("pgbouncer did not start: $err$bouncer_out");
	note($out);
}

my $ledger = SnowidTest::Ledger->new;

# -- 1. transaction pooling: the session does not matter -------------------

my $alice = client('tx');
is(scalar(grep { $_->{database} eq 'tx' } console_rows('SHOW CLIENTS')),
	1, 'tx: the background session is a client of pgbouncer');

my ($id1, $pid1) = row($alice, 'SELECT snowid_next(), pg_backend_pid()');
$ledger->add($id1);

# RECONNECT: every server connection of the pool is closed once released
console('RECONNECT tx');
my ($id2, $pid2) = row($alice, 'SELECT snowid_next(), pg_backend_pid()');
$ledger->add($id2);
isnt($pid2, $pid1,
	'tx, after RECONNECT: the client\'s next transaction runs on another backend');
cmp_ok($id2, '>', $id1, 'tx, after RECONNECT: its id is larger');

# the backend terminated while its connection is idle in the pool
is( $node->safe_psql('postgres', "SELECT pg_terminate_backend($pid2, 60000)"),
	't', 'tx: the backend of the pool\'s connection is terminated');
wait_server_gone($pid2);
my ($id3, $pid3) = row($alice, 'SELECT snowid_next(), pg_backend_pid()');
$ledger->add($id3);
isnt($pid3, $pid2,
	'tx, after the backend was terminated: the same client goes on on another backend'
);
cmp_ok($id3, '>', $id2, 'tx, after the backend was terminated: its id is larger');

# master/detail: the keys in one transaction, the rows in another, on
# another backend
my ($keys, $key_pid) = row($alice,
	'SELECT array_agg(id ORDER BY id), pg_backend_pid() FROM snowid_next_batch(4) id'
);
my ($o, $l1, $l2, $l3) = $keys =~ /(\d+)/g;
console('RECONNECT tx');
$alice->query_safe(qq{
	BEGIN;
	INSERT INTO orders (id, mode, client, key_backend, insert_backend)
	VALUES ($o, 'demo', 1, $key_pid, pg_backend_pid());
	INSERT INTO order_lines (id, order_id, product)
	VALUES ($l1, $o, 'apple'), ($l2, $o, 'pear'), ($l3, $o, 'plum');
	INSERT INTO order_lines (order_id, product) VALUES ($o, 'fig');
	COMMIT;
});
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*), bool_and(l.id > o.id),
		bool_and(o.key_backend <> o.insert_backend)
	FROM orders o JOIN order_lines l ON l.order_id = o.id
	WHERE o.id = $o}),
	'4|t|t',
	'tx: keys taken on one backend, the order and its 4 lines inserted on another'
);

# a client inside a transaction keeps its server connection; the others
# are served by the rest of the pool meanwhile
my $bob = client('tx');
$bob->query_safe('BEGIN');
my ($b_id, $b_pid) = row($bob, 'SELECT snowid_next(), pg_backend_pid()');
$ledger->add($b_id);
my @alice_pids;
for (1 .. 3)
{
	my ($id, $pid) = row($alice,
		q{INSERT INTO events (mode, client, backend)
		  VALUES ('demo', 1, pg_backend_pid()) RETURNING id, backend});
	push @alice_pids, $pid;
}
my ($b_id2, $b_pid2) = row($bob, 'SELECT snowid_next(), pg_backend_pid()');
$ledger->add($b_id2);
$bob->query_safe('COMMIT');
is($b_pid2, $b_pid, 'tx: a transaction stays on one backend');
is(scalar(grep { $_ eq $b_pid } @alice_pids),
	0, 'tx: the other client\'s transactions meanwhile ran on other backends');
cmp_ok($b_id2, '>', $b_id, 'tx: ids within the transaction increase');
$bob->quit;
$alice->quit;

# -- 2. statement pooling ---------------------------------------------------

my $carol = client('st');
is(scalar(grep { $_->{database} eq 'st' } console_rows('SHOW CLIENTS')),
	1, 'st: the background session is a client of pgbouncer');

$ledger->take($carol, 3, 'st, snowid_next()');
$ledger->take($carol, 5, 'st, snowid_next_batch(5)',
	'SELECT id FROM snowid_next_batch(5) id');
my ($ev) = row($carol,
	q{INSERT INTO events (mode, client, backend)
	  VALUES ('demo', 3, pg_backend_pid()) RETURNING id});
cmp_ok($ev, '>', $ledger->max, 'st: INSERT with DEFAULT snowid_next() works');

# an order and its lines in one statement: one statement, one transaction
($keys) = row($carol, 'SELECT array_agg(id ORDER BY id) FROM snowid_next_batch(4) id');
($o, $l1, $l2, $l3) = $keys =~ /(\d+)/g;
$carol->query_safe(qq{
	WITH o AS (
		INSERT INTO orders (id, mode, client, key_backend, insert_backend)
		VALUES ($o, 'demo', 3, pg_backend_pid(), pg_backend_pid())
		RETURNING id)
	INSERT INTO order_lines (id, order_id, product)
	SELECT l.id, o.id, l.product
	FROM o, (VALUES ($l1, 'apple'), ($l2, 'pear'), ($l3, 'plum')) l (id, product)
});
$carol->query_safe(
	qq{INSERT INTO order_lines (order_id, product) VALUES ($o, 'fig')});
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*), bool_and(l.id > o.id)
	FROM orders o JOIN order_lines l ON l.order_id = o.id
	WHERE o.id = $o}),
	'4|t',
	'st: an order and its lines in one statement, keys from one batch');

# a transaction block: pgbouncer closes the client before anything of it
# runs but BEGIN, and no id is taken
my $issued = $node->safe_psql('postgres', 'SELECT ids_issued FROM snowid_status()');
my ($rc, $out, $err) = (0, '', '');
my $block = "BEGIN;\nSELECT snowid_next();\nCOMMIT;\n";
IPC::Run::run(
	[
		'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', bouncer_connstr('st'),
		'-f', '-'
	],
	'<', \$block,
	'>', \$out, '2>', \$err);
$rc = $? >> 8;
isnt($rc, 0, 'st: a transaction block fails');
like(
	$err,
	qr/transaction blocks not allowed in statement pooling mode/,
	'st: pgbouncer refuses the transaction block');
is($node->safe_psql('postgres', 'SELECT ids_issued FROM snowid_status()'),
	$issued, 'st: the refused transaction took no id');
$ledger->take($carol, 2, 'st, after the refused transaction');
$carol->quit;

# -- 3. many clients through few server connections ------------------------

# The master/detail transaction, and its statement-pooling form: the order
# and its batch-keyed lines in one statement, the DEFAULT-keyed line and an
# event in statements of their own.
my $md = q{
SELECT k[1] AS o, k[2] AS l1, k[3] AS l2, k[4] AS l3, pg_backend_pid() AS kb FROM (SELECT array_agg(id ORDER BY id) AS k FROM snowid_next_batch(4) AS id) AS keys \gset
BEGIN;
INSERT INTO orders (id, mode, client, key_backend, insert_backend) VALUES (:o, 'MODE', :client_id, :kb, pg_backend_pid());
INSERT INTO order_lines (id, order_id, product) VALUES (:l1, :o, 'apple'), (:l2, :o, 'pear'), (:l3, :o, 'plum');
INSERT INTO order_lines (order_id, product) VALUES (:o, 'fig');
COMMIT;
};
my %script = (
	tx => $md =~ s/MODE/tx/r,
	'tx-extended' => $md =~ s/MODE/tx-extended/r,
	st => q{
SELECT k[1] AS o, k[2] AS l1, k[3] AS l2, k[4] AS l3, pg_backend_pid() AS kb FROM (SELECT array_agg(id ORDER BY id) AS k FROM snowid_next_batch(4) AS id) AS keys \gset
WITH o AS (INSERT INTO orders (id, mode, client, key_backend, insert_backend) VALUES (:o, 'st', :client_id, :kb, pg_backend_pid()) RETURNING id) INSERT INTO order_lines (id, order_id, product) SELECT l.id, o.id, l.product FROM o, (VALUES (:l1, 'apple'), (:l2, 'pear'), (:l3, 'plum')) l (id, product);
INSERT INTO order_lines (order_id, product) VALUES (:o, 'fig');
INSERT INTO events (mode, client, backend) VALUES ('st', :client_id, pg_backend_pid());
});
for my $name (keys %script)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$name.sql", $script{$name});
}

# Starts pgbench through pgbouncer's pool db.
sub start_pgbench
{
	my ($db, $script, $per_client, @opts) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', '2', '-t', $per_client,
			@opts, '-f', "$dir/$script.sql", bouncer_connstr($db)
		],
		'<', \undef, '>', \$out, '2>', \$err);

	return { h => $h, out => \$out, err => \$err, n => $clients * $per_client };
}

# Waits for pgbench; checks that it ran every transaction (two tests).
sub finish_pgbench
{
	my ($run, $name) = @_;

	ok($run->{h}->finish, "$name: pgbench ran without error")
	  or diag("${$run->{out}}\n${$run->{err}}");
	like(
		${ $run->{out} },
		qr{number of transactions actually processed: $run->{n}/$run->{n}\b},
		"$name: all $run->{n} transactions processed");
	note(${ $run->{out} });
	return;
}

my $started = Time::HiRes::time;
my $run = start_pgbench('tx', 'tx', $tx_per_client, '-M', 'simple');

# the pool recycled while the clients run: no client notices
$node->poll_query_until('postgres',
	"SELECT count(*) >= $clients * $tx_per_client / 8 FROM orders WHERE mode = 'tx'")
  or die 'pgbench did not get going';
console('RECONNECT tx');
finish_pgbench($run, "tx, $clients clients, $tx_pool servers, simple protocol");
my $tx_seconds = Time::HiRes::time - $started;

$run = start_pgbench('tx', 'tx-extended', $ext_per_client, '-M', 'extended');
finish_pgbench($run, "tx, $clients clients, $tx_pool servers, extended protocol");

$run = start_pgbench('st', 'st', $st_per_client, '-M', 'simple');
finish_pgbench($run, "st, $clients clients, $st_pool servers");

note(sprintf('%d master/detail transactions through %d server connections in %.1f s',
	$clients * $tx_per_client, $tx_pool, $tx_seconds));

# -- 4. the rows and the ids -------------------------------------------------

my %expected = (
	tx => $clients * $tx_per_client,
	'tx-extended' => $clients * $ext_per_client,
	st => $clients * $st_per_client);
for my $mode (sort keys %expected)
{
	is( $node->safe_psql(
			'postgres', qq{
		SELECT count(DISTINCT o.id), count(l.id),
			count(*) FILTER (WHERE l.id <= o.id),
			count(DISTINCT o.client)
		FROM orders o LEFT JOIN order_lines l ON l.order_id = o.id
		WHERE o.mode = '$mode'}),
		"$expected{$mode}|" . 4 * $expected{$mode} . "|0|$clients",
		"$mode: $expected{$mode} orders of $clients clients, 4 lines each, every line keyed above its order"
	);
}
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM events WHERE mode = 'st'}),
	$clients * $st_per_client,
	'st: every DEFAULT snowid_next() event is there');

# several server backends served each run, and the keys of an order often
# came from another backend than the one its rows went in through
# (the RECONNECT came after an eighth of them: every client went on
# through new server connections)
my $tx_backends = $node->safe_psql('postgres',
	q{SELECT count(DISTINCT insert_backend) FROM orders WHERE mode = 'tx'});
cmp_ok($tx_backends, '>', $tx_pool,
	"tx: the pool was recycled while the clients ran ($tx_backends backends in all)");
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM (
		SELECT client FROM orders WHERE mode = 'tx'
		GROUP BY client HAVING count(DISTINCT insert_backend) > 1) c}),
	$clients, 'tx: each client\'s transactions ran on several backends');
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FILTER (WHERE key_backend <> insert_backend) > 0
	FROM orders WHERE mode = 'tx'}),
	't', 'tx: orders whose keys were taken on another backend than their insert');
my $ext_backends = $node->safe_psql('postgres',
	q{SELECT count(DISTINCT insert_backend) FROM orders WHERE mode = 'tx-extended'});
cmp_ok($ext_backends, '<=', $tx_pool,
	"tx, extended: $clients clients used $ext_backends of at most $tx_pool backends");
my $st_backends = $node->safe_psql('postgres',
	q{SELECT count(DISTINCT b) FROM (SELECT key_backend FROM orders WHERE mode = 'st'
	  UNION SELECT insert_backend FROM orders WHERE mode = 'st'
	  UNION SELECT backend FROM events WHERE mode = 'st') x (b)});
cmp_ok($st_backends, '<=', $st_pool,
	"st: $clients clients used $st_backends of at most $st_pool backends");

# every key written, with those the sessions took above and did not write
$ledger->add(SnowidTest::query_ids($node, q{
	SELECT id FROM orders UNION ALL SELECT id FROM order_lines
	UNION ALL SELECT id FROM events}));
$ledger->no_duplicates;
is( $node->safe_psql(
		'postgres', qq{
	SELECT count(*) FILTER (WHERE (snowid_decode(id)).worker_id <> $worker_id)
	FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines
		  UNION ALL SELECT id FROM events) k}),
	0, "every id carries this server's worker id");
note(sprintf('%d ids in the ledger', $ledger->count));

stop_bouncer();
$node->stop;
done_testing();
