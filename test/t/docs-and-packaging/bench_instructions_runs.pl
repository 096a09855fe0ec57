# The count of instructions does not rot: test/bench/run --instructions
# --quick counts, under valgrind's callgrind, what a call of snowid_next()
# and of each generator beside it costs (1,000 and 2,000 calls in a
# single-user backend of the installed snowid), and prints the table with a
# row for every call, those not there saying why, and the line under it
# (the version, the build, the machine, its clock source, whether snowid
# read its milliseconds from the TSC).  No figure is asserted: only that each
# is one.  About two minutes; CI runs it on one version, 18 (the first with
# uuidv7()) unless test/run places it elsewhere, with the peers where
# test/tools/pgbuild built them into it.  On a version valgrind cannot run
# on this CPU, only that the count says so.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

SnowidTest::only_on('the count of instructions', 18);
my (undef, $major) = SnowidTest::pg_config_in_path();
SnowidTest::need_program('valgrind', 'valgrind');

my $command = 'test/bench/run --instructions --quick --installed';
my ($rc, $out) =
  SnowidTest::run_bench('--instructions', '--quick', '--installed');

# Where valgrind cannot start this version's backend at all (19 on a CPU
# without RDTSCP: test/bench/instructions), the count says so, and test/run
# places this file on a version it can count.
if ($rc != 0 && $out =~ /valgrind-\S+ cannot run PostgreSQL $major\S* on this CPU/)
{
	my $cpuinfo = slurp_file('/proc/cpuinfo');

	unlike($cpuinfo, qr/^flags\s*:.*\brdtscp\b/m,
		'valgrind cannot run this version here only on a CPU without RDTSCP');
	like($out, qr/SIGILL in \w+\); count on another CPU, or on another version/,
		"$command says where it stopped, and where to count instead");
	done_testing();
	exit 0;
}
is($rc, 0, "$command runs through") or diag($out);

like($out,
	qr/^\| call \| instructions a call, in the loop \| beyond the loop alone \| beyond the floor \|$/m,
	'the table names its columns');
my $figure = qr/-?\d+\.\d/;
for my $call ('(the loop alone: count(1))',
	'(the batch loop alone: generate_series(1, 1000))')
{
	like($out, qr/^\| \Q$call\E \| $figure \| \| \|$/m, "a row for $call");
}
like($out,
	qr/^\| the floor: a volatile C function that does nothing \| $figure \| $figure \| 0 \|$/m,
	'a row for the floor');
for my $call ('random()', 'snowid_next()', 'nextval(), sequence CACHE 1',
	'nextval(), sequence CACHE 1000', 'gen_random_uuid()')
{
	like($out, qr/^\| \Q$call\E \| $figure \| $figure \| $figure \|$/m,
		"a row for $call, beyond the loop and the floor");
}
if ($major >= 18)
{
	like($out, qr/^\| uuidv7\(\) \| $figure \| $figure \| $figure \|$/m,
		'a row for uuidv7(), beyond the loop and the floor');
}
else
{
	like($out,
		qr/^\| uuidv7\(\) \| not counted: PostgreSQL $major has no uuidv7\(\) \(18 and later\) \| \| \|$/m,
		'the row of uuidv7() says this version has none');
}
like($out, qr/^\| snowid_next_batch\(1000\), per id \| $figure \| $figure \| \|$/m,
	'a row for snowid_next_batch(), beyond its own loop');
for my $peer ('pgEdge snowflake.nextval()', 'pg_uuidv7 uuid_generate_v7()')
{
	like($out,
		qr/^\| \Q$peer\E \| ($figure \| $figure \| $figure|not counted: \S.*\| \|) \|$/m,
		"a row for $peer: its figures, or why it is not counted");
}
like($out,
	qr/^<sub>PostgreSQL $major\S*, an? [\w ]+build.*\), on \d{4}-\d\d-\d\d, by `\Q$command\E`; .*\d+ cores.*, clock source [\w-]+, snowid's quick clock (on|off) .*; valgrind-[\d.]+; 1,000 and 2,000 calls a run\.<\/sub>$/m,
	'under the table: the version, the build, the command, the machine, the clock, valgrind');

done_testing();
