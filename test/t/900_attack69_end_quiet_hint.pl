# Attack of issue 69 (an outside reading of 7f119bb): the 55006 hint offers
# end_quiet after a loss.  Redis, persisted by RDB snapshots as redis.md's
# "Persist them" allows, crashes and comes back from its last snapshot,
# which lacks the claim a running server A made after it (a coordination
# database: restored from its last dump).  A new server B
# of the same datacenter is refused with 55006; its hint gives the
# administrator's end of the quiet period with its full command ("or the
# store restarted ... keeping every write": Redis restarted, and nothing
# told the operator that it lost a write).  Run as the hint gives it, B's
# next claim takes the worker id A still issues with, before A's next
# check-in (30 s, as coordinator.md suggests for a large fleet).  A hint
# must never offer what is unsafe: this test fails while B is granted A's
# worker id, and counts the ids both issued.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();

my $redis = SnowidCoord->new;
my $dc = 3;
my %common = ('snowid.datacenter_id' => $dc,
	'snowid.checkin_interval' => '30s');

# Redis' last snapshot, taken while the datacenter had no claim yet
$redis->backup;

my $a = $redis->new_node('a', {%common});
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION snowid');
$a->safe_psql('postgres', 'SELECT snowid_next()');
my ($a_id) = split /\|/, SnowidRedis::worker($a);
like($a_id, qr/^\d+$/, 'A holds a worker id');

# Redis crashes and comes back from that snapshot
$redis->restore_backup;

my $b = $redis->new_node('b', {%common});
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($b, 'SELECT snowid_next()');
like($err, qr/ERROR:  55006: /, "B's first claim is refused as quiet");
my ($cmd) = $err =~ /an administrator ends the wait at once: (.*?)  Never after/s;
ok(!defined $cmd,
	'the hint offers no end of the quiet period after the store came back from an older copy')
  or diag("the hint offers: $cmd");

SKIP:
{
	skip 'the hint offered no command', 3 unless defined $cmd;

	# the unlucky operator runs what the hint gives
	if ($redis->source eq 'postgresql')
	{
		$redis->db->sql('coord_admin', $cmd);
	}
	else
	{
		$cmd =~ s/^redis-cli //;
		$redis->cli(split / /, $cmd);
	}
	$b->safe_psql('postgres', 'SELECT snowid_next()');
	my ($b_id) = split /\|/, SnowidRedis::worker($b);
	isnt($b_id, $a_id, 'B is not granted the worker id A issues with');

	# both issue at once
	my $n = 200000;
	my $sa = SnowidTest::start_psql($a,
		"SELECT snowid_next() FROM generate_series(1, $n)");
	my $sb = SnowidTest::start_psql($b,
		"SELECT snowid_next() FROM generate_series(1, $n)");
	$sa->{handle}->finish;
	$sb->{handle}->finish;
	my %seen;
	$seen{$_}++ for split /\n/, ${ $sa->{out} };
	my $both = grep { $seen{$_} } split /\n/, ${ $sb->{out} };
	is($both, 0, 'no id issued by both A and B');
	diag("A: worker id $a_id, B: worker id $b_id; $n ids each, $both issued by both");
	diag('A: ' . SnowidRedis::worker($a));
}

done_testing();
