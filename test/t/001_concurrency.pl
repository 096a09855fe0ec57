# Four sessions take 250,000 ids each at the same time from one server:
# no duplicate, and each session's ids strictly increase.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $sessions = 4;
my $per_session = 250_000;

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowid'
snowid.worker_id = 1
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION snowid;
	CREATE UNLOGGED TABLE ids (session int, n int, id bigint);
});

# A gate: the sessions queue behind an advisory lock held here, so that
# they all start taking ids at the same moment.
my $gate = $node->background_psql('postgres');
$gate->query_safe('SELECT pg_advisory_lock(1)');

my @runs;
for my $s (1 .. $sessions)
{
	my ($out, $err) = ('', '');
	my $sql = qq{
		SELECT pg_advisory_lock_shared(1);
		SELECT pg_advisory_unlock_shared(1);
		INSERT INTO ids SELECT $s, g, snowid_next()
		FROM generate_series(1, $per_session) g;
	};
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
		  $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	push @runs, [ $h, \$err ];
}

$node->poll_query_until('postgres', qq{
	SELECT count(*) = $sessions FROM pg_locks
	WHERE locktype = 'advisory' AND NOT granted})
  or die 'sessions did not reach the gate';
$gate->query_safe('SELECT pg_advisory_unlock(1)');

for my $r (@runs)
{
	my ($h, $err) = @$r;
	$h->finish;
	is($h->result(0), 0, 'session finished without error')
	  or diag($$err);
}
$gate->quit;

is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$sessions * $per_session, 'every session took all its ids');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'),
	0, 'no duplicate among all ids');
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
		FROM ids) x
	WHERE id <= prev}), 0, 'each session\'s ids strictly increase');

# The sessions really ran at the same time: their id ranges overlap.
is( $node->safe_psql(
		'postgres', q{
	WITH r AS (SELECT session, min(id) AS lo, max(id) AS hi
			   FROM ids GROUP BY session)
	SELECT count(*) > 0 FROM r a JOIN r b
		ON a.session < b.session AND a.lo < b.hi AND b.lo < a.hi}),
	't', 'sessions overlapped in time');

$node->stop;
done_testing();
