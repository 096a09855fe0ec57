# install.md's "Upgrading", step 1, on a build host without hiredis's
# headers (issue 69's attack).  The step builds the new version with
# upgrade-install.sh ("make PG_CONFIG=..."), for servers that claim from
# Redis too.  Where pkg-config finds no hiredis, that make builds snowid
# without Redis support, says so in one line among the compiler's, and
# succeeds; make install then leaves the earlier release's snowid.lua in
# place.  Step 2 loads that file again and its FCALL snowid_2_end_quiet
# fails with "ERR Function not found"; step 3's restart does not start the
# server at all (FATAL: this build of snowid has no Redis support), since
# its snowid.redis_url names Redis.  A build for such servers must stop
# where hiredis is missing (make with_hiredis=yes does), before anything
# is installed: the page's step, run as it stands with hiredis hidden from
# pkg-config, must fail.  (make -n: nothing is built.)
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = "$FindBin::RealBin/../..";
my ($pg_config) = SnowidTest::pg_config_in_path();

# The block of a page after the line "<!-- file NAME -->"
sub page_file
{
	my ($page, $name) = @_;
	my $text = slurp_file("$top/$page");

	$text =~ /^([ \t]*)<!-- file \Q$name\E -->\n\1```\w*\n(.*?)^\1```\n/ms
	  or die "$page has no file $name";
	my ($indent, $block) = ($1, $2);
	$block =~ s/^\Q$indent\E//mg;
	return $block;
}

my $install = page_file('doc/install.md', 'upgrade-install.sh');
my ($make) = $install =~ /^(make\b.*)$/m
  or die 'upgrade-install.sh runs no make';
like($install, qr/^sudo make install\b/m, 'step 1 builds, then installs');

# hiredis hidden from pkg-config, as on a host without libhiredis-dev
my $no_pc = PostgreSQL::Test::Utils::tempdir('no-pkgconfig');
make_path($no_pc);
local $ENV{PKG_CONFIG_LIBDIR} = $no_pc;
delete $ENV{PKG_CONFIG_PATH};
local $ENV{PG_CONFIG} = $pg_config;

my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'bash', '-c', "cd '$top' && $make -n" ],
	'<', \undef, '>', \$out, '2>', \$err);
like("$out$err", qr/Redis support off: hiredis not found/,
	'without hiredis, the build of step 1 is one without Redis support');
ok(!$ok,
	"step 1's make (\"$make\") stops where hiredis is not found, rather than build what a server claiming from Redis cannot start with");

done_testing();
