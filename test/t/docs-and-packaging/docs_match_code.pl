# The documentation stays true to the code: README.md and doc/*.md.
#
# 1. Every SQL block marked runnable runs without an error against a
#    throwaway server, and its output is compared where the page shows it.
#    Markers (doc/development.md explains them), each an HTML comment alone
#    on the line before a fence:
#      <!-- test -->         before ```sql: run it
#      <!-- test given: SQL --> the same, after SQL that the reader is
#                            told of but need not run (the README's
#                            orders table, say)
#      <!-- output -->       before ```text, after a test block: what psql
#                            prints for it (stdout, aligned, no footers)
#      <!-- test server -->  before ```ini: start a fresh server whose
#                            postgresql.conf gets shared_preload_libraries =
#                            'snowid' and then this block; the page's later
#                            blocks run there
#      <!-- file NAME -->    before any fence: a file another test reads
#                            and runs as it is (the client tests,
#                            test/t/integrations/; the upgrade,
#                            upgrading_as_documented.pl);
#                            NAME is unique on its page
#    Blocks before a page's first server block run on a shared server
#    (snowid preloaded, datacenter 0, worker 1, a key file of public ids
#    with the key K1 of the public ids' test vectors) in a database of the page's
#    own.  A \c (\connect) in a block holds for the page's later blocks,
#    as in one psql session.  Sessions run with TimeZone UTC.
# 2. doc/reference.md names every SQL function of the installed extension
#    (with its arguments), every snowid.* setting (with its default and
#    context), every column of snowid_status() (with its type) and every
#    wait event of wait_events.c; and everything its tables list exists.
# 3. Every relative link resolves to a file, and every #anchor to a heading
#    of that file (GitHub's anchors).
# 4. doc/development.md's table of the two tiers names in its first tier
#    the files of test/run's core_files, and every TAP file in one tier.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Basename qw(dirname);
use File::Find;
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my @pages = ('README.md', map { "doc/$_" } sort map { s{.*/}{}r }
	  glob("$top/doc/*.md"));

ok(-f "$top/$_", "$_ exists") for qw(README.md CHANGELOG.md doc/reference.md);
my @readme_lines = split /\n/, slurp_file("$top/README.md"), -1;
cmp_ok(scalar @readme_lines, '<', 250, 'README.md is under 250 lines');

$ENV{PGTZ} = 'UTC';

# ---------------------------------------------------------------------------
# Reading the pages

# The fenced blocks of a page: { lang, text, line (of the fence), marker }.
# The marker is the HTML comment alone on the line before the fence, if any.
sub blocks
{
	my ($page) = @_;
	my @lines = split /\n/, slurp_file("$top/$page");
	my (@blocks, $open, $marker, $prev);

	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];

		if ($open)
		{
			if ($line =~ /^\s*```\s*$/)
			{
				push @blocks, $open;
				undef $open;
			}
			elsif ($line =~ /^\s*```\S/)
			{
				# a fence with a language opens a block: the one before
				# was never closed
				die "$page: a fence opened at line $open->{line} is not closed before line "
				  . ($i + 1);
			}
			else
			{
				$open->{text} .= "$line\n";
			}
			next;
		}
		if ($line =~ /^\s*```(\S*)\s*$/)
		{
			my $lang = $1;

			$marker = defined $prev && $prev =~ /^\s*<!--\s*(.*?)\s*-->\s*$/
			  ? $1 : '';
			$open = {
				lang => $lang,
				text => '',
				line => $i + 1,
				marker => $marker
			};
		}
		$prev = $line;
	}
	die "$page: a fence opened at line $open->{line} is not closed"
	  if $open;
	return @blocks;
}

# The lines of a page outside its fenced blocks, as [ number, text ].
sub prose
{
	my ($page) = @_;
	my @lines = split /\n/, slurp_file("$top/$page");
	my ($fenced, @out) = (0);

	for my $i (0 .. $#lines)
	{
		if ($lines[$i] =~ /^\s*```/)
		{
			$fenced = !$fenced;
			next;
		}
		push @out, [ $i + 1, $lines[$i] ] unless $fenced;
	}
	return @out;
}

# ---------------------------------------------------------------------------
# 1. Runnable blocks

my %markers = map { $_ => 1 } ('test', 'output', 'test server');

# The last \c (\connect) line of a block, if any.
sub last_connect
{
	my ($text) = @_;
	my @lines = grep { /^\s*\\c(?:onnect)?(?:\s|$)/ } split /\n/, $text;

	return @lines ? "$lines[-1]\n" : undef;
}

# The shared server has a key file of public ids (the example key of
# doc/public-ids.md's test vectors), in its data directory.
my $shared = SnowidTest::new_node('docs',
	{ 'snowid.datacenter_id' => 0, 'snowid.worker_id' => 1,
	  'snowid.public_key_file' => 'snowid_public_keys' });
my $keys = $shared->data_dir . '/snowid_public_keys';
PostgreSQL::Test::Utils::append_to_file($keys,
	"K1 000102030405060708090a0b0c0d0e0f\n");
chmod 0600, $keys;
$shared->start;

my $psql_bin =
  $shared->can('installed_command')
  ? $shared->installed_command('psql')
  : 'psql';

# Runs sql on a node's database as psql would from a terminal, stopping at
# the first error; returns (exit code, stdout, stderr).
sub run_sql
{
	my ($node, $db, $sql) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run(
		[
			$psql_bin, '-X', '-q', '-v', 'ON_ERROR_STOP=1',
			'-P', 'footer=off', '-d', $node->connstr($db), '-f', '-'
		],
		'<', \$sql, '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

# Output as compared: no trailing blanks on a line, none at the end.
sub normalize
{
	my ($text) = @_;

	$text =~ s/[ \t]+$//mg;
	$text =~ s/\s+\z//;
	return $text;
}

my $servers = 0;
my $runnable = 0;
my %files;
for my $page (@pages)
{
	my @blocks = blocks($page);
	my ($node, $db) = ($shared, 'docs_' . ($page =~ s/\W/_/gr));
	my ($last_run, $connect);

	$shared->safe_psql('postgres', qq{CREATE DATABASE "$db"});
	for my $b (@blocks)
	{
		my $where = "$page:$b->{line}";

		next if $b->{marker} eq '';
		if ($b->{marker} =~ /^file (\S+)$/)
		{
			ok(!$files{$page}{$1}++, "$where: the file $1 is named once on its page");
			next;
		}
		my $given = $b->{marker} =~ s/^test given:\s*(.*)$/test/s ? $1 : '';
		if (!$markers{ $b->{marker} })
		{
			fail("$where: unknown marker <!-- $b->{marker} -->");
			next;
		}
		if ($b->{marker} eq 'test server')
		{
			is($b->{lang}, 'ini', "$where: a server block is ini");
			$servers++;
			$node = PostgreSQL::Test::Cluster->new("docs_server_$servers");
			$node->init;
			$node->append_conf('postgresql.conf',
				"shared_preload_libraries = 'snowid'\n" . $b->{text});
			ok($node->start(fail_ok => 1),
				"$where: a server starts with this configuration");
			$db = 'postgres';
			undef $last_run;
			undef $connect;
		}
		elsif ($b->{marker} eq 'test')
		{
			is($b->{lang}, 'sql', "$where: a test block is sql");
			my ($rc, $out, $err) = run_sql($node, $db,
				($connect // '') . ($given ne '' ? "$given;\n" : '') . $b->{text});
			$connect = last_connect($b->{text}) // $connect;
			is($rc, 0, "$where: runs without error")
			  or diag("the block:\n$b->{text}\npsql said:\n$err");
			$last_run = { where => $where, out => $out };
			$runnable++;
		}
		else
		{
			is($b->{lang}, 'text', "$where: an output block is text");
			if (!defined $last_run)
			{
				fail("$where: an output block follows no test block");
				next;
			}
			is(normalize($last_run->{out}), normalize($b->{text}),
				"$where: the output of $last_run->{where} is as shown");
			undef $last_run;
		}
	}
}
cmp_ok($runnable, '>=', 5, "the pages have runnable blocks ($runnable)");

# ---------------------------------------------------------------------------
# 2. The reference against the code

# The rows of the first table under a heading of doc/reference.md, as lists
# of cells.
my $reference = slurp_file("$top/doc/reference.md");

sub table_under
{
	my ($heading) = @_;
	my ($section) =
	  $reference =~ /^#+ \Q$heading\E[ \t]*\n(.*?)(?=^#+ |\z)/ms;
	my @rows;

	die "doc/reference.md has no heading \"$heading\"" unless defined $section;
	for my $line (split /\n/, $section)
	{
		next unless $line =~ /^\|/;
		next if $line =~ /^\|[-| :]+\|$/;
		my @cells = map { s/^\s+|\s+$//gr } split /(?<!\\)\|/, $line;
		shift @cells;
		push @rows, \@cells;
	}
	shift @rows;    # the header
	return @rows;
}

# The text in backticks at the start of a cell.
sub code_of
{
	my ($cell) = @_;

	return $cell =~ /^`([^`]*)`/ ? $1 : undef;
}

# Compares the names (and what goes with them) the code has with those a
# table lists: each must be in both, and agree.
sub compare
{
	my ($what, $code, $doc) = @_;

	for my $name (sort keys %$code)
	{
		if (!exists $doc->{$name})
		{
			fail("doc/reference.md lists $what $name");
			next;
		}
		is($doc->{$name}, $code->{$name}, "doc/reference.md: $what $name")
		  if defined $code->{$name};
	}
	for my $name (sort keys %$doc)
	{
		ok(exists $code->{$name}, "$what $name of doc/reference.md exists");
	}
	return;
}

$shared->safe_psql('postgres', 'CREATE EXTENSION snowid');

# Functions, by their input arguments as pg_get_function_identity_arguments()
# gives them, without OUT arguments and with timestamptz for short:
# `snowid_serial(prefix text, id bigint)`.
my %functions = map { $_ => undef } map {
	my ($name, $args) = /^(\w+)\((.*)\)$/;
	$args = join ', ', grep { !/^OUT / } split /, /, $args;
	$args =~ s/timestamp with time zone/timestamptz/g;
	"$name($args)"
} split /\n/, $shared->safe_psql(
	'postgres', q{
	SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
	FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	  AND d.refclassid = 'pg_extension'::regclass
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowid')});
cmp_ok(scalar keys %functions, '>=', 10, 'the extension has its functions');
compare('function',
	\%functions,
	{ map { code_of($_->[0]) => undef } table_under('Functions') });

# Settings: `name` | `default` | context | ...
my %settings;
for (split /\n/, $shared->safe_psql(
	'postgres', q{
	SELECT name, coalesce(nullif(boot_val, ''), '''''') || ' ' || context
	FROM pg_settings WHERE name LIKE 'snowid.%'}))
{
	my ($name, $rest) = split /\|/;
	$settings{$name} = $rest;
}
cmp_ok(scalar keys %settings, '>=', 17, 'the server has the snowid settings');
compare('setting', \%settings,
	{ map { code_of($_->[0]) => (code_of($_->[1]) // '?') . " $_->[2]" }
		  table_under('Settings') });

# snowid_status() columns: `name` | `type` | ...
my %columns;
for (split /\n/, $shared->safe_psql(
	'postgres', q{
	SELECT a.name, format_type(a.type, NULL)
	FROM pg_proc p, unnest(p.proargnames, p.proallargtypes) AS a(name, type)
	WHERE p.proname = 'snowid_status'}))
{
	my ($name, $type) = split /\|/;
	$columns{$name} = $type;
}
cmp_ok(scalar keys %columns, '>=', 20, 'snowid_status() has its columns');
compare('snowid_status() column', \%columns,
	{ map { code_of($_->[0]) => code_of($_->[1]) // '?' }
		  table_under('snowid_status() columns') });

# Wait events: the names in wait_events.c, wherever the source keeps it.
my @wait_files;
find(sub { push @wait_files, $File::Find::name if $_ eq 'wait_events.c' },
	"$top/src");
is(scalar @wait_files, 1, 'the source has one wait_events.c');
my %waits = map { $_ => undef }
  slurp_file($wait_files[0]) =~ /=\s*"(Snowid\w+)"/g;
cmp_ok(scalar keys %waits, '>=', 5, 'wait_events.c names its wait events');
compare('wait event', \%waits,
	{ map { code_of($_->[0]) => undef } table_under('Wait events') });

# ---------------------------------------------------------------------------
# 3. Links

# GitHub's anchor of a heading: lower case, markup and punctuation gone,
# spaces as hyphens; a repeated one gets -1, -2, ...
sub anchors
{
	my ($page) = @_;
	my (%seen, %anchors);

	for (prose($page))
	{
		my ($n, $line) = @$_;

		next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $id = lc $1;
		$id =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;
		$id =~ s/[^\p{L}\p{N}\p{Mn} _-]//g;
		$id =~ s/ /-/g;
		my $n_seen = $seen{$id}++;
		$anchors{ $n_seen ? "$id-$n_seen" : $id } = 1;
	}
	return \%anchors;
}

my $links = 0;
for my $page (@pages, 'CHANGELOG.md')
{
	for (prose($page))
	{
		my ($n, $line) = @$_;

		$line =~ s/`[^`]*`//g;
		while ($line =~ /\]\(([^)\s]+)\)/g)
		{
			my $target = $1;

			next if $target =~ /^[a-z][a-z0-9+.-]*:/i;    # http:, mailto:
			$links++;
			my ($path, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
			my $file =
			  $path eq ''
			  ? $page
			  : File::Spec->abs2rel(
				File::Spec->rel2abs($path, dirname("$top/$page")), $top);
			if (!-e "$top/$file")
			{
				fail("$page:$n: link to $target: $file exists");
				next;
			}
			next unless defined $anchor;
			if ($file !~ /\.md$/ || -d "$top/$file")
			{
				fail("$page:$n: link to $target: an anchor into a page");
				next;
			}
			ok(anchors($file)->{$anchor},
				"$page:$n: link to $target: $file has the heading");
		}
	}
}
cmp_ok($links, '>=', 20, "the pages link to each other ($links links)");

# ---------------------------------------------------------------------------
# The tiers: a row of the table a folder of test/t (its first cell names
# it, `core/`), each other cell the files of that folder it runs, by name
# without .pl, a comma between two (a note in parentheses aside)
my @tap_files =
  sort map { s{^\Q$top\E/test/t/}{}r =~ s{\.pl$}{}r }
  glob("$top/test/t/*.pl $top/test/t/*/*.pl");
my (%first, %deep);
my $tiers = 0;
for (split /\n/, slurp_file("$top/doc/development.md"))
{
	$tiers = 1 if /^\| folder: concern \| first tier \| deep tier only \|$/;
	next unless $tiers;
	last unless /^\|/;
	my (undef, $concern, $first, $deep) = split /\s*\|\s*/;
	next if !defined $deep || $first =~ /^(first tier|-+)$/;
	my ($folder) = $concern =~ /^`([a-z-]+)\/`/;
	if (!defined $folder)
	{
		fail("development.md: a row of the tiers names its folder: $concern");
		next;
	}
	for ([ \%first, $first ], [ \%deep, $deep ])
	{
		my ($tier, $cell) = @$_;

		$tier->{"$folder/$_"} = 1
		  for grep { /\S/ } split /\s*,\s*/, $cell =~ s/\([^)]*\)//gr =~ s/^\s+|\s+$//gr;
	}
}
my ($core) = slurp_file("$top/test/run") =~ /^core_files=\((.*?)^\)/ms;
my @core = sort map { split ' ' } map { s/#.*//r } split /\n/, $core // '';
is(join(' ', sort keys %first), join(' ', @core),
	'development.md: the first tier is test/run\'s core_files');
my %is_file = map { $_ => 1 } @tap_files;
my @none = grep { !$is_file{$_} } sort(keys %first, keys %deep);
is("@none", '', 'development.md: every file the tiers name is in test/t');
my @nowhere = grep { !$first{$_} && !$deep{$_} } @tap_files;
is("@nowhere", '', 'development.md: every TAP file is in one tier');
my @both = grep { $deep{$_} } sort keys %first;
is("@both", '', 'development.md: no file is in both tiers');

$shared->stop;
done_testing();
