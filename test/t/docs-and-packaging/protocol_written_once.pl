# The worker-id protocol written once: its numbers (the bounds of what a
# caller sends, the quiet periods, the clock margin, the worker ids) and
# its words (the prefix that names a lease holder) are
# defined in snowid's C headers (PROTOCOL_HEADERS of the Makefile), and the
# Redis function library (src/redis/snowid.lua) and the coordinator's
# extension (sql/snowid_coordinator/1.1/, and the head of its update
# from 1.0) name them, @SNOWID_NAME@, which
# the build replaces with their values (test/tools/protocol).  Fails where
# a source of either store, or a C file but the header that defines it,
# holds one of those numbers by hand, or the Promela model
# (src/coord/protocol.pml) a copy of one; where what make made still names
# one; and where what is installed is not what make made, or holds a test
# switch: a store's fix is turned off only in a copy, by the fix's patch in
# test/store-fixes/, which must apply to what is installed.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");

# The headers the Makefile makes the stores' numbers from
my ($list) = slurp_file("$top/Makefile") =~
  /^PROTOCOL_HEADERS = \$\(addprefix \$\(srcdir\)\/,((?:[^\n]*\\\n)*[^\n]*)\)$/m;
ok(defined $list, 'the Makefile lists the headers of the protocol\'s numbers');
my @headers = map { "$top/$_" } split ' ', ($list // '') =~ s/\\\n/ /gr;
my ($out, $err) = ('', '');
IPC::Run::run([ "$top/test/tools/protocol", 'values', @headers ],
	'>', \$out, '2>', \$err)
  or BAIL_OUT("test/tools/protocol values failed: $err");
my %value = map { split ' ' } split /\n/, $out;

# The numbers of the protocol the stores share with the servers: each
# named by the sources of the stores it applies to, and held by hand
# nowhere
my %named_by = (
	SNOWID_MAX_ID => 'both',
	SNOWID_IDENTITY_MAX => 'both',
	SNOWID_STATE_MAX => 'redis',
	SNOWID_END_UNIX_MS => 'postgresql',
	SNOWID_MAX_LEASE_MS => 'both',
	SNOWID_MAX_WAIT_MS => 'both',
	SNOWID_FENCE_SLACK_MS => 'both',
	SNOWID_CLOCK_MARGIN_MAX_MS => 'both',
	SNOWID_CLOCK_MARGIN_DEFAULT_MS => 'both',
	SNOWID_QUIET_DECLARED_MAX_MS => 'both',
	SNOWID_QUIET_DECLARED_MIN_MS => 'both',
	SNOWID_QUIET_UNDECLARED_MS => 'both',
	# the protocol in brief (its store side in both, servers to come)
	SNOWID_RANGE_MAX_MS => 'both',
	SNOWID_RANGE_MARGIN_MS => 'both');

my %source = (
	redis => { 'src/redis/snowid.lua' => slurp_file("$top/src/redis/snowid.lua") },
	postgresql => {
		map { s{^\Q$top\E/}{}r => slurp_file($_) }
		  glob("$top/sql/snowid_coordinator/1.1/*.sql"),
		  glob("$top/sql/snowid_coordinator/1.0--1.1/*.sql")
	});

for my $name (sort keys %named_by)
{
	ok(defined $value{$name}, "$name is a number of the headers")
	  or next;
	my $v = $value{$name};
	for my $store (qw(redis postgresql))
	{
		next unless $named_by{$name} eq 'both' || $named_by{$name} eq $store;
		ok((grep { /\@$name\@/ } values %{ $source{$store} }),
			"the $store store's sources name $name");
	}
	my @by_hand = map {
		my $file = $_;
		my $n = 0;
		map { $n++; /(?<![0-9])$v(?![0-9])/ ? "$file:$n" : () }
		  split /\n/, $source{redis}{$file} // $source{postgresql}{$file}
	} sort(keys %{ $source{redis} }, keys %{ $source{postgresql} });
	is(join(' ', @by_hand), '', "no source of a store holds $v ($name) by hand");
}

# The C: each of those numbers only where it is defined (a minute, an
# hour and a day in ms, and numbers up to 1000, are units and sizes of
# other things too), but in what the build makes from the stores' sources
# (src/redis/snowid_lua.h)
my @c_files = grep { slurp_file($_) !~ /\A\/\* Generated from / }
  (glob("$top/src/*.[ch]"), glob("$top/src/*/*.[ch]"));
for my $name (sort keys %named_by)
{
	my $v = $value{$name} // next;
	next if $v <= 1000 || grep { $v == $_ } 60000, 3600000, 86400000;
	my @copies;
	for my $file (@c_files)
	{
		my $n = 0;
		for (split /\n/, slurp_file($file))
		{
			$n++;
			next unless /(?<![0-9])$v(?![0-9])/;
			next if /^#define\s+$name\s/;
			push @copies, ($file =~ s{^\Q$top\E/}{}r) . ":$n";
		}
	}
	is(join(' ', @copies), '', "the C holds $v only where $name is defined");
}

# The words of the protocol (string literals of the headers, test/tools/
# protocol strings): the prefix that names a lease holder, which the
# stores' identity checks refuse an identity to begin with.  Each named by
# both stores' sources, and held between quotes by hand neither in them
# (comments aside) nor in the C but where it is defined.
IPC::Run::run([ "$top/test/tools/protocol", 'strings', @headers ],
	'>', \$out, '2>', \$err)
  or BAIL_OUT("test/tools/protocol strings failed: $err");
my %word = map { /^(\S+) (.*)$/ } split /\n/, $out;
for my $name (qw(SNOWID_LEASE_HOLDER_PREFIX))
{
	ok(defined $word{$name}, "$name is a word of the headers") or next;
	my $w = $word{$name};
	for my $store (qw(redis postgresql))
	{
		ok((grep { /\@$name\@/ } values %{ $source{$store} }),
			"the $store store's sources name $name");
	}
	my @by_hand;
	for my $file (sort(keys %{ $source{redis} }, keys %{ $source{postgresql} }))
	{
		my $n = 0;
		for (split /\n/, $source{redis}{$file} // $source{postgresql}{$file})
		{
			$n++;
			push @by_hand, "$file:$n" if /^\s*[^-\s]/ && /['"]\Q$w\E/;
		}
	}
	is(join(' ', @by_hand), '', "no source of a store holds '$w' ($name) by hand");
	my @copies;
	for my $file (@c_files)
	{
		my $n = 0;
		for (split /\n/, slurp_file($file))
		{
			$n++;
			push @copies, ($file =~ s{^\Q$top\E/}{}r) . ":$n"
			  if /"\Q$w\E"/ && !/^#define\s+$name\s/;
		}
	}
	is(join(' ', @copies), '', "the C holds \"$w\" only where $name is defined");
}

# The model uses small numbers of its own, and names the constant each
# bound stands for
my $model = slurp_file("$top/src/coord/protocol.pml");
for my $name (sort keys %named_by)
{
	my $v = $value{$name} // next;
	next if $v < 1000;
	unlike($model, qr/(?<![0-9])$v(?![0-9])/,
		"src/coord/protocol.pml holds no copy of $name");
}
like($model, qr/$_/, "src/coord/protocol.pml says which bound stands for $_")
  for qw(SNOWID_QUIET_DECLARED_MAX_MS SNOWID_QUIET_DECLARED_MIN_MS
  SNOWID_CLOCK_MARGIN_MAX_MS);

# What make made from them, and what is installed
my %made = (
	redis => "$top/snowid.lua",
	postgresql => "$top/sql/snowid_coordinator--1.1.sql");
my $node = PostgreSQL::Test::Cluster->new('written_once');
my $extdir = $node->config_data('--sharedir') . '/extension';
my %installed = (
	redis => "$extdir/snowid.lua",
	postgresql => "$extdir/snowid_coordinator--1.1.sql");
my @fixes = sort map { m{/([a-z_]+)\.pl$} } glob("$top/test/store-fixes/*.pl");
ok(@fixes >= 7, 'test/store-fixes holds the stores\' fixes');

for my $store (qw(redis postgresql))
{
	SKIP:
	{
		skip 'a build without Redis support makes no snowid.lua', 8
		  if $store eq 'redis' && !-f $made{$store};
		ok(-f $made{$store}, "make made $made{$store}") or next;
		my $text = slurp_file($made{$store});
		unlike($text, qr/\@SNOWID_/, "$made{$store} names no number: it holds them");
		like($text, qr/(?<![0-9])$value{SNOWID_QUIET_DECLARED_MAX_MS}(?![0-9])/,
			"$made{$store} holds the longest quiet period a server declares");
		ok(-f $installed{$store}, "$installed{$store} is installed")
		  or next;
		is(slurp_file($installed{$store}), $text,
			"$installed{$store} is what make made");
		if ($store eq 'redis')
		{
			unlike($text, qr/\bFIXES\b/, 'the library installed has no switch of its fixes');
		}
		else
		{
			unlike($text, qr/snowid_coordinator\.fixed\b/,
				'the extension installed has no switch of its fixes');
		}

		# every fix can be turned off in a copy, and only there
		my @stale;
		my $changed = 0;
		for my $fix (@fixes)
		{
			my $patch = do "$top/test/store-fixes/$fix.pl";
			ref $patch eq 'HASH' or BAIL_OUT("test/store-fixes/$fix.pl: $@ $!");
			next unless $patch->{$store};
			my $copy = $text;
			for my $change (@{ $patch->{$store} })
			{
				push @stale, $fix unless $change->($copy);
			}
			$changed++ if $copy ne $text;
		}
		is(join(' ', @stale), '',
			"every patch of test/store-fixes applies to the $store store installed");
		ok($changed > 0, "and changes it");
	}
}

# The coordinator's update from 1.0, made of its head and 1.1's parts: the
# numbers written in, installed as made
my $update = 'snowid_coordinator--1.0--1.1.sql';
if (ok(-f "$top/sql/$update", "make made sql/$update"))
{
	my $text = slurp_file("$top/sql/$update");

	unlike($text, qr/\@SNOWID_/, "sql/$update names no number: it holds them");
	is(-f "$extdir/$update" ? slurp_file("$extdir/$update") : undef, $text,
		"$extdir/$update is what make made");
}

done_testing();
