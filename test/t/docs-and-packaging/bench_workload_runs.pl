# The workload benchmark does not rot: test/bench/run --workload --quick runs
# the order-and-lines transaction of every key kind on pgbench against the
# installed snowid, with synchronous_commit on and off, and writes a
# well-formed CSV (commit mode, memory limit, blocks read per transaction
# among its columns), and test/bench/run --plot draws the charts and prints
# the tables from it.  The quick mode runs without a memory limit (no
# cgroup), as CI may offer none.  No timing is asserted: only that every
# run happened and its figures are figures.  About a minute; it
# runs on PostgreSQL 15 (Debian's, the one the benchmark's figures come
# from with 18) and on 18, the first with uuidv7(), so that every key kind
# is run in CI.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

SnowidTest::only_on('the workload benchmark', 'debian', 18);
my (undef, $major) = SnowidTest::pg_config_in_path();
# What the benchmark needs beyond PostgreSQL: a skip naming the Debian
# package where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidTest::need_program('gnuplot', 'gnuplot-nox');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $csv = "$dir/workload.csv";

my ($rc, $out) =
  SnowidTest::run_bench('--workload', '--quick', '--installed', '--csv', $csv);
is($rc, 0, 'test/bench/run --workload --quick runs through')
  or diag($out);
like($out, qr/DEFAULT snowid_next\(\) against the others/,
	'it prints the tables');

# The CSV
my @columns = qw(pg version kind commit clients step run memory_bytes orders
  rows pk_bytes pk_bytes_per_row seconds transactions tps latency_p50_ms
  latency_p99_ms wal_bytes_per_tx fpi_per_tx blks_read_per_tx load machine
  date quiet clock command);
my ($rows, $bad) =
  SnowidTest::bench_csv($csv, $major, 'test/bench/run --workload --quick --installed',
	@columns);

my @kinds = qw(snowid_next snowid_batch snowid_default bigserial identity
  uuid_v4);
push @kinds, 'uuid_v7' if $major >= 18;
my (%runs, %pk);
for my $row (@$rows)
{
	my %r = %$row;
	my $line = $r{line};

	for my $c (grep { !/^(version|kind|commit|machine|date|quiet|clock|command)$/ } @columns)
	{
		$bad = "$c is not a number: $line" unless $r{$c} =~ /^\d+(\.\d+)?$/;
	}
	$bad = "commit is neither on nor off: $line"
	  unless $r{commit} =~ /^(on|off)$/;
	$bad = "a memory limit in the quick mode: $line"
	  unless $r{memory_bytes} == 0;
	$bad = "not the first run of its point: $line" unless $r{run} == 1;
	$bad = "no check of a quiet machine: $line"
	  unless $r{quiet} =~ /^(quiet|busy): processors \d+% busy/;
	$bad = "no transactions: $line"
	  unless $r{transactions} > 0 && $r{tps} > 0 && $r{wal_bytes_per_tx} > 0;
	$bad = "a median above the 99th percentile: $line"
	  if $r{latency_p50_ms} > $r{latency_p99_ms};
	$bad = "rows are not six an order: $line"
	  unless $r{rows} == 6 * $r{orders};
	last if $bad;
	push @{ $runs{ $r{kind} } }, \%r;
	$pk{ $r{kind} } = $r{pk_bytes_per_row};
}
ok(!$bad, 'every row is a run with figures') or diag($bad);
is_deeply([ sort keys %runs ], [ sort @kinds ], 'every key kind ran');
my $growth = 2 * `nproc`;
for my $kind (@kinds)
{
	my @r = @{ $runs{$kind} // [] };

	is( join(' ', map { "$_->{step}:$_->{clients}:$_->{commit}" } @r),
		"1:$growth:on 1:$growth:off 2:$growth:on 2:$growth:off 2:1:on 2:1:off",
		"$kind: two steps from 2 x the cores clients, then one from 1, each with synchronous_commit on and off"
	);
	ok(@r == 6 && !grep({ $r[$_]{orders} <= $r[ $_ - 1 ]{orders} } 1 .. $#r),
		"$kind: the tables grow");
}
cmp_ok($pk{uuid_v4} // 0, '>', $pk{bigserial} // 0,
	'a uuid primary key takes more bytes a row than a bigint one');
like($out, qr/blocks read\/tx.*\n(?:.*\n)*.*synchronous_commit = off/,
	'the tables show blocks read and both commit modes');
# (a build of a branch point names its version as 19beta1: no dot)
like(
	$out,
	qr/^<sub>PostgreSQL $major(?:\.\S+|[a-z]+\d*) on \d{4}-\d\d-\d\d, by `test\/bench\/run --workload --quick --installed`, the machine quiet before \d+ of \d+ runs; .*\d+ cores.*, clock source [\w-]+\.<\/sub>$/m,
	'under the tables: the command, the quiet checks, the machine, its clock source, the version and the date');

# The charts
($rc, $out) =
  SnowidTest::run_bench('--plot', '--csv', $csv, '--out', "$dir/svg");
is($rc, 0, 'test/bench/run --plot runs through') or diag($out);
my @charts = qw(keys wal memory reads latency fpi clients);
push @charts, 'uuidv7' if $major >= 18;
for my $name (@charts)
{
	my $svg = "$dir/svg/workload-$name.svg";
	my $text = -f $svg ? slurp_file($svg) : '';

	like($text, qr/<svg.*PostgreSQL $major[.a-z][^<]*\d{4}-\d\d-\d\d.*<\/svg>/s,
		"workload-$name.svg is a chart of PostgreSQL $major, dated");
	like($text, qr/\d+ cores/, "workload-$name.svg names the machine");
	like($out, qr/^workload-$name: PostgreSQL $major(?:\.\S+|[a-z]+\d*) on \d{4}-\d\d-\d\d, by `test\/bench\/run --workload --quick --installed`, the machine quiet before \d+ of \d+ runs; .*clock source [\w-]+\./m,
		"the line under workload-$name.svg names the command, the machine and its clock source");
}
ok(!-e "$dir/svg/workload-uuidv7.svg", 'no uuidv7() chart before PostgreSQL 18')
  if $major < 18;

done_testing();
