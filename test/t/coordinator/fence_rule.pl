# One fence rule for every claim (doc/internals.md, "The fence rule"): for
# every worker id, each new holder's first id lies above every id any
# earlier holder could have issued.  Every path that takes an id from its
# holder leaves the id's fence in the fences hash, and every claim reads it
# there.
#
# First as measured: server a holds worker id 0 of datacenter 1 on a 60 s
# lease, its clock ahead (SnowidTest::Clock), issues 3 million ids, crashes
# and starts again within its lease.  The report's clock was 20 s ahead;
# here it is 60 s, so that the fence (a lease past a's clock) stays out of
# reach of c's claim below, of the real clock and a budget of 3 s, however
# long a loaded machine takes to get there (at 20 s, a run on 19 under a
# load of 13 reached it, and c took the id, as it may).  Its fence lies a lease past
# its generator, beyond its clock plus its drift budget and
# snowid.max_wait_ms, so its lease claim moves to another id and takes
# worker id 0 from its holder.  Before, a permanent claim read fences
# only from the owners hash: server b, configured with worker id 0, took it
# with floor 0 and repeated a's ids (315,935 in the report).  Now b is
# refused until it can start above the fence, and a server that can (a
# drift budget of three minutes, which reaches past a fence at most 60 s
# past a clock 60 s ahead) starts there: none of its ids repeats one of
# a's.
#
# Then the other doors of the same hole:
# - the repair by hand an older hint suggested (HDEL of a crashed lease
#   holder's owners entry; in a coordination database, its holder removed
#   by hand) leaves the fence, which the next claim honours; the hint now
#   says to wait for the lease to run out;
# - a permanent claim of an id whose lease ran out is allowed (before, such
#   an id was never reused), above its fence;
# - a fence that release 1.2 left in Redis' owners hash
#   ("fence:<worker id>") is honoured (Redis only: a coordination database
#   has no older releases);
# - a deliberate layout switch removes the mark file, and with it the
#   holder name; the administrator's free (snowid_3_free in Redis,
#   snowid_coordinator.free()) fences the old id.
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
use Test::More;

my $coord = SnowidCoord::start(need_clock => 1);
my $dir = PostgreSQL::Test::Utils::tempdir();

# -- as measured ---------------------------------------------------------

my $dc = 1;
my $a = SnowidLease::start_node($coord, 'a',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '60s' }, skew => '+60s');
my $w = SnowidLease::wait_lease($a);
is($w, 0, 'a takes worker id 0 on lease');
$a->safe_psql('postgres', q{
	CREATE TABLE a_ids AS
		SELECT snowid_next_batch(100000) AS id FROM generate_series(1, 30)});
my ($a_count, $a_max) = split /\|/,
  $a->safe_psql('postgres', 'SELECT count(DISTINCT id), max(id) FROM a_ids');
is($a_count, 3000000, 'a issues 3 million ids, 60 s ahead of the real clock');
$a->safe_psql('postgres', "COPY a_ids TO '$dir/a_ids'");
my $a_last_ms = SnowidLease::id_ms($a, $a_max);

$a->stop('immediate');
SnowidLease::start_skewed($a, '+60s');
my $moved = SnowidLease::wait_lease($a);
isnt($moved, $w,
	'a, crashed and started again within its lease, cannot start above its fence (a lease ahead) within its drift budget and snowid.max_wait_ms: it leases another id');
ok(!exists $coord->owners($dc)->{$w}, "worker id $w is no one's now");
my $fence = SnowidLease::fence($coord, $dc, $w);
cmp_ok($fence, '>', $a_last_ms, "its fence lies past a's last id");

# A configured worker id: refused until the server can start above the
# fence, and nothing written.
my $b = SnowidLease::start_node($coord, 'b',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => $w });
like(SnowidTest::psql_error($b, 'SELECT snowid_next()'),
	qr/55006: worker id $w of datacenter $dc cannot be taken until /,
	'b, configured with that id, is refused: the claim reads its fence');
ok(!exists $coord->owners($dc)->{$w}, 'and nothing is written');

# A free choice passes the fenced id by.
my $c = SnowidLease::start_node($coord, 'c', { 'snowid.datacenter_id' => $dc });
$c->safe_psql('postgres', 'SELECT snowid_next()');
my ($c_id) = split /\|/, SnowidRedis::worker($c);
ok($c_id != $w && $c_id != $moved,
	"c, claiming for good, takes a free id it can start above ($c_id), not the fenced $w");

# With a drift budget that reaches past the fence, b takes the id and
# starts above it.
SnowidTest::set_conf($b, 'snowid.max_drift_ms' => '3min');
$b->restart;
$b->safe_psql('postgres', q{
	CREATE TABLE b_ids AS
		SELECT snowid_next_batch(100000) AS id FROM generate_series(1, 10)});
is(SnowidRedis::worker($b), "$w|config",
	"b, its drift budget past the fence, takes worker id $w");
my $b_min = $b->safe_psql('postgres', 'SELECT min(id) FROM b_ids');
cmp_ok(SnowidLease::id_ms($b, $b_min), '>=', $fence, 'and its first id lies at the fence or above');
$b->safe_psql('postgres', 'CREATE TABLE a_ids (id bigint)');
$b->safe_psql('postgres', "COPY a_ids FROM '$dir/a_ids'");
is($b->safe_psql('postgres',
		'SELECT count(*) FROM b_ids JOIN a_ids USING (id)'),
	0, "none of b's million ids repeats one of a's 3 million");
$_->stop for $a, $b, $c;

# -- a crashed lease holder: the hint, the repair by hand, the lease run out

$dc = 2;
# d's lease never needs to run out: ten minutes, so that e's claims below
# find it live and its fence far ahead however slow the machine.
my $d = SnowidLease::start_node($coord, 'd',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '10min' });
my $dw = SnowidLease::wait_lease($d);
my $d_max = $d->safe_psql('postgres',
	'SELECT max(id) FROM generate_series(1, 4), snowid_next_batch(100000) id');
my $d_last_ms = SnowidLease::id_ms($d, $d_max);
$d->stop('immediate');

my $e = SnowidLease::start_node($coord, 'e',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => $dw });
my $err = SnowidTest::psql_error($e, 'SELECT snowid_next()');
like($err,
	qr/55006: worker id $dw of datacenter $dc is held by another server.*HINT:  Set snowid.worker_id to a free id, or wait until that lease runs out/s,
	'a configured id on a live lease: the hint says to wait for the lease, not to HDEL it');

# What the older hint said: HDEL of the owners entry (the holder removed
# by hand).  The fence stays.
$coord->remove_holder($dc, $dw);
$fence = SnowidLease::fence($coord, $dc, $dw);
cmp_ok($fence, '>', $d_last_ms,
	"after its holder is removed by hand, the fence of $dw stays");
like(SnowidTest::psql_error($e, 'SELECT snowid_next()'),
	qr/55006: worker id $dw of datacenter $dc cannot be taken until /,
	'and the next claim is refused until it can start above the fence');

# The lease run out, without the HDEL: a permanent claim takes the id.
my $f = SnowidLease::start_node($coord, 'f',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_lease' => '2s' });
my $fw = SnowidLease::wait_lease($f);
my $f_max = $f->safe_psql('postgres',
	'SELECT max(id) FROM snowid_next_batch(100000) id');
$f->stop('immediate');
my $g = SnowidLease::start_node($coord, 'g',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => $fw,
	  'snowid.max_drift_ms' => '30s' });
$g->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM (SELECT snowid_next()) s})
  or die 'g never took the id whose lease ran out';
is(SnowidRedis::worker($g), "$fw|config",
	'a permanent claim takes an id whose lease ran out');
is($coord->owners($dc)->{$fw}, SnowidRedis::identity($g, $dc),
	'and holds it for good');
ok(!defined SnowidLease::hget($coord, $dc, 'leases', $fw),
	'the run-out lease is gone');
my $g_first = $g->safe_psql('postgres', 'SELECT snowid_next()');
cmp_ok($g_first, '>', $f_max, "its ids lie above the last lease holder's");
$_->stop for $e, $g;

# -- a fence of release 1.2 in the owners hash ---------------------------

# Redis only: the field "fence:<worker id>" of the owners hash is where
# release 1.2 left a fence; a coordination database has no
# such older releases, and its only fence is the one checked above.
$dc = 3;
if (SnowidCoord::store() eq 'redis')
{
	my $old_fence = SnowidLease::now_ms() + 600_000;
	$coord->cli('HSET', SnowidRedis::owners_key($dc), 'fence:4', $old_fence);
	my $h = SnowidLease::start_node($coord, 'h',
		{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => 4 });
	like(SnowidTest::psql_error($h, 'SELECT snowid_next()'),
		qr/55006: worker id 4 of datacenter $dc cannot be taken until /,
		'a fence left in the owners hash by release 1.2 is honoured');
	$h->stop;
}

# -- a layout change -------------------------------------------------------

# A deliberate switch of layouts (doc/layouts.md) removes the mark file,
# and with it the instance of the data directory: the server claims under a
# new holder name, and its old worker id is freed by the administrator's
# free (the library's snowid_3_free, or snowid_coordinator.free()), which
# fences it.
$dc = 4;
my $p = SnowidLease::start_node($coord, 'p',
	{ 'snowid.datacenter_id' => $dc, 'snowid.worker_id' => 3 });
my $p_last = $p->safe_psql('postgres',
	'SELECT max(id) FROM snowid_next_batch(100000) id');
my $p_last_ms = SnowidLease::id_ms($p, $p_last);
my $p_old_name = SnowidRedis::identity($p, $dc);
$p->stop;
SnowidTest::set_conf($p, 'snowid.worker_id' => -1, 'snowid.worker_bits' => 1,
	'snowid.sequence_bits' => 16);
unlink $p->data_dir . '/snowid_state' or die "could not remove the mark: $!";
$p->start;
$p->safe_psql('postgres', 'SELECT snowid_next()');
is((split /\|/, SnowidRedis::worker($p))[0], 0,
	'p, its worker ids narrowed to 0 and 1, claims one of them under a new holder name');
is($coord->owners($dc)->{3}, $p_old_name, 'its old name still holds worker id 3');
$coord->free($dc, 3, 0);
ok(!exists $coord->owners($dc)->{3}, 'the administrator\'s free takes worker id 3 from it');
cmp_ok(SnowidLease::fence($coord, $dc, 3), '>', $p_last_ms,
	'fenced past its last id');
$p->stop;

done_testing();
