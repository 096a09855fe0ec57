# What the packaging says about snowid agrees with itself and with the
# server: META.json (PGXN) names the version of snowid.control and a script
# that exists, the newest entry of debian/changelog that version too, and
# test/release check says so; from PostgreSQL 18 on pg_get_loaded_modules()
# names the loaded library and its version.
use strict;
use warnings;

use FindBin;
use IPC::Run;
use lib $FindBin::RealBin;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = "$FindBin::RealBin/../..";

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
is($provides->{file}, "sql/snowid--$default_version.sql",
	'and is the full script of the default version');
is($meta->{prereqs}{runtime}{requires}{PostgreSQL},
	'15.0.0', 'it requires PostgreSQL 15 or later');

my ($debian) = slurp_file("$top/debian/changelog") =~ /\Asnowid \(([^)]+)\)/;
like($debian, qr/^\Q$meta->{version}\E-[0-9]+$/,
	"debian/changelog's newest entry is the release of META.json");
my ($stdout, $stderr);
my $agree = IPC::Run::run([ "$top/test/release", 'check' ], '>', \$stdout, '2>', \$stderr);
ok($agree, 'test/release check finds the three versions in agreement')
  or diag($stderr);
is($stdout, "$meta->{version}\n", 'and prints that version');

my $node = SnowidTest::new_node('packaging', { 'snowid.worker_id' => 1 });
$node->start;

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
