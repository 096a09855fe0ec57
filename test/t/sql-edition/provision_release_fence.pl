# The provisioning script of doc/managed.md frees a worker id with a fence
# of the database's max_drift_ms plus MARGIN_MS past the coordination
# server's clock (release: free(..., $drift + $MARGIN_MS + 1)), not past
# where the database's generator is.  A database whose clock stepped
# forward and back (an NTP step corrected) has issued ids as far ahead as
# the step, beyond max_drift_ms: read_db even reads that (usable, its
# generator if ahead), but release does not pass it on, and the next claim
# is granted the worker id below those ids.
#
# - db1 claims a worker id (5/5/4); its server's clock steps 10 s forward,
#   db1 issues batches for 2 s, the clock steps back; release runs (no
#   transaction open).
# - db2, on another server, claims once the fence has passed, and issues
#   for 12 s: no id of one should equal an id of the other.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my ($clock, $cnode, $script, %node) = SnowidSqlEdition::release_pair('release_ahead');

my ($rc, $out, $err) = $script->run('claim', 'one', limit => 120);
my ($w) = $out =~ /^worker id (\d+) of datacenter 3$/;
ok(defined $w, "claim: db1 takes a worker id ($out)") or diag($err);

# a step forward: db1 issues 10 s ahead for 2 s, then the step is undone
$clock->set('+10');
($rc, $out, $err) = psql_as(app_url($node{one}, 'db'), q{
	DO $$
	DECLARE
		until timestamptz := clock_timestamp() + interval '2 s';
	BEGIN
		WHILE clock_timestamp() < until LOOP
			INSERT INTO t (id, n) SELECT snowid_next_batch(40), 1;
			PERFORM pg_sleep(0.005);
		END LOOP;
	END $$});
is($rc, 0, 'db1 issues with its clock 10 s ahead') or diag($err);
$clock->set('+0');
($rc, $out, $err) = $script->run('release', 'one', limit => 120);
is($rc, 0, "release frees db1's worker id ($out)") or diag($err);

# db2 claims once the fence has passed, and issues beside it
SnowidSqlEdition::fence_passed($cnode, 3, $w)
  or diag('the freed worker id\'s fence did not pass');
($rc, $out, $err) = $script->run('claim', 'two', limit => 120);
note("claim for db2: exit code $rc, $out $err");
($rc, $out, $err) = psql_as(app_url($node{two}, 'db'), q{
	DO $$
	BEGIN
		FOR i IN 1 .. 100000 LOOP
			INSERT INTO t (id, n) SELECT snowid_next_batch(40), i;
			PERFORM pg_sleep(0.005);
			EXIT WHEN clock_timestamp() > statement_timestamp() + interval '12 s';
		END LOOP;
	END $$});
note("db2's ids: $err") if $rc;

my ($twice, $total) = SnowidSqlEdition::ids_twice([ $node{one}, 'db' ], [ $node{two}, 'db' ]);
is($twice, 0, "no id of db1 equals one of db2 ($twice of $total ids twice)");

$_->stop for values %node;
done_testing();
