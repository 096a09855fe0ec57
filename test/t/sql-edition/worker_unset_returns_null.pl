# snowid_next() while the worker id is set NULL (the provisioning script's
# release and its refused assert do it under load, doc/managed.md): a call
# in flight computes the worker id from snowid_sql_fixed() as its plan had
# it, then takes a lock (a writer's, on snowid_locks), which makes the
# session read the change; the rest of the call is planned anew with
# snowid_sql_fixed() of no worker id, and its RETURN composes the id with
# a NULL worker id: snowid_next() returns NULL, neither an id nor the
# edition's "snowid has no worker id" (55000).  A column whose default is
# snowid_next() then takes NULL (or fails with 23502 where it is NOT NULL).
#
# - Three sessions insert snowid_next() into a table without a constraint
#   for 20 s, one call a statement and 50 a statement, catching 55000;
#   the owner sets the worker id NULL and back, over and over.
# - No call may return NULL.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('worker_unset_returns_null', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');
my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 1;
	CREATE TABLE t (id bigint)});
is($rc, 0, 'the owner installs it with worker id 1') or diag($err);

# A session's SQL: for 20 s, $insert over and over, a call that finds no
# worker id (55000) caught, and $after each time if given
sub for_20_s
{
	my ($insert, $after) = @_;

	return qq{DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '20 s' LOOP
			BEGIN
				$insert;
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				NULL;
			END;@{[ defined $after ? "\n\t\t\t$after;" : '' ]}
		END LOOP;
	END \$\$};
}

my @runs;
for my $sql (
	for_20_s('INSERT INTO t VALUES (snowid_next())'),
	for_20_s('INSERT INTO t SELECT snowid_next() FROM generate_series(1, 50)'),
	for_20_s('INSERT INTO t VALUES (snowid_next())', 'COMMIT'))
{
	my %r = (out => '', err => '');
	$r{h} = IPC::Run::start([ 'psql', '-XAtq', '-d', $app, '-c', $sql ],
		'<', \undef, '>', \$r{out}, '2>', \$r{err});
	push @runs, \%r;
}
my $toggles = 0;
my $until = time + 18;
while (time < $until)
{
	psql_as($app, 'UPDATE snowid_config SET worker_id = NULL');
	psql_as($app, 'UPDATE snowid_config SET worker_id = 1');
	$toggles++;
}
$_->{h}->finish for @runs;
diag($_->{err}) for grep { $_->{err} } @runs;

my ($n, $nulls) = split /\|/,
  $node->safe_psql('appdb', 'SELECT count(*), count(*) FILTER (WHERE id IS NULL) FROM t');
is($nulls, '0', "no call of snowid_next() returns NULL ($nulls of $n, the worker id unset $toggles times)");

$node->stop;
done_testing();
