# The provisioning script of doc/managed.md, its release when the
# database's clock steps back: release notes when it stopped the database
# (clock_timestamp() after the UPDATE that sets the worker id NULL) and
# waits for the transactions whose xact_start lies before that.  Both are
# readings of the wall clock: a transaction begun before the UPDATE, read
# after the clock stepped back (an NTP step), has an xact_start after the
# time noted, and release frees the worker id at once while it is open.
# A transaction open before a change goes on under the old row (a
# REPEATABLE READ one reads the row of its snapshot: doc/managed.md, "When
# a change takes effect"), and the next claim is granted the worker id
# once its fence has passed.
#
# - db1 claims a worker id (5/5/4); an application's REPEATABLE READ
#   transaction begins and goes on issuing batches.
# - The database's clock steps back 2 s; release runs: it should wait for
#   that transaction (it is still open when release frees the worker id?).
# - db2, on another server, claims once the fence has passed, and issues
#   beside the application's transaction: no id of one should equal an
#   id of the other.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my ($clock, $cnode, $script, %node) = SnowidSqlEdition::release_pair('release_clock');

my ($rc, $out, $err) = $script->run('claim', 'one', limit => 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);

# the application's transaction: begun now, issuing batches for a while
my $app = SnowidTest::start_psql($node{one}, q{
	BEGIN ISOLATION LEVEL REPEATABLE READ;
	INSERT INTO t (id, n) SELECT snowid_next_batch(10), 0;}
	  . SnowidSqlEdition::batches_sql(1500, 40, lost => 'NULL', pause => 0.01) . q{;
	COMMIT}, db => 'db', user => 'app');
$node{one}->poll_query_until('db', q{
	SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE '%snowid_next_batch(40)%'
				   AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND state = 'active')})
  or die 'the application\'s transaction did not start';

# an NTP step back of the database's clock, then release
$clock->set('-2');
($rc, $out, $err) = $script->run('release', 'one', limit => 120);
my $open = $node{one}->safe_psql('db', q{
	SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%snowid_next_batch(40)%'
		AND pid <> pg_backend_pid() AND state = 'active'});
note("release: exit code $rc, $out $err");
is($open, '0', 'release frees the worker id only once the transaction begun before it has ended');

# db2 claims once the fence has passed, and issues beside it
SnowidSqlEdition::fence_passed($cnode, 3, $w)
  or diag('the freed worker id\'s fence did not pass');
($rc, $out, $err) = $script->run('claim', 'two', limit => 120);
note("claim for db2: exit code $rc, $out $err");
($rc, $out, $err) = psql_as(app_url($node{two}, 'db'),
	SnowidSqlEdition::batches_sql(300, 40, pause => 0.01));
note("db2's ids: $err") if $rc;
$app->finish;

my ($twice, $total) = SnowidSqlEdition::ids_twice([ $node{one}, 'db' ], [ $node{two}, 'db' ]);
is($twice, 0, "no id of db1 equals one of db2 ($twice of $total ids twice)");

$_->stop for values %node;
done_testing();
