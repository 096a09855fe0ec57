# Upgrading from each earlier release, as doc/install.md's "Upgrading"
# says, its blocks run as the page shows them (each marked "<!-- file NAME
# -->", read with SnowidClients::recipes, as the client tests read
# adopting.md's).  The earlier releases are those of test/versions.sh
# (SNOWID_RELEASE_*), built here from their sources (test/run unpacks them
# from the clone's history: SNOWID_EARLIER_RELEASES; else this clone's git
# history) into a private copy of the PostgreSQL under test, with make
# install as their users did; one whose C does not compile against the
# PostgreSQL under test (1.0 against 16 and later) has no path there.  For
# each path (a release, and where its server takes its worker id from: set
# by hand, claimed from Redis for good or on lease, and from 1.3 on from a
# coordination database), a server of that release issues ids in two
# databases, one with a view on snowid_status(); with Redis, the Redis
# holds the function library of that release, if it had one, as an
# administrator loaded it, and the server claims with that release's Lua
# (FCALL, or EVAL of 1.1's script); a coordination database has the
# snowid_coordinator that release installed, granted as its script's head
# says.  Then the page's steps: the settings block (the only one this
# test writes itself: its PG_CONFIG and DATACENTERS), make and make
# install of this source tree, with Redis the load of the new library and
# (before 1.3) the end of the quiet period, with a coordination database
# the update of its extension by its owner ("From 1.3"), a restart, the
# update of both databases (the one with the view by the page's
# transaction).  After them the
# server's first id is issued at once (no 55006, no wait for a quiet
# period), and every id of both databases, before and after, is distinct,
# the ids of each database rise in the order they were taken, those after
# lie above those before, and a worker id set by hand or claimed for good
# is the one the server had.  make uninstall of this tree then leaves no
# file of snowid in the private installation, whatever the earlier
# release installed (snowid--1.1.sql and snowid--1.2.sql of 1.2, say).
# And the SQL edition's update, the page's block, from each earlier
# version of it to the default, keeping its worker id.
#
# The page's shell blocks run with bash -e in a copy of this source tree.
# Two programs are put first on their PATH: sudo, which runs its arguments
# as the test's user (who owns the private installation, as root owns a
# reader's), and redis-cli, which is redis-cli with the test's Redis named
# (-s its socket), as a reader's is set up for theirs.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Cwd qw(realpath);
use File::Path qw(make_path);
use IPC::Run;
use Time::HiRes;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidCoordDb;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $top = realpath("$FindBin::RealBin/../../..");

SnowidRedis::need_redis();
SnowidTest::need_program('make', 'make');

# The earlier releases, oldest first, and the sources of each
my %versions = SnowidTest::versions();
my %commit = map { /^SNOWID_RELEASE_(\d+)_(\d+)$/ ? ("$1.$2" => $versions{$_}) : () }
  keys %versions;
my @releases = sort { $a <=> $b } keys %commit;
my $sources = $ENV{SNOWID_EARLIER_RELEASES};
if (!$sources)
{
	$sources = PostgreSQL::Test::Utils::tempdir('releases');
	for my $release (@releases)
	{
		my $into = "$sources/$release";

		make_path($into);
		IPC::Run::run([ 'git', '-C', $top, 'archive', $commit{$release} ],
			'|', [ 'tar', '-C', $into, '-xf', '-' ], '2>', \my $err)
		  or SnowidTest::missing_tool(
			"needs the sources of release $release ($commit{$release}): the git history of a clone, "
			  . 'which test/run unpacks into SNOWID_EARLIER_RELEASES');
	}
}

cmp_ok(scalar @releases, '>=', 3, "test/versions.sh names the earlier releases (@releases)");
ok(-f "$sources/$_/snowid.control", "the sources of release $_") for @releases;

# The page's blocks
my %block = SnowidClients::recipes("$top/doc/install.md");
my @names = qw(upgrade-settings.sh upgrade-install.sh upgrade-redis.sh
  upgrade-update.sql upgrade-dependents.sql upgrade-update-views.sql
  upgrade-sql-edition.sql upgrade-1.3-redis.sh upgrade-1.3-coordinator.sql);
ok(defined $block{$_}, "doc/install.md shows the block $_") for @names;
# the settings block names what a reader sets, and nothing else: the test
# sets the same
my @settings = map { /^(\w+)=/ ? $1 : "($_)" }
  grep { !/^\s*(#|$)/ } split /\n/, $block{'upgrade-settings.sh'} // '';
is("@settings", 'PG_CONFIG DATACENTERS',
	'its settings block sets PG_CONFIG and DATACENTERS, and does nothing else');
my ($view) = ($block{'upgrade-update-views.sql'} // '') =~ /^DROP VIEW (\w+);$/m;
$view //= 'none';
my ($create_view) = ($block{'upgrade-update-views.sql'} // '') =~ /^(CREATE VIEW \Q$view\E AS\n.*?;)$/ms;
ok(defined $create_view,
	'its transaction drops a view on snowid_status() and creates it again');

# ---------------------------------------------------------------------------
# A private copy of the PostgreSQL under test, each directory at its path
# under one root (PostgreSQL finds its own relative to its programs)

my %dir = SnowidTest::private_installation();
my $root = $dir{root};
my $private = $dir{pg_config};
my $extdir = "$root$dir{sharedir}/extension";
my $libdir = "$root$dir{pkglibdir}";
chomp(my $share = `$private --sharedir`);
is($share, "$root$dir{sharedir}",
	'the copy of the PostgreSQL under test finds its files where it lies');
my $install_path = $dir{install_path};

# The source of the new version: this tree without what builds and tests
# leave in it
my $src = PostgreSQL::Test::Utils::tempdir('source');
IPC::Run::run(
	[
		'tar', '-C', $top, '--exclude-vcs', '--anchored',
		'--exclude=./results', '--exclude=./output_iso', '--exclude=./tmp_check*',
		'--exclude=./log*', '--exclude=./regression.*', '--no-anchored',
		'--exclude=*.o', '--exclude=*.so', '--exclude=*.bc',
		'--exclude=node_modules', '-cf', '-', '.'
	],
	'|', [ 'tar', '-C', $src, '-xf', '-' ])
  or die "could not copy $top to $src";

# What a reader's shell has: sudo (see the top), and redis-cli for the
# Redis of the path, once there is one
my $bin = PostgreSQL::Test::Utils::tempdir('bin');
open(my $fh, '>', "$bin/sudo") or die "could not write $bin/sudo: $!";
print $fh "#!/bin/sh\n# the test's user owns the installation\nexec \"\$@\"\n";
close $fh;
chmod 0755, "$bin/sudo";

# Writes the redis-cli of a path's Redis
sub redis_cli_for
{
	my ($redis) = @_;

	open(my $fh, '>', "$bin/redis-cli") or die "could not write $bin/redis-cli: $!";
	print $fh "#!/bin/sh\nexec '" . $redis->cli_program . "' -s '"
	  . $redis->socket . "' \"\$@\"\n";
	close $fh;
	chmod 0755, "$bin/redis-cli";
	return;
}

# Runs a shell block of the page in the source of the new version, after
# the test's settings; returns whether it succeeded, and its output
sub run_block
{
	my ($name, $datacenters) = @_;
	my $script = "PG_CONFIG='$private'\nDATACENTERS='$datacenters'\n"
	  . $block{$name};
	local $ENV{PATH} = "$bin:$ENV{PATH}";

	return SnowidTest::run_in($src, 'bash', '-e', '-c', $script);
}

# Runs an SQL block of the page as psql would, stopping at the first
# error; returns whether it succeeded, and what psql said on stderr
sub run_sql_block
{
	my ($node, $db, $name) = @_;
	my ($ret, $out, $err) = $node->psql($db, $block{$name},
		on_error_stop => 1);

	return ($ret == 0, $err);
}

# The files of snowid in the private installation
sub snowid_files
{
	return map { s{^\Q$root\E}{}r } grep { -e $_ }
	  glob("$extdir/snowid*"), glob("$libdir/snowid*"), glob("$libdir/bitcode/snowid*");
}

# make uninstall of this tree, then no file of snowid in the installation
sub uninstall
{
	my ($what) = @_;
	my ($ok, $out) = SnowidTest::run_in($src, 'make', "PG_CONFIG=$private", 'uninstall');

	ok($ok, "$what: make uninstall") or diag($out);
	is(join(' ', snowid_files()), '',
		"$what: make uninstall leaves no file of snowid in the installation");
	return;
}

# The build of each earlier release, for the private installation: made
# once, installed where a path begins.  A release whose C does not compile
# against this PostgreSQL (1.0 against 16 and later: no server of it ran
# there) has no path here; any other failure of its make fails the test.
my %built;
my $builds = PostgreSQL::Test::Utils::tempdir('builds');

sub install_release
{
	my ($release) = @_;
	my $dir = "$builds/$release";
	my ($ok, $out);

	if (!exists $built{$release})
	{
		# a copy of its own: the unpacked sources are shared by the runs
		# of every version, which would link each other's objects
		system('cp', '-R', "$sources/$release", $dir) == 0
		  or die "could not copy $sources/$release to $dir";
		($ok, $out) = SnowidTest::run_in($dir, 'make', "PG_CONFIG=$private");
		$built{$release} = $ok;
		if (!$ok)
		{
			my @errors = $out =~ m{^(src/\S+\.c:\d+:\d+: error: .*)$}mg;

			ok(@errors > 0, "release $release: make fails only where its C does not compile here")
			  or diag("the end of make's output:\n"
				  . join("\n", grep { defined } (split /\n/, $out)[-15 .. -1]));
			diag("release $release does not compile against " . `$private --version`
				  . join("\n", @errors))
			  if @errors;
		}
	}
	return 0 unless $built{$release};
	($ok, $out) = SnowidTest::run_in($dir, 'make', "PG_CONFIG=$private", 'install');
	ok($ok, "release $release: make install") or diag($out);
	return $ok;
}

# The ids a database of node took, in the order taken: [ [ id, phase ] ]
sub ids_of
{
	my ($node, $db) = @_;

	return [ map { [ split /\|/ ] } split /\n/,
		  $node->safe_psql($db, 'SELECT id, phase FROM upgrade_ids ORDER BY n') ];
}

# Takes n ids in a database of node, noted as phase
sub take_ids
{
	my ($node, $db, $n, $phase) = @_;
	my ($ret, $out, $err) = $node->psql($db,
		"INSERT INTO upgrade_ids (id, phase) SELECT snowid_next(), '$phase' FROM generate_series(1, $n)");

	return ($ret == 0, $err);
}

# The datacenter and worker ids of the ids of a phase, "D/W" each
sub workers_of
{
	my ($node, $db, $phase) = @_;

	return $node->safe_psql($db, qq{
		SELECT string_agg(DISTINCT d.datacenter_id || '/' || d.worker_id, ' ')
		FROM upgrade_ids, snowid_decode(id) d WHERE phase = '$phase'});
}

# ---------------------------------------------------------------------------
# The paths of the C edition

# The default version a control file names
sub control_version
{
	my ($file) = @_;
	my ($version) = slurp_file($file) =~ /^default_version\s*=\s*'([^']+)'/m;

	die "$file names no default_version" unless defined $version;
	return $version;
}

my $default = control_version("$top/snowid.control");
my $n = 0;

# One path: a server of release, its worker id set by hand (fixed), claimed
# from Redis for good (redis) or on lease (lease), or from a coordination
# database for good (coordinator: from 1.3 on, with the snowid_coordinator
# that release installed), upgraded as the page says (from 1.3, its
# section's store update)
sub path
{
	my ($release, $source) = @_;
	my $what = "from $release, " . {
		fixed => 'a worker id set by hand',
		redis => 'a worker id claimed from Redis',
		lease => 'a worker id on lease from Redis',
		coordinator => 'a worker id claimed from a coordination database'
	}->{$source};
	my $dc = 2 + $n++;
	my ($redis, $coord, $node, $ok, $out, $err);
	my $extra = 0;			# the ids taken while the store was updated

	note("upgrading $what");
	SKIP:
	{
		skip "$what: release $release does not build against this PostgreSQL (a server of it could not run it)", 1
		  unless install_release($release);

		if ($source eq 'coordinator')
		{
			# a coordination database with the release's snowid_coordinator,
			# installed and granted as its script's head says, the
			# datacenter marked new by its administrator
			$coord = SnowidCoordDb->new("coord_from_$release" =~ s/\W/_/gr,
				install_path => $install_path);
			$coord->node->safe_psql('postgres', q{
				CREATE ROLE snowid_fleet LOGIN;
				CREATE ROLE snowid_admin LOGIN;
			});
			$coord->sql('coord_owner', SnowidCoordDb::head_grants(
					"$extdir/snowid_coordinator--1.0.sql"));
			$coord->sql('coord_owner', "SELECT snowid_coordinator.new_datacenter($dc)");
		}
		elsif ($source ne 'fixed')
		{
			# Redis with the function library of the release, if it had
			# one (1.1 ran its claim with EVAL), loaded as its
			# administrators did
			$redis = SnowidRedis->new(library => 0, mark_new => 0);
			$redis->cli('FUNCTION', 'LOAD', 'REPLACE', slurp_file("$extdir/snowid.lua"))
			  if -e "$extdir/snowid.lua";
			# from 1.3 on, the datacenter marked new by an administrator
			# before its first claim, as its redis.md says, with that
			# library's function
			$redis->cli('FCALL', 'snowid_2_new_datacenter', 3,
				map({ "{snowid:dc:$dc}:$_" } qw(owners leases fences)), 'admin')
			  if $release >= 1.3;
			redis_cli_for($redis);
		}
		$node = PostgreSQL::Test::Cluster->new("from_${release}_$source" =~ s/\W/_/gr,
			install_path => $install_path);
		$node->init;
		$node->append_conf('postgresql.conf',
			"shared_preload_libraries = 'snowid'\nsnowid.datacenter_id = $dc\n"
			  . ($source eq 'fixed' ? "snowid.worker_id = 7\n"
				: $coord ? "snowid.coordinator_url = 'postgresql:///coord?host=" . $coord->node->host
				  . '&port=' . $coord->node->port . "&user=snowid_fleet'\n"
				: "snowid.redis_url = '" . $redis->url . "'\n")
			  . ($source eq 'lease' ? "snowid.worker_lease = '30s'\n" : ''));
		$node->start;
		$node->safe_psql('postgres', 'CREATE DATABASE shop');
		for my $db ('postgres', 'shop')
		{
			$node->safe_psql($db, q{
				CREATE EXTENSION snowid;
				CREATE TABLE upgrade_ids (n bigserial PRIMARY KEY, id bigint NOT NULL, phase text NOT NULL)});
		}
		# a reader's view on snowid_status(), as the page's example has it
		$node->safe_psql('postgres', $create_view);
		is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'snowid'"),
			$release, "$what: the server runs snowid $release");
		($ok, $err) = take_ids($node, 'postgres', 1000, 'before');
		ok($ok, "$what: its server issues ids") or diag($err);
		take_ids($node, 'shop', 100, 'before');
		if ($redis)
		{
			# the claim went through the release's own Lua: its function
			# library (FCALL) where it had one, else its script (EVAL)
			my $verb = -e "$extdir/snowid.lua" ? 'fcall' : 'eval';
			my ($calls) = $redis->cli('INFO', 'commandstats') =~ /^cmdstat_$verb:calls=(\d+)/m;
			cmp_ok($calls // 0, '>', 0,
				"$what: its server claimed with the Lua of release $release (" . uc($verb) . ')');
		}
		my $before = workers_of($node, 'postgres', 'before');
		like($before, qr{^$dc/\d+$}, "$what: with one worker id of datacenter $dc ($before)");
		like($node->safe_psql('postgres', $block{'upgrade-dependents.sql'}), qr/^rule _RETURN on view $view$/m,
			"$what: the page's query lists the view on snowid_status()");

		# the page's steps
		($ok, $out) = run_block('upgrade-install.sh', $dc);
		ok($ok, "$what: step 1, the new version built and installed") or diag($out);
		if ($redis && $release < 1.3)
		{
			($ok, $out) = run_block('upgrade-redis.sh', $dc);
			ok($ok, "$what: step 2, the new library loaded into Redis and the quiet period ended")
			  or diag($out);
		}
		elsif ($redis)
		{
			($ok, $out) = run_block('upgrade-1.3-redis.sh', $dc);
			ok($ok, "$what: step 2, the new library loaded into Redis") or diag($out);
		}
		elsif ($coord)
		{
			my ($ret, $stdout, $stderr) = $coord->node->psql('coord',
				$block{'upgrade-1.3-coordinator.sql'}, on_error_stop => 1,
				extra_params => [ '-U', 'coord_owner' ]);

			is($ret, 0, "$what: step 2, snowid_coordinator updated by its owner") or diag($stderr);
			is($coord->sql(undef, "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'"),
				control_version("$top/snowid_coordinator.control"),
				"$what: the coordination database has this release's snowid_coordinator");
		}
		if ($release >= 1.3 && $source ne 'fixed')
		{
			# the server of 1.3.0, not restarted yet, checks in with the
			# updated store (Redis: 1.3.0's snowid_2_claim of the new
			# library) while it issues ids, and goes on issuing: its
			# snowid_status() says when the store last answered it
			my $updated = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
			my $answered = sub {
				$node->safe_psql('postgres',
					"SELECT coalesce(coordinator_answered_at > '$updated', false) FROM snowid_status()");
			};
			my $log_at = -s $node->logfile;
			my $tries = 0;
			$ok = 1;
			while ($ok && $answered->() ne 't' && $tries++ < 240)
			{
				($ok, $err) = take_ids($node, 'shop', 1, 'before');
				$extra++;
				Time::HiRes::sleep(0.25);
			}
			is($answered->(), 't',
				"$what: the server of 1.3.0 checks in with the updated store while it issues ids");
			ok($ok, "$what: and goes on issuing ids") or diag($err);
			ok(!$node->log_contains('could not check in|stopped issuing', $log_at),
				"$what: its check-ins granted");
		}
		my $offset = -s $node->logfile;
		$node->restart;
		($ok, $err) = run_sql_block($node, 'postgres', 'upgrade-update-views.sql');
		ok($ok, "$what: step 4, the update, the view dropped and created again in one transaction")
		  or diag($err);
		($ok, $err) = run_sql_block($node, 'shop', 'upgrade-update.sql');
		ok($ok, "$what: step 4, the update of a database without a view") or diag($err);
		for my $db ('postgres', 'shop')
		{
			is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'snowid'"),
				$default, "$what: $db is at $default");
		}

		# the first id after the restart, at once
		($ok, $err) = take_ids($node, 'postgres', 1, 'after');
		ok($ok, "$what: the first id after the restart is issued") or diag($err);
		ok(!$node->log_contains('snowid waits until', $offset),
			"$what: without waiting for a quiet period");
		($ok, $err) = take_ids($node, 'postgres', 999, 'after');
		ok($ok, "$what: and the next ones") or diag($err);
		take_ids($node, 'shop', 100, 'after');
		is($node->safe_psql('postgres', "SELECT count(*) FROM $view"), 1,
			"$what: the view reads the new snowid_status()");

		# every id distinct, each database's rising in the order taken,
		# those after above those before; the worker id kept
		my %seen;
		my ($dups, $falls, $last_before, $first_after) = (0, 0, 0, undef);
		for my $db ('postgres', 'shop')
		{
			my $prev = 0;

			for (@{ ids_of($node, $db) })
			{
				my ($id, $phase) = @$_;

				$dups++ if $seen{$id}++;
				$falls++ if $id <= $prev;
				$prev = $id;
				$last_before = $id if $phase eq 'before' && $id > $last_before;
				$first_after = $id
				  if $phase eq 'after' && (!defined $first_after || $id < $first_after);
			}
		}
		my $taken = 2200 + $extra;
		is(scalar keys %seen, $taken, "$what: $taken ids taken");
		is($dups, 0, "$what: none twice");
		is($falls, 0, "$what: each database's rising in the order they were taken");
		cmp_ok($first_after // 0, '>', $last_before,
			"$what: those after the upgrade above those before");
		my $after = workers_of($node, 'postgres', 'after');
		if ($source eq 'lease')
		{
			# the lease of 1.2 is its old holder name's until it runs out
			like($after, qr{^$dc/\d+$}, "$what: the ids after carry one worker id ($after)");
		}
		else
		{
			is($after, $before, "$what: the ids after carry the worker id of before");
		}
		is($node->safe_psql('postgres', 'SELECT worker_source FROM snowid_status()'),
			{ fixed => 'config', redis => 'redis', lease => 'lease', coordinator => 'postgresql' }->{$source},
			"$what: snowid_status() says where it came from");

		$node->stop;
		$redis->stop if $redis;
		$coord->node->stop if $coord;
		uninstall($what);
	}
	return;
}

path('1.0', 'fixed');
path('1.1', 'fixed');
path('1.2', 'fixed');
path('1.1', 'redis');
path('1.2', 'redis');
path('1.2', 'lease');
path('1.3', 'redis');
path('1.3', 'coordinator');

# ---------------------------------------------------------------------------
# The SQL edition: its update from each earlier version, as the page says,
# in the PostgreSQL under test

my $sql_default = control_version("$top/snowid_sql.control");
my $plain = PostgreSQL::Test::Cluster->new('sql_edition');
$plain->init;
$plain->start;
my @from = split /\n/, $plain->safe_psql('postgres', qq{
	SELECT source FROM pg_extension_update_paths('snowid_sql')
	WHERE target = '$sql_default' AND path IS NOT NULL ORDER BY source});
cmp_ok(scalar @from, '>=', 2, "the SQL edition updates from @from to $sql_default");
ok((grep { $_ eq '1.3' } @from), 'among them 1.3, as release 1.3.0 installed it');
for my $version (@from)
{
	my $db = 'sql_' . ($version =~ s/\W/_/gr);
	my $what = "the SQL edition from $version";

	$plain->safe_psql('postgres', "CREATE DATABASE $db");
	$plain->safe_psql($db, qq{
		CREATE EXTENSION snowid_sql VERSION '$version';
		UPDATE snowid_config SET datacenter_id = 3, worker_id = 17;
		CREATE TABLE upgrade_ids (n bigserial PRIMARY KEY, id bigint NOT NULL, phase text NOT NULL)});
	my ($ok, $err) = take_ids($plain, $db, 300, 'before');
	ok($ok, "$what: issues ids") or diag($err);
	($ok, $err) = run_sql_block($plain, $db, 'upgrade-sql-edition.sql');
	ok($ok, "$what: the page's update") or diag($err);
	is($plain->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'snowid_sql'"),
		$sql_default, "$what: the extension is at $sql_default");
	($ok, $err) = take_ids($plain, $db, 300, 'after');
	ok($ok, "$what: issues ids after it") or diag($err);
	is($plain->safe_psql($db, q{
		SELECT count(*) = count(DISTINCT id) AND count(*) = 600
		FROM upgrade_ids}), 't', "$what: 600 ids, none twice");
	is($plain->safe_psql($db, q{
		SELECT count(*) FROM (SELECT id <= lag(id) OVER (ORDER BY n) AS falls FROM upgrade_ids) s
		WHERE falls}), 0, "$what: rising in the order they were taken");
	is(workers_of($plain, $db, 'after'), '3/17', "$what: with the worker id it had");
}
$plain->stop;

done_testing();
