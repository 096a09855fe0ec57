# The benchmark of the others' methods does not rot: test/bench/run --peers
# --quick runs snowid_next(), nextval(), gen_random_uuid() and uuidv7() in
# each method (pgbench -c 8 -j 8 with SELECT f(), ids from one statement
# over generate_series, a one-statement INSERT) against the installed
# snowid, writes a well-formed CSV with the command, the machine and its
# clock source, and prints the table with the ceiling of a worker id and
# the line under it, also from the CSV alone (--table).  The peers built
# into this PostgreSQL (test/tools/pgbuild peers) run too; those that are
# not are left out, their rows saying why.  No timing is asserted.  About
# half a minute; it runs on PostgreSQL 18, the first with uuidv7().
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my ($pg_config, $major) = SnowidTest::pg_config_in_path();
plan skip_all => 'the peers benchmark runs in CI on PostgreSQL 18 only'
  if $major != 18;

my $dir = PostgreSQL::Test::Utils::tempdir;
my $csv = "$dir/peers.csv";

my $command = 'test/bench/run --peers --quick --installed';
my ($rc, $out) =
  SnowidTest::run_bench('--peers', '--quick', '--installed', '--csv', $csv);
is($rc, 0, "$command runs through") or diag($out);

# The CSV
my @columns = qw(pg version method contender run n seconds ids_per_s clients
  load quiet machine clock date command note);
my ($rows, $bad) = SnowidTest::bench_csv($csv, $major, $command, @columns);

my $sharedir = `$pg_config --sharedir`;
chomp $sharedir;
my @measured = qw(snowid nextval uuidv7 gen_random_uuid);
my %peer_built;
for my $peer (qw(snowflake pg_uuidv7))
{
	my $stamp = "$sharedir/.snowid-peer-$peer";
	my $built = -f $stamp && slurp_file($stamp) !~ /does not build/;
	$peer_built{$peer} = $built;
	push @measured, $peer if $built;
}
my (%figures, %skipped);
for my $row (@$rows)
{
	my %r = %$row;
	my $line = $r{line};

	if ($r{method} eq 'skipped')
	{
		$bad = "left out without a reason: $line" unless $r{note} =~ /\w/;
		$skipped{ $r{contender} } = $r{note};
	}
	else
	{
		$bad = "not a method: $line" unless $r{method} =~ /^(pgbench|series|insert)$/;
		$bad = "not a figure: $line"
		  unless $r{ids_per_s} =~ /^\d+$/ && $r{ids_per_s} > 0 && $r{seconds} > 0;
		$bad = "not the first run: $line" unless $r{run} == 1;
		$bad = "pgbench not from 8 clients: $line"
		  if $r{method} eq 'pgbench' && $r{clients} != 8;
		$bad = "not 100,000 ids a statement: $line"
		  if $r{method} ne 'pgbench' && $r{n} != 100000;
		$bad = "no check of a quiet machine: $line"
		  unless $r{quiet} =~ /^(quiet|busy): processors \d+% busy/;
		$figures{ $r{contender} }{ $r{method} }++;
	}
	last if $bad;
}
ok(!$bad, 'every row is a figure or a contender left out, with its reason')
  or diag($bad);
for my $c (@measured)
{
	is(join(' ', map { $figures{$c}{$_} // 0 } qw(pgbench series insert)),
		'1 1 1', "$c: one figure in each method");
}
for my $peer (grep { !$peer_built{$_} } keys %peer_built)
{
	ok(exists $skipped{$peer}, "$peer, not built here, is left out saying why");
}

# The table, after the run and from the CSV alone
my $footer =
  qr/^<sub>PostgreSQL $major\.\S+ on \d{4}-\d\d-\d\d, by `\Q$command\E`; .*\d+ cores.*, clock source [\w-]+; .*<\/sub>$/m;
for my $run ([ 'after the run', $out ],
	[
		'with --table',
		(SnowidTest::run_bench('--peers', '--table', '--csv', $csv))[1]
	])
{
	my ($when, $text) = @$run;

	like($text,
		qr/^\| id generator \| pgbench -c 8 -j 8, SELECT f\(\) \| 100,000 ids from generate_series \| INSERT of 100,000 rows, one statement \|$/m,
		"$when: the table names the methods");
	like($text, qr/^\| snowid_next\(\) \| [\d,]+ \| [\d,]+ \| [\d,]+ \|$/m,
		"$when: snowid_next() has its figures");
	like($text, qr/^\| the ceiling of a worker id, 4,096 ids a millisecond \| 4,096,000 \|/m,
		"$when: the ceiling is beside them");
	like($text, $footer,
		"$when: under the table, the command, the machine, its clock source, the version and the date");
}

done_testing();
