# The 55006 of a quiet period after the store lost a claim (issue 69,
# finding 4, as an attack showed it): Redis crashes and comes back from a
# snapshot taken before a running server A claimed its worker id (a
# coordination database: restored from a dump taken then).  A new server B
# of the same datacenter is refused with 55006.  The store cannot tell
# that loss from a restart that kept every claim, so the refusal's hint
# offers nothing that, done, grants B the id A still issues with: it says
# to wait (call again after the time the message names) and names the
# page that says when an administrator may end the quiet period, with no
# command to run.  Waited out as it says, B's claim succeeds with another
# worker id than A's: A, checking in (every second here, well within the
# quiet period of 5 s its settings declare), re-asserted its id first (or,
# refused, would have stopped issuing with it), and no id is issued by
# both.  Against Redis, or a coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $dc = 3;
my %common = (
	'snowid.datacenter_id' => $dc,
	'snowid.checkin_interval' => '1s',
	'snowid.coordinator_timeout_ms' => 2000);

# The store's last copy, taken while the datacenter had no claim yet
$coord->backup;

my $a = $coord->new_node('a', {%common});
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION snowid');
my @a_ids = SnowidTest::next_ids($a, 1000);
my ($a_id) = split /\|/, SnowidRedis::worker($a);
like($a_id, qr/^\d+$/, 'A holds a worker id');

# The store comes back from that copy: A's claim is lost
$coord->restore_backup;

my $b = $coord->new_node('b', {%common});
$b->start;
$b->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $err = SnowidTest::psql_error($b, 'SELECT snowid_next()');
like($err, qr/ERROR:  55006: snowid cannot claim a worker id of datacenter $dc until /,
	"B's first claim is refused as quiet");
my ($hint) = $err =~ /^HINT:  (.*)$/m;
$hint //= '';
like($hint, qr/^Call again after that time: the claim then succeeds by itself/,
	'the hint leads with waiting');
my $page = $coord->source eq 'postgresql'
  ? 'doc/coordinator.md, "When the coordination database forgets"'
  : 'doc/redis.md, "Ending a quiet period"';
like($hint, qr/Ending the quiet period sooner is an administrator's decision, only for a store known to have lost nothing.*\(\Q$page\E\)\.$/,
	'and leaves ending the quiet period to an administrator, naming the page that says when');
unlike($hint, qr/redis-cli|FCALL|EVAL|SELECT|snowid_\d_|snowid_coordinator\.|\{snowid:/,
	'it gives no command to run');

# A issues on meanwhile
push @a_ids, SnowidTest::next_ids($a, 1000);

# Waited out as the hint says, B's claim succeeds (the servers and the store
# share this machine's clock)
my ($until_text) = $err =~ /of datacenter $dc until ([^\n]+)\n/;
my $until = $b->safe_psql('postgres',
	"SELECT floor(extract(epoch FROM timestamptz '$until_text') * 1000)::bigint");
while (SnowidLease::now_ms() < $until)
{
	push @a_ids, SnowidTest::next_ids($a, 100);
	sleep(0.5);
}
my ($ret, $out, $berr) = $b->psql('postgres', 'SELECT snowid_next()');
is($ret, 0, 'called again after that time, B claims a worker id') or diag($berr);
my ($b_id) = split /\|/, SnowidRedis::worker($b);
my ($a_now, $a_source) = split /\|/, SnowidRedis::worker($a);
isnt($b_id, $a_now, "B's worker id is not the one A issues with");
is($a_now, $a_id, 'A re-asserted its worker id in the quiet period and keeps it');

# Both issue at once: no id is issued by both
my $n = 50000;
my $sa = SnowidTest::start_psql($a,
	"SELECT snowid_next() FROM generate_series(1, $n)");
my $sb = SnowidTest::start_psql($b,
	"SELECT snowid_next() FROM generate_series(1, $n)");
is($sa->finish, 0, 'A issues ids') or diag($sa->stderr);
is($sb->finish, 0, 'B issues ids') or diag($sb->stderr);
my %seen;
$seen{$_} = 1 for @a_ids, split /\n/, $sa->stdout;
my $both = grep { $seen{$_} } split /\n/, $sb->stdout;
is($both, 0, 'no id is issued by both A and B');
diag("A: worker id $a_now, B: worker id $b_id; "
	  . scalar(keys %seen) . " ids of A, $n of B");

$_->stop for ($a, $b);
done_testing();
