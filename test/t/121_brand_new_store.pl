# The first claim of a datacenter that no administrator marked brand new
# (issue 54): the store starts a quiet period (it cannot tell a new store
# from one that lost its claims), and the claim can succeed only once that
# period and the floor it leaves are past, about 80 s with the default
# settings.  The server's refusal is 55006 and names that very time, not
# the end of the quiet period, after which the claim was refused again
# with a later one; its hint says how to mark a brand-new datacenter and
# when that is safe.  Called again at that time, the claim succeeds.  A
# datacenter marked new (new_datacenter) grants its first claim at once,
# and so does one marked new after its first claim was refused; not one
# whose record another run of the store wrote (it may have forgotten).
# Against Redis, or a coordination database (SnowidCoord).
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
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

# no datacenter marked new, as a store an administrator just set up
my $coord = SnowidCoord->new(mark_new => 0);
my $dc = 3;

# Passes if a server's next id (its claim) succeeds
sub claims
{
	my ($node, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowid_next()');

	is($ret, 0, $what) or diag($err);
	return;
}

# A started server of an unmarked datacenter dc whose first claim is
# refused as quiet
sub refused_server
{
	my ($name, $datacenter, $what) = @_;
	my $node = $coord->new_node($name, { 'snowid.datacenter_id' => $datacenter });

	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	like(SnowidTest::psql_error($node, 'SELECT snowid_next()'), qr/ERROR:  55006: /,
		"$what: its first claim is refused");
	return $node;
}

# The default quiet period's parts but for a shorter check-in (1 s) and
# timeout (2 s): a quiet period of 5 s, its floor 5 s plus the default
# clock margin (a minute) past its end, past the minute a claim waits.
my $node = $coord->new_node('fresh',
	{
		'snowid.datacenter_id' => $dc,
		'snowid.checkin_interval' => '1s',
		'snowid.coordinator_timeout_ms' => 2000
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

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
like($err, qr/HINT:  .*Call again after that time\./s, 'the hint says to call again then');
like($err, qr/HINT:  .*new_datacenter.*safe only before any server has been granted one of its worker ids/s,
	'and how to mark a brand-new datacenter, and when that is safe');
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
my $marked = $coord->new_node('marked', { 'snowid.datacenter_id' => $dc2 });
$marked->start;
$marked->safe_psql('postgres', 'CREATE EXTENSION snowid');
claims($marked, 'a datacenter marked new: its first claim succeeds');
ok(!$coord->in_quiet($dc2), 'without a quiet period');

# As the hint says: marked new after its first claim was refused, a
# datacenter grants the next claim at once
my $dc3 = 5;
my $late = refused_server('late', $dc3, 'another unmarked datacenter');
$coord->mark_dc_new($dc3);
ok(!$coord->in_quiet($dc3), 'marked new then (new_datacenter), its quiet period ends');
claims($late, 'and the next claim succeeds at once');

# Not after the store may have forgotten: a record written under another
# run of Redis or another server (a restart from an older snapshot, a
# restore) is refused, ids or not
my $dc4 = 7;
my $restored = refused_server('restored', $dc4, 'a third unmarked datacenter');
my $base = "{snowid:dc:$dc4}";
my $refusal;
if ($coord->source eq 'postgresql')
{
	$coord->db->sql(undef, 'UPDATE snowid_coordinator.datacenters '
		  . "SET written_under = 'another server' WHERE datacenter = $dc4");
	$refusal = $coord->db->sql_error('coord_admin',
		"SELECT snowid_coordinator.new_datacenter($dc4)");
}
else
{
	my $state = $coord->cli('HGET', "$base:owners", 'state');
	$state =~ s/^(\w+) \S+ /$1 0000000000000000000000000000000000000000 /;
	$coord->cli('HSET', "$base:owners", 'state', $state);
	eval {
		$coord->cli('FCALL', 'snowid_2_new_datacenter', 3, "$base:owners",
			"$base:leases", "$base:fences", 'admin');
	};
	$refusal = $@;
}
like($refusal // '', qr/55000: datacenter $dc4 is not new|SNOWID_NOT_NEW/,
	'its record written under another run of the store, marking it new is refused');

$_->stop for ($node, $marked, $late, $restored);
done_testing();
