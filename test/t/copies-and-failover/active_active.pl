# Several writable servers: logical replication both ways (origin = none,
# PostgreSQL 16 and later; one way into a server that writes too on 15).
#
# Server A takes its worker id from snowid.worker_id (registered in Redis),
# server B claims one from Redis.  Both write orders and order lines, with
# keys from DEFAULT snowid_next() and with keys taken first
# (snowid_next_batch()), from concurrent pgbench clients on both sides at
# once; the rows replicate.  Then both sides hold the same rows, neither log
# has a subscription error, no key was taken twice and every row carries
# the worker id of the server that wrote it.  The same servers and the same
# replication with bigserial keys stop at the first row: both sides hand
# out 1, and the subscription fails on the duplicate key.
#
# snowid's WAL records (the high-water mark) lie among the decoded changes:
# the subscriptions read through them, and a pgoutput slot and a
# test_decoding slot (pg_logical_slot_get_changes()) return exactly the
# rows inserted, with a mark record written inside the transaction.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $redis = SnowidRedis->new;
# Two clusters of their own (force_initdb: not copies of one template, so
# that each has its own system identifier, as in real life).
my $a_node = $redis->new_node('active_a', { 'snowid.worker_id' => 1 },
	allows_streaming => 'logical', force_initdb => 1);
my $b_node = $redis->new_node('active_b', {},
	allows_streaming => 'logical', force_initdb => 1);
$_->start for ($a_node, $b_node);
my $both_ways = $a_node->safe_psql('postgres', 'SHOW server_version_num') >= 160000;
note($both_ways
	? 'PostgreSQL 16 or later: replication both ways, origin = none'
	: 'PostgreSQL 15: replication from A to B, and B writes too');

my $schema = q{
	CREATE EXTENSION snowid;
	CREATE TABLE orders (
		id bigint PRIMARY KEY DEFAULT snowid_next(),
		side int NOT NULL,
		customer int NOT NULL);
	CREATE TABLE order_lines (
		id bigint PRIMARY KEY DEFAULT snowid_next(),
		order_id bigint NOT NULL REFERENCES orders,
		side int NOT NULL,
		qty int NOT NULL);
	CREATE TABLE probe (id bigint PRIMARY KEY DEFAULT snowid_next(), note text);
};
for my $node ($a_node, $b_node)
{
	$node->safe_psql('postgres', $schema);
	$node->safe_psql('postgres', 'CREATE DATABASE serial');
	$node->safe_psql('serial', q{
		CREATE TABLE orders (id bigserial PRIMARY KEY, side int NOT NULL)});

	# the worker id is registered or claimed with the first id
	$node->safe_psql('postgres', 'SELECT snowid_next()');
}
is(SnowidRedis::worker($a_node), '1|config',
	'server A: worker id 1 from snowid.worker_id, registered in Redis');
like(SnowidRedis::worker($b_node), qr/^\d+\|redis$/,
	'server B: a worker id claimed from Redis');
my ($a_worker) = split /\|/, SnowidRedis::worker($a_node);
my ($b_worker) = split /\|/, SnowidRedis::worker($b_node);
isnt($a_worker, $b_worker, 'the two servers have distinct worker ids');

# Publications on each side; each subscribes to the other (A to B only on
# 15).  Subscriptions named after the subscriber, so that the publisher
# sees that name as the application name of its walsender.
sub replicate
{
	my ($db, $tables, $from, $to, $name, $options) = @_;
	my $origin = $both_ways ? ', origin = none' : '';

	$origin .= ", $options" if defined $options;
	my $connstr = $from->connstr . " dbname=$db";

	$from->safe_psql($db, "CREATE PUBLICATION pub_$name FOR TABLE $tables");
	$to->safe_psql($db,
		"CREATE SUBSCRIPTION $name CONNECTION '$connstr' PUBLICATION pub_$name"
		  . " WITH (copy_data = false$origin)");
	return;
}

sub wait_running
{
	my ($db, $node, $name) = @_;

	$node->poll_query_until($db,
		"SELECT pid IS NOT NULL FROM pg_stat_subscription WHERE subname = '$name'")
	  or die "subscription $name did not start";
	return;
}

my @links = ([ $a_node, $b_node, 'b_from_a' ]);
push @links, [ $b_node, $a_node, 'a_from_b' ] if $both_ways;
replicate('postgres', 'orders, order_lines', @$_) for @links;
wait_running('postgres', $_->[1], $_->[2]) for @links;

# The subscriptions read the mark records too: count those written while
# the writers run.
for my $node ($a_node, $b_node)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
}
my %lsn_before = map { $_->name => $_->lsn('insert') } ($a_node, $b_node);
my %log_offset = map { $_->name => -s $_->logfile } ($a_node, $b_node);

# The writers: an order and three lines per transaction, keys from the
# column default or taken first in one batch.
my $dir = PostgreSQL::Test::Utils::tempdir('pgbench');
my %script = (
	default => q{
\set customer random(1, 1000)
BEGIN;
INSERT INTO orders (side, customer) VALUES (:side, :customer) RETURNING id AS order_id \gset
INSERT INTO order_lines (order_id, side, qty) SELECT :order_id, :side, q FROM generate_series(1, 3) q;
COMMIT;
},
	first => q{
\set customer random(1, 1000)
SELECT k[1] AS order_id, k[2] AS l1, k[3] AS l2, k[4] AS l3 FROM (SELECT array_agg(id ORDER BY id) AS k FROM snowid_next_batch(4) id) b \gset
BEGIN;
INSERT INTO orders (id, side, customer) VALUES (:order_id, :side, :customer);
INSERT INTO order_lines (id, order_id, side, qty) VALUES (:l1, :order_id, :side, 1), (:l2, :order_id, :side, 2), (:l3, :order_id, :side, 3);
COMMIT;
});
for my $name (keys %script)
{
	open(my $fh, '>', "$dir/$name.sql") or die "could not write $dir/$name.sql: $!";
	print $fh $script{$name};
	close $fh;
}

my %side = ($a_node->name => 1, $b_node->name => 2);
my @runs;
for my $node ($a_node, $b_node)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '1', '-t', '400',
			'-D', 'side=' . $side{ $node->name },
			'-f', "$dir/default.sql\@1", '-f', "$dir/first.sql\@1",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'<', \undef, '>', \$out, '2>', \$err);
	push @runs, [ $node, $h, \$out, \$err ];
}
for my $run (@runs)
{
	my ($node, $h, $out, $err) = @$run;

	ok($h->finish, 'pgbench on ' . $node->name . ' ran without error')
	  or diag("$$out\n$$err");
	like($$out, qr/number of transactions actually processed: [1-9]/,
		'pgbench on ' . $node->name . ' committed transactions');
}

# snowid's mark records written on a server since the writers began.
sub marks_since_start
{
	my ($node) = @_;

	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_get_wal_records_info(
			'$lsn_before{$node->name}', pg_current_wal_lsn())
		WHERE resource_manager = 'snowid'});
}

# A server writes its next mark as its ids come within half a mark step
# (SNOWID_MARK_STEP_MS, 1 s) of the last, so the writers may end before
# one is due (400 transactions took 0.2 s on a fast machine).  Each
# publisher writes on, an order and its lines a transaction, until its WAL
# holds a mark record written since the writers began, then one order
# more, so that its subscriber decodes rows on both sides of it; bounded,
# as the clock reaches the next mark within a second.
sub write_order
{
	my ($node) = @_;
	my $side = $side{ $node->name };

	$node->safe_psql('postgres', qq{
		WITH o AS (INSERT INTO orders (side, customer) VALUES ($side, 0) RETURNING id)
		INSERT INTO order_lines (order_id, side, qty)
		SELECT o.id, $side, q FROM o, generate_series(1, 3) q});
	return;
}
for my $node ($a_node, $both_ways ? ($b_node) : ())
{
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (marks_since_start($node) == 0)
	{
		die $node->name . ': no mark record within '
		  . "$PostgreSQL::Test::Utils::timeout_default s of writing"
		  if time > $deadline;
		write_order($node);
	}
	write_order($node);
}
$_->[0]->wait_for_catchup($_->[2]) for @links;

# The same rows on both sides (on 15: A's rows on B as on A, and B's own).
sub rows
{
	my ($node, $table, $where) = @_;

	return $node->safe_psql('postgres', qq{
		SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '')
		FROM $table t WHERE $where});
}
for my $table ('orders', 'order_lines')
{
	if ($both_ways)
	{
		is(rows($a_node, $table, 'true'), rows($b_node, $table, 'true'),
			"$table: both sides converge to the same rows");
	}
	else
	{
		is(rows($b_node, $table, 'side = 1'), rows($a_node, $table, 'side = 1'),
			"$table: B holds A's rows as A does");
		is($a_node->safe_psql('postgres', "SELECT count(*) FROM $table WHERE side = 2"),
			'0', "$table: B's own rows stay on B");
	}
	my $subscriber = $b_node;
	is( $subscriber->safe_psql('postgres', qq{
			SELECT count(DISTINCT side) FROM $table WHERE side IN (1, 2)}),
		'2', "$table: B holds rows from both servers");
	is( $subscriber->safe_psql('postgres', qq{
			SELECT count(*) FROM $table t, snowid_decode(t.id) d
			WHERE d.worker_id <> CASE t.side WHEN 1 THEN $a_worker ELSE $b_worker END}),
		'0', "$table: every key carries the worker id of the server that took it");
}
is( $b_node->safe_psql('postgres', q{
		SELECT count(*) - count(DISTINCT id) FROM (
			SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
	'0', 'no key was taken twice, in either table or across them');
is( $b_node->safe_psql('postgres', q{
		SELECT count(*) FROM orders o
		LEFT JOIN (SELECT order_id, count(*) AS n FROM order_lines GROUP BY order_id) l
		  ON l.order_id = o.id
		WHERE l.n IS DISTINCT FROM 3}),
	'0', 'every order arrived with its three lines');

# No subscription error: none counted (apply_error_count, the sync error
# counts, whose names change in 19, and from 18 on the conflict counts),
# none logged.
for my $node ($b_node, $both_ways ? ($a_node) : ())
{
	is( $node->safe_psql('postgres', q{
			SELECT coalesce(sum(e.value::bigint), 0)
			FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
			WHERE e.key LIKE '%error_count' OR e.key LIKE 'confl\_%'}),
		'0', $node->name . ': no subscription error counted');
	my $log = slurp_file($node->logfile, $log_offset{ $node->name });
	unlike($log, qr/ERROR:/, $node->name . ': no error in the server log');
}

# The subscriptions decoded through snowid's mark records.
for my $node ($a_node, $both_ways ? ($b_node) : ())
{
	cmp_ok(marks_since_start($node), '>', 0,
		$node->name . ': its subscriber read through snowid mark records');
}

# Logical decoding of a transaction with a mark record inside: pgoutput
# and test_decoding (Debian's postgresql-15 has it; test/tools/pgbuild installs
# it into 16 to 19) return the two rows and nothing else.
$a_node->safe_psql('postgres', q{
	CREATE PUBLICATION pub_probe FOR TABLE probe;
	SELECT pg_create_logical_replication_slot('probe_pgoutput', 'pgoutput');
	SELECT pg_create_logical_replication_slot('probe_text', 'test_decoding')});
my $probe_lsn = $a_node->lsn('insert');
$a_node->safe_psql('postgres', q{
	SELECT pg_sleep(1.2);
	SELECT snowid_next();
	BEGIN;
	INSERT INTO probe (note) VALUES ('first');
	SELECT pg_sleep(1.2);
	INSERT INTO probe (note) VALUES ('after the mark ran out');
	COMMIT});
is( $a_node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE xid::text <> '0') > 0, count(*) FILTER (WHERE xid::text = '0') > 0
		FROM pg_get_wal_records_info('$probe_lsn', pg_current_wal_lsn())
		WHERE resource_manager = 'snowid'}),
	't|t',
	'mark records outside a transaction and inside the probe\'s');
is( $a_node->safe_psql('postgres', q{
		SELECT string_agg(chr(get_byte(data, 0)), '' ORDER BY n)
		FROM pg_logical_slot_get_binary_changes('probe_pgoutput', NULL, NULL,
			'proto_version', '1', 'publication_names', 'pub_probe')
			WITH ORDINALITY c(lsn, xid, data, n)}),
	'BRIIC',
	'pgoutput: begin, relation, the two inserts, commit; nothing of the marks');
like(
	$a_node->safe_psql('postgres', q{
		SELECT string_agg(data, E'\n' ORDER BY n)
		FROM pg_logical_slot_get_changes('probe_text', NULL, NULL,
			'include-xids', '0', 'skip-empty-xacts', '1')
			WITH ORDINALITY c(lsn, xid, data, n)}),
	qr/\ABEGIN\ntable public\.probe: INSERT: id\[bigint\]:\d+ note\[text\]:'first'\ntable public\.probe: INSERT: id\[bigint\]:\d+ note\[text\]:'after the mark ran out'\nCOMMIT\z/,
	'pg_logical_slot_get_changes (test_decoding): the two rows and nothing else');
$a_node->safe_psql('postgres', "SELECT pg_drop_replication_slot(slot_name)
	FROM pg_replication_slots WHERE slot_name LIKE 'probe_%'");

# The same with bigserial: both sides hand out 1, and the subscription
# stops at the first row it receives.  (The subscriptions start after both
# rows are in: a row that arrived first would make the other side's own
# insert fail instead.)
my @serial_links = ([ $a_node, $b_node, 'serial_b_from_a' ]);
push @serial_links, [ $b_node, $a_node, 'serial_a_from_b' ] if $both_ways;
replicate('serial', 'orders', @$_, 'enabled = false') for @serial_links;
my $serial_offset = -s $b_node->logfile;
$b_node->safe_psql('serial', 'INSERT INTO orders (side) VALUES (2)');
$a_node->safe_psql('serial', 'INSERT INTO orders (side) VALUES (1)');
$_->[1]->safe_psql('serial', "ALTER SUBSCRIPTION $_->[2] ENABLE")
  for @serial_links;
is($a_node->safe_psql('serial', 'SELECT min(id) FROM orders'),
	$b_node->safe_psql('serial', "SELECT min(id) FROM orders WHERE side = 2"),
	'bigserial: both servers handed out the same key');
ok( $b_node->poll_query_until('serial', q{
		SELECT apply_error_count > 0 FROM pg_stat_subscription_stats
		WHERE subname = 'serial_b_from_a'}),
	'bigserial: the subscription on B counts an apply error');
# (From 18 on it is reported as a conflict, the key in the detail.)
like(slurp_file($b_node->logfile, $serial_offset),
	qr/ERROR:  (duplicate key value violates unique constraint "orders_pkey"|conflict detected on relation "public\.orders": conflict=insert_exists\n(?:.*\n)?.*Key already exists in unique index "orders_pkey")/,
	'bigserial: B\'s log has the duplicate key error of the subscription');
is($b_node->safe_psql('serial', 'SELECT count(*) FROM orders WHERE side = 1'),
	'0', 'bigserial: A\'s row never arrives on B');
$_->[1]->safe_psql('serial', "ALTER SUBSCRIPTION $_->[2] DISABLE")
  for @serial_links;

$_->stop for ($a_node, $b_node);
done_testing();
