# What the TAP tests (test/t/*/*.pl) share: servers with snowid preloaded, a
# ledger of every id a test takes (duplicates, order), a server clock moved
# by an offset file (test/tools/clock_offset.c), psql sessions in the
# background and a gate that lets them start at the same moment, bursts of
# ids taken at once by several servers or databases, and a backend crash.
package SnowidTest;

use strict;
use warnings;

use Cwd ();
use File::Basename qw(basename dirname);
use File::Copy ();
use File::Path qw(make_path);
use File::Spec;
use Time::HiRes;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

# libfaketime's library (Debian's libfaketime), for the Patroni tests'
# clock at a fixed offset (SnowidPatroni): need_libfaketime checks for it.
# Every other clock the tests move (SnowidTest::Clock, whose offset changes
# while a server runs, SnowidLease::start_skewed, and test/protocol-search's
# stores) is test/tools/clock_offset.c's (need_clock).
# test/, from this module's place (test/t/lib), whichever test file loads it
our $test_dir = Cwd::realpath(File::Basename::dirname(File::Spec->rel2abs(__FILE__)) . '/../..');

# The top of the source tree
our $top = Cwd::realpath("$test_dir/..");

our $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

# PostgreSQL 17 and later make a new server by copying $ENV{INITDB_TEMPLATE}
# (one initdb -A trust -N of the same build, made by test/run) rather than
# running initdb again, unless extra initdb options are given; the same is
# done here on 15 and 16.  Such servers share one system identifier, as the
# servers of PostgreSQL's own tests do; one that needs its own passes
# force_initdb => 1 (as on 17).
if (defined $ENV{INITDB_TEMPLATE})
{
	my $init = \&PostgreSQL::Test::Cluster::init;
	my $system_or_bail = \&PostgreSQL::Test::Utils::system_or_bail;

	no warnings 'redefine';
	*PostgreSQL::Test::Cluster::init = sub {
		my ($self, %params) = @_;

		return $init->(@_)
		  if $self->pg_version >= 17
		  || $params{force_initdb}
		  || defined $params{extra};
		local *PostgreSQL::Test::Utils::system_or_bail = sub {
			return $system_or_bail->(@_) unless $_[0] eq 'initdb';
			Test::More::note('initializing database system by copying initdb template');
			return $system_or_bail->('cp', '-RPp', $ENV{INITDB_TEMPLATE}, $_[2]);
		};
		return $init->(@_);
	};
}

# Ports for servers come from below the kernel's range of ephemeral ports,
# as PostgreSQL 18's get_free_port() and its back branches' later minors
# choose them.  The branch points of 16 and 17 choose from 49152 up, inside
# Linux's default ephemeral range (32768 to 60999): there a port found free
# could be taken as the source port of another test's client before the
# server that was to listen on it started or restarted ("Address already in
# use").  Ports are still reserved in PostgreSQL's lock directory, so tests
# running side by side never share one.
{
	my $lowest = 10200;
	my $highest = 32767;

	if (open my $fh, '<', '/proc/sys/net/ipv4/ip_local_port_range')
	{
		my ($ephemeral_low) = split ' ', scalar <$fh>;
		close $fh;
		$highest = $ephemeral_low - 1
		  if defined $ephemeral_low
		  && $ephemeral_low =~ /^\d+$/
		  && $ephemeral_low - 1 < $highest
		  && $ephemeral_low - 1 > $lowest + 1000;
	}

	no warnings 'redefine';
	*PostgreSQL::Test::Cluster::get_free_port = sub {
		my $port = $PostgreSQL::Test::Cluster::last_port_assigned;

		$port = $lowest + int(rand($highest - $lowest))
		  if !defined $port || $port < $lowest || $port > $highest;
		for (my $tries = 0; $tries <= $highest - $lowest; $tries++)
		{
			$port = $lowest if ++$port > $highest;
			next
			  if grep { $_->port == $port }
			  @PostgreSQL::Test::Cluster::all_nodes;
			next unless PostgreSQL::Test::Cluster::can_bind('127.0.0.1', $port);
			next unless PostgreSQL::Test::Cluster::_reserve_port($port);
			$PostgreSQL::Test::Cluster::last_port_assigned = $port;
			return $port;
		}
		die "no free port between $lowest and $highest";
	};
}

# A PostgreSQL server with snowid preloaded and the given settings, not
# started: new_node('name', { 'snowid.datacenter_id' => 4, ... }, init
# parameters such as allows_streaming => 1).
sub new_node
{
	my ($name, $settings, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowid'\n");
	set_conf($node, %$settings);
	return $node;
}

# As new_node, the server started and the extension created
sub new_server
{
	my $node = new_node(@_);

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

# The path of a program a test needs: need_program('pgbouncer',
# 'pgbouncer') finds it on PATH (a name with a slash is taken as a path).
# Where it is missing, the test file skips itself and names the Debian
# package to install; with SNOWID_REQUIRE_TOOLS=1 (test/run sets it, so
# that CI counts a missing tool as a failure) it fails instead.
sub need_program
{
	my ($program, $package) = @_;
	my @candidates =
	  $program =~ m{/}
	  ? ($program)
	  : map { "$_/$program" } File::Spec->path;

	for my $path (@candidates)
	{
		return $path if -f $path && -x _;
	}
	my $why = "needs $program (Debian package $package)";
	die "$why: not found, and SNOWID_REQUIRE_TOOLS=1 counts a missing tool as a failure\n"
	  if $ENV{SNOWID_REQUIRE_TOOLS};
	Test::More::plan(skip_all => $why);
	return;
}

# What a test file does when something it needs is missing (need_file and
# the others below): skips itself with why, which names the Debian
# package; with SNOWID_REQUIRE_TOOLS=1, fails instead (as need_program).
sub missing_tool
{
	my ($why) = @_;

	die "$why: not found, and SNOWID_REQUIRE_TOOLS=1 counts a missing tool as a failure\n"
	  if $ENV{SNOWID_REQUIRE_TOOLS};
	Test::More::plan(skip_all => $why);
	return;
}

# A file a test needs (a library to preload, say): need_file($path,
# 'libfaketime') returns the path if it exists, else skips or fails as
# missing_tool says.
sub need_file
{
	my ($path, $package) = @_;

	return $path if -e $path;
	return missing_tool("needs $path (Debian package $package)");
}

# libfaketime's library, for SnowidPatroni's LD_PRELOAD with a fixed
# FAKETIME: its path, or a skip (a failure under SNOWID_REQUIRE_TOOLS=1)
# naming the package libfaketime.
sub need_libfaketime
{
	return need_file($libfaketime, 'libfaketime');
}

# The library SnowidTest::Clock preloads (test/tools/clock_offset.c, which
# says why libfaketime's file mode is not used), compiled once per test
# file into its temporary directory with the C compiler cc: its path.
# Where cc is missing, skips or fails as need_program says, naming the
# package gcc; a test file that uses SnowidTest::Clock calls this before
# its first test.  The files that run test/protocol-search pass the path
# on as SNOWID_CLOCK_LIBRARY, for the search's stores.
my $clock_library;

sub need_clock
{
	return $clock_library if defined $clock_library;

	my $cc = need_program('cc', 'gcc');
	my $source = "$test_dir/tools/clock_offset.c";
	my $dir = PostgreSQL::Test::Utils::tempdir('clock_offset');
	my $library = File::Spec->rel2abs("$dir/clock_offset.so");
	my ($out, $err);

	IPC::Run::run(
		[
			$cc, '-O2', '-Wall', '-Wextra', '-shared', '-fPIC',
			'-o', $library, $source
		],
		'>', \$out, '2>', \$err)
	  or die "could not compile $source with $cc:\n$out$err";
	$clock_library = $library;
	return $clock_library;
}

# A Perl module a test needs: need_perl_module('Redis', 'libredis-perl')
# loads it, else skips or fails as missing_tool says.
sub need_perl_module
{
	my ($module, $package) = @_;

	return 1 if eval "require $module; 1";
	return missing_tool("needs Perl's $module (Debian package $package)");
}

# A Python module a test needs, under Debian's /usr/bin/python3 unless
# another python is given: need_python_module('psycopg2',
# 'python3-psycopg2') checks that python imports it, else skips or fails
# as missing_tool says (python itself as need_program, package python3).
sub need_python_module
{
	my ($module, $package, $python) = @_;
	my ($out, $err) = ('', '');

	$python = need_program($python // '/usr/bin/python3', 'python3');
	return 1
	  if IPC::Run::run([ $python, '-c', "import $module" ],
		'<', \undef, '>', \$out, '2>', \$err);
	return missing_tool(
		"needs the Python module $module under $python (Debian package $package)");
}

# A Ruby library a test needs: need_ruby_library('active_record',
# 'ruby-activerecord') checks that Debian's ruby requires it, else skips or
# fails as missing_tool says (ruby itself as need_program, package ruby).
sub need_ruby_library
{
	my ($library, $package) = @_;
	my ($out, $err) = ('', '');
	my $ruby = need_program('ruby', 'ruby');

	return 1
	  if IPC::Run::run([ $ruby, '-e', "require '$library'" ],
		'<', \undef, '>', \$out, '2>', \$err);
	return missing_tool(
		"needs the Ruby library $library (Debian package $package)");
}

# An npm package a test needs in a node_modules directory:
# need_node_module('pg', $dir, 'npm ci in test/clients') checks that
# $dir/pg is installed, else skips or fails as missing_tool says, naming
# how to install it and npm's Debian package.
sub need_node_module
{
	my ($module, $dir, $how) = @_;

	return "$dir/$module" if -f "$dir/$module/package.json";
	return missing_tool(
		"needs the npm package $module in $dir ($how; Debian package npm)");
}

# The block of a page (its path from the top of the tree) after the line
# "<!-- file NAME -->", exactly as the page shows it: a block indented in a
# list item without the item's indentation.  Dies if the page has none.
sub page_file
{
	my ($page, $name) = @_;
	my $text = PostgreSQL::Test::Utils::slurp_file("$top/$page");

	$text =~ /^([ \t]*)<!-- file \Q$name\E -->\n\1```\w*\n(.*?)^\1```\n/ms
	  or die "$page has no file $name";
	my ($indent, $block) = ($1, $2);
	$block =~ s/^\Q$indent\E//mg;
	return $block;
}

# The versions of test/versions.sh (NAME="value" lines) as a hash.
sub versions
{
	my $file = "$test_dir/versions.sh";
	my %v;

	open(my $fh, '<', $file) or die "could not open $file: $!";
	while (<$fh>)
	{
		$v{$1} = $2 if /^(\w+)="([^"]*)"\s*$/;
	}
	close $fh;
	return %v;
}

# The pg_config first in PATH (the PostgreSQL under test) and its major
# version: (path, major).
sub pg_config_in_path
{
	my ($pg_config) = grep { -x $_ } map { "$_/pg_config" } split /:/, $ENV{PATH};

	die 'pg_config is not in PATH' unless defined $pg_config;
	my ($major) = `$pg_config --version` =~ /PostgreSQL (\d+)/
	  or die "$pg_config --version said nothing of a version";
	return ($pg_config, $major);
}

# A file of an earlier release (test/versions.sh's SNOWID_RELEASE_X_Y for
# version X.Y), as its sources hold it: from those test/run unpacks
# (SNOWID_EARLIER_RELEASES; a test that calls this names that variable, so
# that test/run does), else from this clone's git history; a test without
# either is skipped (or fails under SNOWID_REQUIRE_TOOLS=1), naming why.
sub release_file
{
	my ($version, $path) = @_;
	my %v = versions();
	my $commit = $v{ 'SNOWID_RELEASE_' . ($version =~ s/\./_/r) }
	  // die "test/versions.sh names no release $version";
	my $dir = $ENV{SNOWID_EARLIER_RELEASES};
	my ($out, $err) = ('', '');

	return PostgreSQL::Test::Utils::slurp_file("$dir/$version/$path")
	  if defined $dir && -f "$dir/$version/$path";
	IPC::Run::run([ 'git', '-C', $top, 'show', "$commit:$path" ],
		'>', \$out, '2>', \$err)
	  or missing_tool("needs $path of release $version ($commit): the git history of a clone, "
		  . 'which test/run unpacks into SNOWID_EARLIER_RELEASES');
	return $out;
}

# A private copy of the PostgreSQL under test, for a test that installs
# into it what it may not install into the one under test (an earlier
# release): each directory at its path under one new root (PostgreSQL finds
# its own relative to its programs), libdir where it is the installation's
# own (a build from source, under its prefix), not the system's (Debian's).
# Returns a hash: root, install_path (for PostgreSQL::Test::Cluster's
# install_path), pg_config (the copy's), and each directory (bindir,
# sharedir, pkglibdir, ...) as the PostgreSQL under test names it.
sub private_installation
{
	my ($pg_config) = pg_config_in_path();
	my %dir;

	for my $what (qw(bindir pkglibdir sharedir includedir includedir-server libdir))
	{
		chomp($dir{$what} = `$pg_config --$what`);
		die "$pg_config --$what failed" if $? || $dir{$what} eq '';
	}
	my $root = PostgreSQL::Test::Utils::tempdir('installation');
	my @copy = map { $dir{$_} } qw(bindir pkglibdir sharedir includedir includedir-server);
	push @copy, $dir{libdir} if index($dir{libdir}, dirname($dir{bindir}) . '/') == 0;
	for my $d (@copy)
	{
		my $out = '';

		make_path($root . dirname($d));
		IPC::Run::run([ 'cp', '-a', $d, $root . dirname($d) . '/' ], '>&', \$out)
		  or die "could not copy $d: $out";
	}
	return (%dir, root => $root, install_path => dirname("$root$dir{bindir}"),
		pg_config => "$root$dir{bindir}/pg_config");
}

# run_in($dir, @cmd): runs a command in dir without the make of make
# prove_installcheck around the test (its MAKEFLAGS would pass its command
# line on to a make the command runs); returns whether it succeeded and
# its output, stdout and stderr together.
sub run_in
{
	my ($dir, @cmd) = @_;
	my $out = '';
	local %ENV = %ENV;

	delete @ENV{qw(MAKEFLAGS MAKELEVEL MFLAGS MAKEOVERRIDES)};
	my $ok = IPC::Run::run(\@cmd, '<', \undef, '>&', \$out,
		init => sub { chdir $dir or die "chdir $dir: $!" });
	return ($ok, $out);
}

# Skips the test file unless the PostgreSQL under test is one of the
# majors given ('debian' is Debian's, SNOWID_PG_DEBIAN of test/versions.sh):
# for a test whose outcome does not depend on the version, which a run of
# several versions then runs once or twice rather than on every version.
# $why says why.  Under test/run's spread of the files over the versions
# (SNOWID_PLACED=1), test/run chose the version: the file runs.
sub only_on
{
	my ($why, @majors) = @_;
	my %versions = versions();
	my (undef, $major) = pg_config_in_path();

	return if ($ENV{SNOWID_PLACED} // '') eq '1';

	@majors = map { $_ eq 'debian' ? $versions{SNOWID_PG_DEBIAN} : $_ } @majors;
	return if grep { $_ == $major } @majors;
	Test::More::plan(skip_all => "$why: CI runs it on PostgreSQL "
		  . join(' and ', @majors) . ' only');
	return;
}

# $sessions sessions of $node take $per_session ids each with
# snowid_next(), all starting at the same moment (a Gate), into a table
# ids (session, n, id) made here; then passes if each finished without an
# error, every session took all its ids, none is there twice, each
# session's ids strictly increase, and the sessions ran at the same time:
# their ranges of ids overlap ($sessions + 4 tests).
sub concurrent_sessions
{
	my ($node, $sessions, $per_session) = @_;

	$node->safe_psql('postgres', 'CREATE UNLOGGED TABLE ids (session int, n int, id bigint)');
	my $gate = SnowidTest::Gate->new($node);
	my @runs = map {
		$gate->psql(qq{
			INSERT INTO ids SELECT $_, g, snowid_next()
			FROM generate_series(1, $per_session) g;
		})
	} 1 .. $sessions;
	$gate->wait_for($sessions);
	$gate->release;
	for my $run (@runs)
	{
		Test::More::is($run->finish, 0, 'session finished without error')
		  or Test::More::diag($run->stderr);
	}
	Test::More::is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
		$sessions * $per_session, 'every session took all its ids');
	Test::More::is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'),
		0, "$sessions sessions at once: no duplicate among all ids");
	Test::More::is(
		$node->safe_psql(
			'postgres', q{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
			FROM ids) x
		WHERE id <= prev}), 0, 'each session\'s ids strictly increase');
	Test::More::is(
		$node->safe_psql(
			'postgres', q{
		WITH r AS (SELECT session, min(id) AS lo, max(id) AS hi
				   FROM ids GROUP BY session)
		SELECT count(*) > 0 FROM r a JOIN r b
			ON a.session < b.session AND a.lo < b.hi AND b.lo < a.hi}),
		't', 'sessions overlapped in time');
	return;
}

# Passes if $sql fails on $node because its clock is behind the generator
# by more than max_drift_ms (10 s here): SQLSTATE 55000, the error saying
# by how many milliseconds, and the hint (four tests; $what names the
# call and the step).  Returns the error.
sub fails_clock_behind
{
	my ($node, $sql, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	Test::More::isnt($ret, 0, "$what fails");
	Test::More::like($err,
		qr/ERROR:  55000: the system clock is \d+ ms behind the snowid generator/,
		'the error says by how many milliseconds the clock is behind');
	my ($behind) = $err =~ /the system clock is (\d+) ms behind/;
	Test::More::cmp_ok($behind // 0, '>', 10000, 'and that is more than max_drift_ms');
	Test::More::like($err, qr/HINT:  Correct the system clock/, 'the hint says what to do');
	return $err;
}

# Whether the PostgreSQL under test was built with assertions
# (--enable-cassert).  Such a build also checks every memory context after
# each statement, which makes a long-lived busy backend several times
# slower (the protocol search's, 096).
sub has_assertions
{
	my ($pg_config) = pg_config_in_path();

	return `$pg_config --configure` =~ /'--enable-cassert'/ ? 1 : 0;
}

# The pg_config test/protocol-search is given (--pg-config) for the
# PostgreSQL server of its PostgreSQL store: that of Debian's PostgreSQL
# (SNOWID_PG_DEBIAN, a build without assertions) where the PostgreSQL under
# test was built with assertions and Debian's is installed, else that of
# the PostgreSQL under test.  The store is SQL and PL/pgSQL alone, whose
# assertions are PostgreSQL's own (the files bound to a version run them
# on every version); a busy backend built with them took three times the
# CPU for the same steps of a search.
sub search_pg_config
{
	my ($pg_config) = pg_config_in_path();
	my %versions = versions();
	my $debian = "/usr/lib/postgresql/$versions{SNOWID_PG_DEBIAN}/bin/pg_config";

	return has_assertions() && -x $debian ? $debian : $pg_config;
}

# Runs test/bench/run with the arguments, without apt, against the
# PostgreSQL of pg_config_in_path(); returns its exit code and output.
sub run_bench
{
	my ($pg_config) = pg_config_in_path();
	my $out = '';

	local $ENV{PG_CONFIG} = $pg_config;
	local $ENV{SNOWID_SKIP_APT} = 1;
	IPC::Run::run([ 'bash', "$test_dir/bench/run", @_ ],
		'<', \undef, '>&', \$out);
	return ($? >> 8, $out);
}

# What test/protocol-search needs to replay its sequences against Redis:
# the Perl client (libredis-perl), the clock library, which it is given in
# SNOWID_CLOCK_LIBRARY, and redis-server (SNOWID_REDIS_SERVER, else the
# one on PATH); a missing one skips or fails as missing_tool says.
sub need_protocol_search
{
	need_perl_module('Redis', 'libredis-perl');
	$ENV{SNOWID_CLOCK_LIBRARY} = need_clock();
	need_program($ENV{SNOWID_REDIS_SERVER} || 'redis-server', 'redis-server');
	return;
}

# spin_search(name => ..., model => FILE, flags => [...], cc => [...],
# pan => [...]): a SPIN search of the model (a .pml file), copied into a
# directory of its own: spin -a with the -D flags given, pan.c compiled
# with gcc and the cc options given, pan run with the pan options given,
# and a trail it leaves replayed (spin -t).  Notes under name what the
# search found (errors, states stored, depth, memory, time) and the
# trail's steps.  Returns the search's output and the trail's steps
# (empty without one); dies if spin -a or the compiler fails.  Needs spin
# and gcc (need_program at the top of the test file).
sub spin_search
{
	my (%a) = @_;
	my $spin = need_program('spin', 'spin');
	my $cc = need_program('gcc', 'gcc');
	my $where = PostgreSQL::Test::Utils::tempdir('spin');
	my $pml = basename($a{model});
	my @flags = @{ $a{flags} };

	File::Copy::copy($a{model}, "$where/$pml") or die "copy $a{model}: $!";
	my ($ok, $out) = run_in($where, $spin, '-a', @flags, $pml);
	die "spin -a @flags failed:\n$out" unless $ok;
	($ok, $out) = run_in($where, $cc, @{ $a{cc} }, '-o', 'pan', 'pan.c');
	die "compiling pan for @flags failed:\n$out" unless $ok;
	(undef, $out) = run_in($where, "$where/pan", @{ $a{pan} });
	my $steps = '';
	if (-f "$where/$pml.trail")
	{
		my (undef, $trail) = run_in($where, $spin, '-t', @flags, $pml);
		$steps = join "\n", $trail =~ /^\s*STEP (.*)$/mg;
	}
	Test::More::note("$a{name}: " . join(', ',
		($out =~ /(errors: \d+)/), ($out =~ /(\d+ states, stored)/),
		($out =~ /(depth reached \d+)/), ($out =~ /([\d.]+\s+total actual memory usage)/),
		($out =~ /(elapsed time [\d.]+ seconds)/)));
	Test::More::note("  trail: " . join('; ', split /\n/, $steps)) if $steps ne '';
	return ($out, $steps);
}

# test/protocol-search of this tree, once the tree's own piece it reads
# is there ($needs: [ its path, a test's name ]) and the search is (two
# tests; a missing one ends the test file): a sub that runs it with @fixed
# and then the options it is given, and returns its exit status and output.
sub protocol_search
{
	my ($needs, @fixed) = @_;
	my $search = "$test_dir/protocol-search";
	my $ready = Test::More::ok(-f $needs->[0], $needs->[1]);

	$ready &= Test::More::ok(-x $search, 'test/protocol-search is there and executable');
	if (!$ready)
	{
		Test::More::done_testing();
		exit;
	}
	return sub {
		my ($out, $err) = ('', '');

		IPC::Run::run([ $^X, $search, @fixed, @_ ],
			'<', \undef, '>', \$out, '2>', \$err);
		return ($? >> 8, $out . $err);
	};
}

# A protocol search ($search, as protocol_search gives it) of seed $seed
# that must find no violation ($name names it): it ends with 0, and its
# summary counts the grants it checked and no violation (two tests).
# Returns the summary.
sub search_finds_none
{
	my ($search, $name, $seed, @args) = @_;
	my ($status, $out) = $search->('--seed', $seed, @args);
	my ($summary) = $out =~ /^(protocol-search: seed \Q$seed\E,.*)$/m;

	Test::More::note($summary // 'no summary');
	Test::More::is($status, 0, $name) or Test::More::diag($out);
	Test::More::like($summary // '',
		qr/ \d+ sequences tried, \d+ steps, [1-9]\d* worker-id grants, 0 violations/,
		'its summary counts the grants it checked, and no violation');
	return $summary // '';
}

# A margin of 0 ms leaves the fence at the store's clock, below the ids a
# server with a drift budget of a second may have issued just before it
# stopped: the search ($search, with the store's options @store; $free
# names the store's free) finds that, writes the sequence as a script
# ($dir/free.txt), and the script replays (with @replay) to the same
# violation (four tests).  Returns the replay's output.
sub search_finds_free_margin
{
	my ($search, $dir, $free, $store, $replay) = @_;
	my ($status, $out) = $search->(
		@$store, '--seed', '3', '--depth', '0', '--random', '400', '--length', '12',
		'--fleet', 'a:perm,drift=1000 b:lease=3000,drift=0',
		'--free-margin', '0', '--max-copies', '0', '--ops', '-lose,-rewind,-lag',
		'--failure-file', "$dir/free.txt");

	Test::More::is($status, 1,
		"$free with a margin of 0 ms: the search finds a violation")
	  or Test::More::diag($out);
	my ($violation) = $out =~ /^protocol-search: VIOLATION: (.*)$/m;
	Test::More::like($violation // '', qr/^worker id \d granted to b .*but a issued up to /,
		'and says which grant breaks the fence rule');
	($status, $out) = $search->('--replay', "$dir/free.txt", @$replay);
	Test::More::is($status, 1, 'the script it wrote replays to a violation')
	  or Test::More::diag($out);
	Test::More::like($out, qr/^    check: VIOLATION: \Q$violation\E$/m,
		'the same violation, at the same step');
	return $out;
}

# A client that takes an answer that may not be on the standby as granted
# (and keeps no forgetting rule, as 1.2): the failover loses its claim, and
# the next claimer gets its id, once the quiet period the store holds its
# calls to (they declare none) and its floor have passed: a claim refused,
# a wait, the claim again (every sequence of 6 steps of the kinds it
# takes; $search and @store as for search_finds_free_margin; three tests).
# Returns the violation and the script's path.
sub search_finds_warned_answer
{
	my ($search, $dir, $store) = @_;
	my ($status, $out) = $search->(
		@$store, '--seed', '5', '--depth', '6', '--random', '0', '--max-copies', '0',
		'--ops', 'start,claim,wait,desync,failover',
		'--warned-answer', 'granted', '--reassert', 'no',
		'--failure-file', "$dir/warned.txt");

	Test::More::is($status, 1,
		'an answer not on the standby taken as granted: the search finds a violation')
	  or Test::More::diag($out);
	my ($violation) = $out =~ /^protocol-search: VIOLATION: (.*)$/m;
	Test::More::like($violation // '', qr/^worker id \d granted to \w+ .*but \w+ still holds it /,
		'a grant of an id its holder still holds');
	Test::More::like(slurp_file("$dir/warned.txt"), qr/^desync\n(.*\n)*failover\n/m,
		'after the failover');
	return ($violation, "$dir/warned.txt");
}

# The rows of the CSV $csv that test/bench/run wrote with @columns, each
# as { column => value, line => its line }, once its header is checked
# (one test), up to the first that is not well formed as every benchmark
# writes them: its number of fields, PostgreSQL $major, the machine, the
# clock source, the date and the command that made it.  Returns the rows
# and what is wrong with that first row (undef if nothing).
sub bench_csv
{
	my ($csv, $major, $command, @columns) = @_;
	my @lines = split /\n/, (-f $csv ? slurp_file($csv) : '');
	my @rows;

	Test::More::is(shift(@lines) // '', join(',', @columns), 'the CSV has its header');
	for my $line (@lines)
	{
		my @f = split /,/, $line, -1;
		my %r = (line => $line);

		return (\@rows, 'not ' . scalar(@columns) . " fields: $line") if @f != @columns;
		@r{@columns} = @f;
		my $bad =
		    $r{pg} != $major ? "not PostgreSQL $major"
		  : $r{machine} !~ /\d+ cores/ ? 'no machine'
		  : $r{clock} !~ /^[\w-]+$/ ? 'no clock source'
		  : $r{date} !~ /^\d{4}-\d\d-\d\d$/ ? 'not a date'
		  : $r{command} ne $command ? 'not the command that made it'
		  : undef;
		return (\@rows, "$bad: $line") if defined $bad;
		push @rows, \%r;
	}
	return (\@rows, undef);
}

# The protocol search of servers that do not re-assert their ids
# (--reassert no, as 1.2) and a store that forgets: it loses all its data,
# goes back to an earlier state, or fails over to a replica that missed its
# last writes.  $search runs test/protocol-search with the arguments given
# it, first those given here; it returns its exit code and output.  For
# each fault alone, every sequence of 5 steps of the kinds the path takes
# must hold a worker id granted while its holder still issues with it
# (once the quiet period and its floor have passed: after a claim refused,
# a wait and the claim again), written into $dir.
sub search_finds_forgetting
{
	my ($search, $dir, @args) = @_;

	for my $fault (qw(lose rewind lag))
	{
		my ($status, $out) = $search->(
			@args, '--depth', '5', '--random', '0',
			'--ops', "start,claim,wait,$fault", '--reassert', 'no',
			'--failure-file', "$dir/$fault.txt");

		Test::More::is($status, 1,
			"the store forgets ($fault): the search finds a violation")
		  or Test::More::diag($out);
		my ($violation) = $out =~ /^protocol-search: VIOLATION: (.*)$/m;
		Test::More::like($violation // '',
			qr/^worker id \d granted to \w+ .*but \w+ still holds it /,
			'a grant of an id its holder still holds');
		Test::More::like(slurp_file("$dir/$fault.txt"), qr/^$fault\b/m,
			"after the step $fault");
	}
	return;
}

# The stale holders of issue 55 in test/protocol-search (search, a sub
# that runs it with the given options and returns its exit status and
# output; dir, where its scripts go; args, the store's options), replayed
# with the servers' fixes switched on and off:
#   - a stale cache file: P holds id 0 for good, moves onto a lease and
#     stops; Q claims id 0 for good; the store forgets; P starts with
#     claims for good.  With the lease keeping the cache file and the
#     claim at start re-asserting what it names (as before), and the
#     stores' confirmed re-assertion rule off (which holds P's re-assertion,
#     its last granted call older than the loss, to a new claim's rules
#     too), P is granted the id Q holds; with either fix, it is not.
#   - a lease holder frozen past its lease renews after the store forgot:
#     it renews nothing (its lease over by its own clock), or, with its
#     renewal switched back on, the store refuses it.  (With both off, as
#     the library of before did, the search finds the two issuing with one
#     id: the store's fix cannot be switched off here.)
#   - a holder's name taken after a loss: another member of the fleet
#     re-asserts P's id under P's name (registering its own secret), moves
#     it onto a lease and gives it back; Q takes it past the floor.  With P
#     taking its check-in refused for its secret as a store that did not
#     answer (as before), both issue with it; with the fix, P stops.
sub search_finds_stale_holders
{
	my ($search, $dir, @args) = @_;
	my $cache = join "\n", 'set ops start,claim,issue,stop,remode,wait,lose,checkin',
	  'server p perm drift=1000', 'server q perm drift=1000',
	  'start p', 'issue p 1', 'stop p', 'remode p', 'start p', 'issue p 1',
	  'stop p', 'wait 3001', 'start q', 'issue q 1', 'lose', 'remode p',
	  'start p', '';
	# a member of the fleet takes a holder's name after a loss (the attack
	# report's finding 1): re-asserts its id, moves it onto a lease and gives
	# it back; the holder's check-in is refused for its secret
	my $hijack = join "\n", 'set ops start,claim,issue,checkin,wait,lose,impersonate,hijack',
	  'server p perm drift=1000', 'server q perm drift=1000',
	  'start p', 'issue p 1', 'lose', 'hijack p reassert',
	  'hijack p lease_claim', 'impersonate p release', 'wait 80000',
	  'start q', 'issue q 1', '';
	my $frozen = join "\n", 'set ops start,claim,issue,renew,freeze,thaw,wait,lose',
	  'server l lease=3000 drift=1000', 'server q lease=3000 drift=1000',
	  'start l', 'issue l 1', 'freeze l', 'wait 4001', 'start q', 'issue q 1',
	  'lose', 'thaw l', 'renew l', '';

	for my $fixed (qw(no yes))
	{
		my $switch = $fixed eq 'yes' ? 'no' : 'yes';
		my $file = "$dir/stale-cache-$switch.txt";

		PostgreSQL::Test::Utils::append_to_file($file,
			"set cache-reasserts $switch\nset lease-keeps-cache $switch\n"
			  . ($fixed eq 'no' ? "set store-fix confirmed_reassert=off\n" : '') . $cache);
		my ($status, $out) = $search->(@args, '--replay', $file);
		if ($fixed eq 'yes')
		{
			Test::More::like($out, qr/^protocol-search: replay of \d+ steps: .* 0 violations/m,
				'a stale cache file after the store forgot: no violation with the fixes')
			  or Test::More::diag($out);
		}
		else
		{
			Test::More::like($out,
				qr/^    check: VIOLATION: worker id 0 granted to p .*but q still holds it for good/m,
				'a stale cache file after the store forgot: the search finds the id granted twice without them')
			  or Test::More::diag($out);
		}

		$file = "$dir/frozen-lease-$switch.txt";
		PostgreSQL::Test::Utils::append_to_file($file,
			"set renew-past-deadline $switch\n$frozen");
		($status, $out) = $search->(@args, '--replay', $file);
		Test::More::like($out,
			$fixed eq 'yes' ? qr/^    l's lease on worker id 0 ran out by its own clock/m
			: qr/^    l lost worker id 0, and claims again/m,
			'a lease holder frozen past its lease after the store forgot: '
			  . ($fixed eq 'yes' ? 'it renews nothing' : 'the store refuses its renewal'))
		  or Test::More::diag($out);
		Test::More::like($out, qr/^protocol-search: replay of \d+ steps: .* 0 violations/m,
			'and no violation');

		$file = "$dir/hijack-$switch.txt";
		PostgreSQL::Test::Utils::append_to_file($file,
			"set wrong-secret-stops $fixed\n$hijack");
		($status, $out) = $search->(@args, '--replay', $file);
		Test::More::like($out,
			$fixed eq 'yes'
			? qr/^protocol-search: replay of \d+ steps: .* 0 violations/m
			: qr/^    check: VIOLATION: worker id 0 granted to q .*but p still holds it for good/m,
			'a holder\'s name taken after a loss: '
			  . ($fixed eq 'yes' ? 'the holder stops at its check-in refused for its secret, no violation'
				: 'the search finds the id granted twice while the holder goes on'))
		  or Test::More::diag($out);
	}
	return;
}

# test/protocol-search replays the paths of issue 55's second reading,
# each with the store's fix turned off (--store-fix NAME=off: a violation)
# and on (none), on the store @args name:
#
# - held_named: a server holding an id for good moved it onto a lease and
#   gave it back, another server leased it, the store went back to a
#   backup that still has the first server's claim for good, which
#   restarts for good without a cache file naming the id;
# - quiet_min: the store lost everything, a fleet member's first call
#   after the loss declares a quiet period of 0 ms, a new server claims;
# - new_proved (Redis only, where $with_redis is true): the owners hash is evicted
#   alone, an administrator marks the datacenter new, a new server claims.
sub search_finds_store_fixes
{
	my ($search, $dir, $with_redis, @args) = @_;
	my %paths = (
		held_named => [ 'set ops start,claim,issue,stop,remode,wait,rewind,checkin',
			'server p perm drift=1000', 'server q lease=3000 drift=1000',
			'start p', 'issue p 1', 'stop p', 'remode p', 'start p', 'issue p 1',
			'stop p', 'start q', 'issue q 1', 'rewind 3', 'remode p', 'start p' ],
		quiet_min => [ 'set ops start,claim,issue,wait,lose,member,checkin',
			'server b perm drift=1000', 'server c perm drift=1000',
			'start b', 'issue b 1', 'lose', 'member short', 'start c' ],
		# a restarts after two losses: the first let c take its id, the
		# store went back to before that claim; a's last granted call lies
		# before the first loss (the confirmed re-assertion rule)
		confirmed_reassert => [ 'set copy-identity new', 'set max-worker-id 2',
			'set ops start,claim,issue,stop,wait,lose,copy,rewind,checkin',
			'server a perm drift=1000', 'server b perm drift=1000',
			'server c perm drift=1000',
			'start a', 'issue a 1', 'stop a', 'start b', 'issue b 1', 'lose',
			'copy b', 'wait 70000', 'start c', 'issue c 1', 'rewind 2', 'start a' ],
		new_proved => [ 'set ops start,claim,issue,evict,marknew,checkin',
			'server b perm drift=1000', 'server c perm drift=1000',
			'start b', 'issue b 1', 'evict', 'marknew', 'start c' ]);

	for my $fix (sort keys %paths)
	{
		next if $fix eq 'new_proved' && !$with_redis;
		for my $state (qw(off on))
		{
			my $file = "$dir/store-fix-$fix-$state.txt";

			PostgreSQL::Test::Utils::append_to_file($file,
				join("\n", "set store-fix $fix=$state", @{ $paths{$fix} }, ''));
			my ($status, $out) = $search->(@args, '--replay', $file);
			Test::More::like($out,
				$state eq 'off'
				? qr/^    check: VIOLATION: worker id 0 granted to \w+ .*but \w+ still holds it /m
				: qr/^protocol-search: replay of \d+ steps: .* 0 violations/m,
				"store fix $fix "
				  . ($state eq 'off' ? 'off: the search finds an id granted twice'
					: 'on: no violation'))
			  or Test::More::diag($out);
		}
	}
	return;
}

# The third attack on issue 55, in test/protocol-search (search, dir and
# args as for search_finds_stale_holders): confirmed_ms after a clock
# stepped past the margin.  P (a margin of a second) holds id 0 for good;
# its clock steps 90 s forward, a check-in is granted, the clock is put
# right and another check-in granted (which does not bring the largest
# send time down: the last would be right); P stops.  81 s later the store loses everything, Q takes id 0
# after the quiet period (at 90 s), the store loses everything again
# before Q's check-in, and P starts.  With the stores' confirmed
# re-assertion rule of before, P's confirmed_ms, 90 s by the stepped clock,
# passed with the largest send time kept (--confirmed-kept largest, the C
# side before its fix) and P was granted the id Q holds.  Under the restart
# rule (issue 67) a restart after a loss is a new claim whatever its
# confirmed_ms: refused in the quiet period, with the largest send time
# kept and with it bounded by the monotonic clock alike.
sub search_finds_confirmed_clock_step
{
	my ($search, $dir, @args) = @_;
	my $path = join "\n", 'set ops start,claim,issue,stop,wait,lose,checkin,clock',
	  'set clock-step 90000',
	  'server p perm drift=1000 margin=1000', 'server q perm drift=1000 margin=1000',
	  'start p', 'issue p 1', 'clock p +90000', 'checkin p', 'clock p -90000',
	  'checkin p', 'stop p', 'wait 81000', 'lose', 'start q', 'wait 9001', 'claim q',
	  'issue q 1', 'lose', 'start p', '';

	for my $kept (qw(largest bounded))
	{
		my $file = "$dir/confirmed-clock-step-$kept.txt";

		PostgreSQL::Test::Utils::append_to_file($file,
			"set confirmed-kept $kept\n$path");
		my ($status, $out) = $search->(@args, '--replay', $file);
		Test::More::like($out, qr/^    p's claim is refused: SNOWID_QUIET /m,
			"confirmed_ms after a clock step past the margin ($kept send time kept): "
			  . 'the restart after a loss is a new claim, refused in the quiet period')
		  or Test::More::diag($out);
		Test::More::like($out,
			qr/^protocol-search: replay of \d+ steps: .* 0 violations/m, 'and no violation')
		  or Test::More::diag($out);
	}
	return;
}

# Appends settings to postgresql.conf; later lines override earlier ones.
sub set_conf
{
	my ($node, %settings) = @_;

	$node->append_conf('postgresql.conf',
		join('', map { "$_ = '$settings{$_}'\n" } sort keys %settings));
	return;
}

# Appends settings, reloads and waits until a new session sees them all.
# Values are given as pg_settings shows them (in the setting's unit).
sub reload_conf
{
	my ($node, %settings) = @_;
	my $list =
	  join(', ', map { "('$_', '$settings{$_}')" } sort keys %settings);
	my $n = keys %settings;

	set_conf($node, %settings);
	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT count(*) = $n FROM pg_settings"
		  . " WHERE (name, setting) IN ($list)")
	  or die "settings were not reloaded";
	return;
}

# Starts a stopped node whose settings must keep it from starting, and
# checks that it does not start and that its log says every pattern (a test
# each).
sub fails_to_start
{
	my ($node, $name, @patterns) = @_;
	my $log_offset = -s $node->logfile;

	Test::More::ok(!$node->start(fail_ok => 1),
		"$name: server does not start");
	for my $pattern (@patterns)
	{
		Test::More::ok($node->log_contains($pattern, $log_offset),
			@patterns == 1
			? "$name: log names it"
			: "$name: log says $pattern");
	}
	return;
}

# Runs sql expecting an error; returns psql's stderr, in verbose form so
# that it shows the SQLSTATE.
sub psql_error
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	die "\"$sql\" did not fail" if $ret == 0;
	return $err;
}

# n ids from a server (or a background psql session), one call each.
sub next_ids
{
	my ($node, $n) = @_;

	return query_ids($node,
		"SELECT snowid_next() FROM generate_series(1, $n)");
}

# The ids a query returns, one a line.
sub query_ids
{
	my ($node, $query) = @_;

	return split /\n/,
	  $node->can('query_safe')
	  ? $node->query_safe($query)
	  : $node->safe_psql('postgres', $query);
}

# Starts psql -c sql in the background, with verbose errors, stopping at
# the first; see SnowidTest::Session.  In database postgres as the
# bootstrap superuser, or as given: start_psql($node, $sql, db => 'appdb',
# user => 'clerk').
sub start_psql
{
	my ($node, $sql, %as) = @_;
	my ($out, $err) = ('', '');
	my $db = $as{db} // 'postgres';
	my $handle = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v',
			'VERBOSITY=verbose', '-d',
			$node->connstr($db) . (defined $as{user} ? " user=$as{user}" : ''),
			'-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err);

	return bless {
		handle => $handle,
		out => \$out,
		err => \$err,
		node => $node,
		db => $db
	}, 'SnowidTest::Session';
}

# The pid of the one session $where selects in pg_stat_activity (other
# than the asking one), from the first look that finds exactly one; dies
# with $what after the poll's timeout.  The pid comes from that same look:
# a second look might miss a wait the first one saw.
sub pid_of
{
	my ($node, $where, $what) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;

	while (time < $deadline)
	{
		my $pids = $node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity"
			  . " WHERE ($where) AND pid <> pg_backend_pid()");

		return $pids if $pids =~ /^\d+$/;
		Time::HiRes::usleep(100_000);
	}
	die $what;
}

# The orders schema of the client tests and the dump's (snowid created if
# need be in database $db, postgres if undef): an order and its lines, both
# keyed by DEFAULT snowid_next()
sub create_orders
{
	my ($node, $db) = @_;

	$node->safe_psql($db // 'postgres', q{
		CREATE EXTENSION IF NOT EXISTS snowid;
		CREATE TABLE orders (
			id bigint PRIMARY KEY DEFAULT snowid_next(),
			customer text NOT NULL);
		CREATE TABLE order_lines (
			id bigint PRIMARY KEY DEFAULT snowid_next(),
			order_id bigint NOT NULL REFERENCES orders,
			product text NOT NULL);
	});
	return;
}

# The wait_event a session of $node shows while it waits in snowid's wait
# named $name: that name from PostgreSQL 17 on, "Extension" before
sub wait_event_name
{
	my ($node, $name) = @_;

	return $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000
	  ? $name : 'Extension';
}

# What the sessions $where selects in pg_stat_activity wait for, as
# "type/event": $expected once one look shows it (within the poll's
# timeout), else what they then show.  A session that waits in naps shows
# no wait event between two of them, so a second look after the poll may
# miss a wait the poll saw: the poll's own look is the answer.
sub wait_event_of
{
	my ($node, $where, $expected) = @_;
	my $query = "SELECT wait_event_type || '/' || wait_event"
	  . " FROM pg_stat_activity WHERE $where";

	return $expected
	  if $node->poll_query_until('postgres',
		"SELECT coalesce(($query) = '$expected', false)");
	return $node->safe_psql('postgres', $query);
}

# Promotes a standby and waits until it is a primary.
sub promote
{
	my ($node) = @_;

	$node->promote;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the standby was not promoted";
	return;
}

# Puts @lines first in $node's pg_hba.conf, before any line the test
# cluster has (its trust lines); takes effect at the next reload or restart
sub prepend_hba
{
	my ($node, @lines) = @_;
	my $hba = $node->data_dir . '/pg_hba.conf';
	my $old = PostgreSQL::Test::Utils::slurp_file($hba);

	open(my $fh, '>', $hba) or die "could not write $hba: $!";
	print $fh map({ "$_\n" } @lines), $old;
	close $fh or die "could not write $hba: $!";
	return;
}

# A streaming standby $name of $primary, from a base backup $backup of it
# taken now, started and caught up: the standby
sub standby_of
{
	my ($primary, $name, $backup) = @_;

	$primary->backup($backup);
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, $backup, has_streaming => 1);
	$standby->start;
	$primary->wait_for_catchup($standby);
	return $standby;
}

# Cuts a running standby off from its primary: it keeps what it has
# received and replayed, and receives nothing more.
sub cut_off
{
	my ($standby) = @_;

	$standby->append_conf('postgresql.conf', "primary_conninfo = ''\n");
	$standby->reload;
	$standby->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
	  or die "the standby did not stop receiving WAL";
	return;
}

# pg_createsubscriber turns $node, a stopped standby of $from, into a
# subscriber of $from's database $db (publication $pub, subscription
# $sub): one test, named $name
sub create_subscriber
{
	my ($node, $from, $db, $pub, $sub, $name) = @_;

	return PostgreSQL::Test::Utils::command_ok(
		[
			'pg_createsubscriber',
			'--pgdata' => $node->data_dir,
			'--publisher-server' => $from->connstr($db),
			# -s: --socketdir since 17beta3, --socket-directory before
			'-s' => $node->host,
			'--subscriber-port' => $node->port,
			'--database' => $db,
			'--publication' => $pub,
			'--subscription' => $sub,
			'--recovery-timeout' => $PostgreSQL::Test::Utils::timeout_default
		],
		$name);
}

# Crashes a whole server: SIGKILL to the postmaster and all its children,
# so that nothing runs an exit hook; waits until they are gone.
sub crash_server
{
	my ($node) = @_;
	my $pid = $node->{_pid};
	my @children = split ' ', `ps -o pid= --ppid $pid`;

	$node->kill9;
	kill 'KILL', @children;
	for my $p ($pid, @children)
	{
		Time::HiRes::usleep(10_000) while kill 0, $p;
	}
	return;
}

# Kills the backend of a background psql session with SIGKILL and waits
# until the postmaster has reinitialised shared memory and takes
# connections again.
sub crash_backend
{
	my ($node, $session) = @_;
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	my $log_offset = -s $node->logfile;

	kill 'KILL', $pid or die "could not kill backend $pid";
	$node->wait_for_log(qr/all server processes terminated; reinitializing/,
		$log_offset);
	# a connection refused during recovery can end psql before it reads
	# the query, and IPC::Run then dies of the broken pipe
	$node->wait_for_log(qr/database system is ready to accept connections/,
		$log_offset);
	$node->poll_query_until('postgres', 'SELECT true')
	  or die "the server did not come back after the crash";
	$session->quit;
	return;
}


# A psql running in the background, from SnowidTest::start_psql.
package SnowidTest::Session;

# Waits for psql to exit; returns its exit code.  Waits at most
# PostgreSQL::Test::Utils' timeout_default (180 s; the sessions the tests
# finish end in seconds): past it, shows what the server's sessions are
# doing and waiting for, kills psql, adds why to its stderr and returns 1,
# so that a session that hangs fails its test rather than the whole run.
sub finish
{
	my $self = shift;
	my $handle = $self->{handle};
	my $limit = $PostgreSQL::Test::Utils::timeout_default;
	my $deadline = Time::HiRes::time() + $limit;

	while ($handle->pumpable)
	{
		if (Time::HiRes::time() > $deadline)
		{
			Test::More::diag("a session did not end within $limit s:\n"
				  . $self->activity);
			$handle->kill_kill;
			${ $self->{err} } .= "\n(the session did not end within $limit s: killed)\n";
			return 1;
		}
		$handle->pump_nb;
		Time::HiRes::sleep(0.05);
	}
	$handle->finish;
	return $handle->result(0);
}

# What the server's sessions are doing and the locks they wait for, as
# text (or why it could not be read)
sub activity
{
	my $self = shift;
	my ($node, $db) = @$self{qw(node db)};
	my $out;

	return '(no server known)' unless $node;
	eval {
		$out = $node->safe_psql($db, q{
			SELECT pid, state, wait_event_type, wait_event,
				   left(regexp_replace(query, '\s+', ' ', 'g'), 80)
			FROM pg_stat_activity WHERE backend_type = 'client backend';
			SELECT pid, locktype, mode, relation::regclass, transactionid
			FROM pg_locks WHERE NOT granted});
		1;
	} or $out = "(pg_stat_activity could not be read: $@)";
	return $out;
}

sub stdout { return ${ $_[0]->{out} }; }
sub stderr { return ${ $_[0]->{err} }; }


# A gate for sessions that must start at the same moment: a session of the
# server holds advisory lock 1, and the sessions started by $gate->psql
# queue behind it until $gate->release.
package SnowidTest::Gate;

sub new
{
	my ($class, $node) = @_;
	my $session = $node->background_psql('postgres');

	$session->query_safe('SELECT pg_advisory_lock(1)');
	return bless { node => $node, session => $session }, $class;
}

# Starts psql in the background; it runs sql once the gate opens.
sub psql
{
	my ($self, $sql) = @_;

	return SnowidTest::start_psql($self->{node},
		    "SELECT pg_advisory_lock_shared(1);\n"
		  . "SELECT pg_advisory_unlock_shared(1);\n"
		  . $sql);
}

# Waits until n sessions wait at the gate.
sub wait_for
{
	my ($self, $n) = @_;

	$self->{node}->poll_query_until('postgres', qq{
		SELECT count(*) = $n FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted})
	  or die 'sessions did not reach the gate';
	return;
}

# Opens the gate: every waiting session goes on.
sub release
{
	my $self = shift;

	$self->{session}->query_safe('SELECT pg_advisory_unlock(1)');
	$self->{session}->quit;
	return;
}


# Bursts of ids taken at once as several connection strings, each by
# burst(sec) (see sql): each id as "id worker ms" (the Unix ms it carries).
package SnowidTest::Bursts;

# The function burst(sec): ids for sec seconds, 20 at a time, each batch
# followed by a pause of pause seconds if given (none: as fast as it goes).
sub sql
{
	my ($class, $pause) = @_;

	return q{CREATE FUNCTION burst(sec float8) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp() + make_interval(secs => sec); x bigint;
BEGIN
	WHILE clock_timestamp() < t LOOP
		FOR i IN 1 .. 20 LOOP
			x := snowid_next();
			RETURN NEXT x || ' ' || (snowid_decode(x)).worker_id || ' ' ||
				(extract(epoch FROM (snowid_decode(x)).ts) * 1000)::bigint;
		END LOOP;
}
	  . ($pause ? "\t\tPERFORM pg_sleep($pause);\n" : '')
	  . q{	END LOOP;
END $$};
}

# An empty tally: several rounds of start and finish tally into one.
sub new
{
	my ($class) = @_;

	return bless { ids => [], both => 0, seen => {}, ms => {} }, $class;
}

# Starts burst(sec) at once as each of clients ({ name => connection
# string }); finish waits for them.
sub start
{
	my ($self, $clients, $sec) = @_;

	$self->{got} = {};
	$self->{errs} = {};
	$self->{runs} = [];
	for my $name (sort keys %$clients)
	{
		$self->{got}{$name} = '';
		push @{ $self->{runs} }, IPC::Run::start(
			[ 'psql', '-XAtq', '-d', $clients->{$name}, '-c', "SELECT burst($sec)" ],
			'>', \$self->{got}{$name}, '2>', \$self->{errs}{$name});
	}
	return $self;
}

# Waits for the bursts started and tallies what they took (a client's
# errors are noted): ids (every id), n ({ name => ids }), worker ({ name
# => { worker id => ids } }), lo and hi ({ name => its first and last ms }),
# both (ids taken twice, in any round), and shared (milliseconds of one
# worker id taken by two clients, in any round).
sub finish
{
	my ($self) = @_;

	$_->finish for @{ $self->{runs} };
	for my $name (sort keys %{ $self->{got} })
	{
		Test::More::note("$name: $self->{errs}{$name}") if $self->{errs}{$name} ne '';
		for my $line (split /\n/, $self->{got}{$name})
		{
			my ($id, $w, $t) = split ' ', $line;

			push @{ $self->{ids} }, $id;
			$self->{n}{$name}++;
			$self->{worker}{$name}{$w}++;
			$self->{lo}{$name} = $t if !defined $self->{lo}{$name} || $t < $self->{lo}{$name};
			$self->{hi}{$name} = $t if !defined $self->{hi}{$name} || $t > $self->{hi}{$name};
			$self->{both}++ if $self->{seen}{$id}++;
			$self->{ms}{"$w $t"}{$name} = 1;
		}
	}
	$self->{shared} = scalar(grep { keys %{ $self->{ms}{$_} } > 1 } keys %{ $self->{ms} });
	return $self;
}

# Every id a test takes, to check the whole set for duplicates at the end
# and, where one generator (or its successor) issued them, that each new
# batch lies above every id taken before.
package SnowidTest::Ledger;

use Test::More;

sub new
{
	my $class = shift;

	return bless { seen => {}, duplicates => 0, count => 0, max => 0 },
	  $class;
}

# Remembers ids taken elsewhere, without a test; returns them.
sub add
{
	my ($self, @ids) = @_;

	for my $id (@ids)
	{
		$self->{duplicates}++ if $self->{seen}{$id}++;
		$self->{max} = $id if $id > $self->{max};
		$self->{count}++;
	}
	return @ids;
}

# Takes n ids from a server, one call each, and remembers them without a
# test; returns them.
sub collect
{
	my ($self, $node, $n) = @_;

	return $self->add(SnowidTest::next_ids($node, $n));
}

# Takes n ids from a server (or a background psql session), one call each
# or by the given query, and checks that there are n of them, that they
# increase and that they lie above every id taken before (three tests);
# remembers them and returns them.
sub take
{
	my ($self, $node, $n, $name, $query) = @_;
	my @ids =
	  defined $query
	  ? SnowidTest::query_ids($node, $query)
	  : SnowidTest::next_ids($node, $n);
	my $increasing = 1;

	for my $i (1 .. $#ids)
	{
		$increasing = 0 unless $ids[$i] > $ids[ $i - 1 ];
	}
	is(scalar(@ids), $n, "$name: $n ids");
	ok($increasing, "$name: ids increase");
	cmp_ok($ids[0] // 0, '>', $self->{max},
		"$name: ids lie above every earlier id");
	return $self->add(@ids);
}

# How many ids were taken; the largest of them; all of them, once each.
sub count { return $_[0]->{count}; }
sub max   { return $_[0]->{max}; }
sub all   { return keys %{ $_[0]->{seen} }; }

# Checks that no id was taken twice: one test.
sub no_duplicates
{
	my ($self, $name) = @_;

	return is($self->{duplicates}, 0,
		$name // "no duplicate among all $self->{count} ids");
}


# The server's wall clock at an offset from the real one that the test
# changes while the server runs (test/tools/clock_offset.c, preloaded).
package SnowidTest::Clock;

# A clock file, at offset 0.
sub new
{
	my $class = shift;
	my $library = SnowidTest::need_clock();
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('clock'));
	my $self = bless { file => "$dir/offset", library => $library }, $class;

	$self->set('+0');
	return $self;
}

# Sets the offset in seconds, a signed decimal number with an optional
# fraction ("-0.8", "+0", "+12.345678"), or a time that stands still: "@"
# and the seconds since the epoch, with an optional fraction
# ("@1900000000.0005", test/tools/clock_offset.c).  The file is replaced
# atomically so that a process never reads it half written.
sub set
{
	my ($self, $offset) = @_;
	my $file = $self->{file};

	die "not an offset in seconds: $offset"
	  unless $offset =~ /^(?:[+-]?|@)(?:\d+(?:\.\d*)?|\.\d+)$/;
	open(my $fh, '>', "$file.tmp") or die "could not write clock: $!";
	print $fh "$offset\n";
	close($fh);
	rename("$file.tmp", $file) or die "could not rename: $!";
	return;
}

# The environment that puts a process and its children under this clock:
# LD_PRELOAD and SNOWID_CLOCK_FILE, as a list of pairs.  The offset is read
# on every call of the wall clock; the monotonic clock is left alone, as an
# NTP step would leave it, so that latch timeouts are not disturbed.
sub env
{
	my ($self) = @_;

	return (
		LD_PRELOAD => $self->{library},
		SNOWID_CLOCK_FILE => $self->{file});
}

# Starts a node under this clock.
sub start_node
{
	my ($self, $node) = @_;
	my %env = $self->env;

	local @ENV{ keys %env } = values %env;
	$node->start;
	return;
}

# A new server (SnowidTest::new_node, named $name, with %$settings)
# started under this clock, with the extension created: the server
sub new_server
{
	my ($self, $name, $settings) = @_;
	my $node = SnowidTest::new_node($name, $settings);

	$self->start_node($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	return $node;
}

1;
