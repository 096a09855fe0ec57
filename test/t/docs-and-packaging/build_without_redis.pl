# A build without Redis support (doc/install.md, "Building without
# hiredis"), on real servers.  A copy of the sources is built again, with
# pkg-config finding no hiredis, and installed into a private copy of the
# PostgreSQL under test, so that what the other tests use stays as it is.  The build says why Redis support is off (hiredis not found, or
# with_hiredis=no), compiles nothing of src/redis and links no hiredis;
# with_hiredis=yes stops where hiredis is not found.  Installed, it passes
# make installcheck (pg_regress and isolation: none of their inputs needs
# Redis), issues ids with a worker id set by hand, claims one from a
# PostgreSQL coordination database, says in snowid.coordinator_stores that
# it has no Redis, and refuses every kind of Redis URL in
# snowid.coordinator_url and snowid.redis_url, from ALTER SYSTEM and at
# start, with a message that says why, never showing a password.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidTest;
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my ($pg_config) = SnowidTest::pg_config_in_path();
my $tmp = PostgreSQL::Test::Utils::tempdir('without_redis');

# Runs a command; returns its exit code and its output (stdout and stderr).
sub output_of
{
	my (@command) = @_;
	my $out = '';

	IPC::Run::run(\@command, '<', \undef, '>&', \$out);
	return ($? >> 8, $out);
}

# ---------------------------------------------------------------------------
# A private copy of the PostgreSQL under test: each of its directories, at
# its own path under $root (PostgreSQL finds its directories relative to
# its programs, so the copy uses its own).  The system's library directory
# of a distribution's PostgreSQL (Debian's libdir, /usr/lib/<triplet>) is
# not copied, nor one that does not exist (that of a copy of Debian's): only
# libpq lies there, which the build links as it is.

my %dir;
for my $name (qw(bindir libdir pkglibdir sharedir includedir))
{
	chomp($dir{$name} = `$pg_config --$name`);
	die "$pg_config --$name failed" if $? != 0 || $dir{$name} eq '';
}
my %wanted = map { $_ => 1 }
  grep { -d $_ && $_ !~ m{^/(usr/)?lib(64)?(/[^/]+-linux-gnu)?$} } values %dir;
my @dirs = grep {
	my $d = $_;
	!grep { $_ ne $d && index("$d/", "$_/") == 0 } keys %wanted
} sort keys %wanted;
my $root = "$tmp/root";
for my $d (@dirs)
{
	make_path(dirname("$root$d"));
	my ($rc, $out) = output_of('cp', '-a', $d, "$root$d");
	die "could not copy $d: $out" if $rc != 0;
}
my $copy_pg_config = "$root$dir{bindir}/pg_config";
my $install_path = dirname("$root$dir{bindir}");
chomp(my $copy_pkglibdir = `$copy_pg_config --pkglibdir`);
is($copy_pkglibdir, "$root$dir{pkglibdir}",
	'the copy of the installation finds its own directories');

# ---------------------------------------------------------------------------
# The builds, in a copy of the sources without what the run built in them
# (as test/run copies them).  pkg-config finds no hiredis where
# PKG_CONFIG_LIBDIR is an empty directory and PKG_CONFIG_PATH is unset.

my $build = "$tmp/src";
make_path($build);
my ($rc, $out) = output_of('bash', '-c',
	'tar -C "$1" --exclude-vcs --anchored --exclude=./results'
	  . ' --exclude=./output_iso --exclude="./tmp_check*" --exclude="./log*"'
	  . ' --exclude="./regression.*" --no-anchored --exclude="*.o"'
	  . ' --exclude="*.so" --exclude="*.bc" --exclude=node_modules -cf - .'
	  . ' | tar -C "$2" -xf -',
	'bash', $src, $build);
die "could not copy the sources: $out" if $rc != 0;
my $no_pc = "$tmp/no-pkgconfig";
make_path($no_pc);

# make in the copy of the sources; returns its exit code and output.
# absent => 1 hides hiredis from pkg-config.
sub make_in
{
	my (%opt) = @_;

	local %ENV = %ENV;
	if ($opt{absent})
	{
		$ENV{PKG_CONFIG_LIBDIR} = $no_pc;
		delete $ENV{PKG_CONFIG_PATH};
	}
	return output_of('make', '-C', $build, "PG_CONFIG=$copy_pg_config",
		@{ $opt{args} // [] });
}

# The C files a make -n before the build would compile
sub compiled
{
	my ($out) = @_;

	return [ $out =~ m{-c -o (src/\S+)\.o }g ];
}

# What make would do, without doing it: off where switched off, on where
# hiredis is found (as in the rest of this run) and not switched off.
($rc, $out) = make_in(args => ['-n']);
ok($rc == 0 && grep(m{^src/redis/}, @{ compiled($out) }),
	'with hiredis found, make builds src/redis')
  or diag($out);
unlike($out, qr/Redis support off/, 'and says nothing of Redis support being off');
($rc, $out) = make_in(args => [ '-n', 'with_hiredis=no' ]);
like($out, qr/^snowid: Redis support off: with_hiredis=no$/m,
	'make with_hiredis=no says that Redis support is off, and why');
ok($rc == 0 && @{ compiled($out) } > 10
	  && !grep(m{^src/(redis/|settings_redis)}, @{ compiled($out) }),
	'and compiles nothing of src/redis')
  or diag($out);
($rc, $out) = make_in(absent => 1, args => [ '-n', 'with_hiredis=yes' ]);
ok($rc != 0 && $out =~ /hiredis not found by pkg-config/,
	'make with_hiredis=yes stops where hiredis is not found');

# The build installed here: hiredis absent.
($rc, $out) = make_in(absent => 1, args => [ '-j2', 'WERROR=1' ]);
is($rc, 0, 'make with hiredis absent builds snowid, warning-free') or diag($out);
like($out,
	qr/^snowid: Redis support off: hiredis not found by pkg-config \(install libhiredis-dev, or set PKG_CONFIG_PATH to the directory of hiredis\.pc\)$/m,
	'and says that Redis support is off, and why');
is_deeply([ glob("$build/src/redis/*.o") ], [], 'no object of src/redis was made');
($rc, $out) = output_of('nm', '-D', "$build/snowid.so");
ok($rc == 0 && $out =~ /snowid_next/ && $out !~ /redis/i,
	'the library has no Redis code and needs no hiredis')
  or diag($out);
($rc, $out) = make_in(absent => 1, args => ['install']);
is($rc, 0, 'make install into the copy') or diag($out);
unlike($out, qr/snowid\.lua/, 'which leaves out the Redis function library');

# make installcheck of that build
($rc, $out) = make_in(absent => 1, args => ['installcheck']);
is($rc, 0, 'make installcheck passes') or diag($out);
my @passed = $out =~ /All (\d+) tests passed/g;
is(scalar @passed, 2, 'pg_regress and the isolation tests both ran')
  or diag($out);

# ---------------------------------------------------------------------------
# Servers of the copy

# A server of the copy with snowid preloaded and the given settings, not
# started.
sub copy_node
{
	my ($name, %settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		install_path => $install_path);

	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowid'\n");
	SnowidTest::set_conf($node, %settings);
	return $node;
}

# A worker id set by hand.
my $fixed = copy_node('fixed',
	'snowid.datacenter_id' => 2, 'snowid.worker_id' => 5);
$fixed->start;
$fixed->safe_psql('postgres', 'CREATE EXTENSION snowid');
my @ids = map { $fixed->safe_psql('postgres', 'SELECT snowid_next()') } 1 .. 3;
ok($ids[0] < $ids[1] && $ids[1] < $ids[2], 'a worker id set by hand issues ids in order');
is($fixed->safe_psql('postgres', qq{
	SELECT string_agg(DISTINCT format('%s/%s', datacenter_id, worker_id), ',')
	FROM unnest('{@{[join ',', @ids]}}'::bigint[]) id, snowid_decode(id)}),
	'2/5', 'with its datacenter and worker id');
is($fixed->safe_psql('postgres', 'SELECT worker_source FROM snowid_status()'),
	'config', 'snowid_status() names the configured source');
is($fixed->safe_psql('postgres', 'SHOW snowid.coordinator_stores'),
	'postgresql', 'snowid.coordinator_stores names the coordination database alone');
like(SnowidTest::psql_error($fixed, 'SHOW snowid.redis_timeout_ms'),
	qr/unrecognized configuration parameter "snowid.redis_timeout_ms"/,
	'the build has no snowid.redis_* settings but snowid.redis_url');

# Every kind of Redis URL is refused by ALTER SYSTEM, in either setting,
# saying why; none reaches postgresql.auto.conf, and no password is shown.
my %urls = (
	'snowid.coordinator_url' => [
		'redis://:s3cret@127.0.0.1:6379/0', 'rediss://127.0.0.1:6380',
		'unix:///tmp/redis.sock?db=1', 'redis-sentinel://127.0.0.1:26379/mymaster',
		'rediss-sentinel://127.0.0.1:26379/mymaster'
	],
	'snowid.redis_url' => [ 'redis://:s3cret@127.0.0.1:6379', 'postgresql:///coord' ]);
for my $setting (sort keys %urls)
{
	for my $url (@{ $urls{$setting} })
	{
		my $err = SnowidTest::psql_error($fixed,
			"ALTER SYSTEM SET $setting = '$url'");
		like($err,
			qr/ERROR:  22023: this build of snowid has no Redis support\n(.*\n)?DETAIL:  "\Q$setting\E" names a Redis server, and this build of snowid was made without hiredis, the library it talks to Redis with\.\nHINT:  To keep claiming from Redis, install hiredis \(libhiredis-dev\) and build and install snowid again with make with_hiredis=yes, which stops where hiredis is missing \(doc\/install\.md, "Building without hiredis"\)\. Claim from a PostgreSQL coordination database or set snowid\.worker_id by hand only for a whole datacenter that moves there together \(doc\/operations\.md, "Moving a datacenter to another store"\), or with an id that no store hands out: one server of a datacenter whose other servers claim from Redis would issue their ids\./,
			"$setting = '$url': refused, saying this build has no Redis support");
		unlike($err, qr/s3cret/, "$setting = '$url': no password shown")
		  if $url =~ /s3cret/;
	}
}
unlike(slurp_file($fixed->data_dir . '/postgresql.auto.conf'),
	qr/redis|postgresql:/, 'no refused URL reached postgresql.auto.conf');

# And a start refuses one with the same words, not showing the password.
$fixed->stop;
$fixed->append_conf('postgresql.conf',
	"snowid.coordinator_url = 'redis://:s3cret\@127.0.0.1:6379'\n");
my $log_offset = -s $fixed->logfile;
SnowidTest::fails_to_start($fixed, 'a Redis URL at start',
	qr/this build of snowid has no Redis support/,
	qr/DETAIL:  "snowid.coordinator_url" names a Redis server, and this build of snowid was made without hiredis/,
	qr/HINT:  To keep claiming from Redis, install hiredis \(libhiredis-dev\) and build and install snowid again with make with_hiredis=yes/);
unlike(slurp_file($fixed->logfile, $log_offset), qr/s3cret/,
	'a Redis URL at start: the log does not show its password');

# A claim from a PostgreSQL coordination database (a server of the
# installation under test: it needs only snowid_coordinator's SQL).
my $coord = SnowidPgCoord->new;
my $dc = 3;
my $claimer = copy_node('claimer',
	'snowid.datacenter_id' => $dc,
	'snowid.coordinator_url' => $coord->url);
$claimer->start;
$claimer->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $id = $claimer->safe_psql('postgres', 'SELECT snowid_next()');
my ($worker, $source) = split /\|/, $claimer->safe_psql('postgres',
	'SELECT worker_id, worker_source FROM snowid_status()');
is($source, 'postgresql', 'a claim from a PostgreSQL coordination database');
is($claimer->safe_psql('postgres', "SELECT worker_id FROM snowid_decode($id)"),
	$worker, 'its ids carry the worker id claimed');
my $owners = $coord->owners($dc);
ok(defined $owners->{$worker} && $owners->{$worker} =~ /port=\Q${\$claimer->port}\E /,
	'the coordination database names the server as its holder')
  or diag(explain($owners));
$claimer->restart;
is($claimer->safe_psql('postgres',
		'SELECT worker_id FROM snowid_decode(snowid_next())'),
	$worker, 'a restart keeps it');

$claimer->stop;
$coord->stop;

done_testing();
