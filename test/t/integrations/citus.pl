# snowid on a sharded Citus cluster (doc/citus.md): a coordinator and two
# workers, each with snowid preloaded next to Citus and a worker id of its
# own, from settings and, in a second cluster, from a coordination database
# on a server outside the cluster.  orders and order_lines are distributed
# and colocated by customer, with DEFAULT snowid_next() on both keys, and a
# reference table beside them.
#
# - Keys before the insert: an order's keys are taken on a node, then the
#   order and its lines go in in one transaction, from the coordinator and
#   from each worker; every key decodes to the node that took it.
# - Defaults: a default is evaluated on the node that runs the statement
#   (a multi-row INSERT ... VALUES, an INSERT ... SELECT from a function,
#   a COPY, an INSERT into the reference table),
#   whichever worker stores the row: each key decodes to that node; but
#   an INSERT ... SELECT between colocated tables runs on the shards, and
#   each key decodes to the worker that stores its row.
# - Faults, while clients take keys (settings cluster): a shard moved
#   (logical replication) and the cluster rebalanced, keys unchanged; a
#   worker's streaming standby promoted (citus#8653's event) and the
#   coordinator failed over to its standby.  No key repeats, each node's
#   keys after a fault lie above its keys before, and the longest wait for
#   a key in each fault is printed (diag) for doc/citus.md.  In the
#   coordination-database cluster a worker's standby is promoted too, and
#   a clone of the other worker is promoted into a node of its own while
#   that worker runs (citus#8653's event): two worker ids, no key twice.
# - Time ranges across shards: snowid_from_time() and snowid_span() reach
#   every shard's task (EXPLAIN, every task shown), and a distributed
#   table partitioned by its snowid key is pruned to one partition on every
#   shard.
#
# Citus comes from test/tools/pgbuild citus (test/run installs it); no
# Citus release supports PostgreSQL 19, and the test skips there, as it
# does where no release compiles (16's branch point).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time usleep);

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan(skip_all => "no Citus release supports PostgreSQL $major "
	  . '(Citus 14.0.1 supports 16 to 18, 13.2.2 15 to 17)')
  if $major < 15 || $major > 18;
my $libdir = `pg_config --pkglibdir`;
my $sharedir = `pg_config --sharedir`;
chomp($libdir, $sharedir);
# where no Citus release compiles, test/tools/pgbuild says why in this file
if (!-e "$libdir/citus.so" && -f "$sharedir/.snowid-citus")
{
	my ($what, $why) = split /\n/,
	  PostgreSQL::Test::Utils::slurp_file("$sharedir/.snowid-citus");
	plan(skip_all => "$what: " . ($why // 'see test/tools/pgbuild'));
}
SnowidTest::need_file("$libdir/citus.so",
	'none: test/tools/pgbuild citus builds it from test/sources.txt');

my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('citus'));
my $dc = 1;

# Citus must come first in shared_preload_libraries; logical WAL for the
# shard moves; a standby of any node replays both.
my $citus_conf = <<'EOC';
shared_preload_libraries = 'citus,snowid'
max_connections = 60
max_prepared_transactions = 30
max_worker_processes = 20
max_replication_slots = 10
max_wal_senders = 10
wal_sender_timeout = '5s'
citus.shard_count = 4
EOC

# A started Citus node with snowid; $coord (a SnowidPgCoord) gives it its
# worker id, else the settings do.
sub citus_node
{
	my ($name, $settings, $coord) = @_;
	my %conf = ('snowid.datacenter_id' => $dc, %$settings);
	my $node = $coord
	  ? $coord->new_node($name, \%conf, allows_streaming => 'logical')
	  : SnowidTest::new_node($name, \%conf, allows_streaming => 'logical');

	# Citus reaches the node itself by citus.local_hostname: its socket
	$node->append_conf('postgresql.conf',
		$citus_conf . "citus.local_hostname = '" . $node->host . "'\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION citus; CREATE EXTENSION snowid');
	return $node;
}

# The worker id a node's ids carry (from snowid_status(), after its first id)
sub worker_id
{
	my ($node) = @_;

	return $node->safe_psql('postgres',
		'SELECT snowid_next() IS NOT NULL; SELECT worker_id FROM snowid_status()')
	  =~ s/^t\n//r;
}

# A coordinator and two workers with the tables; returns the three nodes.
sub citus_cluster
{
	my ($label, $coord) = @_;
	my @nodes = map {
		citus_node("${label}_$_->[0]",
			$coord ? {} : { 'snowid.worker_id' => $_->[1] }, $coord)
	} ([ 'coordinator', 1 ], [ 'worker1', 2 ], [ 'worker2', 3 ]);
	my ($c, @w) = @nodes;

	$c->safe_psql('postgres',
		    'SELECT citus_set_coordinator_host(\'' . $c->host . "', "
		  . $c->port . ');'
		  . join('',
			map { "SELECT citus_add_node('" . $_->host . "', " . $_->port . ');' }
			  @w));
	$c->safe_psql('postgres', q{
		CREATE TABLE orders (
			customer_id bigint NOT NULL,
			id bigint NOT NULL DEFAULT snowid_next(),
			note text,
			PRIMARY KEY (customer_id, id));
		CREATE TABLE order_lines (
			customer_id bigint NOT NULL,
			order_id bigint NOT NULL,
			id bigint NOT NULL DEFAULT snowid_next(),
			qty int,
			PRIMARY KEY (customer_id, id));
		CREATE INDEX ON orders (id);
		SELECT create_distributed_table('orders', 'customer_id');
		SELECT create_distributed_table('order_lines', 'customer_id',
			colocate_with => 'orders');
		CREATE TABLE products (
			id bigint PRIMARY KEY DEFAULT snowid_next(),
			name text);
		SELECT create_reference_table('products');
	});
	return @nodes;
}

# Keys before insert: on node $node, the keys of an order of customer
# $customer and its $lines lines are taken first, then the order and its
# lines go in in one transaction.  Returns the keys.
sub order_with_keys_first
{
	my ($node, $customer, $lines, $note) = @_;
	my @keys = SnowidTest::next_ids($node, 1 + $lines);
	my ($order, @line_keys) = @keys;

	$node->safe_psql('postgres',
		    "BEGIN;\n"
		  . "INSERT INTO orders VALUES ($customer, $order, '$note');\n"
		  . 'INSERT INTO order_lines VALUES '
		  . join(', ', map { "($customer, $order, $_, 1)" } @line_keys)
		  . ";\nCOMMIT;");
	return @keys;
}

# Checks that no key is stored twice in the cluster's tables (one test).
sub stored_once
{
	my ($node, $name) = @_;

	is( $node->safe_psql('postgres', q{
			SELECT count(*) - count(DISTINCT id) FROM (
				SELECT id FROM orders UNION ALL SELECT id FROM order_lines
				UNION ALL SELECT id FROM products) k}),
		0,
		"$name: no key repeats across orders, order_lines and products");
	return;
}

# Keys and defaults on a cluster (doc/citus.md): keys before insert from
# each node, defaults from each node (INSERT, INSERT ... SELECT, COPY),
# each key decoded to the node that made it.  Returns a hash of node name
# to worker id.
sub keys_and_defaults
{
	my ($label, $nodes) = @_;
	my %node = (
		coordinator => $nodes->[0],
		worker1 => $nodes->[1],
		worker2 => $nodes->[2]);
	my %worker = map { $_ => worker_id($node{$_}) } keys %node;
	my %distinct = reverse %worker;

	is(scalar(keys %distinct), 3,
		"$label: the coordinator and the workers carry three worker ids");

	# keys before insert, customers 1 to 8 from each node: the shards of
	# both workers
	for my $name (sort keys %node)
	{
		for my $customer (1 .. 8)
		{
			order_with_keys_first($node{$name}, $customer, 3, "first $name");
		}
	}
	for my $name (sort keys %node)
	{
		is( $nodes->[0]->safe_psql('postgres', qq{
				SELECT count(*) FILTER (WHERE (snowid_decode(o.id)).worker_id <> $worker{$name}
					OR (snowid_decode(l.id)).worker_id <> $worker{$name}),
					count(DISTINCT o.id), count(*)
				FROM orders o JOIN order_lines l
				  ON l.customer_id = o.customer_id AND l.order_id = o.id
				WHERE o.note = 'first $name'}),
			'0|8|24',
			"$label: keys taken first on the $name decode to it, 8 orders and 24 lines in");
		is( $nodes->[0]->safe_psql('postgres', qq{
				SELECT count(DISTINCT nodeport) FROM orders o
				JOIN pg_dist_shard_placement p
				  ON p.shardid = get_shard_id_for_distribution_column('orders', o.customer_id)
				WHERE o.note = 'first $name'}),
			2, "$label: the $name\'s orders lie on both workers");
	}

	# defaults: evaluated on the node that runs the statement, whichever
	# worker stores the row; but an INSERT ... SELECT between colocated
	# tables is pushed down to the shards, and each worker evaluates the
	# default of the rows it stores
	my $placed = 'CASE p.nodeport WHEN ' . $node{worker1}->port
	  . " THEN $worker{worker1} WHEN " . $node{worker2}->port
	  . " THEN $worker{worker2} END";
	for my $name (sort keys %node)
	{
		my $n = $node{$name};

		$n->safe_psql('postgres', qq{
			INSERT INTO orders (customer_id, note) VALUES }
			  . join(', ', map { "($_, 'default $name')" } 1 .. 8) . qq{;
			INSERT INTO orders (customer_id, note)
			SELECT c, 'series $name' FROM generate_series(1, 8) c;
			INSERT INTO order_lines (customer_id, order_id, qty)
			SELECT customer_id, id, 2 FROM orders WHERE note = 'default $name';
			INSERT INTO products (name) VALUES ('$name');
		});
		$n->safe_psql('postgres',
			"COPY orders (customer_id, note) FROM STDIN;\n"
			  . join('', map { "$_\tcopy $name\n" } 1 .. 8) . "\\.\n");
		is( $nodes->[0]->safe_psql('postgres', qq{
				SELECT string_agg(DISTINCT (snowid_decode(id)).worker_id::text, ','), count(*)
				FROM (
					SELECT id FROM orders
					WHERE note IN ('default $name', 'series $name', 'copy $name')
					UNION ALL SELECT id FROM products WHERE name = '$name') k}),
			"$worker{$name}|25",
			"$label: defaults of INSERT ... VALUES, of INSERT ... SELECT from a function, of COPY and of the reference table run on the $name decode to it");
		is( $nodes->[0]->safe_psql('postgres', qq{
				SELECT count(*) FILTER (WHERE (snowid_decode(l.id)).worker_id = $placed),
					count(DISTINCT p.nodeport), count(*)
				FROM order_lines l JOIN orders o
				  ON l.customer_id = o.customer_id AND l.order_id = o.id
				JOIN pg_dist_shard_placement p
				  ON p.shardid = get_shard_id_for_distribution_column('order_lines', l.customer_id)
				WHERE o.note = 'default $name'}),
			'8|2|8',
			"$label: defaults of an INSERT ... SELECT run on the $name decode to the worker storing each row");
	}
	stored_once($nodes->[0], $label);
	return %worker;
}

# A client taking keys in a loop until stop_clients(): a child process
# running $sql (which returns one key) through $connstr, a new connection
# per key, writing "time key" per key and "time -" per failure to a file.
# A test that dies leaves none running.
my @clients;

END
{
	kill 'KILL', map { $_->{pid} } @clients;
}

sub start_client
{
	my ($name, $connstr, $sql) = @_;
	my $file = "$dir/$name.keys";
	my $pid = fork() // die "fork: $!";

	if ($pid == 0)
	{
		open my $fh, '>', $file or POSIX::_exit(1);
		$fh->autoflush(1);
		while (!-e "$dir/stop")
		{
			my ($out, $err) = ('', '');
			my $ok = eval { IPC::Run::run(
				[
					'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
					'-d', "$connstr connect_timeout=5", '-c', $sql
				],
				'<', \undef, '>', \$out, '2>', \$err) };
			chomp $out;
			if ($ok && $out =~ /^\d+$/)
			{
				printf $fh "%.3f %s\n", time, $out;
			}
			else
			{
				printf $fh "%.3f -\n", time;
				usleep(20_000);
			}
		}
		close $fh;
		POSIX::_exit(0);
	}
	push @clients, { pid => $pid, file => $file, name => $name };
	return;
}

# Waits until each client has taken $n more keys than it had.
sub clients_take
{
	my ($n) = @_;
	my %base = map { $_->{name} => scalar(client_keys($_)) } @clients;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	for my $client (@clients)
	{
		usleep(50_000)
		  while scalar(client_keys($client)) < $base{ $client->{name} } + $n
		  && time < $deadline;
	}
	return;
}

# A client's keys, in the order taken
sub client_keys
{
	my ($client) = @_;
	open my $fh, '<', $client->{file} or return ();
	my @keys = map { (split ' ')[1] } grep { !/ -$/ } <$fh>;
	close $fh;
	chomp @keys;
	return @keys;
}

# The longest time a client waited for a key: the longest gap between two
# keys in a row (failures between them count as waiting), in seconds.
sub longest_wait
{
	my ($client) = @_;
	open my $fh, '<', $client->{file} or die "$client->{file}: $!";
	my ($last, $longest) = (undef, 0);
	while (<$fh>)
	{
		my ($t, $key) = split ' ';
		next if $key eq '-';
		$longest = $t - $last if defined $last && $t - $last > $longest;
		$last = $t;
	}
	close $fh;
	return $longest;
}

# Stops the clients; returns them, each with its keys.
sub stop_clients
{
	open my $fh, '>', "$dir/stop" or die $!;
	close $fh;
	waitpid($_->{pid}, 0) for @clients;
	unlink "$dir/stop";
	my @done = @clients;
	@clients = ();
	$_->{keys} = [ client_keys($_) ] for @done;
	return @done;
}

# Checks a client's keys: more than $n, increasing (one generator, or its
# successor, made them all), each decoding to $worker (three tests).
sub check_client
{
	my ($node, $client, $worker, $name) = @_;
	my @keys = @{ $client->{keys} };
	my $increasing = !grep { $keys[$_] <= $keys[ $_ - 1 ] } 1 .. $#keys;

	cmp_ok(scalar(@keys), '>', 10, "$name: the client took keys");
	ok($increasing, "$name: each key lies above the keys taken before it");
	is( $node->safe_psql('postgres',
			'SELECT string_agg(DISTINCT (snowid_decode(k)).worker_id::text, \',\') FROM unnest(\'{'
			  . join(',', @keys) . '}\'::bigint[]) k'),
		$worker, "$name: its keys decode to worker id $worker");
	return;
}

# A streaming standby of a node, started; its settings are the node's.
# $application_name names it in the node's pg_stat_replication.
sub add_standby
{
	my ($node, $name, $application_name) = @_;

	$node->backup("${name}_backup");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($node, "${name}_backup", has_streaming => 1);
	# CREATE EXTENSION citus made the node a key for TLS, which the backup
	# leaves readable by the group: the server refuses it so
	chmod 0600, $standby->data_dir . '/server.key';
	$standby->append_conf('postgresql.conf',
		    "primary_conninfo = 'host=" . $node->host . ' port=' . $node->port
		  . " application_name=$application_name'\n")
	  if defined $application_name;
	$standby->start;
	$node->wait_for_catchup($application_name // $standby);
	return $standby;
}

# A connection string naming a node and its standby: the writable one
sub either
{
	my ($a, $b) = @_;

	return 'host=' . $a->host . ',' . $b->host . ' port=' . $a->port . ','
	  . $b->port
	  . ' dbname=postgres target_session_attrs=read-write';
}

# Everything that was stored, key by key, to check that no fault changed it
sub snapshot
{
	my ($node) = @_;

	return $node->safe_psql('postgres', q{
		SELECT customer_id, id, note FROM orders
		UNION ALL SELECT customer_id, id, qty::text FROM order_lines
		ORDER BY 2});
}

# --- Worker ids from settings -------------------------------------------

my @cluster = citus_cluster('set');
my ($coordinator, $worker1, $worker2) = @cluster;
my %worker = keys_and_defaults('settings', \@cluster);
is_deeply([ @worker{qw(coordinator worker1 worker2)} ], [ 1, 2, 3 ],
	'settings: each node carries the worker id of its settings');

# A shard moved and the cluster rebalanced while a client takes keys
# through the coordinator: the stored keys do not change, none repeats.
my $before = snapshot($coordinator);
my $orders_sql =
  q{INSERT INTO orders (customer_id, note) VALUES ((random() * 100)::int, 'client') RETURNING id};
start_client('move', $coordinator->connstr('postgres'), $orders_sql);
clients_take(20);
my $shard = $coordinator->safe_psql('postgres', qq{
	SELECT shardid FROM pg_dist_shard JOIN pg_dist_shard_placement USING (shardid)
	WHERE logicalrelid = 'orders'::regclass AND nodeport = ${\ $worker1->port }
	ORDER BY shardid LIMIT 1});
$coordinator->safe_psql('postgres',
	    "SELECT citus_move_shard_placement($shard, '"
	  . $worker1->host . "', " . $worker1->port . ", '"
	  . $worker2->host . "', " . $worker2->port
	  . ", shard_transfer_mode => 'force_logical')");
clients_take(20);
is( $coordinator->safe_psql('postgres',
		"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard"),
	$worker2->port, 'the shard moved to worker 2 (logical replication)');
$coordinator->safe_psql('postgres',
	"SELECT rebalance_table_shards(shard_transfer_mode => 'force_logical')");
clients_take(20);
is( $coordinator->safe_psql('postgres', q{
		SELECT string_agg(n::text, ',') FROM (
			SELECT count(*) n FROM pg_dist_shard_placement
			JOIN pg_dist_shard USING (shardid)
			WHERE logicalrelid = 'orders'::regclass GROUP BY nodeport) c}),
	'2,2', 'the rebalance gave each worker two shards of orders again');
my ($move) = stop_clients();
diag(sprintf 'shard move and rebalance: the longest wait for a key was %.3f s',
	longest_wait($move));
check_client($coordinator, $move, $worker{coordinator}, 'move and rebalance');
my $after = snapshot($coordinator);
my %now = map { $_ => 1 } split /\n/, $after;
is(scalar(grep { !$now{$_} } split /\n/, $before), 0,
	'move and rebalance: every row stored before is there with its key unchanged');
is( $coordinator->safe_psql('postgres',
		'SELECT count(*) FROM orders WHERE id = ANY(\'{'
		  . join(',', @{ $move->{keys} }) . '}\')'),
	scalar(@{ $move->{keys} }),
	'move and rebalance: every key the client was given is stored once');
stored_once($coordinator, 'move and rebalance');

# A worker's streaming standby promoted while clients take keys from it
# (the event of citus#8653): the promoted node continues above every key
# its old primary gave.
my $standby1 = add_standby($worker1, 'set_worker1_standby');
start_client('worker1', either($worker1, $standby1), 'SELECT snowid_next()');
clients_take(20);
$worker1->stop('immediate');
SnowidTest::promote($standby1);
$coordinator->safe_psql('postgres',
	    "SELECT citus_update_node(nodeid, '"
	  . $standby1->host . "', " . $standby1->port
	  . ') FROM pg_dist_node WHERE nodeport = ' . $worker1->port);
clients_take(20);
my ($w1client) = stop_clients();
diag(sprintf "a worker's standby promoted: the longest wait for a key was %.3f s",
	longest_wait($w1client));
check_client($coordinator, $w1client, $worker{worker1},
	"worker 1's standby promoted");
$worker1 = $standby1;
order_with_keys_first($worker1, 3, 2, 'after promotion');
is( $coordinator->safe_psql('postgres', q{
		SELECT count(*) FROM orders o JOIN order_lines l
		  ON l.customer_id = o.customer_id AND l.order_id = o.id
		WHERE o.note = 'after promotion'}),
	2, 'the promoted worker takes keys and writes through the cluster');

# The coordinator fails over to its standby while a client inserts orders
# through it (the keys are the coordinator's defaults).
my $standbyc = add_standby($coordinator, 'set_coordinator_standby');
start_client('coordinator', either($coordinator, $standbyc), $orders_sql);
clients_take(20);
$coordinator->stop('immediate');
SnowidTest::promote($standbyc);
$standbyc->safe_psql('postgres',
	    "SELECT citus_set_coordinator_host('"
	  . $standbyc->host . "', " . $standbyc->port . ')');
clients_take(20);
my ($cclient) = stop_clients();
diag(sprintf 'the coordinator failed over: the longest wait for a key was %.3f s',
	longest_wait($cclient));
check_client($standbyc, $cclient, $worker{coordinator},
	'the coordinator failed over');
$coordinator = $standbyc;
cmp_ok($cclient->{keys}[0], '>', (sort { $b <=> $a } @{ $move->{keys} })[0],
	"the promoted coordinator's keys lie above the old coordinator's");
is( $coordinator->safe_psql('postgres',
		'SELECT count(*) FROM orders WHERE id = ANY(\'{'
		  . join(',', @{ $cclient->{keys} }) . '}\')'),
	scalar(@{ $cclient->{keys} }),
	'the coordinator failed over: every key its clients were given is stored once');
stored_once($coordinator, 'after the failovers');

# Time ranges across shards: the bound reaches every shard's task
my $explain = $coordinator->safe_psql('postgres', q{
	SET citus.explain_all_tasks = on;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM orders
	WHERE id >= snowid_from_time(now() - interval '10 minutes')
	  AND id < snowid_from_time(now() - interval '10 minutes') + snowid_span('20 minutes')});
my (undef, @tasks) = split /-> +Task\n/, $explain;
is(scalar(@tasks), 4, 'EXPLAIN shows a task for each of the 4 shards of orders')
  or diag($explain);
is( scalar(grep {
			/(?:Index Cond|Filter): \(\(id >= snowid_from_time\(.*\)\) AND \(id < \(snowid_from_time\(.*\) \+ snowid_span\(/
		} @tasks),
	4,
	'snowid_from_time() and snowid_span() bound the scan in every task')
  or diag($explain);

# A distributed table partitioned by its snowid key: pruned to one
# partition on every shard
my ($past, $later) = split /\|/, $coordinator->safe_psql('postgres', q{
	SELECT snowid_from_time(now() - interval '1 hour'),
		snowid_from_time(now() + interval '1 hour')});
$coordinator->safe_psql('postgres', qq{
	CREATE TABLE events (
		customer_id bigint NOT NULL,
		id bigint NOT NULL DEFAULT snowid_next(),
		what text,
		PRIMARY KEY (customer_id, id)) PARTITION BY RANGE (id);
	CREATE TABLE events_past PARTITION OF events FOR VALUES FROM (MINVALUE) TO ($past);
	CREATE TABLE events_now PARTITION OF events FOR VALUES FROM ($past) TO ($later);
	CREATE TABLE events_later PARTITION OF events FOR VALUES FROM ($later) TO (MAXVALUE);
	SELECT create_distributed_table('events', 'customer_id');
	INSERT INTO events (customer_id, what) SELECT c, 'now' FROM generate_series(1, 20) c;
});
is( $coordinator->safe_psql('postgres', q{
		SELECT count(*) FROM events_now WHERE (snowid_decode(id)).worker_id = 1}),
	20, 'the partitioned table takes its keys from the default, in the partition of now');
$explain = $coordinator->safe_psql('postgres', q{
	SET citus.explain_all_tasks = on;
	EXPLAIN (COSTS OFF) SELECT count(*) FROM events
	WHERE id >= snowid_from_time(now() - interval '10 minutes')
	  AND id < snowid_from_time(now() - interval '10 minutes') + snowid_span('20 minutes')});
(undef, @tasks) = split /-> +Task\n/, $explain;
is(scalar(@tasks), 4, 'EXPLAIN shows a task for each of the 4 shards of events')
  or diag($explain);
is(scalar(grep { /on events_now_\d+/ && !/events_(?:past|later)_\d+/ } @tasks),
	4, 'every shard scans only its partition of now')
  or diag($explain);

# --- Worker ids from a coordination database -----------------------------

my $coord = SnowidPgCoord->new;
my @ccluster = citus_cluster('db', $coord);
my %cworker = keys_and_defaults('coordination database', \@ccluster);
is( $coord->db->sql(undef, qq{
		SELECT count(*) FROM snowid_coordinator.worker_ids
		WHERE datacenter = $dc AND holder IS NOT NULL
		  AND worker_id IN ($cworker{coordinator}, $cworker{worker1}, $cworker{worker2})}),
	3, 'coordination database: it holds the three worker ids the nodes carry');

# a worker's standby promoted: it continues above its old primary's keys
my $cstandby = add_standby($ccluster[1], 'db_worker1_standby');
start_client('db_worker1', either($ccluster[1], $cstandby), 'SELECT snowid_next()');
clients_take(20);
$ccluster[1]->stop('immediate');
SnowidTest::promote($cstandby);
clients_take(20);
my ($dclient) = stop_clients();
diag(sprintf "coordination database, a worker's standby promoted: the longest wait for a key was %.3f s",
	longest_wait($dclient));
my @dkeys = @{ $dclient->{keys} };
ok(!grep({ $dkeys[$_] <= $dkeys[ $_ - 1 ] } 1 .. $#dkeys),
	"coordination database, worker 1's standby promoted: each key lies above the keys taken before it");
my %seen;
is(scalar(grep { $seen{$_}++ } @dkeys), 0,
	"coordination database, worker 1's standby promoted: no key repeats");
# the promoted standby is a holder of its own (doc/coordinator.md): it
# claims a worker id that no running node carries
my $promoted = worker_id($cstandby);
ok(!grep({ $_ == $promoted } @cworker{qw(coordinator worker2)}),
	"coordination database: the promoted standby carries a worker id no running node carries");
diag("coordination database: worker 1 carried worker id $cworker{worker1}, its promoted standby $promoted");
$ccluster[0]->safe_psql('postgres',
	    "SELECT citus_update_node(nodeid, '"
	  . $cstandby->host . "', " . $cstandby->port
	  . ') FROM pg_dist_node WHERE nodeport = ' . $ccluster[1]->port);
$ccluster[1] = $cstandby;

# The event of citus#8653: a clone of worker 2 (its streaming standby)
# added to the cluster and promoted into a node of its own while worker 2
# runs on (citus_add_clone_node(), citus_promote_clone_and_rebalance()).
# Under a coordination database the clone is a holder of its own and
# claims a worker id of its own: the two nodes repeat no key.  (Citus
# finds the clone among its primary's senders by the host it is given, as
# application_name.)
my $clone = add_standby($ccluster[2], 'db_worker2_clone', $ccluster[2]->host);
# Citus adds a clone only while every metadata node is in sync, which it
# brings about in the background after the node update above
$ccluster[0]->poll_query_until('postgres',
	'SELECT bool_and(metadatasynced) FROM pg_dist_node WHERE hasmetadata')
  or die 'the metadata did not reach every node';
my $clone_node = $ccluster[0]->safe_psql('postgres',
	    "SELECT citus_add_clone_node('"
	  . $clone->host . "', " . $clone->port . ", '"
	  . $ccluster[2]->host . "', " . $ccluster[2]->port . ')');
$ccluster[0]->safe_psql('postgres',
	"SELECT citus_promote_clone_and_rebalance($clone_node)");
$clone->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the clone was not promoted';
my $clone_worker = worker_id($clone);
isnt($clone_worker, worker_id($ccluster[2]),
	'coordination database: the promoted clone and worker 2 carry two worker ids');
is( $ccluster[0]->safe_psql('postgres', q{
		SELECT count(DISTINCT nodeport) FROM pg_dist_shard_placement
		JOIN pg_dist_shard USING (shardid) WHERE logicalrelid = 'orders'::regclass}),
	3, 'coordination database: the rebalance gave the promoted clone shards of its own');
%seen = ();
my @both = (SnowidTest::next_ids($ccluster[2], 200), SnowidTest::next_ids($clone, 200));
$ccluster[0]->safe_psql('postgres', q{
	INSERT INTO orders (customer_id, note) SELECT c, 'after the clone' FROM generate_series(1, 40) c;
	INSERT INTO order_lines (customer_id, order_id, qty)
	SELECT customer_id, id, 3 FROM orders WHERE note = 'after the clone'});
is(scalar(grep { $seen{$_}++ } @both), 0,
	'coordination database: worker 2 and its promoted clone repeat no key');
stored_once($ccluster[0], 'coordination database, after the clone');

done_testing();
