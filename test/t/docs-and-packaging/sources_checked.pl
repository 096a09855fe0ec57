# Where the sources that are not Debian packages come from
# (test/sources.txt, test/tools/pgbuild): from a mirror that holds the
# file, else downloaded into the cache; either way unpacked and checked
# against the SHA-256 of its contents.  A mismatch is refused, and a
# download that does not match is removed; with no mirror and downloads
# off, "pgbuild have" says what cannot be had and why.  The archives here
# are made by the test, the downloads are file:// URLs (curl): no network.
# Also: test/sources.txt names a source for every build test/tools/pgbuild
# makes from outside Debian.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Path qw(make_path);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $pgbuild = "$top/test/tools/pgbuild";
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sources'));
SnowidTest::need_program('curl', 'curl');

# The list itself: every line has five fields, a 64-digit SHA-256 and an
# https URL, and names what pgbuild builds.
my %listed;
for (split /\n/, slurp_file("$top/test/sources.txt"))
{
	next if /^\s*(#|$)/;
	my @f = split ' ';
	ok(@f == 5 && $f[3] =~ /^[0-9a-f]{64}$/ && $f[4] =~ m{^https://},
		"test/sources.txt: $f[0] $f[1] has a file, a SHA-256 and an https URL");
	$listed{"$f[0] $f[1]"} = $f[2];
}
ok($listed{$_}, "test/sources.txt lists $_")
  for ('postgresql 16', 'postgresql 17', 'postgresql 18', 'postgresql 19',
	'pg_tle 1.5.2', 'citus 13.2.2', 'citus 14.0.1', 'snowflake 2.6.0',
	'pg_uuidv7 1.6.0');

# A source of our own: a tree, its archive, its SHA-256.
make_path("$dir/tree/demo-1.0/sub");
PostgreSQL::Test::Utils::append_to_file("$dir/tree/demo-1.0/README", "a source\n");
PostgreSQL::Test::Utils::append_to_file("$dir/tree/demo-1.0/sub/file.c", "int x;\n");
symlink('sub/file.c', "$dir/tree/demo-1.0/link") or die "symlink: $!";
system('tar', '-C', "$dir/tree", '-czf', "$dir/good.tar.gz", 'demo-1.0') == 0
  or die 'tar failed';
system('tar', '-C', "$dir/tree", '-cJf', "$dir/good-again.tar.xz", 'demo-1.0') == 0
  or die 'tar failed';

# pgbuild ENV ARGS...: its exit status, and what it printed (both
# streams); the mirror, its list and whether downloads are off are ENV's
# alone, not those of the run (test/tools/plain-clone runs the suite with
# SNOWID_OFFLINE=1).
sub pgbuild
{
	my ($env, @args) = @_;
	my $out;
	local %ENV = (%ENV, SNOWID_CACHE => "$dir/cache", SNOWID_OFFLINE => undef,
		SNOWID_SOURCES => undef, SNOWID_SOURCES_LIST => undef, %$env);
	delete $ENV{$_} for grep { !defined $ENV{$_} } keys %ENV;
	IPC::Run::run([ $pgbuild, @args ], '>&', \$out);
	return ($? >> 8, $out);
}

my ($rc, $out) = pgbuild({}, 'tree-sha256', "$dir/tree/demo-1.0");
is($rc, 0, 'tree-sha256 of a tree');
chomp(my $good_sha = $out);
like($good_sha, qr/^[0-9a-f]{64}$/, 'it is a SHA-256');
PostgreSQL::Test::Utils::append_to_file("$dir/tree/demo-1.0/README", "changed\n");
system('tar', '-C', "$dir/tree", '-czf', "$dir/bad.tar.gz", 'demo-1.0') == 0
  or die 'tar failed';

# list FILE URL SHA: a list of one source, pg_tle 1.5.2 (a name pgbuild
# have knows), as FILE in the mirror, downloaded from URL.
sub list
{
	my ($file, $url, $sha) = @_;
	my $list = "$dir/list-" . int(rand(1e9));
	PostgreSQL::Test::Utils::append_to_file($list,
		"# a test's list\npg_tle 1.5.2 $file $sha $url\n");
	return $list;
}

make_path("$dir/mirror/x");
system('cp', "$dir/good.tar.gz", "$dir/mirror/x/demo.tar.gz") == 0 or die;
system('cp', "$dir/bad.tar.gz", "$dir/mirror/x/bad.tar.gz") == 0 or die;

# From the mirror: unpacked and checked.
my $list = list('x/demo.tar.gz', "file://$dir/nowhere.tar.gz", $good_sha);
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/mirror", SNOWID_SOURCES_LIST => $list },
	'unpack', 'pg_tle', '1.5.2', "$dir/out1");
is($rc, 0, 'a source the mirror holds is unpacked') or diag($out);
ok(-f "$dir/out1/sub/file.c" && -l "$dir/out1/link", 'its files and links, without the top directory');

# The mirror's file does not match: refused, nothing left unpacked.
$list = list('x/bad.tar.gz', "file://$dir/nowhere.tar.gz", $good_sha);
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/mirror", SNOWID_SOURCES_LIST => $list },
	'unpack', 'pg_tle', '1.5.2', "$dir/out2");
isnt($rc, 0, 'a mirror file whose contents do not match is refused');
like($out, qr/its contents have the SHA-256 [0-9a-f]{64}, test\/sources.txt says $good_sha: refused/,
	'it says which SHA-256 it found and which it wanted');
ok(!-e "$dir/out2", 'nothing of it is left unpacked');
ok(-f "$dir/mirror/x/bad.tar.gz", 'the mirror is not written to');

# No mirror, downloads off: have names it and why.
$list = list('x/demo.tar.gz', "file://$dir/good.tar.gz", $good_sha);
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/none", SNOWID_SOURCES_LIST => $list,
		SNOWID_OFFLINE => 1 }, 'have', 'pg_tle');
isnt($rc, 0, 'have fails where a source cannot be had');
like($out, qr/^pg_tle: pg_tle 1\.5\.2: not in the mirror \Q$dir\E\/none, and downloads are off \(SNOWID_OFFLINE=1\)$/m,
	'and says why, in one line');
ok(!-e "$dir/cache/sources" || !glob("$dir/cache/sources/*"), 'nothing was downloaded');

# A download whose contents do not match: refused and removed.
$list = list('x/demo.tar.gz', "file://$dir/bad.tar.gz", $good_sha);
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/none", SNOWID_SOURCES_LIST => $list },
	'unpack', 'pg_tle', '1.5.2', "$dir/out3");
isnt($rc, 0, 'a download whose contents do not match is refused');
like($out, qr/does not match test\/sources.txt, and was removed/, 'it says it was removed');
is(join(' ', glob("$dir/cache/sources/*")), '', 'no file of it is left in the cache');
ok(!-e "$dir/out3", 'nothing of it is left unpacked');

# A download that matches, compressed otherwise than the mirror's: kept
# in the cache, and used again without the URL.
$list = list('x/demo.tar.gz', "file://$dir/good-again.tar.xz", $good_sha);
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/none", SNOWID_SOURCES_LIST => $list },
	'have', 'pg_tle');
is($rc, 0, 'a download whose contents match can be had') or diag($out);
my @kept = glob("$dir/cache/sources/*");
is(scalar @kept, 1, 'it is kept in the cache');
unlink("$dir/good-again.tar.xz") or die;
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/none", SNOWID_SOURCES_LIST => $list,
		SNOWID_OFFLINE => 1 }, 'unpack', 'pg_tle', '1.5.2', "$dir/out4");
is($rc, 0, 'a kept download is used again, offline') or diag($out);
ok(-f "$dir/out4/README", 'and unpacked');

# A kept download that was changed since: refused and removed.
system('cp', "$dir/bad.tar.gz", $kept[0]) == 0 or die;
($rc, $out) = pgbuild({ SNOWID_SOURCES => "$dir/none", SNOWID_SOURCES_LIST => $list,
		SNOWID_OFFLINE => 1 }, 'unpack', 'pg_tle', '1.5.2', "$dir/out5");
isnt($rc, 0, 'a kept download changed since is refused');
ok(!-e $kept[0], 'and removed from the cache');

done_testing();
