# The first claim of a datacenter that no administrator marked brand new
# (issue 54): the store starts a quiet period (it cannot tell a new store
# from one that lost its claims), and the claim can succeed only once that
# period and the floor it leaves are past, about 80 s with the default
# settings.  The server's refusal is 55006 and names that very time, not
# the end of the quiet period, after which the claim was refused again
# with a later one.  Its hint leads with waiting and leaves the end of the
# quiet period (end_quiet) to an administrator, naming the page that says
# when it is safe, with no command to run (the store cannot tell a loss
# from a restart that kept its claims: coordinator/quiet_period_hint.pl), and
# never the mark of a brand-new datacenter, which that refused claim has
# made impossible.  Called again at that time, the claim succeeds.  A
# datacenter marked new (new_datacenter) grants its first claim at once;
# once a server called for a datacenter (a claim the quiet period refused
# too), marking it new is refused: the store cannot tell it from one that
# lost its claims, as after a restart from an older snapshot.  The
# administrator's end_quiet, as the page gives it (Redis: with FCALL, and
# as a script for Redis 6), ends the wait of such a brand-new datacenter,
# where the page says it applies.  Marking new is refused too after its
# state record and holders were lost alone (Redis: the owners hash
# evicted; the coordination database: its record cleared), and, in Redis,
# while its maxmemory-policy may evict any key (allkeys-*).
# Against Redis, or a coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use IPC::Run;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

# no datacenter marked new, as a store an administrator just set up
my $coord = SnowidCoord->new(mark_new => 0);
my $dc = 3;

# Runs a shell script of a page as this Redis' administrator, its
# datacenter 3 made dc: (ok, output)
sub run_page_script
{
	my ($script, $datacenter) = @_;

	$script =~ s/\{snowid:dc:3\}/{snowid:dc:$datacenter}/g;
	return $coord->run_page_script($script, $coord->password);
}

# Passes if a server's next id (its claim) succeeds
sub claims
{
	my ($node, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()');

	is($ret, 0, $what) or diag($err);
	return;
}

# A started server of an unmarked datacenter dc whose first claim is
# refused as quiet, and that refusal
sub refused_server
{
	my ($name, $datacenter, $what) = @_;
	my $node = $coord->new_node($name, { 'snowid.datacenter_id' => $datacenter });
	my $err;

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
	like($err, qr/ERROR:  55006: /, "$what: its first claim is refused");
	return ($node, $err);
}

# The default quiet period's parts but for a shorter check-in (1 s) and
# timeout (2 s): a quiet period of 5 s, its floor 5 s plus the default
# clock margin (a minute) past its end, past the minute a claim waits.
my $node = SnowidLease::start_node($coord, 'fresh',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.checkin_interval' => '1s',
		'snowid.coordinator_timeout_ms' => 2000
	});

my $tried = SnowidLease::now_ms();
my $err = SnowidTest::psql_error($node, 'SELECT snowid_next()');
my $refused = SnowidLease::now_ms();
like($err, qr/ERROR:  55006: snowid cannot claim a worker id of datacenter $dc until /,
	'an unmarked datacenter: the first claim is refused as quiet (55006)');
my ($until_text) = $err =~ /of datacenter $dc until ([^\n]+)\n/;
my $until = $node->safe_psql('postgres',
	"SELECT floor(extract(epoch FROM timestamptz '$until_text') * 1000)::bigint");
my $q = $coord->quiet_record($dc);
cmp_ok($until, '>=', $q->{floor},
	'the time it names is when the claim can succeed: at or past the floor the quiet period leaves');
cmp_ok($q->{floor}, '>', $q->{until},
	'which lies past the end of the quiet period itself');
SnowidCoord::quiet_hint_ok($coord, $err);
unlike($err, qr/new_datacenter/,
	'not how to mark the datacenter new, which the refused claim made impossible');
diag(sprintf('the first claim was refused after %.1f s, naming a time %.1f s after it was tried',
	($refused - $tried) / 1000, ($until - $tried) / 1000));

# Called again at that time, the claim succeeds (the servers and the store
# share this machine's clock)
sleep(($until - SnowidLease::now_ms()) / 1000 + 0.05)
  while SnowidLease::now_ms() < $until;
claims($node, 'called again at that time, the claim succeeds');
like(SnowidRedis::worker($node), qr/^\d+\|/, 'the server holds a worker id');

# A datacenter marked brand new grants its first claim at once
my $dc2 = 4;
$coord->mark_dc_new($dc2);
my $marked = SnowidLease::start_node($coord, 'marked', { 'snowid.datacenter_id' => $dc2 });
claims($marked, 'a datacenter marked new: its first claim succeeds');
ok(!$coord->in_quiet($dc2), 'without a quiet period');

# Not once a server called for it: after a claim the quiet period refused,
# the store cannot tell a new datacenter from one that lost its claims (a
# restart from an older snapshot, a restore, which that refused claim
# recorded anew), so marking it new is refused
my $dc3 = 5;
my ($late, $late_err) = refused_server('late', $dc3, 'another unmarked datacenter');
my $base = "{snowid:dc:$dc3}";
my $refusal;
if ($coord->source eq 'postgresql')
{
	$refusal = $coord->db->sql_error('coord_admin',
		"SELECT snowid_coordinator.new_datacenter($dc3)");
}
else
{
	eval {
		$coord->cli('FCALL', 'snowid_3_new_datacenter', 3, "$base:owners",
			"$base:leases", "$base:fences", 'admin');
	};
	$refusal = $@;
}
like($refusal // '', qr/55000: datacenter $dc3 is not new|SNOWID_NOT_NEW/,
	'after a claim the quiet period refused, marking the datacenter new is refused');
ok($coord->in_quiet($dc3), 'and its quiet period goes on');

# What does apply to a brand-new datacenter whose first claim was refused:
# the administrator's end of the quiet period, as the page the hint names
# gives it (the page's datacenter 3 made this one's)
if ($coord->source eq 'postgresql')
{
	my $sql = SnowidTest::page_file('doc/coordinator.md', 'end-quiet.sql');
	like($sql, qr/^SELECT snowid_coordinator\.end_quiet\(3\);\n$/,
		'coordinator.md gives the end of the quiet period of datacenter 3');
	$coord->db->sql('coord_admin', $sql =~ s/\(3\)/($dc3)/r);
}
else
{
	my ($ok, $out) = run_page_script(SnowidTest::page_file('doc/redis.md', 'end-quiet.sh'), $dc3);
	ok($ok, "redis.md's end_quiet runs as the page gives it") or diag($out);
}
ok(!$coord->in_quiet($dc3), "run, it ends the quiet period");
claims($late, 'and the claim it refused succeeds at once');

# Redis 6 has no FCALL: the page runs the library as a script there, which
# any Redis runs
SKIP:
{
	skip 'a coordination database has no scripts', 3
	  if $coord->source eq 'postgresql';
	my $dc7 = 7;
	my ($old, undef) = refused_server('redis6', $dc7, 'a datacenter of a Redis 6');
	my ($ok, $out) = run_page_script(SnowidTest::page_file('doc/redis.md', 'end-quiet-redis6.sh'), $dc7);
	ok($ok, "redis.md's end_quiet for Redis 6 runs as the page gives it") or diag($out);
	ok(!$coord->in_quiet($dc7), 'and ends the quiet period');
	claims($old, 'and the claim it refused succeeds at once');
	$old->stop;
}

# Marking new asks the store to prove that the datacenter is new.  A
# datacenter whose server holds an id, its owners hash (state record and
# holders) then evicted alone (Redis), or its record of the server that
# wrote it cleared by hand (the coordination database): refused, as the
# other keys (the rows of its worker ids) remain.  And
# Redis refuses while its maxmemory-policy evicts keys without an expiry
# (allkeys-*), which may have evicted all three.
my $mark_new = sub {
	my ($datacenter) = @_;
	my $b = "{snowid:dc:$datacenter}";
	return $coord->db->sql_error('coord_admin',
		"SELECT snowid_coordinator.new_datacenter($datacenter)")
	  if $coord->source eq 'postgresql';
	my $answer = eval {
		$coord->cli('FCALL', 'snowid_3_new_datacenter', 3, "$b:owners",
			"$b:leases", "$b:fences", 'admin');
	};
	return $@ || "granted $answer";
};
if ($coord->source eq 'postgresql')
{
	$coord->db->sql(undef,
		"UPDATE snowid_coordinator.datacenters SET written_under = NULL WHERE datacenter = $dc2");
}
else
{
	$coord->cli('DEL', "{snowid:dc:$dc2}:owners");
}
like($mark_new->($dc2) // '', qr/55000: datacenter $dc2 is not new|SNOWID_NOT_NEW/,
	'a datacenter whose state record and holders were lost alone (an evicted owners hash): marking it new is refused');
SKIP:
{
	skip 'the coordination database evicts nothing', 2
	  if $coord->source eq 'postgresql';
	my $dc6 = 6;
	$coord->cli('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
	like($mark_new->($dc6), qr/SNOWID_NOT_NEW Redis cannot tell that the datacenter is new: its maxmemory-policy is allkeys-lru/,
		'a datacenter never called for, while Redis may evict any key: marking it new is refused, naming the policy');
	$coord->cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
	like($mark_new->($dc6), qr/^granted 1/, 'with noeviction it is granted');
}

$_->stop for ($node, $marked, $late);
done_testing();
