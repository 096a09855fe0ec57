# What the client tests (test/t/integrations/) share: the orders schema the
# clients in test/clients/ write to, running a client as a subprocess with
# a node's connection parameters, and checking on the server what it wrote.
package SnowidClients;

use strict;
use warnings;

use File::Basename;
use File::Path qw(make_path remove_tree);
use File::Spec;
use IPC::Run;
use JSON::PP;
use Test::More;

# (PostgreSQL::Test::Utils and SnowidTest are the test's: test/run loads
# this file alone to build the clients.)

# test/clients/, beside test/t/
our $dir =
  File::Spec->rel2abs(dirname(__FILE__) . '/../../clients');

# doc/adopting.md, whose framework recipes the framework tests of test/t/integrations/ run
our $recipes_page = File::Spec->rel2abs("$dir/../../doc/adopting.md");

# The test drivers of the recipes
our $drivers = "$dir/frameworks";

# A database for one client, in UTF8 as applications have theirs (a test
# cluster's own are SQL_ASCII, whose text psycopg 3 reads as bytes), with
# the orders schema.
sub create_database
{
	my ($node, $db) = @_;

	$node->safe_psql('postgres',
		"CREATE DATABASE $db ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0");
	SnowidTest::create_orders($node, $db);
	return;
}

# Runs a client (a command and its arguments) against a node, with the
# libpq environment pointing at it (PGAPPNAME too, where app => NAME is
# given), in the directory dir => DIR if given; returns its exit code,
# stdout and stderr.
sub run
{
	my ($node, $cmd, %opts) = @_;
	my ($out, $err) = ('', '');
	my $user = $node->safe_psql('postgres', 'SELECT current_user');

	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = $opts{dbname} // 'postgres';
	local $ENV{PGUSER} = $user;
	local $ENV{NODE_PATH} = $opts{node_path} if $opts{node_path};
	local $ENV{PGAPPNAME} = $opts{app} if $opts{app};
	IPC::Run::run($cmd,
		$opts{dir} ? (init => sub { chdir $opts{dir} or die "chdir $opts{dir}: $!" }) : (),
		'<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return ($? >> 8, $out, $err);
}

# Runs a client that prints one line of JSON ({"order", "lines",
# "checks"}); checks that it succeeded, that it checked something, and
# that the server has the order and its lines under the keys it reports
# (three tests).  Returns the decoded summary.
sub run_order_client
{
	my ($node, $name, $cmd, %opts) = @_;
	my ($rc, $out, $err) = run($node, $cmd, %opts);
	my $summary = eval { decode_json((split /\n/, $out)[-1] // '') };

	is($rc, 0, "$name: the client succeeds")
	  or diag("stdout: $out\nstderr: $err");
	cmp_ok($summary ? $summary->{checks} : 0, '>', 0,
		"$name: the client checked its keys");
	$summary //= { order => '0', lines => [] };
	is( $node->safe_psql(
			$opts{dbname} // 'postgres', qq{
		SELECT string_agg(l.id::text, ',' ORDER BY l.id)
		FROM orders o JOIN order_lines l ON l.order_id = o.id
		WHERE o.id = '$summary->{order}'}),
		join(',', @{ $summary->{lines} }),
		"$name: the server has the order and its lines under the client's keys"
	);
	return $summary;
}

# Runs a program of the page that saves an order for alice of three lines
# (apple, pear, plum) and prints its key, which $key_re captures; checks
# that it succeeds and that the server has the order and its lines, after
# it, under that key (two tests).  A command that is a string is a shell
# script of the page, run with sh -e in the directory dir => DIR.
sub run_page_program
{
	my ($node, $name, $cmd, $key_re, %opts) = @_;
	my ($rc, $out, $err) =
	  run($node, ref $cmd ? $cmd : [ 'sh', '-e', "$opts{dir}/$cmd" ], %opts);
	my ($key) = $out =~ $key_re;

	is($rc, 0, "$name: the page's program runs and ends") or diag("stdout: $out\nstderr: $err");
	is( $node->safe_psql(
			$opts{dbname} // 'postgres', qq{
		SELECT o.customer, string_agg(l.product, ',' ORDER BY l.id), bool_and(l.id > o.id)
		FROM orders o JOIN order_lines l ON l.order_id = o.id
		WHERE o.id = '@{[ $key // 0 ]}' GROUP BY o.customer}),
		'alice|apple,pear,plum|t',
		"$name: the server has its order and lines under the key it printed") or diag($out);
	return;
}

# A file's text.
sub read_file
{
	my ($path) = @_;

	open(my $fh, '<', $path) or die "could not read $path: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# The files a page names: each fenced block right after a line
# "<!-- file NAME -->", as NAME => its text exactly as the page shows it
# (a block indented in a list item without the item's indentation).
sub recipes
{
	my ($page) = @_;
	my $text = read_file($page // $recipes_page);
	my %files;

	while ($text =~ /^([ \t]*)<!-- file (\S+) -->\n\1```\w*\n(.*?)^\1```\n/msg)
	{
		my ($indent, $name, $body) = ($1, $2, $3);

		die "$name is named twice" if exists $files{$name};
		$body =~ s/^\Q$indent\E//mg;
		$files{$name} = $body;
	}
	return %files;
}

# Writes the recipes of doc/adopting.md into $into (made if missing); the
# names asked for must be there.  Returns $into.
sub write_recipes
{
	my ($into, @names) = @_;
	my %files = recipes();

	make_path($into);
	for my $name (@names ? @names : sort keys %files)
	{
		die "doc/adopting.md has no file $name" unless defined $files{$name};
		open(my $fh, '>', "$into/$name") or die "could not write $into/$name: $!";
		print $fh $files{$name};
		close $fh or die "could not write $into/$name: $!";
	}
	return $into;
}

# Builds the Go and Java recipes with their drivers into $into, each where
# its compiler is there (go of golang-go with Debian's pgx v4, offline;
# javac of default-jdk-headless): $into/go/check_pgx, the page's own Go
# program built with the page's build line ($into/go/app/orders), and
# $into/java/classes.  Dies if a build fails.  test/run builds them once
# into its cache (SNOWID_CLIENT_BUILDS) for every version it tests;
# without it, 055 and 056 build them into their own directory.
sub build
{
	my ($into) = @_;
	my ($out, $err);

	if (grep { -x "$_/go" } File::Spec->path)
	{
		write_recipes("$into/go/src", 'snowid.go', 'orders_pgx.go');
		system('cp', "$drivers/check_pgx.go", "$into/go/src/") == 0
		  or die "could not copy check_pgx.go";
		local $ENV{GOPATH} = '/usr/share/gocode';
		local $ENV{GO111MODULE} = 'off';
		local $ENV{GOPROXY} = 'off';
		local $ENV{GOFLAGS} = '';
		local $ENV{GOCACHE} = "$into/go/cache";
		local $ENV{GOENV} = 'off';
		IPC::Run::run([ 'go', 'build', '-o', "$into/go/check_pgx", '.' ],
			'<', \undef, '>', \$out, '2>', \$err, init => sub { chdir "$into/go/src" })
		  or die "go build of the pgx recipe failed:\n$out$err";
		# the page's program, built with the page's line: $into/go/app/orders
		write_recipes("$into/go/app", 'snowid.go', 'orders_pgx.go', 'main.go', 'build-pgx.sh');
		IPC::Run::run([ 'sh', '-e', 'build-pgx.sh' ],
			'<', \undef, '>', \$out, '2>', \$err, init => sub { chdir "$into/go/app" })
		  or die "the build line of the pgx recipe failed:\n$out$err";
		remove_tree("$into/go/cache");
	}
	if (grep { -x "$_/javac" } File::Spec->path)
	{
		write_recipes("$into/java/src", 'SnowidKeys.java', 'Orders.java');
		system('cp', "$drivers/CheckJdbc.java", "$into/java/src/") == 0
		  or die "could not copy CheckJdbc.java";
		IPC::Run::run(
			[
				'javac', '-d', "$into/java/classes",
				map { "$into/java/src/$_" } qw(SnowidKeys.java Orders.java CheckJdbc.java)
			],
			'<', \undef, '>', \$out, '2>', \$err)
		  or die "javac of the JDBC recipe failed:\n$out$err";
	}
	return $into;
}

# Where the Go and Java builds are: test/run's (SNOWID_CLIENT_BUILDS), or
# built now into a directory of the test's own.
sub builds
{
	my $cached = $ENV{SNOWID_CLIENT_BUILDS};

	return $cached if $cached && -e "$cached/.snowid-done";
	return build(PostgreSQL::Test::Utils::tempdir('client_builds'));
}

# A server for the framework tests: snowid with the given datacenter and
# worker ids, every statement logged with the application's name (so that
# count_statements finds what each client sent), a public-id key file K1,
# and TCP on 127.0.0.1 (for JDBC).  Started.
sub new_framework_node
{
	my ($name, $datacenter, $worker) = @_;
	my $node = SnowidTest::new_node(
		$name,
		{
			'snowid.datacenter_id' => $datacenter,
			'snowid.worker_id' => $worker,
			'snowid.public_key_file' => 'snowid_public_keys',
			'log_statement' => 'all',
			'log_line_prefix' => '%m [%p] %a: ',
			'listen_addresses' => '127.0.0.1'
		});
	my $keys = $node->data_dir . '/snowid_public_keys';

	open(my $fh, '>', $keys) or die "could not write $keys: $!";
	print $fh "K1 5f3c9a0e71b24d86a9e0c3b1d4f27e58\n";
	close $fh or die "could not write $keys: $!";
	chmod(0600, $keys) or die "could not chmod $keys: $!";
	$node->start;
	return $node;
}

# The first line of each statement the application $app sent since the
# server log's byte $offset, as log_statement = all logs it.
sub statements_of
{
	my ($node, $app, $offset) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile, $offset);

	return $log =~
	  /^[^\n]*?\[\d+\] \Q$app\E: LOG:  (?:statement|execute [^:\n]+): ([^\n]*)$/mg;
}

# Checks what a client sent for its orders (four tests): one INSERT into
# orders per order; for the lines of each order, $lines_statements->(n)
# statements (one INSERT of many rows, or one COPY, unless said), not one
# per line; at least one and at most one snowid_next_batch() per order;
# and no RETURNING.  $lines lists the orders' line counts.
sub count_statements
{
	my ($node, $name, $app, $offset, $lines, $lines_statements) = @_;
	my @s = statements_of($node, $app, $offset);
	my $orders = grep { /^insert into "?orders"?\W/i } @s;
	my $line_statements =
	  grep { /^(?:insert into|copy) "?order_lines"?\W/i } @s;
	my $batches = grep { /snowid_next_batch/ } @s;
	my $expected = 0;

	$lines_statements //= sub { 1 };
	$expected += $lines_statements->($_) for @$lines;
	is($orders, scalar @$lines, "$name: one INSERT per order")
	  or diag(join("\n", @s));
	is($line_statements, $expected,
		"$name: the lines of an order in one statement (a batch), not one a line"
	) or diag(join("\n", @s));
	ok($batches >= 1 && $batches <= @$lines,
		"$name: keys taken with snowid_next_batch(), $batches time(s) for "
		  . scalar(@$lines) . ' orders');
	is((grep { /^(?:insert|copy)\b/i && /\breturning\b/i } @s),
		0, "$name: no key read back with RETURNING");
	return;
}

# A framework's orders (the recipe of doc/adopting.md through its
# driver, @$cmd): database $db made, the client run as application
# "snowid-$db" (run_order_client), what it sent for its orders of 1, 3 and
# 5 lines counted (count_statements, $opts{lines_statements} as there),
# and the 3 orders and 9 lines it saved read back: every key unique and
# from this server's datacenter and worker id (ten tests).
sub check_orders
{
	my ($node, $name, $db, $cmd, %opts) = @_;

	create_database($node, $db);
	my $offset = -s $node->logfile;
	run_order_client($node, $name, $cmd, dbname => $db, app => "snowid-$db");
	count_statements($node, $name, "snowid-$db", $offset, [ 1, 3, 5 ],
		$opts{lines_statements});
	is( $node->safe_psql(
			$db, q{
		SELECT count(*), count(DISTINCT id),
			count(*) FILTER (
				WHERE (snowid_decode(id)).datacenter_id =
					current_setting('snowid.datacenter_id')::int
				  AND (snowid_decode(id)).worker_id =
					current_setting('snowid.worker_id')::int)
		FROM (SELECT id FROM orders UNION ALL SELECT id FROM order_lines) k}),
		'12|12|12',
		"$name: 3 orders and 9 lines, every key unique and from this server");
	return;
}

# The same 10,000 ids and public-id texts for every language's reader,
# written into $into as ids.txt and texts.txt, and what the server says of
# them: { ids, texts, expected } where expected is what a reader must
# print (a line "ms datacenter worker sequence" per id from
# snowid_decode(), then "t" or "f" per text from
# snowid_public_is_valid()); one test, that both kinds of text are
# there.  The same in every test file: 5,000 ids of this year's times
# with every datacenter, worker and sequence bit in play (in the default
# layout), and 5,000 spread over 0 to 2^63 - 1 with both ends (seeded).
# The texts: 2,500 public ids (of the key new_framework_node writes),
# each also with one symbol changed, with two neighbours swapped, and in
# lower case with hyphens put in and O, I, L for 0 and 1; a few malformed
# ones (a U, a letter outside ASCII, too short, too long).  Mistakes the
# check character cannot see (a symbol typed or dropped) are left out:
# the server refuses those by the key id, which a reader does not know.
sub id_samples
{
	my ($node, $into) = @_;
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS snowid');
	my @symbols = split //, '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

	$node->safe_psql('postgres', q{
		DROP TABLE IF EXISTS id_samples;
		SELECT setseed(0.46);
		CREATE TABLE id_samples AS
		SELECT row_number() OVER (ORDER BY part, k) AS n, id FROM (
			SELECT 1 AS part, k, snowid_from_time(timestamptz '2026-11-25 00:00 UTC'
				+ k * interval '7 ms') + (k * 7919) % 4194304 AS id
			FROM generate_series(1, 5000) k
			UNION ALL SELECT 2, k, (ARRAY[0, 1, 4095, 4096, 9223372036854775807])[k]
			FROM generate_series(1, 5) k
			UNION ALL SELECT 3, k, (random() * 9.2e18)::bigint
			FROM generate_series(1, 4995) k) i;
	});
	my @ids = split /\n/,
	  $node->safe_psql('postgres', 'SELECT id FROM id_samples ORDER BY n');
	my $decoded = $node->safe_psql(
		'postgres', q{
		SELECT format('%s %s %s %s', (extract(epoch FROM d.ts) * 1000)::bigint,
			d.datacenter_id, d.worker_id, d.sequence)
		FROM id_samples, snowid_decode(id) d ORDER BY n});
	my @public = split /\n/, $node->safe_psql('postgres',
		'SELECT snowid_public(id) FROM id_samples WHERE n % 4 = 0 ORDER BY n');
	my (@texts, @bad);

	srand(46);
	for my $p (@public)
	{
		my @c = split //, $p;
		my @at = grep { $c[$_] ne '-' } 0 .. $#c;
		my $i = $at[ int(rand(@at)) ];
		my @sub = @c;
		my @swap = @c;
		my $j = int(rand($#c));

		$sub[$i] = (grep { $_ ne $c[$i] } @symbols)[ int(rand(31)) ];
		@swap[ $j, $j + 1 ] = @swap[ $j + 1, $j ];
		my $cosmetic = lc(join('', map { $_ eq '0' ? 'O' : $_ eq '1' ? 'l' : $_ } @c));
		$cosmetic =~ s/(.{4})/$1-/g;
		push @texts, $p, join('', @sub), join('', @swap), $cosmetic;
	}
	push @bad, 'K1-00N5EXDSANVTVU', "K1-00N5EXDSANVT\x{131}N", 'K1-00N5', '',
	  'K1-' . ('0' x 70), 'K1 00N5EXDSANVTVN';
	splice(@texts, $_ * 500, 1, $bad[$_]) for 0 .. $#bad;

	my $ids_file = "$into/ids.txt";
	my $texts_file = "$into/texts.txt";
	open(my $fh, '>', $ids_file) or die "could not write $ids_file: $!";
	print $fh map { "$_\n" } @ids;
	close $fh;
	open($fh, '>:encoding(UTF-8)', $texts_file)
	  or die "could not write $texts_file: $!";
	print $fh map { "$_\n" } @texts;
	close $fh;
	chmod(0644, $ids_file, $texts_file);

	my $valid = $node->safe_psql(
		'postgres', qq{
		SELECT CASE WHEN snowid_public_is_valid(t) THEN 't' ELSE 'f' END
		FROM unnest(string_to_array(rtrim(pg_read_file('$texts_file'), E'\n'), E'\n'))
			WITH ORDINALITY AS x (t, n)
		ORDER BY n});

	my $t = () = $valid =~ /^t$/mg;
	my $f = () = $valid =~ /^f$/mg;
	ok($t >= 5000 && $f >= 2500,
		"the server finds $t of the texts valid and $f not");
	return {
		ids => $ids_file,
		texts => $texts_file,
		count => scalar(@ids) . ' ids and ' . scalar(@texts) . ' texts',
		expected => "$decoded\n$valid\n"
	};
}

# Runs a language's id reader ($cmd, then EPOCH_MS LAYOUT IDS TEXTS) on
# the samples of id_samples, and checks that it decodes every id and
# judges every text as the server does (two tests).
sub check_id_reader
{
	my ($node, $name, $cmd, $samples, %opts) = @_;
	my ($epoch, $layout) = split /\|/, $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM epoch) * 1000)::bigint, layout FROM snowid_status()');
	my ($rc, $out, $err) = run($node,
		[ @$cmd, $epoch, $layout, $samples->{ids}, $samples->{texts} ], %opts);
	my @got = split /\n/, $out;
	my @want = split /\n/, $samples->{expected};
	my @differ = grep { ($got[$_] // '') ne $want[$_] } 0 .. $#want;

	is($rc, 0, "$name: the id reader runs") or diag($err);
	is(scalar(@differ), 0,
		"$name: decodes the ids and checks the texts as the server does ($samples->{count})"
	  )
	  or diag(join("\n",
		map { "line $_: got '" . ($got[$_] // '') . "', the server '$want[$_]'" }
		  @differ[ 0 .. ($#differ < 9 ? $#differ : 9) ]));
	return;
}

1;
