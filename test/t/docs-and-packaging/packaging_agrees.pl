# What the packaging says about snowid agrees with itself and with the
# server: META.json (PGXN) names the version of snowid.control and the
# install script, from which the update scripts lead to that version (the
# server has these scripts and no other); the newest entry of
# debian/changelog names that version too, and test/tools/release check
# says so; every other extension META.json provides (snowid_coordinator,
# snowid_sql) is in the version of its own control file, and every file it
# names is in the tree; the check reads all of that from the tree, with or
# without git, and refuses a META.json that disagrees; from PostgreSQL 18
# on pg_get_loaded_modules() names the loaded library and its version.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use FindBin;
use IPC::Run;
use lib "$FindBin::RealBin/../lib";

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = "$FindBin::RealBin/../../..";

my $control = slurp_file("$top/snowid.control");
my ($default_version) = $control =~ /^default_version\s*=\s*'([^']+)'/m;
ok(defined $default_version, 'snowid.control has a default_version');

my $meta = decode_json(slurp_file("$top/META.json"));
is($meta->{name}, 'snowid', 'META.json names snowid');
is($meta->{version}, "$default_version.0",
	'META.json has the version of snowid.control');
my $provides = $meta->{provides}{snowid};
is($provides->{version}, $meta->{version},
	'META.json provides snowid in that version');
ok(-f "$top/$provides->{file}", "the script it names, $provides->{file}, exists");
# sql/ holds one install script, of the first version, and the updates
# from it, through which CREATE EXTENSION reaches the default version
my @scripts = map { s{.*/}{}r } glob("$top/sql/snowid--*.sql");
my @install = grep { /^snowid--[0-9.]+\.sql$/ } @scripts;
is_deeply(\@install, [ $provides->{file} =~ s{^sql/}{}r ],
	'and is the one install script of sql/');
my ($first) = map { /^snowid--([0-9.]+)\.sql$/ } @install;
my %update = map { /^snowid--([0-9.]+)--([0-9.]+)\.sql$/ ? ($1 => $2) : () } @scripts;
my @path = ($first // 'none');
push @path, $update{ $path[-1] }
  while defined $update{ $path[-1] } && @path <= keys %update;
is($path[-1], $default_version,
	"the updates lead from it to the default version: @path");
is(scalar @path - 1, scalar keys %update, 'and every update is on the way');
is($meta->{prereqs}{runtime}{requires}{PostgreSQL},
	'15.0.0', 'it requires PostgreSQL 15 or later');

my ($debian) = slurp_file("$top/debian/changelog") =~ /\Asnowid \(([^)]+)\)/;
like($debian, qr/^\Q$meta->{version}\E-[0-9]+$/,
	"debian/changelog's newest entry is the release of META.json");
my ($stdout, $stderr);
my $agree = IPC::Run::run([ "$top/test/tools/release", 'check' ],
	'>', \$stdout, '2>', \$stderr);
ok($agree, 'test/tools/release check finds the three versions in agreement')
  or diag($stderr);
is($stdout, "$meta->{version}\n", 'and prints that version');

# Every extension META.json provides is one of the tree, in the version of
# its control file (the SQL edition and the coordinator have versions of
# their own), and the files it names are in the tree.
for my $name (sort keys %{ $meta->{provides} })
{
	my $p = $meta->{provides}{$name};
	my ($v) = -f "$top/$name.control"
	  ? slurp_file("$top/$name.control") =~ /^default_version\s*=\s*'([^']+)'/m
	  : ();
	$v .= '.0' if defined $v && $v =~ /^\d+\.\d+$/;
	is($p->{version}, $v // "no $name.control",
		"META.json provides $name in the version of $name.control");
	ok(-f "$top/$_", "META.json names $_ for $name, a file of the tree")
	  for grep { defined } @$p{qw(file docfile)};
}

# test/tools/release check reads them, not versions of its own: in a copy
# of what it reads, without git (as an unpacked release archive), it
# agrees; with META.json giving snowid_sql another version than its
# control file and naming a file the release does not ship (a script the
# build makes), it refuses, naming both.
my $copy = PostgreSQL::Test::Utils::tempdir;
my @needed = ('test/tools/release', 'snowid.control', 'debian/changelog',
	map { ("$_.control", grep { defined } @{ $meta->{provides}{$_} }{qw(file docfile)}) }
	  keys %{ $meta->{provides} });
for my $f (@needed)
{
	make_path(dirname("$copy/$f"));
	copy("$top/$f", "$copy/$f") or die "could not copy $f: $!";
}
chmod 0755, "$copy/test/tools/release";
PostgreSQL::Test::Utils::append_to_file("$copy/META.json", encode_json($meta));
$agree = IPC::Run::run([ "$copy/test/tools/release", 'check' ],
	'>', \$stdout, '2>', \$stderr);
ok($agree && $stdout eq "$meta->{version}\n",
	'test/tools/release check agrees in a copy without git')
  or diag($stderr);
my %wrong = (%$meta, provides => { %{ $meta->{provides} } });
$wrong{provides}{snowid_sql} = { %{ $meta->{provides}{snowid_sql} }, version => '0.9.0' };
$wrong{provides}{snowid_coordinator} =
  { %{ $meta->{provides}{snowid_coordinator} }, file => 'sql/snowid_coordinator--1.0.sql' };
unlink "$copy/META.json";
PostgreSQL::Test::Utils::append_to_file("$copy/META.json", encode_json(\%wrong));
$agree = IPC::Run::run([ "$copy/test/tools/release", 'check' ],
	'>', \$stdout, '2>', \$stderr);
ok(!$agree, 'it refuses a META.json that disagrees with the control files');
like($stderr, qr/META.json provides snowid_sql 0\.9\.0, snowid_sql\.control says \Q$meta->{provides}{snowid_sql}{version}\E/,
	'naming the version that differs from snowid_sql.control');
like($stderr, qr{META.json names sql/snowid_coordinator--1\.0\.sql as the file of snowid_coordinator, which the archive does not ship},
	'and the file the release does not ship');

my $node = SnowidTest::new_node('packaging', { 'snowid.worker_id' => 1 });
$node->start;

# The server has the scripts of sql/ and no other: an install script of a
# later version that an older make install left there would be run instead
# of the updates.
my $extdir = $node->config_data('--sharedir') . '/extension';
is( join(' ', map { s{.*/}{}r } glob("$extdir/snowid--*.sql")),
	join(' ', @scripts),
	"the server has the scripts of sql/ (remove any other from $extdir)");

SKIP:
{
	skip 'pg_get_loaded_modules() is new in PostgreSQL 18', 1
	  if $node->safe_psql('postgres', 'SHOW server_version_num') < 180000;
	is( $node->safe_psql(
			'postgres', q{
		SELECT module_name || ' ' || version FROM pg_get_loaded_modules()
		WHERE file_name LIKE 'snowid%'}),
		"snowid $default_version",
		'pg_get_loaded_modules() names snowid and its version');
}

$node->stop;
done_testing();
