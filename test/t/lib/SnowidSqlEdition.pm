# What the tests of the SQL edition (snowid_sql, doc/managed.md) share: psql
# as a role, the objects of an installation as a text, to compare an
# updated installation with a fresh one, and operators and functions
# planted in public, with what tells whether they ran (and whether the
# owner's code ran as a superuser); whether pg_tle can be had; and, for the
# update of the versions that claimed their worker id (up to 1.2), a
# coordination server, the fleet's login there and the configuration that
# claimed from it; the provisioning script of doc/managed.md run against a
# coordination server, and the servers its tests run it for; dumps and
# restores; batches of ids ahead of the clock, and the later ids counted
# against them; and databases issuing side by side, counted for ids issued
# twice.
package SnowidSqlEdition;

use strict;
use warnings;

use Exporter 'import';
use File::Spec ();
use IPC::Run ();
use PostgreSQL::Test::Utils ();
use SnowidClients ();
use SnowidPgCoord ();
use SnowidTest ();
use Time::HiRes ();
use Test::More ();

# what a test may name without the package: use SnowidSqlEdition qw(...)
our @EXPORT_OK = qw(psql_as app_url);

# A server without snowid's library (init with %init; conf => TEXT for
# its postgresql.conf), started (under clock => a SnowidTest::Clock if
# given), with the login roles @$roles, app first, and the databases @$dbs
# owned by app: the server
sub new_server
{
	my ($name, $roles, $dbs, %init) = @_;
	my $conf = delete $init{conf};
	my $clock = delete $init{clock};
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	$node->append_conf('postgresql.conf', $conf) if $conf;
	if ($clock)
	{
		$clock->start_node($node);
	}
	else
	{
		$node->start;
	}
	$node->safe_psql('postgres',
		join('', map { "CREATE ROLE $_ LOGIN;\n" } @$roles)
		  . join('', map { "CREATE DATABASE $_ OWNER app;\n" } @$dbs));
	return $node;
}

# The edition's current version: default_version of snowid_sql.control
# at the top of the tree
sub version
{
	my ($version) = PostgreSQL::Test::Utils::slurp_file("$SnowidTest::top/snowid_sql.control")
	  =~ /^default_version = '(.*)'$/m;

	return $version;
}

# A server of new_server where app, who sees every session's transactions
# (GRANT pg_read_all_stats), owns the databases @dbs, the first with
# dblink (to claim, as 1.2 did), started under the SnowidTest::Clock
# $clock if given: the server
sub claiming_server
{
	my ($name, @dbs) = @_;
	my $clock = ref $dbs[-1] ? pop @dbs : undef;
	my $node = new_server($name, ['app'], \@dbs, $clock ? (clock => $clock) : ());

	$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
	$node->safe_psql($dbs[0], 'CREATE EXTENSION dblink');
	return $node;
}

# The connection string of database $db of $node as app
sub app_url
{
	my ($node, $db) = @_;

	return $node->connstr($db) . ' user=app';
}

# Database $db of $node, owned by app: app creates the edition there and
# runs $sql after, if given; dies on an error
sub install
{
	my ($node, $db, $sql) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db),
		'CREATE EXTENSION snowid_sql' . (defined $sql ? ";\n$sql" : ''));

	die "CREATE EXTENSION: $err" if $rc;
	return;
}

# A server of its own system identifier with the roles app and tle_admin,
# a member of pgtle_admin, with pg_tle preloaded unless $tle_missing says
# why it is not built (pg_tle_missing)
sub tle_server
{
	my ($name, $tle_missing) = @_;
	my $node = new_server($name, [qw(app tle_admin)], [], force_initdb => 1,
		conf => defined $tle_missing ? '' : "shared_preload_libraries = 'pg_tle'\n");

	$node->safe_psql('postgres', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO tle_admin')
	  unless defined $tle_missing;
	return $node;
}

# Database $from of $node dumped by pg_dump -Fc into $file and restored
# by pg_restore into database $to, made here (owned by $owner if given):
# two tests, $what naming what is dumped
sub dump_restore
{
	my ($node, $from, $to, $file, $what, $owner) = @_;

	$node->command_ok([ 'pg_dump', '-Fc', '-f', $file, '-d', $node->connstr($from) ],
		"pg_dump dumps $what");
	$node->safe_psql('postgres', "CREATE DATABASE $to" . ($owner ? " OWNER $owner" : ''));
	$node->command_ok(
		[ 'pg_restore', '--exit-on-error', '-d', $node->connstr($to), $file ],
		'pg_restore restores it without an error');
	return;
}

# Database $from of $node dumped by its owner app (pg_dump -Fc into $file:
# a test, named $dumps), restored by app into a new database $to that app
# owns (a test), and dropped: the copy of a source that is gone
sub owner_copy
{
	my ($node, $from, $to, $file, $dumps) = @_;

	$node->command_ok([ 'pg_dump', '-Fc', '-f', $file, '-d', app_url($node, $from) ], $dumps);
	$node->safe_psql('postgres', "CREATE DATABASE $to OWNER app");
	$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', app_url($node, $to), $file ],
		'and restores it into a new database');
	$node->safe_psql('postgres', "DROP DATABASE $from");
	return;
}

# pg_dump -Fc of a database (a connection string) into $file, with more
# of pg_dump's options (-t t) if given; its errors go to diag
sub dump_to
{
	my ($connstr, $file, @options) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'pg_dump', '-Fc', @options, '-f', $file, '-d', $connstr ],
		'>', \$out, '2>', \$err)
	  or Test::More::diag($err);
	return;
}

# pg_restore of $file into a database (a connection string), with more of
# its options (--exit-on-error) if given: (its exit code, stderr)
sub restore_into
{
	my ($connstr, $file, @options) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([ 'pg_restore', @options, '-d', $connstr, $file ],
		'>', \$out, '2>', \$err);
	return ($? >> 8, $err);
}

# SQL that sets the layout of the guard's tests: 0 datacenter, 6 worker
# and 4 sequence bits (and $more, "worker_id = 5", if given)
sub layout_sql
{
	my ($more) = @_;

	return 'UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4'
	  . (defined $more ? ", $more" : '');
}

# SQL that the owner of a new database runs to make the source of the
# guard's tests: the edition in the layout of layout_sql with worker id 5,
# issuing 5,000 ids into a table t (id from its default, n 1 to 5,000)
# over 15 s or more; it prints how many t holds
sub spread_source_sql
{
	return 'CREATE EXTENSION snowid_sql; ' . layout_sql('worker_id = 5') . q{;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	DO $$ BEGIN FOR i IN 1 .. 5000 LOOP INSERT INTO t (n) VALUES (i); PERFORM pg_sleep(0.003); END LOOP; END $$;
	SELECT count(*) FROM t};
}

# Databases of $node (names) issuing at once as app, one id a statement,
# from a moment 2 s ahead of the server's clock for 3 s: (how many ids,
# how many of them came twice); a database's errors go to diag
sub issue_at_once
{
	my ($node, @dbs) = @_;
	my $start = $node->safe_psql('postgres', q{SELECT clock_timestamp() + interval '2 s'});
	my %run;

	for my $db (@dbs)
	{
		$run{$db}{out} = '';
		$run{$db}{err} = '';
		$run{$db}{h} = IPC::Run::start(
			[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', app_url($node, $db), '-c',
			  qq{CREATE TEMP TABLE ids (id bigint);
				 DO \$\$ BEGIN
					PERFORM pg_sleep_until('$start');
					WHILE clock_timestamp() < timestamptz '$start' + interval '3 s' LOOP
						INSERT INTO ids VALUES (snowid_next());
					END LOOP;
				 END \$\$;
				 SELECT id FROM ids} ],
			'<', \undef, '>', \$run{$db}{out}, '2>', \$run{$db}{err});
	}
	my %seen;
	my ($n, $twice) = (0, 0);
	for my $db (@dbs)
	{
		$run{$db}{h}->finish;
		Test::More::diag("$db: $run{$db}{err}") if $run{$db}{err};
		my %mine = map { $_ => 1 } split /\n/, $run{$db}{out};
		$n += keys %mine;
		$twice += grep { $seen{$_}++ } keys %mine;
	}
	return ($n, $twice);
}

# The ids of table t in databases ([node, database] pairs): (how many of
# them stand more than once, in one or across, how many there are)
sub ids_twice
{
	my (@dbs) = @_;
	my %ids;
	my $total = 0;

	for my $pair (@dbs)
	{
		my ($node, $db) = @$pair;
		my @got = split /\n/, $node->safe_psql($db, 'SELECT id FROM t');

		$total += @got;
		$ids{$_}++ for @got;
	}
	return (scalar(grep { $ids{$_} > 1 } keys %ids), $total);
}

# An application's transaction in database $db of $node, as app: it takes
# an id and ends $seconds later; returns once it is open, with its
# session (SnowidTest::Session)
sub open_transaction
{
	my ($node, $db, $seconds) = @_;
	my $session = SnowidTest::start_psql($node,
		"BEGIN; SELECT snowid_next(); SELECT pg_sleep($seconds); COMMIT",
		db => $db, user => 'app');

	$node->poll_query_until($db, q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'BEGIN; SELECT snowid_next()%'
				   AND xact_start IS NOT NULL)})
	  or die 'the application\'s transaction did not start';
	return $session;
}

# The set-up of the tests of release across two servers: a clock (the
# test skips without one, SnowidTest::need_clock), a coordination server,
# and two servers, one (under the clock) and two, named $name_one and
# $name_two, on each of which app, who sees every session's transactions
# (as the script's release needs), owns a database db of the edition with
# 4 sequence bits and a table t (id, n); and the provisioning script for
# datacenter 3 (asserting every 60 s, a margin of 1 s, release waiting up
# to 60 s), which knows their databases as one and two.  Returns (the
# clock, the coordination server's node, the script, one => the server,
# two => the server).
sub release_pair
{
	my ($name) = @_;
	my $clock = SnowidTest::Clock->new;
	my $cnode = SnowidPgCoord->new->node;
	my $script = provisioning_script($name, $cnode,
		DATACENTER => 3, INTERVAL_MS => 60000, MARGIN_MS => 1000, RELEASE_WAIT_S => 60);
	my %node;

	for my $who (qw(one two))
	{
		$node{$who} = new_server("${name}_$who", ['app'], ['db'],
			$who eq 'one' ? (clock => $clock) : ());
		$node{$who}->safe_psql('postgres', 'GRANT pg_read_all_stats TO app');
		install($node{$who}, 'db',
			'UPDATE snowid_config SET sequence_bits = 4; CREATE TABLE t (id bigint, n int)');
		$script->databases($who => app_url($node{$who}, 'db'));
	}
	return ($clock, $cnode, $script, %node);
}

# SQL of a DO block that inserts $rounds batches of $size ids into t (n:
# the round), with a pause of $opt{pause} s after each if given.  Where a
# round's call finds no worker id (object_not_in_prerequisite_state),
# lost => 'EXIT' ends the loop and lost => 'NULL' goes on with the next
# round; without lost, the block fails.
sub batches_sql
{
	my ($rounds, $size, %opt) = @_;
	my $insert = "INSERT INTO t (id, n) SELECT snowid_next_batch($size), i;";

	$insert = qq{BEGIN
				$insert
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				$opt{lost};
			END;} if $opt{lost};
	$insert .= "\n\t\t\tPERFORM pg_sleep($opt{pause});" if $opt{pause};
	return qq{
	DO \$\$
	BEGIN
		FOR i IN 1 .. $rounds LOOP
			$insert
		END LOOP;
	END \$\$};
}

# Waits until the fence of worker id $w of datacenter $dc lies behind the
# clock of the coordination server $cnode (a worker id freed is granted
# again from then on): whether it did
sub fence_passed
{
	my ($cnode, $dc, $w) = @_;

	return $cnode->poll_query_until('coord', qq{
	SELECT fence_ms < floor(extract(epoch FROM clock_timestamp()) * 1000)
	FROM snowid_coordinator.workers WHERE datacenter = $dc AND worker_id = $w});
}

# The provisioning script of doc/managed.md ("A worker id from a
# coordination database"), written into a directory of its own ($name),
# to run against the coordination server $cnode (SnowidPgCoord's node)
# with the settings %env (DATACENTER => 3, INTERVAL_MS => 1000, ...; and
# shell => 'bash', see SnowidSqlEdition::Script::run) for every run: a
# SnowidSqlEdition::Script
sub provisioning_script
{
	my ($name, $cnode, %env) = @_;
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir($name));
	my %files = SnowidClients::recipes("$SnowidTest::top/doc/managed.md");
	my $self = bless {
		dir => $dir,
		path => "$dir/snowid-worker-id",
		text => $files{'snowid-worker-id'},
		env => {
			COORD_URL => $cnode->connstr('coord') . ' user=coord_fleet',
			ADMIN_URL => $cnode->connstr('coord') . ' user=coord_admin',
			%env
		}
	}, 'SnowidSqlEdition::Script';

	PostgreSQL::Test::Utils::append_to_file($self->{path}, $self->{text} // '');
	return $self;
}

# SQL that a database of the edition's owner runs to issue $n ids into a
# table ids in one batch, with a layout of 0 datacenter, 6 worker and 4
# sequence bits, worker id 5 and a drift budget of 10 s, so that they run
# ahead of the clock: it prints the count and whether the last lies more
# than $ahead (an interval's SQL, '0 s' if undef) ahead of the clock
sub issue_ahead_sql
{
	my ($n, $ahead) = @_;

	$ahead //= '0 s';
	return qq{
		UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4,
			max_drift_ms = 10000, worker_id = 5;
		CREATE TABLE ids (id bigint);
		INSERT INTO ids SELECT snowid_next_batch($n);
		SELECT count(*), snowid_time(max(id)) > clock_timestamp() + interval '$ahead' FROM ids};
}

# SQL that the owner of a new database runs to issue ids ahead of the
# clock: the edition in the layout 0/6/2 (4 ids a millisecond) with
# worker id $w and max_drift_ms $drift_ms, a table t (id, and a boolean
# $mark, false), and a batch of $n ids in it; it prints how many t holds.
# Ids issued later into t with $mark true (marked_batch_sql) are counted
# against them by marked_twice.
sub batch_ahead_sql
{
	my ($w, $drift_ms, $mark, $n) = @_;

	return qq{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = $w,
		max_drift_ms = $drift_ms;
	CREATE TABLE t (id bigint, $mark boolean DEFAULT false);
	INSERT INTO t SELECT snowid_next_batch($n);
	SELECT count(*) FROM t};
}

# SQL that issues a batch of $n ids into t (of batch_ahead_sql) with $mark
# true; it prints how many rows of t are so marked
sub marked_batch_sql
{
	my ($mark, $n) = @_;

	return qq{
	INSERT INTO t (id, $mark) SELECT snowid_next_batch($n), true;
	SELECT count(*) FROM t WHERE $mark};
}

# The ids of table $table (t if undef) in database $db of $node, some
# marked by the boolean column $mark (the later ones): (how many marked ids
# equal an id not marked, how many are marked, how many are not)
sub marked_twice
{
	my ($node, $db, $mark, $table) = @_;

	$table //= 't';
	my ($n, $twice, $others) = split /\|/, $node->safe_psql($db, qq{
	SELECT (SELECT count(*) FROM $table WHERE $mark),
		   (SELECT count(*) FROM $table a JOIN $table b ON a.id = b.id AND a.$mark AND NOT b.$mark),
		   (SELECT count(*) FROM $table WHERE NOT $mark)});

	return ($twice, $n, $others);
}

# Database $db of $node as app: the edition installed, given worker id 5
# and $tables (SQL, if given) first, before a restore (a test named $name)
sub first_installed
{
	my ($node, $db, $tables, $name) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db),
		"CREATE EXTENSION snowid_sql;\nUPDATE snowid_config SET worker_id = 5;\n"
		  . ($tables // '') . "\nSELECT worker_id FROM snowid_config");

	Test::More::is($out, '5', $name) or Test::More::diag($err);
	return;
}

# The documented restore's last step (doc/managed.md, "Dumps and
# restores": restore, then set the worker id) in database $db of $node:
# where the restore brought the row of snowid_config ($cleared), a call
# first fails, the row's worker id cleared (a test); then the owner sets
# worker id $worker (5 if undef), which raises the generator past this
# server's clock plus max_drift_ms (a test), with max_drift_ms raised by
# $margin_ms in the same UPDATE where given: the margin the owner adds
# where the source's clock ran that far ahead of this one's (the
# assumption the raise rests on; fast_margin_ms for a source of
# fast_server)
sub worker_set_after_restore
{
	my ($node, $db, $cleared, $worker, $margin_ms) = @_;
	my $url = app_url($node, $db);
	my ($rc, $out, $err);

	$worker //= 5;
	if ($cleared)
	{
		($rc, $out, $err) = psql_as($url, 'SELECT snowid_next()');
		Test::More::like($err, qr/ERROR:  55000: snowid has no worker id/,
			'the restore of the row cleared the worker id: a call fails until the owner sets it');
	}
	($rc, $out, $err) = psql_as($url, worker_set_sql($worker, $margin_ms) . ";\nSELECT worker_id FROM snowid_config");
	Test::More::is($out, $worker, "the restore over, the owner sets worker id $worker"
		  . (defined $margin_ms ? ", max_drift_ms raised by $margin_ms in the same UPDATE" : ''))
	  or Test::More::diag($err);
	return;
}

# The UPDATE that sets worker id $worker, raising max_drift_ms by
# $margin_ms (if given) in the same statement: the raise counts the larger
# of the row's max_drift_ms before and after (doc/managed.md, "Dumps and
# restores")
sub worker_set_sql
{
	my ($worker, $margin_ms) = @_;

	return "UPDATE snowid_config SET worker_id = $worker"
	  . (defined $margin_ms ? ", max_drift_ms = max_drift_ms + $margin_ms" : '');
}

# How far the clock of fast_server ran ahead when its source issued
# (10 s): the margin that a copy of such a source, on a clock set right,
# adds to max_drift_ms when it is given the source's worker id, so that
# its clock plus the margin lies no earlier than the source's clock did
sub fast_margin_ms
{
	return 10000;
}

# A server of new_server (app, the databases @dbs owned by app) started
# under $clock set 10 s fast: the server
sub fast_server
{
	my ($name, $clock, @dbs) = @_;

	$clock->set('+10');
	return new_server($name, ['app'], \@dbs, clock => $clock);
}

# SQL that the owner of a new database runs on a server whose clock is
# fast: the edition (of VERSION $version if given) with worker id 5, the
# tables of $tables (SQL), then $insert (SQL) over and over for 12 s; it
# prints how many rows $count (a table, or more of a FROM) holds
sub ahead_source_sql
{
	my ($tables, $insert, $count, $version) = @_;
	my $create = 'CREATE EXTENSION snowid_sql' . (defined $version ? " VERSION '$version'" : '');

	return qq{
	$create;
	UPDATE snowid_config SET worker_id = 5;
	$tables
	DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '12 s' LOOP
			$insert
		END LOOP;
	END \$\$;
	SELECT count(*) FROM $count};
}

# Database $db of $node (under $clock, 10 s fast, or set $fast s fast) as app
# runs ahead_source_sql($tables, $insert, $count, $version): a test that it
# issued (named "the source issues N ids$into, ..."); then $clock steps
# back to the right time (NTP) and the source refuses its next id (a test)
sub issue_then_step_back
{
	my ($node, $clock, $db, $tables, $insert, $count, $into, $version, $fast) = @_;

	$clock->set("+$fast") if defined $fast;
	$fast //= 10;
	my ($rc, $out, $err) = psql_as(app_url($node, $db), ahead_source_sql($tables, $insert, $count, $version));

	Test::More::cmp_ok($out, '>', 0, "the source issues $out ids$into, its clock $fast s fast")
	  or Test::More::diag($err);
	$clock->set('+0');
	($rc, $out, $err) = psql_as(app_url($node, $db), 'SELECT snowid_next()');
	Test::More::like($err, qr/the system clock is \d+ ms behind the snowid generator/,
		"the clock stepped back $fast s: the source stops");
	return;
}

# A server of fast_server ($name) under $clock with the databases source
# and target: target installed and given worker id 5 first (a test);
# source, worker id 5, issues into store.t (id, and copy, false) for 12 s
# and stops when the clock steps back (issue_then_step_back, two tests),
# and its owner dumps it (pg_dump -Fc into a file of a new tempdir, a
# test): (the server, the file)
sub store_source_dumped
{
	my ($name, $clock) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir($name) . '/source.dump';
	my $node = fast_server($name, $clock, qw(source target));

	first_installed($node, 'target', undef, 'the target is installed and given worker id 5 first');
	store_dumped($node, $clock, $file,
		'CREATE SCHEMA store; CREATE TABLE store.t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);',
		'INSERT INTO store.t DEFAULT VALUES;');
	return ($node, $file);
}

# Database source of $node (under $clock, 10 s fast) issues into store.t
# and stops when the clock steps back (issue_then_step_back with $tables,
# making store.t, and $insert, two tests), and its owner dumps it
# (pg_dump -Fc @opts into $file, a test)
sub store_dumped
{
	my ($node, $clock, $file, $tables, $insert, @opts) = @_;

	issue_then_step_back($node, $clock, 'source', $tables, $insert, 'store.t', ' into store.t');
	$node->command_ok([ 'pg_dump', '-Fc', @opts, '-f', $file, '-d', app_url($node, 'source') ],
		'the owner dumps the source');
	return;
}

# Database source of $node as app: the edition with worker id 5 issues 100
# ids into a table t (id, n) (a test), and pg_dump -Fc dumps it into
# $file (a test): $file
sub hundred_dumped
{
	my ($node, $file) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, 'source'), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO t (n) SELECT g FROM generate_series(1, 100) g;
	SELECT count(DISTINCT id) FROM t});

	Test::More::is($out, '100', 'the source issues 100 ids') or Test::More::diag($err);
	$node->command_ok([ 'pg_dump', '-Fc', '-f', $file, '-d', app_url($node, 'source') ], 'pg_dump dumps it');
	return $file;
}

# SQL that issues 100 ids within 10 s (statement_timeout), by $kind:
# 'calls', one snowid_next() each, printing how many are distinct, or
# 'batch', one snowid_next_batch(100), printing how many it gave
sub in_10s_sql
{
	my ($kind) = @_;

	return "SET statement_timeout = '10s';\n"
	  . ($kind eq 'calls'
		? 'SELECT count(DISTINCT id) FROM (SELECT snowid_next() AS id FROM generate_series(1, 100)) s'
		: 'SELECT count(*) FROM snowid_next_batch(100)');
}

# ALTER EXTENSION snowid_sql UPDATE as $url, given at most 30 s
# (statement_timeout), started in the background; returns once it waits
# on a lock or has ended, as database $db of $node sees it: (its IPC::Run
# handle, a reference to what it printed, one to its errors)
sub update_waiting
{
	my ($node, $db, $url) = @_;
	my ($out, $err) = ('', '');
	my $update = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d', $url, '-c',
		  q{SET statement_timeout = '30s'; ALTER EXTENSION snowid_sql UPDATE} ],
		'<', \undef, '>', \$out, '2>', \$err);

	$node->poll_query_until($db, q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE '%ALTER EXTENSION snowid_sql UPDATE%'
				   AND wait_event_type = 'Lock')
	OR NOT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE '%ALTER EXTENSION snowid_sql UPDATE%'
				   AND pid <> pg_backend_pid())})
	  or Test::More::diag('the update neither waits nor ended');
	return ($update, \$out, \$err);
}

# pgbench as app, 4 clients for 10 s inserting rows of their defaults
# into the table t of database $db of $node, started in the background;
# returns once t holds 2,000 rows: (its IPC::Run handle, a reference to
# its errors)
sub pgbench_inserting
{
	my ($node, $db) = @_;
	my $script = PostgreSQL::Test::Utils::tempdir('pgbench_inserting') . '/insert.sql';
	my ($out, $err) = ('', '');

	PostgreSQL::Test::Utils::append_to_file($script, "INSERT INTO t DEFAULT VALUES;\n");
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-h', $node->host, '-p', $node->port, '-U', 'app', '-c', '4', '-T', '10',
		  '-f', $script, $db ],
		'<', \undef, '>', \$out, '2>', \$err);

	$node->poll_query_until($db, 'SELECT count(*) >= 2000 FROM t')
	  or Test::More::diag('the sessions did not issue');
	return ($bench, \$err);
}

# The owner of database $db of $node, a copy of a source that is gone,
# sets the source's worker id 5, with max_drift_ms raised by $margin_ms in
# the same UPDATE (where the source's clock ran that far ahead of this
# one's: the assumption the raise rests on), which is taken (a test), and
# then copy_issues_past($node, $db, @past)
sub worker_set_on_copy
{
	my ($node, $db, $margin_ms, @past) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db), worker_set_sql(5, $margin_ms));

	Test::More::is($err, '', "the owner's step is taken") or Test::More::diag($err);
	copy_issues_past($node, $db, @past);
	return;
}

# Database $db of $node as app, a copy given its gone source's worker id,
# runs $insert over and over for 2 s (a test that rows of $count with copy
# true were made, named "... issues N ids$into"); then, for each
# [ $table, $id, $key, $label ] of @checks, the copy's first id ($id, SQL
# of the table's row giving the id as a bigint) lies past the largest
# restored one, and no $key of the copy's rows equals a restored row's
# (two tests named by $label)
sub copy_issues_past
{
	my ($node, $db, $insert, $count, $into, @checks) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db), qq{
	DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '2 s' LOOP
			$insert
		END LOOP;
	END \$\$;
	SELECT count(*) FROM $count WHERE copy});

	Test::More::cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out ids$into")
	  or Test::More::diag($err);
	foreach my $check (@checks)
	{
		my ($table, $id, $key, $label) = @$check;
		my ($first, $largest, $n, $twice) = split /\|/, $node->safe_psql($db, qq{
		SELECT (SELECT min($id) FROM $table WHERE copy),
			   (SELECT max($id) FROM $table WHERE NOT copy),
			   (SELECT count(*) FROM $table WHERE copy),
			   (SELECT count(*) FROM $table a JOIN $table b ON a.$key = b.$key AND a.copy AND NOT b.copy)});

		Test::More::cmp_ok($first, '>', $largest,
			"$label: the copy's first id lies past the largest restored one ("
			  . (($largest >> 22) - ($first >> 22)) . ' ms below it if not)');
		Test::More::is($twice, '0', "$label: no $key of the copy equals a restored one ($twice of $n)");
	}
	return;
}

# SQL that a copy of a source of ahead_source_sql runs to issue until its
# clock passes the source's last id (the largest id of $last, the table
# restored, cast to bigint) or 20 s, and 200 times at least (on a loaded
# machine the clock may have passed it before the copy starts): $insert
# (SQL) over and over; it prints how many rows $count holds
sub past_restored_sql
{
	my ($last, $insert, $count) = @_;

	return qq{
	DO \$\$ DECLARE
		t0 timestamptz := clock_timestamp();
		last timestamptz := (SELECT snowid_time(max(id)::bigint) FROM $last);
		n integer := 0;
	BEGIN
		WHILE n < 200 OR clock_timestamp() < least(last + interval '0.5 s', t0 + interval '20 s') LOOP
			$insert
			n := n + 1;
		END LOOP;
	END \$\$;
	SELECT count(*) FROM $count};
}

# The body of a PL/pgSQL function of the owner's (a table ran (who,
# super) made first in $schema, public if undef): it notes who runs it,
# and whether a superuser, in ran, and runs ALTER ROLE $role (app if
# undef) SUPERUSER where it can (no_superuser_ran tells)
sub ran_escalates_sql
{
	my ($schema, $role) = @_;

	$schema //= 'public';
	$role //= 'app';
	return qq{
		INSERT INTO $schema.ran SELECT current_user, r.rolsuper FROM pg_roles r WHERE r.rolname = current_user;
		BEGIN
			EXECUTE 'ALTER ROLE $role SUPERUSER';
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
};
}

# The two tests after the code of $role (app if undef), planted to note in
# its table $ran (ran if undef; who, super) each run and to run ALTER ROLE
# $role SUPERUSER, had a chance to run as a superuser: none of its runs (in
# database $db of $node) was a superuser's (the test named $name), and
# $role is still no superuser
sub no_superuser_ran
{
	my ($node, $db, $name, $role, $ran) = @_;

	$role //= 'app';
	$ran //= 'ran';
	Test::More::is($node->safe_psql($db, qq{SELECT count(*) FROM $ran WHERE super}), '0', $name);
	Test::More::is($node->safe_psql('postgres', qq{SELECT rolsuper FROM pg_roles WHERE rolname = '$role'}),
		'f', "$role is still no superuser");
	return;
}

# Two servers, "${name}_pub" (logical, started under $clock set 10 s
# fast) and "${name}_sub", each with the login role app and the database
# appdb it owns; the publisher's owner issues into t (id as primary key,
# copy, false) for 12 s (ahead_source_sql, a test) and publishes it as
# moving: (the publisher, the subscriber)
sub publisher_issued_fast
{
	my ($name, $clock) = @_;
	my $pub = PostgreSQL::Test::Cluster->new("${name}_pub");
	my $sub = PostgreSQL::Test::Cluster->new("${name}_sub");

	$pub->init(allows_streaming => 'logical');
	$clock->set('+10');
	$clock->start_node($pub);
	$sub->init;
	$sub->start;
	for my $node ($pub, $sub)
	{
		$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app');
	}
	my ($rc, $out, $err) = psql_as(app_url($pub, 'appdb'), ahead_source_sql(
		'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowid_next(), copy boolean DEFAULT false);',
		'INSERT INTO t DEFAULT VALUES;', 't'));
	Test::More::cmp_ok($out, '>', 0, "the publisher issues $out ids into t, its clock 10 s fast")
	  or Test::More::diag($err);
	$pub->safe_psql('appdb', 'CREATE PUBLICATION moving FOR TABLE t');
	return ($pub, $sub);
}

# On $sub, subscribed to nothing yet and holding $own rows of its own in
# appdb's t (id, copy), beside $pub (appdb's t published as moving, under
# $clock 10 s fast): $sub subscribes to moving and catches up (a test that
# it holds the publisher's rows); $clock steps back (the publisher stops, a
# test), the subscription is dropped and $pub stopped; then $sub's owner
# sets worker id 5, raising max_drift_ms in the same UPDATE by the 10 s
# the publisher's clock ran ahead of $sub's (fast_margin_ms: the
# assumption of doc/managed.md), and issues into t (copy) until its clock has passed the
# publisher's last id or 20 s (200 times at least), each id t's primary key refuses counted as
# a row of a negative id, and a test that none came
sub subscriber_takes_over
{
	my ($pub, $sub, $clock, $own) = @_;
	my $pubconn = 'host=' . $pub->host . ' port=' . $pub->port . ' dbname=appdb';

	$sub->safe_psql('appdb', "CREATE SUBSCRIPTION moving CONNECTION '$pubconn' PUBLICATION moving");
	$sub->wait_for_subscription_sync($pub, 'moving', 'appdb');
	Test::More::is($sub->safe_psql('appdb', "SELECT count(*) - $own FROM t"),
		$pub->safe_psql('appdb', 'SELECT count(*) FROM t'), 'the subscriber holds the publisher\'s rows');

	$clock->set('+0');
	my ($rc, $out, $err) = psql_as($pub->connstr('appdb') . ' user=app', 'SELECT snowid_next()');
	Test::More::like($err, qr/the system clock is \d+ ms behind the snowid generator/,
		'the clock stepped back 10 s: the publisher stops');
	$sub->safe_psql('appdb', 'DROP SUBSCRIPTION moving');
	$pub->stop;

	($rc, $out, $err) = psql_as($sub->connstr('appdb') . ' user=app', worker_set_sql(5, fast_margin_ms()) . q{;
	DO $$ DECLARE
		t0 timestamptz := clock_timestamp();
		last timestamptz := (SELECT snowid_time(max(id)) FROM t);
		n integer := 0;
	BEGIN
		WHILE n < 200 OR clock_timestamp() < least(last + interval '0.5 s', t0 + interval '20 s') LOOP
			BEGIN
				INSERT INTO t (copy) VALUES (true);
			EXCEPTION WHEN unique_violation THEN
				INSERT INTO t (id, copy) VALUES (-1 - (SELECT count(*) FROM t WHERE id < 0), true);
			END;
			n := n + 1;
		END LOOP;
	END $$;
	SELECT count(*) FROM t WHERE copy});
	Test::More::note("the subscriber, with its gone publisher's worker id, issues $out ids $err");

	my ($n, $twice) = split /\|/, $sub->safe_psql('appdb', q{
	SELECT count(*) FILTER (WHERE copy), count(*) FILTER (WHERE copy AND id < 0) FROM t});
	Test::More::is($twice, '0', "no id of the subscriber equals a replicated one ($twice of $n)");
	return;
}

# Databases @dbs of $node, each holding a t (id, copy) restored from a
# source whose clock ran fast, and the worker id set after: all at once,
# app issues into each t (copy) until its clock has passed the source's
# last id (past_restored_sql), and a test each that none of those ids
# equals a restored one
#
# (Since issue 68's redesign (1.4 tells no restore on the call path:
# snowid_sql_dumped and its number are gone), a restore that skips the row
# of snowid_config, into a database that has a worker id, lies outside
# what the edition guarantees (doc/managed.md, "Dumps and restores": a
# database's own ids come back into it only by restore, then set the
# worker id).  The tests that restore so follow that step: once the
# restore is over, the owner sets the worker id (the same, 5), which raises
# the generator past the clock plus max_drift_ms whatever the row was,
# with the margin of fast_margin_ms added to max_drift_ms where the source
# ran fast; no id after it may equal a restored one.)
sub dbs_issue_past_restored
{
	my ($node, @dbs) = @_;

	Test::More::note("$_: " . $node->safe_psql($_, 'SELECT worker_id, worker_server FROM snowid_config')) for @dbs;
	copies_issue_past_restored([ map { [ $node, $_, $_ ] } @dbs ], 't', 't');
	return;
}

# Copies [$node, $db, $name] of @$copies, each holding ids restored from a
# source whose clock ran fast ($all, a table or view of id and copy, every
# id held and issued after), its worker id cleared by the restore: all at
# once, the owner sets worker id 5 where $set, raising max_drift_ms in the
# same UPDATE by $margin_ms (fast_margin_ms if undef), how far the source's
# clock ran ahead (a test each, named by $name, that the first id after
# lies above every id $all holds), then
# issues into $into (copy) until its clock has passed the source's last id
# (past_restored_sql); a test each that none of those ids equals a
# restored one
sub copies_issue_past_restored
{
	my ($copies, $all, $into, $set, $margin_ms) = @_;
	my $sql = ($set
		? worker_set_sql(5, $margin_ms // fast_margin_ms()) . ";\nSELECT snowid_next() > (SELECT max(id) FROM $all);\n"
		: '')
	  . past_restored_sql($all, "INSERT INTO $into (copy) VALUES (true);", "$into WHERE copy");
	my @run = map { { node => $_->[0], db => $_->[1], name => $_->[2], out => '', err => '' } } @$copies;

	for my $r (@run)
	{
		$r->{h} = IPC::Run::start(
			[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', app_url($r->{node}, $r->{db}), '-c', $sql ],
			'<', \undef, '>', \$r->{out}, '2>', \$r->{err});
	}
	for my $r (@run)
	{
		$r->{h}->finish;
		my @out = split /\n/, $r->{out};
		Test::More::is($out[0], 't',
			"$r->{name}: once the owner sets worker id 5 with the margin, the first id lies above every id the tables hold")
		  or Test::More::diag($r->{err})
		  if $set;
		Test::More::note("$r->{name}, with its gone source's worker id, issues: $r->{out} $r->{err}");
		my ($twice, $n, $restored) = marked_twice($r->{node}, $r->{db}, 'copy', $all);
		Test::More::is($twice, '0', "$r->{name}: no id equals a restored one ($twice of $n, beside $restored restored)");
	}
	return;
}

# On $node (one clock), after database source issued into t (id, copy)
# with the clock 10 s fast and stopped when it stepped back, and databases
# target (holding t) and target2 were given worker id 5: the owner dumps
# source whole and its data alone (pg_dump -Fc into $dir, two tests), and
# source is dropped; the superuser restores the data-only dump into target
# with --disable-triggers and the whole dump into target2 with
# session_replication_role = replica (each skips the row of
# snowid_config), then the owner sets worker id 5 in each, raising
# max_drift_ms by the 10 s the source ran fast in the same UPDATE
# (worker_set_after_restore, a test each); then both at once issue past
# the restored ids (dbs_issue_past_restored, a test each)
sub row_skipped_restores_issue
{
	my ($node, $dir) = @_;
	my $source = app_url($node, 'source');
	my ($rc, $err);

	$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/whole.dump", '-d', $source ],
		'the owner dumps the source whole');
	$node->command_ok([ 'pg_dump', '-Fc', '--data-only', '-f', "$dir/data.dump", '-d', $source ],
		'and its data alone');
	$node->safe_psql('postgres', 'DROP DATABASE source');

	($rc, $err) = restore_into($node->connstr('target'), "$dir/data.dump", '--disable-triggers');
	Test::More::note("target: pg_restore --data-only --disable-triggers: exit code $rc: $err");
	{
		local $ENV{PGOPTIONS} = '-c session_replication_role=replica';
		($rc, $err) = restore_into($node->connstr('target2'), "$dir/whole.dump");
	}
	Test::More::note("target2: pg_restore with session_replication_role = replica: exit code $rc: $err");
	worker_set_after_restore($node, $_, 0, undef, fast_margin_ms()) for qw(target target2);

	dbs_issue_past_restored($node, qw(target target2));
	return;
}

# pg_restore @opts --exit-on-error of $file into database target of $node
# (as app), and meanwhile a session of app's there calling snowid_next()
# over and over: a test that the restore succeeded (named "pg_restore
# @opts restores the dump (N calls meanwhile, M failed)"): (how many calls,
# how many failed)
#
# (Since issue 68's redesign (1.4 tells no restore on the call path), a
# restore into a database that has a worker id, with calls meanwhile, lies
# outside what the edition guarantees (doc/managed.md, "Dumps and
# restores": a database's own ids come back into it only by restore, then
# set the worker id): the restore of the row clears the worker id, and the
# tests that restore so follow the documented step, the owner setting the
# worker id once the restore is over, which raises past the clock plus
# max_drift_ms (with a margin where the source ran fast): no id after it
# may equal a restored one.)
sub restore_while_calling
{
	my ($node, $file, @opts) = @_;

	return restore_while_calling_in($node, 'target', $file, @opts);
}

# restore_while_calling into database $db of $node
sub restore_while_calling_in
{
	my ($node, $db, $file, @opts) = @_;
	my $caller = $node->background_psql($db, on_error_stop => 0, extra_params => [ '-U', 'app' ]);
	my ($rout, $rerr) = ('', '');
	my $restore = IPC::Run::start(
		[ 'pg_restore', @opts, '--exit-on-error', '-d', app_url($node, $db), $file ],
		'>', \$rout, '2>', \$rerr);
	my ($calls, $failed) = (0, 0);

	while ($restore->pumpable)
	{
		$caller->query('SELECT snowid_next()');
		$calls++;
		$failed++ if $caller->{stderr} ne '';
		$caller->{stderr} = '';
		$restore->pump_nb;
		select(undef, undef, undef, 0.02);
	}
	$restore->finish;
	Test::More::is($? >> 8, 0,
		join(' ', "$db:", 'pg_restore', @opts) . " restores the dump ($calls calls meanwhile, $failed failed)")
	  or Test::More::diag($rerr);
	$caller->quit;
	return ($calls, $failed);
}

# Database target of $node, a store.t (id, copy) restored from a source
# whose clock ran fast, and the worker id set after: app issues into
# store.t (copy) until its clock has passed the source's last id
# (past_restored_sql), and a test that none of those ids equals a restored
# one
sub target_issues_past_restored
{
	my ($node) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, 'target'),
		past_restored_sql('store.t', 'INSERT INTO store.t (copy) VALUES (true);', 'store.t WHERE copy'));

	Test::More::note("the target, with its gone source's worker id, issues $out ids after the restore $err");
	my ($twice, $n, $restored) = marked_twice($node, 'target', 'copy', 'store.t');
	Test::More::is($twice, '0',
		"no id of the target after the restore equals a restored one ($twice of $n, beside $restored)");
	return;
}

# Database target of $node as app: the edition installed, no worker id
# given (a test)
sub target_installed_bare
{
	my ($node) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, 'target'), q{
	CREATE EXTENSION snowid_sql;
	SELECT count(*) FROM snowid_config WHERE worker_id IS NULL});

	Test::More::is($out, '1', 'target: installed, no worker id') or Test::More::diag($err);
	return;
}

# Database $db of $node, given its worker id: two tests that app's calls
# (the test named $name), then its batches, issue 100 ids within 10 s each
# (in_10s_sql)
sub calls_and_batches_in_10s
{
	my ($node, $db, $name) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db), in_10s_sql('calls'));

	Test::More::is($out, '100', $name) or Test::More::diag($err);
	($rc, $out, $err) = psql_as(app_url($node, $db), in_10s_sql('batch'));
	Test::More::is($out, '100', "$db: and its batches") or Test::More::diag($err);
	return;
}

# Database target of $node, restored and given its worker id:
# calls_and_batches_in_10s (two tests), and a note of the generator's
# status
sub target_issues_in_10s
{
	my ($node) = @_;

	calls_and_batches_in_10s($node, 'target', 'target: after the restore, the owner\'s calls issue ids');
	Test::More::note('target: ' . $node->safe_psql('target', 'SELECT high_water_time, drift_ms FROM snowid_status()'));
	return;
}

# Database $db of $node (with the login role lesser): app installs the
# edition with worker id 6 (a test); lesser, granted nothing of it, runs
# $sql in a schema s of its own (a test named "$db: lesser, granted nothing
# of the edition, makes $what"); the superuser restores $file (a test), and
# the owner sets worker id 6 again (worker_set_after_restore, two tests)
sub restored_beside_lesser
{
	my ($node, $db, $file, $sql, $what) = @_;
	my ($rc, $out, $err) = psql_as(app_url($node, $db), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 6;
	SELECT 1});

	Test::More::is($out, '1', "$db: installed, worker id 6") or Test::More::diag($err);
	$node->safe_psql($db, 'CREATE SCHEMA s AUTHORIZATION lesser');
	($rc, $out, $err) = psql_as($node->connstr($db) . ' user=lesser', "SET search_path = s; $sql; SELECT 1");
	Test::More::is($out, '1', "$db: lesser, granted nothing of the edition, makes $what") or Test::More::diag($err);
	$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', app_url($node, $db), $file ],
		"$db: pg_restore restores the source's dump");
	worker_set_after_restore($node, $db, 1, 6);
	return;
}

# psql as a role on a connection string, stopping at the first error, with
# verbose errors: (exit code, stdout, stderr)
sub psql_as
{
	my ($connstr, $sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v',
			'VERBOSITY=verbose', '-d', $connstr, '-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err) ? 0 : $? >> 8;
	chomp $out;
	return ($rc, $out, $err);
}

# Every object of the SQL edition in schema public and snowid_sql_private
# of a database (the names
# that begin with snowid: a test's own tables are left out), one line each:
# functions with their signatures, results, owners, privileges, settings,
# bodies (but that of snowid_sql_fixed(), which the configuration's
# triggers make from the row) and comments; tables, views, sequences and
# types with their owners, privileges and comments; columns (of tables,
# views and types) in order with their types, defaults, privileges and
# comments; the definitions of views and the options of sequences;
# constraints and triggers, and when the triggers fire; the tables whose
# rows pg_dump dumps; and whether each function or relation belongs to an
# extension.
sub objects
{
	my ($node, $db) = @_;

	return $node->safe_psql($db, q{
	WITH s AS (SELECT ns FROM unnest(ARRAY['public'::regnamespace,
										   to_regnamespace('snowid_sql_private')]) ns
			   WHERE ns IS NOT NULL)
	SELECT string_agg(line, E'\n' ORDER BY line) FROM (
		SELECT format('function %s returns %s owner %s acl %s security definer %s settings %s volatility %s parallel %s strict %s body %s comment %s member %s',
				p.oid::regprocedure, pg_get_function_result(p.oid),
				p.proowner::regrole, p.proacl, p.prosecdef, p.proconfig,
				p.provolatile, p.proparallel, p.proisstrict,
				CASE WHEN p.proname = 'snowid_sql_fixed' THEN 'made from the configuration'
					 ELSE md5(coalesce(p.prosrc, '') || coalesce(pg_get_function_sqlbody(p.oid), '')) END,
				obj_description(p.oid, 'pg_proc'),
				EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
						AND d.objid = p.oid AND d.deptype = 'e')) AS line
		FROM pg_proc p, s WHERE p.pronamespace = s.ns AND p.proname LIKE 'snowid%'
		UNION ALL
		SELECT format('relation %s kind %s owner %s acl %s comment %s member %s',
				c.relname, c.relkind, c.relowner::regrole, c.relacl,
				obj_description(c.oid, 'pg_class'),
				EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
						AND d.objid = c.oid AND d.deptype = 'e'))
		FROM pg_class c, s WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%'
		UNION ALL
		SELECT format('column %s.%s %s %s not null %s default %s acl %s comment %s',
				c.relname, row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
				format_type(a.atttypid, a.atttypmod),
				a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attacl,
				col_description(c.oid, a.attnum))
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%' AND c.relkind IN ('r', 'v', 'c')
		  AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT format('view %s: %s', c.relname, pg_get_viewdef(c.oid))
		FROM pg_class c, s WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%' AND c.relkind = 'v'
		UNION ALL
		SELECT format('sequence %s: %s %s %s %s %s %s %s persistence %s', c.relname, format_type(q.seqtypid, NULL),
				q.seqstart, q.seqincrement, q.seqmin, q.seqmax, q.seqcache, q.seqcycle, c.relpersistence)
		FROM pg_sequence q JOIN pg_class c ON c.oid = q.seqrelid, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%'
		UNION ALL
		SELECT format('dumped %s where %s', x.rel::regclass, x.cond)
		FROM pg_extension e, unnest(e.extconfig, e.extcondition) x(rel, cond)
		WHERE e.extname LIKE 'snowid_sql%'
		UNION ALL
		SELECT format('constraint %s of %s: %s', co.conname, co.conrelid::regclass,
				pg_get_constraintdef(co.oid))
		FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%'
		UNION ALL
		SELECT format('trigger %s enabled %s', pg_get_triggerdef(t.oid), t.tgenabled)
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid, s
		WHERE c.relnamespace = s.ns AND c.relname LIKE 'snowid%' AND NOT t.tgisinternal
	) x});
}

# What the owner of a database (app) plants in public (test/t/sql-edition/planted_operators.pl): for
# every operator and function that the installed scripts of the edition
# (SHAREDIR/extension/snowid_sql--*.sql, comments left out) name, each
# operator and overload that a call matches better than pg_catalog's own
# (what pg_catalog has not, it leaves out).  A planted function does what
# pg_catalog's would, notes each run, and each run as a superuser, in
# sequences (which no rollback undoes), and as a superuser makes app one.
# Run as app, it says how many it planted (NOTICE planted N operators,
# planted N functions).
sub plant_sql
{
	my ($sharedir) = @_;
	my (%ops, %fns);
	for my $f (glob("$sharedir/extension/snowid_sql--*.sql"))
	{
		my $sql = PostgreSQL::Test::Utils::slurp_file($f);
		$sql =~ s/--[^\n]*//g;
		$ops{$1} = 1 while $sql =~ /(?<![-+*\/<>=~!@#%^&|`?])([-+*\/<>=~!@#%^&|`?]+)(?![-+*\/<>=~!@#%^&|`?])/g;
		$fns{ lc $1 } = 1 while $sql =~ /(?<![\w.\$"])([A-Za-z_]\w*)\s*\(/g;
	}
	# and those that words stand for: LIKE, ILIKE (IN, BETWEEN, IS DISTINCT
	# FROM and ANY stand for operators written as such too)
	$ops{$_} = 1 for ('~~', '!~~', '~~*', '!~~*');
	my $ops = join(',', map { s/'/''/gr } sort keys %ops);
	my $fns = join(',', sort keys %fns);

	my $plant = qq{
	SET search_path = pg_catalog;
	CREATE SEQUENCE public.planted_runs;
	CREATE SEQUENCE public.planted_super;
	GRANT ALL ON SEQUENCE public.planted_runs, public.planted_super TO PUBLIC;
	CREATE FUNCTION public.planted_note() RETURNS void LANGUAGE plpgsql
	SET search_path = pg_catalog AS \$b\$
	BEGIN
		PERFORM nextval('public.planted_runs');
		IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
			PERFORM nextval('public.planted_super');
			ALTER ROLE app SUPERUSER;
		END IF;
	END
	\$b\$;
	GRANT EXECUTE ON FUNCTION public.planted_note() TO PUBLIC;
	DO \$plant\$
	DECLARE
		ops text[] := string_to_array('$ops', ',');
		fns text[] := string_to_array('$fns', ',');
		types text[] := ARRAY['smallint', 'integer', 'bigint', 'numeric', 'double precision', 'oid',
							  'regclass', 'regnamespace', 'regproc', 'regprocedure', 'regrole', 'regtype',
							  'text', 'name', 'character varying', '"char"', 'boolean', 'bytea',
							  'timestamp with time zone', 'timestamp without time zone', 'date',
							  'interval', 'pg_lsn', 'xid8'];
		ftypes text[] := ARRAY['integer', 'bigint', 'numeric', 'oid', 'regclass', 'text', 'name',
							   'boolean', 'bytea', 'timestamp with time zone'];
		op text;
		l text;
		r text;
		f text;
		sig text[];
		rt text;
		n integer := 0;
		made integer := 0;
	BEGIN
		-- binary operators, then prefix ones (l NULL)
		FOREACH op IN ARRAY ops LOOP
			CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_operator o
									  WHERE o.oprname = op AND o.oprnamespace = 'pg_catalog'::regnamespace);
			FOR l, r IN SELECT a, b FROM unnest(types || ARRAY[NULL]) a, unnest(types) b LOOP
				CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_operator o
									  WHERE o.oprname = op AND o.oprnamespace = 'pg_catalog'::regnamespace
										AND o.oprleft = coalesce(l::regtype, 0) AND o.oprright = r::regtype);
				BEGIN
					EXECUTE format('SELECT format_type(pg_typeof(%s OPERATOR(pg_catalog.%s) NULL::%s), NULL)',
								   coalesce('NULL::' || l, ''), op, r) INTO rt;
					n := n + 1;
					EXECUTE format('CREATE FUNCTION public.planted_op_%s(%s) RETURNS %s LANGUAGE plpgsql
									SET search_path = pg_catalog
									AS \$f\$BEGIN PERFORM public.planted_note(); RETURN %s OPERATOR(pg_catalog.%s) %s; END\$f\$',
								   n, concat_ws(', ', 'a ' || l, 'b ' || r), rt, CASE WHEN l IS NOT NULL THEN 'a' END,
								   op, 'b');
					EXECUTE format('CREATE OPERATOR public.%s (%s RIGHTARG = %s, FUNCTION = public.planted_op_%s)',
								   op, 'LEFTARG = ' || l || ',', r, n);
					made := made + 1;
				EXCEPTION WHEN OTHERS THEN
					NULL;
				END;
			END LOOP;
		END LOOP;
		RAISE NOTICE 'planted % operators', made;
		made := 0;
		-- functions of one and two arguments, and of three and four with a
		-- text first (format, concat_ws: variadic)
		FOREACH f IN ARRAY fns LOOP
			CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_proc p
									  WHERE p.proname = f AND p.pronamespace = 'pg_catalog'::regnamespace
										AND p.prokind = 'f' AND NOT p.proretset);
			FOR sig IN
				SELECT ARRAY[a] FROM unnest(ftypes) a
				UNION ALL SELECT ARRAY[a, b] FROM unnest(ftypes) a, unnest(ftypes) b
				UNION ALL SELECT ARRAY['text', a, b] FROM unnest(ftypes) a, unnest(ftypes) b
				WHERE EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.proname = f AND p.provariadic <> 0)
				UNION ALL SELECT ARRAY['text', a, b, c] FROM unnest(ftypes) a, unnest(ftypes) b, unnest(ftypes) c
				WHERE EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.proname = f AND p.provariadic <> 0)
			LOOP
				CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_proc p
									  WHERE p.proname = f AND p.pronamespace = 'pg_catalog'::regnamespace
										AND p.proargtypes::oid[] = sig::regtype[]::oid[]);
				BEGIN
					EXECUTE format('SELECT format_type(pg_typeof(pg_catalog.%I(%s)), NULL)', f,
								   (SELECT string_agg('NULL::' || t, ', ') FROM unnest(sig) t)) INTO rt;
					n := n + 1;
					EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql
									SET search_path = pg_catalog
									AS \$f\$BEGIN PERFORM public.planted_note(); RETURN pg_catalog.%I(%s); END\$f\$',
								   f, array_to_string(sig, ', '), rt, f,
								   (SELECT string_agg('\$' || i, ', ') FROM generate_series(1, cardinality(sig)) i));
					made := made + 1;
				EXCEPTION WHEN OTHERS THEN
					NULL;
				END;
			END LOOP;
		END LOOP;
		RAISE NOTICE 'planted % functions', made;
	END
	\$plant\$;
	SELECT setval('public.planted_runs', 1, false), setval('public.planted_super', 1, false);
	};
	return $plant;
}

# (runs, runs as a superuser) of the planted code in a database, and
# whether app is a superuser
sub planted_runs
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, q{
	SET search_path = pg_catalog;
	SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.planted_runs),
		   (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.planted_super),
		   (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = 'app')});
}

# The functions of the edition that depend on an operator or a function
# in public that is not the edition's
sub bound_to_planted
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, q{
	SET search_path = pg_catalog;
	SELECT string_agg(DISTINCT f.oid::regprocedure::text || ' -> '
					  || pg_describe_object(d.refclassid, d.refobjid, 0), '; ')
	FROM pg_proc f JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = f.oid
	LEFT JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
	LEFT JOIN pg_operator o ON d.refclassid = 'pg_operator'::regclass AND o.oid = d.refobjid
	WHERE f.proname LIKE 'snowid%'
	  AND coalesce(p.pronamespace, o.oprnamespace) IN (SELECT oid FROM pg_namespace WHERE nspname = 'public')
	  AND coalesce(p.proname NOT LIKE 'snowid%', true)});
}

# Why pg_tle cannot be had for the PostgreSQL of libdir and sharedir, as
# test/tools/pgbuild --pg_tle recorded where 1.5.2 does not compile (19),
# or undef where it is installed; else the test file skips, or fails under
# SNOWID_REQUIRE_TOOLS=1 (SnowidTest::need_file).
sub pg_tle_missing
{
	my ($libdir, $sharedir) = @_;
	my $record = "$sharedir/.snowid-pg_tle";

	return undef if -e "$libdir/pg_tle.so";
	if (-f $record)
	{
		my ($why) = PostgreSQL::Test::Utils::slurp_file($record) =~ /\n(.*)/;
		return 'pg_tle 1.5.2 does not build against this PostgreSQL: '
		  . ($why // 'see test/tools/pgbuild');
	}
	SnowidTest::need_file("$libdir/pg_tle.so",
		'none: test/tools/pgbuild --pg_tle builds it from test/sources.txt');
	return undef;
}

# The role sql_fleet, a member of the coordination database's coord_fleet
# that logs in with password over the coordination server's socket (scram,
# as a managed service's dblink does), on the coordination server cnode;
# returns the conninfo an SQL-edition database names it by.
sub fleet_login
{
	my ($cnode, $password) = @_;

	$cnode->safe_psql('postgres', qq{
	CREATE ROLE sql_fleet LOGIN PASSWORD '$password' IN ROLE coord_fleet;
});
	SnowidTest::prepend_hba($cnode, 'local coord sql_fleet scram-sha-256');
	$cnode->reload;
	return sprintf('host=%s port=%d dbname=coord user=sql_fleet',
		$cnode->host, $cnode->port);
}

# A fleet whose editions (1.2 and earlier) claim their worker ids from a
# coordination database: skips the test where contrib's dblink is not
# installed (in the PostgreSQL tested; test/tools/pgbuild installs it),
# starts the coordination server (SnowidPgCoord, with coord's parameters,
# such as clock) and makes the fleet's login there (fleet_login).
# Returns the coordinator, and the conninfo and password claim_config
# takes.
sub claim_fleet
{
	my (%coord) = @_;
	my $password = 'fleet password 1';
	my $sharedir = `pg_config --sharedir`;

	chomp $sharedir;
	SnowidTest::need_file("$sharedir/extension/dblink.control",
		'postgresql-NN, or contrib/dblink of a source build');
	my $fleet = SnowidPgCoord->new(%coord);
	return ($fleet, fleet_login($fleet->node, $password), $password);
}

# A server of the update of a claiming 1.2 ($name), with a fleet to claim
# from (claim_fleet) and the provisioning script for datacenter 4 that
# takes its claim over (asserting every second, a margin of 1 s): app,
# who sees every session's transactions, owns appdb (with dblink, to
# claim) and newdb, which the script knows by these names; the server runs
# under the SnowidTest::Clock $clock if given.  Returns (the fleet, the
# conninfo and password of claim_config, the server, the script).
sub claiming_12_server
{
	my ($name, $clock) = @_;
	my ($fleet, $conninfo, $password) = claim_fleet();
	my $script = provisioning_script($name, $fleet->node,
		DATACENTER => 4, INTERVAL_MS => 1000, MARGIN_MS => 1000);
	my $node = claiming_server($name, qw(appdb newdb), $clock ? ($clock) : ());

	$script->databases(map { $_ => app_url($node, $_) } qw(appdb newdb));
	return ($fleet, $conninfo, $password, $node, $script);
}

# 1.2 installed by the owner of a database (app's connection string) to
# claim its worker id from the fleet of claim_fleet (claim_config, then
# $opt{sql}, more SQL of the owner's, if given; one test, that it went
# through, naming the owner $opt{who}, 'the owner' if not given); then its
# first id: (that id's worker id, psql's stderr)
sub install_claiming_12
{
	my ($app, $conninfo, $password, %opt) = @_;
	my ($rc, $out, $err) = psql_as($app, q{CREATE EXTENSION snowid_sql VERSION '1.2';}
		  . claim_config($conninfo, $password) . ($opt{sql} // ''));

	Test::More::is($rc, 0, ($opt{who} // 'the owner') . ' installs 1.2 and has it claim its worker id')
	  or Test::More::diag($err);
	($rc, $out, $err) = psql_as($app, 'SELECT (snowid_decode(snowid_next())).worker_id');
	return ($out, $err);
}

# On a server of claiming_12_server (its fleet, conninfo, password, server
# and script): appdb installs 1.2 and claims a worker id (two tests, of
# install_claiming_12 and that it has one); then the fleet forgets it
# (wipe), newdb installs the edition and the script claims for it (for up
# to 240 s), after appdb's quiet period.  Returns (appdb's worker id,
# newdb's, the script's stderr).
sub claim_given_away
{
	my ($fleet, $conninfo, $password, $node, $script) = @_;
	my ($w, $err) = install_claiming_12(app_url($node, 'appdb'), $conninfo, $password);

	Test::More::like($w, qr/^\d+$/, "appdb claims worker id $w") or Test::More::diag($err);
	$fleet->wipe;
	psql_as(app_url($node, 'newdb'), 'CREATE EXTENSION snowid_sql');
	my ($w2, $err2) = $script->claim_until_granted('newdb', 240);
	return ($w, $w2, $err2);
}

# On a server of claiming_12_server under $clock, after claim_given_away:
# a test that appdb's last answer lies past its quiet period by appdb's
# clock, then $clock set back by as much and a second, so that appdb's
# clock sees itself within it again
sub clock_into_quiet
{
	my ($node, $clock) = @_;
	my $over_ms = $node->safe_psql('appdb', q{
	SELECT (EXTRACT(epoch FROM clock_timestamp() - s.answered_at) * 1000)::bigint
		   - (x.checkin_interval_ms::bigint + x.timeout_ms + c.max_drift_ms + 1000)
	FROM snowid_sql_private.snowid_coordinator_state s, snowid_sql_private.snowid_coordination x,
		 snowid_sql_private.snowid_config c});

	Test::More::cmp_ok($over_ms, '>', 0, "appdb's last answer lies $over_ms ms past the quiet period");
	$clock->set(sprintf('-%.3f', $over_ms / 1000 + 1));
	return;
}

# On a server of claiming_12_server: appdb's owner updates the edition
# (its outcome to diag) if $update, then appdb and newdb issue at once
# (issue_at_once), from a moment 2 s ahead, for 3 s, one id a statement,
# and a test that no id came twice
sub none_twice
{
	my ($node, $update) = @_;

	if ($update)
	{
		my ($rc, $out, $err) = psql_as(app_url($node, 'appdb'), 'ALTER EXTENSION snowid_sql UPDATE');

		Test::More::diag("the update: exit code $rc: $err");
	}
	my ($n, $twice) = issue_at_once($node, 'appdb', 'newdb');

	Test::More::is($twice, 0, "no id of the two databases twice (of $n)");
	return;
}

# The configuration of an installed edition of 1.1 or 1.2 that claims its
# worker id from the coordination database (its fleet's login conninfo,
# with password; see fleet_login) for datacenter 4, with check-ins every
# second and a clock margin of 1 s; settings, if given, are more of
# snowid_config's ("sequence_bits = 2, "): as SQL its owner runs (test/t/sql-edition/claim_retired.pl
# updates such an install)
sub claim_config
{
	my ($conninfo, $password, $settings) = @_;

	return qq{
		UPDATE snowid_config SET datacenter_id = 4, @{[ $settings // '' ]}claim_worker_id = true;
		INSERT INTO snowid_coordination (conninfo, password) VALUES ('$conninfo', '$password');
		UPDATE snowid_coordination SET checkin_interval_ms = 1000, clock_margin_ms = 1000;
	};
}

# Two servers of their own for logical replication ($name_publisher and
# $name_subscriber), on each of which app owns a database appdb with the
# edition installed and $sql run after it if given (a test each):
# (the publisher, the subscriber)
sub logical_pair
{
	my ($name, $sql) = @_;
	my @nodes;

	for my $role (qw(publisher subscriber))
	{
		my $node = PostgreSQL::Test::Cluster->new("${name}_$role");
		$node->init(allows_streaming => 'logical');
		$node->start;
		$node->safe_psql('postgres', "CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app");
		my ($rc, $out, $err) = psql_as($node->connstr('appdb') . ' user=app',
			"CREATE EXTENSION snowid_sql;\n" . ($sql // '') . "\nSELECT 1");
		Test::More::is($out, '1', "the $role installs the edition") or Test::More::diag($err);
		push @nodes, $node;
	}
	return @nodes;
}

# Runs $sql in database appdb of $node (as the superuser) in the
# transaction whose id is $xact: the transactions before it are taken and
# committed one by one; dies where another session took $xact first
sub in_transaction
{
	my ($node, $xact, $sql) = @_;

	$node->safe_psql('appdb', qq{
	DO \$\$
	BEGIN
		LOOP
			IF pg_current_xact_id() >= '$xact'::xid8 THEN
				IF pg_current_xact_id() > '$xact'::xid8 THEN
					RAISE EXCEPTION 'transaction $xact went by';
				END IF;
				$sql;
				EXIT;
			END IF;
			COMMIT;
		END LOOP;
	END \$\$});
	return;
}

# Waits up to a minute for $node's database appdb to answer $sql with
# $want: its last answer
sub answer_within
{
	my ($node, $sql, $want) = @_;
	my $got = '';

	for (1 .. 120)
	{
		$got = $node->safe_psql('appdb', $sql);
		last if $got eq $want;
		Time::HiRes::sleep(0.5);
	}
	return $got;
}

# The provisioning script of a test (SnowidSqlEdition::provisioning_script)
package SnowidSqlEdition::Script;

# The script's directory (the state directories are below it), and the
# script as the page shows it (undef if it does not)
sub dir { return $_[0]->{dir}; }
sub text { return $_[0]->{text}; }

# The databases the script runs for (DB_URL), by the names of run's $who
# (who => connection string, ...)
sub databases
{
	my ($self, %urls) = @_;

	@{ $self->{databases} }{ keys %urls } = values %urls;
	return;
}

# Runs the script's $command (claim, assert, release) for the database
# known as $who (see databases), as the holder "sql $who" with the state
# directory state-$who, and the settings of the script and %more (HOLDER
# => ... replaces the holder); shell => 'bash' among them runs it under
# bash rather than sh, limit => N gives it N seconds.  Returns (exit
# code, stdout, stderr): -1 if it was still running at the limit, and
# stopped.
sub run
{
	my ($self, $command, $who, %more) = @_;
	my %set = (
		DB_URL => $self->{databases}{$who} // die("no database known as $who"),
		HOLDER => "sql $who",
		STATE_DIR => "$self->{dir}/state-$who",
		%{ $self->{env} }, %more);
	my $shell = delete $set{shell} // 'sh';
	my $limit = delete $set{limit};
	my ($out, $err) = ('', '');
	local %ENV = (%ENV, %set);
	my $h = IPC::Run::start([ $shell, $self->{path}, $command ],
		'<', \undef, '>', \$out, '2>', \$err,
		defined $limit ? IPC::Run::timeout($limit) : ());
	my $ok = eval { $h->finish };

	chomp $out;
	if (!defined $ok)
	{
		die $@ unless defined $limit;
		$h->kill_kill;
		return (-1, $out, "$err(still running after $limit s)");
	}
	return ($ok ? 0 : $h->result, $out, $err);
}

# Runs claim for $who until it is granted, up to $tries times, 0.5 s
# apart, running $meanwhile (a sub) between tries if given: (the worker id
# granted or undef, the last run's stderr)
sub claim_until_granted
{
	my ($self, $who, $tries, $meanwhile) = @_;
	my $err;

	for (1 .. $tries)
	{
		my ($rc, $out);

		($rc, $out, $err) = $self->run('claim', $who);
		my ($w) = $out =~ /^worker id (\d+) of datacenter $self->{env}{DATACENTER}$/;
		return ($w, $err) if defined $w;
		$meanwhile->() if $meanwhile;
		select(undef, undef, undef, 0.5);
	}
	return (undef, $err);
}

1;
