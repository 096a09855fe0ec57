# Attack of issue 69 (an outside reading of 7f119bb): a fleet upgraded as
# doc/install.md's "Upgrading" says, server by server.  Server A still
# runs release 1.2 and holds its worker id for good; Redis has the library
# of 1.3, loaded and its quiet period ended as step 2 says.  Redis then
# loses its claims (a FLUSHALL here; the same for a restart without
# persistence or a failover to a replica that missed A's claim): redis.md
# says snowid notices, and no server gets a worker id that another may
# still use.  A 1.2 server never checks in, so it never re-asserts its
# claim in the quiet period; a new server B of 1.3 waits the quiet period
# and its floor out, nobody running anything, and is granted A's worker
# id.  This test fails while B gets it, and counts the ids both issued.
#
# Needs release 1.2 installed into another copy of the PostgreSQL under
# test, named by SNOWID_ATTACK_OLD_INSTALL (its prefix: bin/pg_config
# under it), e.g. from test/versions.sh's SNOWID_RELEASE_1_2:
#   git archive $SNOWID_RELEASE_1_2 | tar -C /tmp/src12 -xf -
#   make -C /tmp/src12 PG_CONFIG=/tmp/pg12copy/bin/pg_config install
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();
my $old = $ENV{SNOWID_ATTACK_OLD_INSTALL};
plan skip_all => 'SNOWID_ATTACK_OLD_INSTALL names no installation of release 1.2'
  unless $old && -x "$old/bin/pg_config";

my $dc = 3;

# Redis with 1.2's library, as before the upgrade
my $redis = SnowidRedis->new(library => 0, mark_new => 0);
chomp(my $old_share = `$old/bin/pg_config --sharedir`);
$redis->cli('FUNCTION', 'LOAD', 'REPLACE',
	slurp_file("$old_share/extension/snowid.lua"));

# A: a server of 1.2, its worker id claimed for good
my $a = PostgreSQL::Test::Cluster->new('a12', install_path => $old);
$a->init;
$a->append_conf('postgresql.conf', "shared_preload_libraries = 'snowid'\n"
	  . "snowid.redis_url = '" . $redis->url . "'\n"
	  . "snowid.datacenter_id = $dc\n");
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION snowid');
$a->safe_psql('postgres', 'SELECT snowid_next()');
my ($a_id, $a_source) = split /\|/, $a->safe_psql('postgres',
	'SELECT worker_id, worker_source FROM snowid_status()');
is($a_source, 'redis', "A (1.2) holds worker id $a_id from Redis");
like($a->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowid'"),
	qr/^1\.2$/, 'A runs 1.2');

# Step 2 of the page: 1.3's library, and the end of the quiet period
$redis->cli('FUNCTION', 'LOAD', 'REPLACE', slurp_file(SnowidRedis::library_file()));
my $base = "{snowid:dc:$dc}";
$redis->cli('FCALL', 'snowid_2_end_quiet', 3, "$base:owners", "$base:leases",
	"$base:fences", 'upgrade');

# Redis loses its claims
$redis->cli('FLUSHALL');

# B: a new server of 1.3 in the same datacenter, with the settings of a
# fleet on one machine (a short quiet period), waits and claims
my $b = $redis->new_node('b13',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.checkin_interval' => '1s',
		'snowid.clock_margin' => '1s',
		'snowid.coordinator_timeout_ms' => 2000
	});
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION snowid');
my ($ret, $out, $err) = $b->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, "B's claim waited out the quiet period and succeeded") or diag($err);
my ($b_id) = split /\|/, SnowidRedis::worker($b);
isnt($b_id, $a_id, 'B is not granted the worker id A (1.2) still issues with');

my $n = 200000;
my $sa = SnowidTest::start_psql($a, "SELECT snowid_next() FROM generate_series(1, $n)");
my $sb = SnowidTest::start_psql($b, "SELECT snowid_next() FROM generate_series(1, $n)");
$sa->{handle}->finish;
$sb->{handle}->finish;
my %seen;
$seen{$_}++ for split /\n/, ${ $sa->{out} };
my $both = grep { $seen{$_} } split /\n/, ${ $sb->{out} };
is($both, 0, 'no id issued by both A and B');
diag("A (1.2): worker id $a_id, B (1.3): worker id $b_id; $n ids each, $both issued by both");

done_testing();
