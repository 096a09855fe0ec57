# The SQL edition's chaos run (issue 56): servers without snowid's library,
# each database of the SQL edition (doc/managed.md) installed by a database
# owner who is no superuser (app), take ids in every round from several
# sessions at once (another role's, clerk's, and on the databases made by
# CREATE EXTENSION a superuser's too), while faults come between rounds;
# every id a client received is collected from all servers into one file,
# and at the end none may repeat.  Also every call of the rounds must
# succeed, a copy (a restored dump, a new logical subscriber) must issue no
# id before it is given a worker id of its own, the owner must be able to
# dump its database and restore it, and the owner must never become
# superuser.
#
# The fleet: server a (CREATE EXTENSION, with a synchronous standby), b
# (the plain script), c (CREATE EXTENSION, wal_level logical, a FOR ALL
# TABLES publication and an orders table keyed by snowid_next()), one
# clock for all (SnowidTest::Clock), and what the faults add: copies restored
# from dumps, a logical subscriber.  max_drift_ms is 60 s everywhere.  The
# faults:
#
#   restart   a server stopped cleanly and started again
#   clock     the servers' clock stepped to -30 s, -5 s or +0 s, inside
#             max_drift_ms
#   crash     kill -9 right after autocommit takes: the clock stepped back
#             30 s, a transaction left open after it took ids (so that the
#             sequences wrote their WAL ahead within it), five autocommit
#             calls of another session (every second time five
#             transactions that each have an xid before they take an id),
#             then kill -9 of the whole server
#             while the WAL inserted before them is not yet written out,
#             and a start (issue 56, finding 1; crash_after_autocommit)
#   promote   the same on server a, then a's synchronous standby promoted
#             in its place, and a new synchronous standby made of it
#   logical   the first time, a new server subscribes to c's publication
#             (its owner installs the edition and makes the orders table,
#             copy_data = false); each time, c's owner changes a bound
#             (max_drift_ms) in snowid_config and the subscriber catches
#             up (finding 2).  The subscriber's first call must fail; it
#             is then given a worker id of its own
#   dump      a database dumped (pg_dump -Fc; first the plain script's,
#             then the others in turn) and restored by a superuser into a
#             new database on another server (finding 3); its first call
#             must fail, and it is then given a worker id of its own
#   cache     the owner sets CACHE on the edition's sequences
#             (snowid_generation first, CACHE 3 or 101; then either
#             sequence): ALTER SEQUENCE (finding 4).  Refused, or a call
#             failing there afterwards (but with 55P03), is an answer; an
#             id repeated is not
#   lock      a role with no grants (mallory) holds every advisory lock
#             the edition documents or takes (its keys, read from
#             doc/managed.md and sql/snowid_sql--*.sql), shared, through
#             the next round (finding 5)
#   replace   in a database made by CREATE EXTENSION (where a superuser
#             takes ids every round), the owner renames snowid_next() and
#             puts a function of its own in its place that makes it
#             superuser when a superuser calls it (finding 6)
#   unlogged  where the owner owns the sequences (a plain script's
#             database), it makes them UNLOGGED (later, drawn, the tables
#             too), sets its worker id again (an ALTER SEQUENCE leaves it
#             without one), and the server is killed as in crash (the
#             second attack, finding D).  Refused, or a call failing
#             afterwards, is an answer (the owner then undoes it); an id
#             repeated is not
#   plant     the owner plants in public operators and function overloads
#             that the edition's scripts and bodies would resolve there
#             (derived: each operator and function the scripts name, of
#             the types of the edition's functions and tables, where
#             pg_catalog's needs a cast), each making it superuser when a
#             superuser runs the edition's code; the first time before
#             its own CREATE EXTENSION in a new database, and before a
#             superuser's ALTER EXTENSION UPDATE from 1.1 in another;
#             later in a database of the edition (finding A)
#   seqsync   on 19, a server of its own (seqsub) takes ids, takes c's
#             sequences by a subscription to a FOR ALL SEQUENCES
#             publication, which then stops covering them (dropped, or
#             refreshed onto a publication of nothing), and takes ids
#             with the clock back to when it began (finding B); before
#             19 it is skipped, saying so
#   ownerdump the owner dumps its own database (CREATE EXTENSION's first)
#             and restores it as itself into a new database of its own on
#             another server; as dump after that.  A dump or restore that
#             fails is counted apart (finding C)
#
# A copy (a restored dump, a subscriber) whose first call issues an id is
# used as it is, as a user who saw it work would.  A superuser calls no
# function of the edition in a database the plain script made: there the
# owner owns the functions, and a superuser taking ids runs its code
# (doc/managed.md says so).  Reading a sequence, dumping, a gate's
# advisory lock are the harness' own.
#
# Every kind of fault comes once, at a round drawn from the seed, besides
# those drawn each round; the plan of faults, and what each fault picks,
# are drawn from the seed alone, so a run can be replayed.
# SNOWID_SQLCHAOS_SEED (116), SNOWID_SQLCHAOS_ROUNDS (8: rounds, besides
# one after each fault left over), SNOWID_SQLCHAOS_SECONDS (300: past it,
# no more faults are drawn; those due once still come, each followed by a
# round) and SNOWID_SQLCHAOS_FAULTS (a comma-separated list of kinds; all
# by default); test/chaos-sql sets them.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Digest::SHA ();
use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;
use Time::HiRes ();

SnowidTest::need_clock();

my $seed = $ENV{SNOWID_SQLCHAOS_SEED} // 116;
my $rounds = $ENV{SNOWID_SQLCHAOS_ROUNDS} // 8;
my $seconds = $ENV{SNOWID_SQLCHAOS_SECONDS} // 300;
my @all_kinds = qw(restart clock crash promote logical dump cache lock replace
  unlogged plant seqsync ownerdump);
my @kinds = $ENV{SNOWID_SQLCHAOS_FAULTS}
  ? split(/,/, $ENV{SNOWID_SQLCHAOS_FAULTS}) : @all_kinds;
for my $kind (@kinds)
{
	die "unknown fault $kind (faults: @all_kinds)"
	  unless grep { $_ eq $kind } @all_kinds;
}
note("SQL edition chaos run: seed $seed, $rounds rounds, at most $seconds s, faults @kinds");

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sql_chaos'));
my ($version) = slurp_file("$src/snowid_sql.control") =~ /^default_version = '(.*)'$/m;
system("$src/test/tools/sql-edition plain $src $version public > $dir/plain.sql") == 0
  or die 'could not make the plain script';

# The advisory locks of the edition: those doc/managed.md names and those
# its scripts take
my %keys;
for my $file ("$src/doc/managed.md", glob("$src/sql/snowid_sql--*.sql"))
{
	my $text = slurp_file($file);
	$keys{"$1, $2"} = 1
	  while $text =~ /\((\d{6,}),\s*(\d+)\)/g;
	$keys{'1936617335, 5460301'} = 1 if $text =~ /\b5460301\b/;
}
my @keys = sort keys %keys;
note('the edition\'s advisory keys: ' . join('; ', map { "($_)" } @keys));

# Numbers drawn from the seed alone, in [0, 1): the plan's from one stream,
# the faults' from another.  Not Perl's rand(), which the test libraries
# also draw from (free ports, temporary names), differently by version.
my %drawn;

sub draw
{
	my ($stream) = @_;
	my $n = $drawn{$stream}++;

	return hex(substr(Digest::SHA::sha256_hex("$seed $stream $n"), 0, 12)) / 2**48;
}

# A member of a list, drawn for a fault
sub pick { return $_[ int(draw('faults') * @_) ]; }

# The plan: the fault after each round (or none), from the seed alone.
# Each kind once at a round drawn, the others drawn each round.
my @plan = map { draw('plan') < 0.25 ? $kinds[ int(draw('plan') * @kinds) ] : undef } 1 .. $rounds;
my @once = @kinds;
for my $kind (@once)
{
	my $at = int(draw('plan') * ($rounds > 1 ? $rounds - 1 : 1));
	# (a round taken already goes to the next free one, or to the end)
	$at++ while $at < $rounds - 1 && defined $plan[$at] && $plan[$at] ne $kind;
	if ($at < $rounds - 1) { $plan[$at] = $kind; } else { push @plan, $kind; }
}

my $clock = SnowidTest::Clock->new;
my $offset = 0;

# psql as a role (the bootstrap superuser if undef) on a database of a
# node: (exit code, stdout, stderr)
sub psql_as
{
	my ($node, $db, $user, $sql) = @_;
	my $session = start_as($node, $db, $user, $sql);
	my $rc = $session->finish;
	chomp(my $out = $session->stdout);

	return ($rc, $out, $session->stderr);
}

# psql in the background (SnowidTest::Session) as a role on a database
sub start_as
{
	my ($node, $db, $user, $sql) = @_;

	return SnowidTest::start_psql($node, $sql, db => $db, user => $user);
}

# The servers by name: node, and for a the standby; the issuers (a
# database of the edition on a server) by name: server, database, how it
# was installed, worker id.
my (%server, %issuer, @dead);
my $next_worker = 1;

sub new_server
{
	my ($name, $conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	# The rounds' sessions and the harness' at once.  deadlock_timeout was
	# raised when the clock was libfaketime's, which gave the real time in
	# a signal handler, so that under a clock stepped back N s PostgreSQL's
	# first alarm of a lock wait (deadlock_timeout, 1 s) also fired every
	# timeout due within N s, such as the edition's 10 s lock_timeout: a
	# deadlock_timeout past it kept that timeout's alarm the first, on
	# time, as a real clock step would.  SnowidTest::Clock moves the clock
	# in signal handlers too; the setting stays, harmless.
	$node->append_conf('postgresql.conf',
		"max_connections = 60\ndeadlock_timeout = '20s'\n" . $conf);
	$clock->start_node($node);
	$node->safe_psql('postgres', q{
		CREATE ROLE app LOGIN;
		CREATE ROLE clerk LOGIN;
		CREATE ROLE mallory LOGIN;
	});
	$server{$name} = { node => $node };
	return $node;
}

sub node_of { return $server{ $issuer{ $_[0] }{server} }{node}; }

# Whether an issuer takes part in the rounds: it has a worker id, or it is
# a copy used as it is
sub active
{
	my ($name) = @_;

	return defined $issuer{$name}{worker} || $issuer{$name}{as_is};
}

# The edition installed into a new database by its owner, each way
sub install
{
	my ($server, $db, $how) = @_;
	my $node = $server{$server}{node};
	my ($rc, $out, $err);

	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	if ($how eq 'extension')
	{
		($rc, $out, $err) = psql_as($node, $db, 'app', 'CREATE EXTENSION snowid_sql');
	}
	else
	{
		$err = '';
		$rc = IPC::Run::run(
			[ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d',
				$node->connstr($db) . ' user=app', '-f', "$dir/plain.sql" ],
			'<', \undef, '>', \my $ignored, '2>', \$err) ? 0 : 1;
	}
	die "$server/$db: the edition was not installed ($how): $err" if $rc;
	return;
}

# The owner (or the role given, the bootstrap superuser if undef) gives an
# issuer a worker id of its own, then raises max_drift_ms to 60 s; returns
# psql's stderr on failure.  Setting a worker id raises the generator past
# the clock plus max_drift_ms, the row's before or after (doc/managed.md):
# set in one UPDATE with 60 s, a new database's generator lay 60 s ahead,
# and the clock stepped 30 s back then stood 90 s behind it, past
# max_drift_ms (every call refused).  A copy's row carries its source's
# 60 s, and it is raised so all the same: raised_to is the clock's offset
# (s) its generator was raised to (clock_refuses()).
sub give_worker
{
	my ($name, @user) = @_;
	my $i = $issuer{$name};
	my $w = $next_worker++;
	die 'out of worker ids' if $w > 31;
	my ($rc, $out, $err) = psql_as(node_of($name), $i->{db}, @user ? $user[0] : 'app',
		"SELECT max_drift_ms FROM snowid_config;
		 UPDATE snowid_config SET datacenter_id = 0, worker_id = $w;
		 UPDATE snowid_config SET max_drift_ms = 60000 WHERE max_drift_ms < 60000");
	return $err if $rc;
	$i->{worker} = $w;
	$i->{raised_to} = $offset + (split /\n/, $out)[0] / 1000;
	return;
}

# Whether an issuer's calls may refuse with the clock at an offset (s): its
# generator was raised further ahead of that than max_drift_ms (60 s)
# allows, and a call then refuses with "the system clock is N ms behind the
# snowid generator" once max_wait_ms is out (doc/managed.md): the edition's
# answer to a clock behind the ids it may have issued, never a duplicate.
sub clock_refuses
{
	my ($name, $to) = @_;
	my $raised_to = $issuer{$name}{raised_to};

	return defined $raised_to && $to < $raised_to - 60;
}

sub add_issuer
{
	my ($name, $server, $db, $how) = @_;

	$issuer{$name} = { server => $server, db => $db, how => $how };
	return $issuer{$name};
}

my $a = new_server('a', '', allows_streaming => 1);
my $b = new_server('b', '');
my $c = new_server('c', "wal_level = logical\n", allows_streaming => 1);
install('a', 'appdb', 'extension');
install('b', 'appdb', 'plain');
install('c', 'appdb', 'extension');
add_issuer('a', 'a', 'appdb', 'extension');
add_issuer('b', 'b', 'appdb', 'plain');
add_issuer('c', 'c', 'appdb', 'extension');
for my $name ('a', 'b', 'c')
{
	my $err = give_worker($name);
	die "$name: $err" if defined $err;
}
my $orders = q{CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowid_next(), note text);
	GRANT SELECT, INSERT ON orders TO clerk};
psql_as($c, 'appdb', 'app', $orders);
$c->safe_psql('appdb', 'CREATE PUBLICATION everything FOR ALL TABLES');

# a's synchronous standby
sub add_standby
{
	my ($primary) = @_;
	my $n = ($server{a}{standbys} // 0) + 1;
	$server{a}{standbys} = $n;
	$primary->backup("a_backup$n");
	my $standby = PostgreSQL::Test::Cluster->new("a_standby$n");
	$standby->init_from_backup($primary, "a_backup$n", has_streaming => 1);
	$clock->start_node($standby);
	$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
	$primary->reload;
	$primary->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'})
	  or die 'the standby did not become synchronous';
	$server{a}{standby} = $standby;
	return;
}
add_standby($a);

# Every id a client received: the file of them all, and who issued each
my $ids_file = "$dir/ids";
open(my $ids_fh, '>', $ids_file) or die "could not write $ids_file: $!";
my (%seen, $ids, $duplicates, %duplicates_by, @failures, @refusals, @first_calls,
	@owner_dumps);
my $round = 0;

sub collect
{
	my ($name, @got) = @_;

	for my $id (@got)
	{
		print $ids_fh "$id\t$name\t$round\n";
		$ids++;
		if (defined(my $earlier = $seen{$id}))
		{
			$duplicates++;
			$duplicates_by{"$earlier and $name, round $round"}++;
		}
		else
		{
			$seen{$id} = $name;
		}
	}
	return;
}

# The sessions of a round, all at once on every issuer: three of clerk's
# taking 1,500 ids one call each, one taking 200 batches of 5 (each a
# writer), on c 300 orders inserted, and on a
# database made by CREATE EXTENSION a superuser's calls.  They wait at a
# gate (an advisory lock of each database that the sessions take shared,
# after a session of the harness took it) until all of them wait, so that
# all of them issue in the same milliseconds.
sub take_round
{
	my (@sessions, %gate);

	$round++;
	for my $name (sort keys %issuer)
	{
		my $i = $issuer{$name};
		next unless active($name);
		my $node = node_of($name);
		my @sql = (('SELECT snowid_next() FROM generate_series(1, 1500)') x 3,
			'SELECT snowid_next_batch(5) FROM generate_series(1, 200)');
		push @sql, q{INSERT INTO orders (note) SELECT 'order' FROM generate_series(1, 300) RETURNING id}
		  if $name eq 'c';
		$gate{$name} = $node->background_psql($i->{db});
		$gate{$name}->query_safe('SELECT pg_advisory_lock(116)');
		push @sessions, map {
			[ $name, start_as($node, $i->{db}, 'clerk',
					"SELECT pg_advisory_lock_shared(116); SELECT pg_advisory_unlock_shared(116); $_") ]
		} @sql;
		push @sessions, [ $name, start_as($node, $i->{db}, undef,
				'SELECT pg_advisory_lock_shared(116); SELECT pg_advisory_unlock_shared(116); '
				  . 'SELECT snowid_next() FROM generate_series(1, 300)') ]
		  if $i->{how} eq 'extension';
	}
	# (a session that ended, failing to connect say, waits no more)
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	for my $name (sort keys %gate)
	{
		while (1)
		{
			my $alive = grep {
				$_->[0] eq $name && do { $_->[1]{handle}->pump_nb; $_->[1]{handle}->pumpable }
			} @sessions;
			last if $gate{$name}->query_safe(qq{
				SELECT count(*) >= $alive FROM pg_locks
				WHERE locktype = 'advisory' AND objid = 116 AND NOT granted
				  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())}) =~ /t/;
			die "the sessions of $name did not reach the gate"
			  if Time::HiRes::time() > $deadline;
			Time::HiRes::sleep(0.05);
		}
	}
	$gate{$_}->query_safe('SELECT pg_advisory_unlock(116)') for sort keys %gate;
	$gate{$_}->quit for sort keys %gate;
	for my $s (@sessions)
	{
		my ($name, $session) = @$s;
		my $rc = $session->finish;
		if ($rc != 0)
		{
			my ($error) = $session->stderr =~ /^(ERROR:.*)$/m;
			$error = "round $round, $name: " . ($error // $session->stderr);
			# an error is an answer to a generator whose owner changed its
			# sequences; the lock's is not.  A clock behind a generator
			# raised further ahead of it than max_drift_ms is refused
			# (clock_refuses())
			if (($issuer{$name}{altered} && $error !~ /\b55P03\b/)
				|| (clock_refuses($name, $offset)
					&& $error =~ /the system clock is \d+ ms behind the snowid generator/))
			{
				push @refusals, $error;
			}
			else
			{
				push @failures, $error;
			}
			next;
		}
		collect($name, grep { /^\d+$/ } split /\n/, $session->stdout);
	}
	return;
}

# Which servers made the owner superuser
sub superusers
{
	return grep {
		$server{$_}{node}->safe_psql('postgres',
			q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app'}) eq 't'
	} sort keys %server;
}

sub set_clock
{
	my ($to) = @_;

	$offset = $to;
	$clock->set(sprintf('%+d', $to));
	return;
}

# A server's first issuer, for the faults that act on one database
sub first_issuer
{
	my ($server) = @_;
	my ($name) = grep { $issuer{$_}{server} eq $server && active($_) }
	  sort keys %issuer;
	return $name;
}

# kill -9 right after autocommit takes (finding 1): the clock 30 s back
# (an id taken at +0 first, so that the sequence is at the clock), a
# transaction that took ids left open, then five autocommit calls of
# another session (every second time, five transactions that each have an
# xid before they take an id), whose ids are collected, and kill -9 of the whole
# server at once.  The open transaction takes ids one call at a time until
# each sequence of the edition's schema that the calls move has written
# its WAL ahead within it (its log_cnt rose) and has 6 values or more
# left before it writes again, so that the five calls write none (a
# sequence that wrote its WAL ahead in another, committed transaction
# would flush the open one's too).  The kill comes when the server has not
# written out all the WAL inserted before the five calls
# (pg_current_wal_lsn() below the insert position read after the open
# transaction's calls): the moment a committed id's position may be lost.
# The sessions connect and take an id first (a new session's first reads
# of the catalog may prune it, whose WAL the WAL writer is then woken to
# write out).  If the WAL was written out meanwhile, the open transaction
# is rolled back and it is tried again, up to five times, then the server
# is killed all the same.
my $crashes = 0;

sub crash_after_autocommit
{
	my ($server) = @_;
	my ($what, $take) =
	  $crashes++ % 2
	  ? ('5 ids of transactions that had an xid',
		'BEGIN; SELECT pg_current_xact_id(); SELECT snowid_next(); COMMIT')
	  : ('5 autocommit ids', 'SELECT snowid_next()');
	# (an issuer whose calls take ids with the clock 30 s back; where every
	# one's generator was raised too far ahead of that, a copy's, the
	# clock steps back as far as it takes ids: clock_refuses())
	my ($name) = grep { !clock_refuses($_, -30) }
	  grep { $issuer{$_}{server} eq $server && active($_) } sort keys %issuer;
	$name //= first_issuer($server);
	my $back = 30;
	$back-- while $back > 0 && clock_refuses($name, -$back);
	my $i = $issuer{$name};
	my $node = $server{$server}{node};
	my ($written, $calls);

	set_clock(0);
	my ($rc, $id) = psql_as($node, $i->{db}, 'clerk', 'SELECT snowid_next()');
	collect($name, $id) if $rc == 0;
	set_clock(-$back);
	my %session = map {
		my $s = $node->background_psql($i->{db},
			extra_params => $_ eq 'admin' ? [] : [ '-U', 'clerk' ]);
		($_ => $s)
	} qw(admin open autocommit);
	my $sql = sub {
		my ($who, $query) = @_;
		my $out = $session{$who}->query_safe($query);
		chomp $out;
		return $out;
	};
	# the sequences of the edition (its private schema, and the one it is
	# installed in): name, last value and log_cnt each
	my @sequences = split /\n/, $sql->('admin', q{SELECT c.oid::regclass FROM pg_class c
		WHERE c.relkind = 'S'
		  AND c.relnamespace::regnamespace::text IN ('public', 'snowid_sql_private')
		ORDER BY 1});
	die 'the edition has no sequences in public or snowid_sql_private' unless @sequences;
	my $state_query = join(' UNION ALL ',
		map { "SELECT '$_', last_value, log_cnt FROM $_" } @sequences);
	my $state = sub {
		return { map { my ($n, $v, $l) = split /\|/; ($n => [ $v, $l ]) }
			  split /\n/, $sql->('admin', $state_query) };
	};
	for my $try (1 .. 5)
	{
		collect($name, $sql->($_, 'SELECT snowid_next()')) for qw(open autocommit);
		$sql->('open', 'BEGIN');
		my $before = $state->();
		my (%moved, %logged);
		for my $call (1 .. 100)
		{
			$sql->('open', 'SELECT snowid_next()');
			$calls = $call;
			my $now = $state->();
			for my $seq (keys %$now)
			{
				$moved{$seq} = 1 if $now->{$seq}[0] != $before->{$seq}[0];
				$logged{$seq} = 1 if $now->{$seq}[1] > $before->{$seq}[1];
			}
			$before = $now;
			last if %moved
			  && !grep { !$logged{$_} || $now->{$_}[1] < 6 } keys %moved;
		}
		my $inserted = $sql->('admin', 'SELECT pg_current_wal_insert_lsn()');
		collect($name, (split /\n/, $sql->('autocommit', $take))[-1]) for 1 .. 5;
		$written = $sql->('admin', "SELECT pg_current_wal_lsn() >= '$inserted'");
		last if $written eq 'f' || $try == 5;
		$sql->('open', 'ROLLBACK');
	}
	SnowidTest::crash_server($node);
	eval { $_->quit; 1 } for values %session;
	return "$server killed after $what of $name, the clock $back s back (the open transaction took $calls; "
	  . ($written eq 'f' ? 'its WAL not written out)' : 'its WAL written out)');
}

my %copies;
my ($subscribed, $cached);

# unlogged (finding D): where the owner owns the edition's sequences (the
# plain script's databases), it makes them UNLOGGED (the first time the
# sequences alone, later drawn: the tables too), and sets its worker id
# again; at +0 s the database takes 3,000 ids over 3 s or more, then the
# server crashes as in the crash fault, emptying what is unlogged, and
# after its start the database takes as many with the clock back to when
# it began the first.  Refused, or a call failing afterwards, is an answer; an id
# repeated is not.
my $unlogged = 0;

# 3,000 ids a millisecond or more apart: over the seconds a clock stepped
# back to their start will cover again (ids taken as fast as they come
# run ahead of the clock, 4,096 to the millisecond)
my $spread = 'SELECT (SELECT snowid_next() FROM pg_sleep(0.001 + g * 0)) '
  . 'FROM generate_series(1, 3000) g';

sub unlog
{
	my @names = grep { $issuer{$_}{how} eq 'plain' && defined $issuer{$_}{worker} } sort keys %issuer;
	my $name = pick(@names);
	my $i = $issuer{$name};
	my $tables = $unlogged++ ? pick(0, 1) : 0;
	my ($rc, $out, $err) = psql_as(node_of($name), $i->{db}, 'app', q{
		SELECT string_agg(format('%s %s', CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
				c.oid::regclass), ',' ORDER BY c.relkind, c.relname)
		FROM pg_catalog.pg_class c
		WHERE c.relkind IN ('S', 'r') AND c.relname LIKE 'snowid%'
		  AND c.relnamespace::regnamespace::text IN ('public', 'snowid_sql_private')});
	my @done;
	for my $relation (split /,/, $out)
	{
		next if $relation =~ /^TABLE/ && !$tables;
		my ($arc) = psql_as(node_of($name), $i->{db}, 'app', "ALTER $relation SET UNLOGGED");
		push @done, $relation unless $arc;
	}
	my $what = "$name: its owner made "
	  . (@done ? join(', ', map { s/^\S+ //r } @done) : 'nothing')
	  . ' UNLOGGED (' . ($tables ? 'sequences and tables' : 'sequences') . ' tried)';
	return $what unless @done;
	$i->{altered} = 1;
	# The owner sets its worker id again (an ALTER SEQUENCE of the
	# generator leaves it without one), and a call follows: failing, it is
	# an answer; the owner then undoes it all and gives it a new worker
	# id, or the database leaves the rounds
	my $worker_again = sub {
		my ($rc, $out, $err) = psql_as(node_of($name), $i->{db}, 'app',
			"UPDATE snowid_config SET worker_id = $i->{worker}");
		return $rc ? ', and could not set its worker id again: ' . ($err =~ /^(ERROR:.*)$/m)[0]
		  : ', and set its worker id again';
	};
	my $call = sub {
		my ($rc, $out, $err) = psql_as(node_of($name), $i->{db}, 'clerk', $spread);
		return collect($name, grep { /^\d+$/ } split /\n/, $out) unless $rc;
		my ($error) = $err =~ /^(ERROR:.*)$/m;
		push @refusals, "round $round, $name: $error";
		# (a worker id it never used: after the crash the sequences may
		# lie below ids it issued)
		psql_as(node_of($name), $i->{db}, 'app', "ALTER $_ SET LOGGED") for @done;
		give_worker($name);
		($rc, $out, $err) = psql_as(node_of($name), $i->{db}, 'clerk', 'SELECT snowid_next()');
		if ($rc)
		{
			delete $i->{worker};
			return "; a call failed ($error), and again after the owner undid it: "
			  . 'it leaves the rounds';
		}
		collect($name, $out);
		return "; a call failed ($error), and the owner undid it, giving it worker id $i->{worker}";
	};
	$what .= $worker_again->();
	set_clock(0);
	my $began = Time::HiRes::time();
	my $failed = $call->();
	return $what . $failed if $failed;
	$what .= '; it took 3,000 ids; ' . crash_after_autocommit($i->{server});
	$clock->start_node($server{ $i->{server} }{node});
	my $back = int(Time::HiRes::time() - $began);
	$back = 55 if $back > 55;
	set_clock(-$back);
	return "$what; started again, the clock to -$back s (when it began taking them)"
	  . ($call->() // '; it took 3,000 ids');
}

# plant (finding A): the owner plants in public, of a database, an
# operator for each pair of types that pg_catalog's operator of that name
# takes only with casts, and an overload of each function the edition's
# scripts call that pg_catalog's takes only with casts (of variadic "any"
# ones, up to three arguments of a few types), for the operators and
# functions named in the scripts and the types of the edition's functions
# and tables.  Each gives pg_catalog's answer, but first makes the owner
# superuser when a superuser runs it from the edition's code (a function
# of the edition on the stack, or CREATE or ALTER EXTENSION).  The first
# time, in two new databases: one then made by the owner's CREATE
# EXTENSION, one made by a superuser's CREATE EXTENSION of 1.1 then
# updated by ALTER EXTENSION UPDATE; later, in a database of the edition
# where a superuser takes ids.
my ($planted, $plant_names) = (0);

sub plant_sql
{
	my ($node, $db) = @_;

	unless ($plant_names)
	{
		my $text = join("\n", map { slurp_file($_) } "$dir/plain.sql",
			glob("$src/sql/snowid_sql--*.sql"), glob("$src/sql/snowid_sql/*/*.sql"));
		my %words = map { lc($_) => 1 } $text =~ /\b([a-z_][a-z0-9_]*)\s*\(/gi;
		my $opchars = '-+*/<>=~!@#%^&|`?';
		my @ops = grep { $text =~ /(?<![\Q$opchars\E])\Q$_\E(?![\Q$opchars\E])/ }
		  split /\n/, $node->safe_psql($db, q{
			SELECT DISTINCT oprname FROM pg_operator
			WHERE oprnamespace = 'pg_catalog'::regnamespace AND oprkind = 'b'});
		my @functions = grep { $words{$_} } split /\n/, $node->safe_psql($db, q{
			SELECT DISTINCT proname FROM pg_proc
			WHERE pronamespace = 'pg_catalog'::regnamespace AND prokind = 'f'
			  AND NOT proretset});
		# the types of the edition's functions and tables, and some others
		my @types = split /\n/, $server{a}{node}->safe_psql('appdb', q{
			SELECT DISTINCT t.oid::regtype FROM pg_type t
			WHERE t.typtype IN ('b', 'd', 'e') AND t.typcategory <> 'A'
			  AND (t.oid IN (SELECT unnest(p.proargtypes::oid[] || p.prorettype) FROM pg_proc p
							 WHERE p.proname LIKE 'snowid%')
				   OR t.oid IN (SELECT a.atttypid FROM pg_attribute a
								JOIN pg_class c ON c.oid = a.attrelid
								WHERE c.relname LIKE 'snowid%' AND a.attnum > 0)
				   OR t.oid = ANY ('{oid, regclass, regnamespace, regproc, regprocedure, regrole,
						regtype, name, text, bigint, integer, smallint, numeric, "double precision",
						boolean, timestamptz, interval, bytea, "\\"char\\""}'::regtype[]))});
		$plant_names = [ \@ops, \@functions, \@types ];
	}
	my ($ops, $functions, $types) = @$plant_names;
	my $array = sub { 'ARRAY[' . join(', ', map { "'$_'" } @_) . ']::text[]' };
	my $opa = $array->(map { s/'/''/gr } @$ops);
	my $fna = $array->(@$functions);
	my $typa = $array->(map { s/'/''/gr } @$types) =~ s/text\[\]$/regtype[]/r;

	return <<"SQL";
CREATE FUNCTION public.planted_escalate() RETURNS void LANGUAGE plpgsql AS \$p\$
DECLARE
	stack text;
BEGIN
	GET DIAGNOSTICS stack = PG_CONTEXT;
	-- (one session at a time: ALTER ROLE of sessions at once would fail)
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user)
	   AND (stack OPERATOR(pg_catalog.~) 'function (public\\.|snowid_sql_private\\.)?"?snowid'
			OR pg_catalog.current_query() OPERATOR(pg_catalog.~*) '^\\s*(create|alter)\\s+extension')
	   AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'app')
	   AND pg_catalog.pg_try_advisory_xact_lock(116116)
	THEN
		EXECUTE 'ALTER ROLE app SUPERUSER';
	END IF;
END \$p\$;
DO \$d\$
DECLARE
	types regtype[];
	t1 regtype;
	t2 regtype;
	t3 regtype;
	op text;
	fn text;
	p record;
	args regtype[];
	few regtype[] := ARRAY['text', 'bigint', 'integer', 'oid', 'name', 'regclass'];
	i integer;

BEGIN
	types := $typa;
	FOREACH op IN ARRAY $opa LOOP
		FOREACH t1 IN ARRAY types LOOP
			FOREACH t2 IN ARRAY types LOOP
				PERFORM public.planted_make(op, ARRAY[t1, t2],
					'\$1 OPERATOR(pg_catalog.' || op || ') \$2', op);
			END LOOP;
		END LOOP;
	END LOOP;
	FOREACH fn IN ARRAY $fna LOOP
		FOR p IN SELECT pg_catalog.string_to_array(pr.proargtypes::text, ' ')::oid[]::regtype[] AS a,
					pr.provariadic
				 FROM pg_proc pr
				 WHERE pr.proname = fn AND pr.pronamespace = 'pg_catalog'::regnamespace
				   AND pr.prokind = 'f' AND NOT pr.proretset LOOP
			IF p.provariadic = '"any"'::regtype THEN
				FOREACH t1 IN ARRAY few LOOP
					PERFORM public.planted_call(fn, p.a[1:cardinality(p.a) - 1] || t1);
					FOREACH t2 IN ARRAY few LOOP
						PERFORM public.planted_call(fn, p.a[1:cardinality(p.a) - 1] || t1 || t2);
						FOREACH t3 IN ARRAY few LOOP
							PERFORM public.planted_call(fn, p.a[1:cardinality(p.a) - 1] || t1 || t2 || t3);
						END LOOP;
					END LOOP;
				END LOOP;
			ELSIF p.provariadic = 0 AND cardinality(p.a) BETWEEN 1 AND 4 THEN
				FOR i IN 1 .. cardinality(p.a) LOOP
					FOREACH t1 IN ARRAY types LOOP
						CONTINUE WHEN t1 = p.a[i] OR NOT EXISTS (SELECT FROM pg_cast
							WHERE castsource = t1 AND casttarget = p.a[i] AND castcontext = 'i');
						args := p.a;
						args[i] := t1;
						PERFORM public.planted_call(fn, args);
					END LOOP;
				END LOOP;
			END IF;
		END LOOP;
	END LOOP;
END \$d\$;
SELECT (SELECT count(*) FROM pg_operator WHERE oprnamespace = 'public'::regnamespace)
	|| ' operators, '
	|| (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
		AND proname NOT LIKE 'planted%' AND proname NOT LIKE 'snowid%')
	|| ' function overloads';
SQL
}

# What the owner runs first, in public, to plant: an operator, or a
# function overload, of types that pg_catalog's takes only with casts and
# no operator or function has already, that gives pg_catalog's answer
# after planted_escalate()
my $plant_helpers = <<'SQL';
CREATE FUNCTION public.planted_make(name text, args regtype[], call text, op text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $p$
DECLARE
	result text;
	fname text := coalesce(pg_catalog.textcat('planted_', pg_catalog.md5(op || args::text)), name);
	params text;
	probe text;
	i integer;
BEGIN
	IF op IS NULL AND EXISTS (SELECT FROM pg_catalog.pg_proc p
			WHERE p.proname OPERATOR(pg_catalog.=) name
			  AND p.proargtypes::pg_catalog.text OPERATOR(pg_catalog.=)
				  pg_catalog.array_to_string(args::pg_catalog.oid[], ' '))
	   OR op IS NOT NULL AND EXISTS (SELECT FROM pg_catalog.pg_operator o
			WHERE o.oprname OPERATOR(pg_catalog.=) op
			  AND o.oprleft OPERATOR(pg_catalog.=) args[1]
			  AND o.oprright OPERATOR(pg_catalog.=) args[2]) THEN
		RETURN;
	END IF;
	probe := call;
	FOR i IN REVERSE pg_catalog.cardinality(args) .. 1 LOOP
		probe := pg_catalog.replace(probe, '$' || i, 'NULL::' || args[i]::text);
	END LOOP;
	BEGIN
		EXECUTE 'SELECT pg_catalog.pg_typeof(CASE WHEN false THEN ' || probe || ' END)::text'
		  INTO result;
	EXCEPTION WHEN OTHERS THEN
		RETURN;
	END;
	IF result OPERATOR(pg_catalog.=) ANY (ARRAY['record', 'unknown']) THEN
		RETURN;
	END IF;
	SELECT pg_catalog.string_agg(pg_catalog.format('p%s %s', a.n, a.t), ', ' ORDER BY a.n)
	  INTO params FROM unnest(args::text[]) WITH ORDINALITY a(t, n);
	EXECUTE pg_catalog.format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
		fname, params, result,
		'BEGIN PERFORM public.planted_escalate(); '
		  || CASE result WHEN 'void' THEN 'PERFORM ' || call || '; END'
			 ELSE 'RETURN ' || call || '; END' END);
	IF op IS NOT NULL THEN
		EXECUTE pg_catalog.format('CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = public.%I)',
			op, args[1], args[2], fname);
	END IF;
END $p$;
CREATE FUNCTION public.planted_call(name text, args regtype[]) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $p$
	SELECT public.planted_make(name, args, pg_catalog.format('pg_catalog.%I(%s)', name,
		(SELECT pg_catalog.string_agg('$' || n, ', ' ORDER BY n)
		 FROM pg_catalog.generate_series(1, pg_catalog.cardinality(args)) n)), NULL)
$p$;
SQL

# The owner plants in public of a database; returns what it planted, or
# why not
sub plant_in
{
	my ($node, $db) = @_;
	my ($rc, $out, $err) = psql_as($node, $db, 'app',
		"SET search_path = pg_catalog, pg_temp;\n" . $plant_helpers . plant_sql($node, $db));

	return $rc ? 'planting failed: ' . ($err =~ /^(ERROR:.*)$/m)[0] : ($out =~ /(\d+ operators.*)/)[0];
}

sub plant
{
	my @what;

	if (!$planted++)
	{
		my @servers = grep { $_ ne 'sub' && $_ ne 'seqsub' } sort keys %server;
		for my $how ('extension', 'update')
		{
			my $s = pick(@servers);
			my $node = $server{$s}{node};
			my $name = "plant_$how";
			$node->safe_psql('postgres', "CREATE DATABASE $name OWNER app");
			my $sql;
			if ($how eq 'update')
			{
				$node->safe_psql($name, q{CREATE EXTENSION snowid_sql VERSION '1.1'});
				$sql = 'ALTER EXTENSION snowid_sql UPDATE';
			}
			my $planted_set = plant_in($node, $name);
			my ($rc, $out, $err) = $how eq 'update'
			  ? psql_as($node, $name, undef, $sql)
			  : psql_as($node, $name, 'app', 'CREATE EXTENSION snowid_sql');
			if ($rc)
			{
				push @failures, "round $round, $name: " . ($err =~ /^(ERROR:.*)$/m)[0];
				push @what, "$s/$name: $planted_set; " . ($how eq 'update' ? 'ALTER EXTENSION UPDATE from 1.1'
					: "the owner's CREATE EXTENSION") . ' failed';
				next;
			}
			add_issuer($name, $s, $name, 'extension')->{planted} = 1;
			my $given = give_worker($name, $how eq 'update' ? undef : 'app');
			push @failures, "round $round, $name: no worker id: $given" if defined $given;
			push @what, "$s/$name: $planted_set; then "
			  . ($how eq 'update' ? 'a superuser\'s ALTER EXTENSION UPDATE from 1.1'
				: 'the owner\'s CREATE EXTENSION');
		}
	}
	else
	{
		my @names = grep { $issuer{$_}{how} eq 'extension' && active($_) } sort keys %issuer;
		my $name = pick(@names);
		if ($issuer{$name}{planted}++)
		{
			push @what, "$name: planted already";
		}
		else
		{
			push @what, "$name: " . plant_in(node_of($name), $issuer{$name}{db});
		}
	}
	return 'the owner planted operators and functions in public: ' . join('; ', @what);
}

# seqsync (finding B, PostgreSQL 19 on): the first time, a new server
# (seqsub, the edition by CREATE EXTENSION, a worker id of its own) takes
# part in the rounds; each time, at +0 s, it takes 3,000 ids over 3 s or
# more, then
# subscribes to c's FOR ALL SEQUENCES publication until its sequences
# hold c's values (those of c's last round, before seqsub's ids), then
# the subscription stops covering them (dropped; or first set to a
# publication of nothing and so refreshed, drawn), and the clock goes
# back to when seqsub began (inside max_drift_ms), where seqsub takes as
# many again
my $seqsyncs = 0;

sub seqsync
{
	my $c = $server{c}{node};

	return 'skipped: FOR ALL SEQUENCES publications come with PostgreSQL 19'
	  if $c->pg_version->major < 19;
	my $what = '';
	unless ($server{seqsub})
	{
		# (a server of its own: its own initdb, not a copy of the test
		# libraries' template, whose servers share a system identifier)
		new_server('seqsub', '', force_initdb => 1);
		install('seqsub', 'appdb', 'extension');
		add_issuer('seqsub', 'seqsub', 'appdb', 'extension');
		my $err = give_worker('seqsub');
		die "seqsub: $err" if defined $err;
		$what = "a new server, seqsub, worker id $issuer{seqsub}{worker}; ";
	}
	my $sub = $server{seqsub}{node};
	my $n = ++$seqsyncs;
	my $take = sub {
		my ($rc, $out, $err) = psql_as($sub, 'appdb', 'clerk', $spread);
		if ($rc)
		{
			push @refusals, "round $round, seqsub: " . ($err =~ /^(ERROR:.*)$/m)[0];
			return 'failed: ' . ($err =~ /^(ERROR:.*)$/m)[0];
		}
		collect('seqsub', grep { /^\d+$/ } split /\n/, $out);
		return 'took 3,000 ids';
	};
	set_clock(0);
	my $began = Time::HiRes::time();
	$what .= 'seqsub ' . $take->();
	my $token = $c->safe_psql('appdb', 'SELECT (snowid_sql_private.snowid_sql_fixed()).token');
	$c->safe_psql('appdb', "CREATE PUBLICATION seqs$n FOR ALL SEQUENCES");
	(my $publisher = $c->connstr('appdb')) =~ s/'/''/g;
	$sub->safe_psql('appdb',
		"CREATE SUBSCRIPTION seqs$n CONNECTION '$publisher' PUBLICATION seqs$n");
	$sub->poll_query_until('appdb', qq{
		SELECT pg_sequence_last_value('snowid_sql_private.snowid_generation') >> 40 = $token})
	  or die 'seqsub did not take c\'s sequences';
	my $how = pick('dropped', 'refreshed');
	if ($how eq 'refreshed')
	{
		# (set to a publication of nothing, and refreshed: it covers no
		# sequence, and is dropped with its publications)
		$c->safe_psql('appdb', "CREATE PUBLICATION nothing$n");
		$sub->safe_psql('appdb', "ALTER SUBSCRIPTION seqs$n SET PUBLICATION nothing$n");
		$sub->poll_query_until('appdb', 'SELECT count(*) = 0 FROM pg_subscription_rel')
		  or die 'the refreshed subscription still covers sequences';
	}
	$sub->safe_psql('appdb', "DROP SUBSCRIPTION seqs$n");
	$c->safe_psql('appdb', "DROP PUBLICATION IF EXISTS seqs$n, nothing$n");
	my $back = int(Time::HiRes::time() - $began) + 1;
	$back = 55 if $back > 55;
	set_clock(-$back);
	$what .= ", then c's sequences by a subscription to its FOR ALL SEQUENCES publication, "
	  . "which was then $how; the servers' clock to -$back s, where seqsub " . $take->();
	return $what if $what =~ /took 3,000 ids$/;
	# refused: the owner gives seqsub a worker id it never used, as the
	# error of a copy says, or seqsub leaves the rounds
	my $given = give_worker('seqsub');
	my ($rc, $out, $err) = defined $given ? (1, '', $given)
	  : psql_as($sub, 'appdb', 'clerk', 'SELECT snowid_next()');
	unless ($rc)
	{
		collect('seqsub', $out);
		return "$what; its owner gave it worker id $issuer{seqsub}{worker}";
	}
	delete $issuer{seqsub}{worker};
	return "$what; with a new worker id: " . ($err =~ /^(ERROR:.*)$/m)[0]
	  . '; seqsub leaves the rounds';
}

# ownerdump (finding C): the owner (no superuser) dumps its own database
# (pg_dump -Fc) and restores it as itself into a new database of its own
# on another server; then as the dump fault.  A dump or restore that
# fails is the owner's failure, counted apart from the calls.  The
# databases made by CREATE EXTENSION first, then the plain script's, in
# turn.
my $ownerdumps = 0;

sub ownerdump
{
	my @sources = grep { active($_) && $issuer{$_}{server} !~ /sub/ } sort keys %issuer;
	@sources = ((grep { $issuer{$_}{how} eq 'extension' } @sources),
		(grep { $issuer{$_}{how} eq 'plain' } @sources));
	my $from = $sources[ $ownerdumps++ % @sources ];
	my $n = keys(%copies) + 1;
	my @to = grep { $_ ne $issuer{$from}{server} } sort keys %server;
	my $to = pick(@to);
	my $file = "$dir/copy$n.dump";
	my $source = node_of($from);
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_dump', '-Fc', '-f', $file, '-d',
			$source->connstr($issuer{$from}{db}) . ' user=app' ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or do
	{
		my $why = "round $round: the owner's pg_dump of $from failed: " . ($err =~ /^(.*)$/m)[0];
		push @owner_dumps, $why;
		return $why;
	};
	my $node = $server{$to}{node};
	my $copy = "copy$n";
	$node->safe_psql('postgres', "CREATE DATABASE $copy OWNER app");
	IPC::Run::run([ 'pg_restore', '-d', $node->connstr($copy) . ' user=app', $file ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or push @owner_dumps, "round $round: the owner's pg_restore of $from into $to/$copy failed: "
	  . ($err =~ /^(.*)$/m)[0];
	add_issuer($copy, $to, $copy, $issuer{$from}{how});
	$issuer{$copy}{altered} = $issuer{$from}{altered};
	$copies{$copy} = $from;
	return "$from ($issuer{$from}{how}) dumped and restored by its owner as $copy on $to"
	  . ($err =~ /\S/ ? " (pg_restore said: " . ($err =~ /^(.*)$/m)[0] . ')' : '')
	  . first_call($copy);
}


my %fault = (
	restart => sub {
		my @names = sort keys %server;
		my $s = pick(@names);
		$server{$s}{node}->stop;
		$clock->start_node($server{$s}{node});
		return $s;
	},
	clock => sub {
		my @to = grep { $_ != $offset } (-30, -5, 0);
		set_clock(pick(@to));
		return "the servers' clock to $offset s";
	},
	crash => sub {
		my @names = grep { defined first_issuer($_) } sort keys %server;
		my $s = pick(@names);
		my $what = crash_after_autocommit($s);
		$clock->start_node($server{$s}{node});
		return $what . '; started again';
	},
	promote => sub {
		my $old = $server{a}{node};
		my $standby = $server{a}{standby};
		my $what = crash_after_autocommit('a');
		push @dead, $old;
		SnowidTest::promote($standby);
		$server{a}{node} = $standby;
		delete $server{a}{standby};
		add_standby($standby);
		return $what . '; its synchronous standby promoted, and given a new one';
	},
	logical => sub {
		my $what = '';
		unless ($subscribed++)
		{
			my $how = pick('extension', 'plain');
			my $sub = new_server('sub', '');
			install('sub', 'appdb', $how);
			psql_as($sub, 'appdb', 'app', $orders);
			(my $publisher = $c->connstr('appdb')) =~ s/'/''/g;
			$sub->safe_psql('appdb', qq{CREATE SUBSCRIPTION sub CONNECTION '$publisher'
				PUBLICATION everything WITH (copy_data = false)});
			add_issuer('sub', 'sub', 'appdb', $how);
			$what = "a subscriber ($how) of c; ";
		}
		my $node = $server{c}{node};
		psql_as($node, 'appdb', 'app',
			'UPDATE snowid_config SET max_drift_ms = CASE max_drift_ms WHEN 60000 THEN 59000 ELSE 60000 END');
		$node->wait_for_catchup('sub');
		$what .= 'c\'s owner changed max_drift_ms, and the subscriber applied it';
		if (!defined $issuer{sub}{worker} && !$issuer{sub}{as_is})
		{
			$what .= first_call('sub');
		}
		return $what;
	},
	dump => sub {
		my @sources = grep { $issuer{$_}{how} eq 'plain' } sort keys %issuer;
		push @sources, grep { $issuer{$_}{how} eq 'extension' } sort keys %issuer;
		my $n = keys(%copies) + 1;
		my $from = $sources[ ($n - 1) % @sources ];
		my @to = grep { $_ ne $issuer{$from}{server} } sort keys %server;
		my $to = pick(@to);
		my $file = "$dir/copy$n.dump";
		my $source = node_of($from);
		$source->command_ok(
			[ 'pg_dump', '-Fc', '-f', $file, '-d', $source->connstr($issuer{$from}{db}) ],
			"pg_dump of $from");
		my $node = $server{$to}{node};
		$node->safe_psql('postgres', "CREATE DATABASE copy$n OWNER app");
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'pg_restore', '-d', $node->connstr("copy$n"), $file ],
			'<', \undef, '>', \$out, '2>', \$err);
		my $copy = "copy$n";
		add_issuer($copy, $to, $copy, $issuer{$from}{how});
		# (the dump carries the sequences' options)
		$issuer{$copy}{altered} = $issuer{$from}{altered};
		$copies{$copy} = $from;
		return "$from ($issuer{$from}{how}) dumped and restored as $copy on $to"
		  . ($err =~ /\S/ ? " (pg_restore said: " . ($err =~ /^(.*)$/m)[0] . ')' : '')
		  . first_call($copy);
	},
	cache => sub {
		my @names = sort keys %issuer;
		my $name = pick(@names);
		my $sequence = $cached++ == 0 ? 'snowid_generation'
		  : pick('snowid_generation', 'snowid_position');
		my $cache = pick(3, 101);
		my ($rc, $out, $err) = psql_as(node_of($name), $issuer{$name}{db}, 'app',
			"ALTER SEQUENCE snowid_sql_private.$sequence CACHE $cache");
		$issuer{$name}{altered} = 1 unless $rc;
		return "$name: its owner's ALTER SEQUENCE $sequence CACHE $cache "
		  . ($rc ? 'refused: ' . ($err =~ /^(ERROR:.*)$/m)[0] : 'done');
	},
	lock => sub {
		my @names = grep { active($_) } sort keys %issuer;
		my $name = pick(@names);
		my $session = node_of($name)->background_psql($issuer{$name}{db},
			extra_params => [ '-U', 'mallory' ]);
		$session->query_safe("SELECT pg_advisory_lock_shared($_)") for @keys;
		$issuer{$name}{held} = $session;
		return "mallory holds the edition's advisory keys in $name through the next round";
	},
	replace => sub {
		my @names = grep { $issuer{$_}{how} eq 'extension' } sort keys %issuer;
		my $name = pick(@names);
		my ($rc, $out, $err) = psql_as(node_of($name), $issuer{$name}{db}, 'app', q{
			BEGIN;
			ALTER FUNCTION snowid_next() RENAME TO snowid_next_kept;
			CREATE FUNCTION snowid_next() RETURNS bigint LANGUAGE plpgsql AS $$
			BEGIN
				IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
					EXECUTE 'ALTER ROLE app SUPERUSER';
				END IF;
				RETURN snowid_next_kept();
			END $$;
			COMMIT;});
		return "$name: its owner's snowid_next() of its own "
		  . ($rc ? 'refused: ' . ($err =~ /^(ERROR:.*)$/m)[0] : 'in place');
	},
	unlogged => \&unlog,
	plant => \&plant,
	seqsync => \&seqsync,
	ownerdump => \&ownerdump,
);

# A copy's first call, before it is given a worker id: it must fail.  If
# it fails, the owner gives the copy a worker id of its own; if it issues,
# the copy is used as it is.
sub first_call
{
	my ($name) = @_;
	my ($rc, $out, $err) = psql_as(node_of($name), $issuer{$name}{db}, 'clerk',
		'SELECT snowid_next()');

	if ($rc == 0)
	{
		collect($name, $out);
		push @first_calls, "$name issued an id at its first call, before it was given a worker id";
		$issuer{$name}{as_is} = 1;
		return '; its first call issued an id: used as it is';
	}
	my $given = give_worker($name);
	return '; its first call failed: ' . ($err =~ /^(ERROR:.*)$/m)[0]
	  . (defined $given ? ", and it could not be given a worker id: $given"
		: ", then it was given worker id $issuer{$name}{worker}");
}

END
{
	close $ids_fh if $ids_fh;
}

my (%faults, $stopped);
my $started = Time::HiRes::time();
my $end = $started + $seconds;
take_round();
for my $r (0 .. $#plan)
{
	my $kind = $plan[$r];
	my $due = grep { $_ eq ($kind // '') } @once;
	if (defined $kind && (Time::HiRes::time() < $end || $due))
	{
		@once = grep { $_ ne $kind } @once if $due;
		my $what = $fault{$kind}->();
		$faults{$kind}++;
		note("round $round, fault: $kind: $what");
	}
	elsif (Time::HiRes::time() >= $end && !@once)
	{
		$stopped = $round;
		last;
	}
	take_round();
	for my $name (grep { $issuer{$_}{held} } sort keys %issuer)
	{
		$issuer{$name}{held}->quit;
		delete $issuer{$name}{held};
	}
}
my @superusers = superusers();
close $ids_fh;
undef $ids_fh;

note('refused where the owner changed the sequences, or the clock stood behind a generator raised ahead: ' . join('; ', @refusals[ 0 .. ($#refusals < 4 ? $#refusals : 4) ]))
  if @refusals;
note(sprintf('%d rounds in %.0f s%s; %d ids from %d issuers (%s); faults: %s',
		$round, Time::HiRes::time() - $started,
		defined $stopped ? ' (stopped by the time bound)' : '',
		$ids // 0, scalar keys %issuer,
		join(', ', map { "$_ " . ($issuer{$_}{worker} // ($issuer{$_}{as_is} ? 'as is' : 'left'))
		} sort keys %issuer),
		join(', ', map { "$_ $faults{$_}" } sort keys %faults) || 'none'));
note("figures: " . ($duplicates // 0) . " of " . ($ids // 0) . " ids repeated; "
	  . scalar(@failures) . ' failed sessions; ' . scalar(@refusals)
	  . ' sessions refused where the owner changed the sequences or the clock stood behind; ' . scalar(@first_calls)
	  . ' copies issued at their first call; ' . scalar(@owner_dumps)
	  . ' dumps or restores of the owner failed; the owner superuser on: '
	  . (join(', ', @superusers) || 'none'));
cmp_ok($ids // 0, '>', 0, 'the servers issued ids');
is(scalar(@failures), 0, 'every call of the rounds succeeded')
  or diag(join("\n", @failures[ 0 .. ($#failures < 9 ? $#failures : 9) ]));
is(scalar(@first_calls), 0,
	'a restored dump and a new subscriber issue no id before they are given a worker id')
  or diag(join("\n", @first_calls));
is(scalar(@owner_dumps), 0, 'the owner dumps its own database and restores it as itself')
  or diag(join("\n", @owner_dumps));
is($duplicates // 0, 0, "no id issued twice, among all " . ($ids // 0))
  or diag(join("\n", map { "$duplicates_by{$_} ids of $_" } sort keys %duplicates_by));
is(scalar(@superusers), 0, 'the database owner never becomes superuser')
  or diag('app is superuser on ' . join(', ', @superusers));

$_->{node}->stop('immediate') for values %server;
$server{a}{standby}->stop('immediate') if $server{a}{standby};
done_testing();
