# install.md's "Upgrading", step 1, on a build host without hiredis's
# headers (issue 69's second attack, its test 159).  A plain make there
# builds snowid without Redis support, says so in one line among the
# compiler's, and succeeds; for a server that claims from Redis, step 2
# then reloads the earlier release's snowid.lua and step 3's restart
# leaves the server down (FATAL: this build of snowid has no Redis
# support).  The page's step must stop where hiredis is missing, before
# anything is built or installed (make with_hiredis=yes does): run as it
# stands, with hiredis hidden from pkg-config, it fails and says why.
# (make -n: nothing is built.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = "$FindBin::RealBin/../../..";
my ($pg_config) = SnowidTest::pg_config_in_path();

my $install = SnowidTest::page_file('doc/install.md', 'upgrade-install.sh');
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
like("$out$err", qr/hiredis not found by pkg-config: install libhiredis-dev/,
	'without hiredis, step 1 says hiredis is missing and how to install it');
unlike("$out$err", qr/Redis support off/, 'and builds nothing without Redis support');
ok(!$ok,
	"step 1's make (\"$make\") stops where hiredis is not found, rather than build what a server claiming from Redis cannot start with");

done_testing();
