# The quick clock (doc/internals.md, "Reading the clock for every id") on
# the clock sources it takes and refuses.
#
# The server reads the wall clock's millisecond from the TSC only where the
# kernel's clock source is tsc, or kvm-clock over a TSC the kernel lists
# among its usable clock sources and the processor flags constant_tsc and
# nonstop_tsc.  The test runs in a mount namespace of its own (entered
# without root, like test/t/redis/resolver_never_answers.pl) in which files of its own
# are bind-mounted over current_clocksource, available_clocksource and
# /proc/cpuinfo; it writes each case into them before a server starts, so
# that the server sees that machine while its clock and TSC stay the real
# ones.  A server whose quick clock is on logs it at DEBUG1; its ids must
# then carry the clock's millisecond, as the regression test next checks
# where the machine's own clock source is tsc.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

# Runs this file again in a user and mount namespace of its own, with a
# file of its own bind-mounted over each of the files faked, the real
# contents copied in (their directory, in the test's own tmp_check, in
# SNOWID_FAKE_CLOCK_DIR), mapped back to this user (initdb refuses root).  Returns nothing there; a reason to skip if
# the system offers no unprivileged user and mount namespaces.
sub isolate
{
	my $setup = q{
		set -e
		dir=$1 uid=$2 gid=$3
		shift 3
		mount --bind "$dir/current" /sys/devices/system/clocksource/clocksource0/current_clocksource
		mount --bind "$dir/available" /sys/devices/system/clocksource/clocksource0/available_clocksource
		mount --bind "$dir/cpuinfo" /proc/cpuinfo
		exec unshare --user --map-user="$uid" --map-group="$gid" -- "$@"
	};
	my @faked = (
		'/sys/devices/system/clocksource/clocksource0/current_clocksource',
		'/sys/devices/system/clocksource/clocksource0/available_clocksource',
		'/proc/cpuinfo');
	my ($gid) = split ' ', $(;
	my $dir;

	return if ($ENV{SNOWID_FAKE_CLOCK_DIR} // '') ne '';
	return 'no unprivileged user and mount namespaces here'
	  if system('unshare --user --map-root-user --mount -- true 2>/dev/null')
	  != 0;
	$dir = ($ENV{TESTDATADIR} // ($ENV{TESTDIR} // '.') . '/tmp_check');
	system('mkdir', '-p', $dir) == 0 or die "could not make $dir";
	$dir = `mktemp -d -p '$dir' fake_clock.XXXX`;
	chomp $dir;
	for my $i (0 .. $#faked)
	{
		my $name = (qw(current available cpuinfo))[$i];

		system("cat '$faked[$i]' > '$dir/$name'") == 0
		  or die "could not copy $faked[$i]";
	}
	$ENV{PERL5LIB} = join ':', grep { !ref } @INC;
	$ENV{SNOWID_FAKE_CLOCK_DIR} = $dir;
	exec('unshare', '--user', '--map-root-user', '--mount', '--', 'sh', '-c',
		$setup, 'sh', $dir, $<, $gid, $^X, $0, @ARGV)
	  or die "could not run unshare: $!";
}

my $skip;
BEGIN
{
	$skip = isolate();
}

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

plan skip_all => $skip if defined $skip;
plan skip_all => 'the quick clock reads the TSC of x86-64 only'
  unless `uname -m` =~ /^x86_64$/;

my $dir = $ENV{SNOWID_FAKE_CLOCK_DIR};
my $cpuinfo = slurp_file("$dir/cpuinfo");

# Writes one of the faked files.
sub fake
{
	my ($name, $text) = @_;

	open(my $fh, '>', "$dir/$name") or die "could not write $dir/$name: $!";
	print $fh $text;
	close($fh);
	return;
}

# The processor flags of the real /proc/cpuinfo less those named.
sub cpuinfo_without
{
	my @gone = @_;
	my $text = $cpuinfo;

	$text =~ s/(?<=[ \t])\Q$_\E(?=[ \t\n])//g for @gone;
	return $text;
}

# Starts a server on the machine faked, takes ids, stops it: whether it
# logged that the quick clock is on, and how many of 2,000 ids lay off the
# clock's millisecond (the check of the regression test next).
my $n = 0;

sub try_machine
{
	my ($current, $available, $cpu) = @_;
	my $node = SnowidTest::new_node(
		'quick' . $n++,
		{
			'snowid.datacenter_id' => 1,
			'snowid.worker_id' => 3,
			'log_min_messages' => 'debug1'
		});
	my ($on, $off);

	fake('current', "$current\n");
	fake('available', "$available\n");
	fake('cpuinfo', $cpu);
	$node->start;
	ok($node->safe_psql('postgres', 'SELECT true') eq 't',
		"a server starts on $current");
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$off = $node->safe_psql(
		'postgres', q{
		DO $$
		BEGIN
			FOR i IN 1 .. 100 LOOP
				EXIT WHEN (SELECT drift_ms FROM snowid_status()) <= 0;
				PERFORM pg_sleep(0.05);
			END LOOP;
		END
		$$;
		CREATE FUNCTION pg_temp.off_the_clock(n int) RETURNS bigint
		LANGUAGE plpgsql AS $f$
		DECLARE
			before timestamptz;
			after timestamptz;
			id bigint;
			wrong bigint := 0;
		BEGIN
			FOR i IN 1 .. n LOOP
				before := date_trunc('milliseconds', clock_timestamp());
				id := snowid_next();
				after := date_trunc('milliseconds', clock_timestamp());
				IF snowid_time(id) < before OR
					snowid_time(id) > after + interval '1 ms' OR
					(snowid_time(id) > after AND (id & 4095) >= 1024) THEN
					wrong := wrong + 1;
				END IF;
				IF i % 100 = 0 THEN
					PERFORM pg_sleep(0.0003);
				END IF;
			END LOOP;
			RETURN wrong;
		END
		$f$;
		SELECT pg_temp.off_the_clock(2000);
	});
	$node->stop;
	$on = slurp_file($node->logfile) =~
	  /snowid reads the wall clock's millisecond from the TSC/;
	return ($on, $off);
}

my $real = slurp_file("$dir/current");
chomp $real;
my $real_available = slurp_file("$dir/available");
chomp $real_available;

SKIP:
{
	# the cases that turn the quick clock on need a TSC the kernel keeps
	# time with, as on the machines the tests run on
	skip "this machine's clock source is $real, not tsc", 6
	  unless $real eq 'tsc';

	my ($on, $off) = try_machine('tsc', $real_available, $cpuinfo);
	ok($on, 'on tsc, the quick clock is on');
	is($off, 0, 'on tsc, every id carries the clock\'s millisecond');

	($on, $off) = try_machine('kvm-clock', 'tsc kvm-clock', $cpuinfo);
	ok($on, 'on kvm-clock over a TSC the kernel lists, the quick clock is on');
	is($off, 0,
		'on kvm-clock, every id carries the clock\'s millisecond');
}

my @refused = (
	[ 'kvm-clock', 'kvm-clock', $cpuinfo, 'a TSC the kernel took off its list' ],
	[ 'kvm-clock', 'tsc kvm-clock', cpuinfo_without('nonstop_tsc'),
		'a TSC that may stop in deep sleep' ],
	[ 'kvm-clock', 'tsc kvm-clock', cpuinfo_without('constant_tsc'),
		'a TSC whose rate may change' ],
	[ 'hpet', 'tsc hpet', $cpuinfo, 'another clock source' ]);
for my $case (@refused)
{
	my ($current, $available, $cpu, $what) = @$case;
	my ($on, $off) = try_machine($current, $available, $cpu);

	ok(!$on, "$current with $what: the quick clock is off");
	is($off, 0, "$current with $what: every id carries the clock's millisecond");
}

done_testing();
