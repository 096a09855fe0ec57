# The layout and epoch guard of the SQL edition counts the ids a database
# may meet, not only its own generator's (issue 68, finding 3): a copy's
# row carries the stamp of the server that issued them.  Under another
# layout or epoch an id's number stands for another time and node, so a
# change of either is refused once ids may exist (doc/managed.md, "The
# configuration").  Up to 1.2 the check read the position alone
# (snowid_position called): a restored copy, whose position is not dumped,
# took any epoch; its owner moved the epoch later, then gave it its gone
# source's worker id, and 200 of 5,000 new ids equalled ids of the
# restored table.
#
# - A dump restored (the row carries its source's stamp): an epoch moved
#   later, by as much as makes the copy's first ids fall among its
#   source's, and another layout, are refused (55000); given its gone
#   source's worker id, none of 5,000 new ids equals a restored one.
# - The dump of a table alone, restored beside a fresh install: the change
#   is taken.  The guard reads no table since 1.4's last fixes (it read
#   the columns a search of the catalog found, and the search was found
#   missing defaults attack after attack): ids loaded into a database whose
#   row came from nowhere else are the owner's to know, as the page says.
# - A CREATE DATABASE ... TEMPLATE copy (its position came along): refused.
# - A fresh install: the layout and epoch change until the first worker id,
#   and with it in one UPDATE; after it, no more, with a hint that says so.
#   (Until issue 68's last fixes a fresh install's first worker id raised
#   nothing, and they changed after it until the first id; but a restore
#   that left the row out, pg_restore -n, looked the same, and its source's
#   ids came again: restore_schema_into_fresh_install.  Every worker id set
#   now raises the generator, which the guard sees.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('layout_guard');
my $refused = qr/55000: snowid layout or epoch cannot change once ids are issued/;

my $node = PostgreSQL::Test::Cluster->new('layout_guard');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app LOGIN;
	CREATE DATABASE source OWNER app;
	CREATE DATABASE restored OWNER app;
});
my %as = map { $_ => $node->connstr($_) . ' user=app' } qw(source restored);

# The source: 16 ids a millisecond (51/0/6/4), so that its ids fill the
# first positions of each millisecond, worker id 5; 5,000 ids one at a
# time, as an application takes them, in a table without a key (so that
# an id that comes again is there to count)
my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4, worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), n int);
	DO $$ BEGIN FOR i IN 1 .. 5000 LOOP INSERT INTO t (n) VALUES (i); END LOOP; END $$;
	SELECT count(*) FROM t});
is($out, '5000', 'the source issues 5,000 ids (51/0/6/4, worker id 5)') or diag($err);
my $dump = "$dir/source.dump";
IPC::Run::run([ 'pg_dump', '-Fc', '-f', $dump, '-d', $as{source} ], '>', \$out, '2>', \$err)
  or diag($err);
IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $as{restored}, $dump ],
	'>', \$out, '2>', \$err);
is($? >> 8, 0, 'its owner dumps it and restores it into another database') or diag($err);
$node->safe_psql('postgres', 'DROP DATABASE source');

# (in a transaction rolled back, where it goes through)
($rc, $out, $err) = psql_as($as{restored},
	'BEGIN; UPDATE snowid_config SET sequence_bits = 6; ROLLBACK');
like($err, $refused, 'the copy\'s layout cannot change');

# The copy's epoch moved later by as much as makes its first ids (raised,
# when the worker id is set, past its clock plus max_drift_ms) fall among
# the first of its source's
($rc, $out, $err) = psql_as($as{restored}, q{
	UPDATE snowid_config
	SET epoch = epoch + (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + max_drift_ms + 2
						 - floor(extract(epoch FROM (SELECT snowid_time(min(id)) FROM t)) * 1000)::bigint)
					   * interval '1 ms'});
like($err, $refused, 'nor its epoch move later');
like($err, qr/DETAIL:  The row comes from another server, which issued ids with it/,
	'the detail says the row comes from a server that issued ids');
($rc, $out, $err) = psql_as($as{restored}, q{
	UPDATE snowid_config SET worker_id = 5;
	INSERT INTO t (n) SELECT g FROM generate_series(5001, 10000) g;
	SELECT count(*) FROM t WHERE n > 5000});
is($out, '5000', 'given its gone source\'s worker id, the copy issues 5,000 ids') or diag($err);
is( $node->safe_psql(
		'restored', q{
	SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.n <= 5000 AND b.n > 5000}),
	'0', 'none of them equals an id of the restored table');

# ---------------------------------------------------------------------------
# Ids the edition's state does not tell
# ---------------------------------------------------------------------------

# The table alone dumped (the extension's row is not in its dump),
# restored where a fresh install waits: the edition has issued nothing and
# its row came from nowhere; the guard reads no table, and takes the change
# (the owner's to know: doc/managed.md, "The layout and the epoch")
$node->safe_psql('postgres', 'CREATE DATABASE tables OWNER app');
my $tables = $node->connstr('tables') . ' user=app';
psql_as($tables, 'CREATE EXTENSION snowid_sql');
IPC::Run::run([ 'pg_dump', '-Fc', '-t', 't', '-f', "$dir/t.dump", '-d', $as{restored} ],
	'>', \$out, '2>', \$err)
  or diag($err);
IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $tables, "$dir/t.dump" ],
	'>', \$out, '2>', \$err);
is($? >> 8, 0, 'the table alone, dumped and restored beside a fresh install') or diag($err);
($rc, $out, $err) = psql_as($tables, q{UPDATE snowid_config SET epoch = epoch + interval '30 s'});
is($rc, 0, 'the epoch of the fresh install changes: the guard reads no table') or diag($err);

# ---------------------------------------------------------------------------
# A copy's position, and a fresh install
# ---------------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE templated TEMPLATE restored OWNER app');
($rc, $out, $err) = psql_as($node->connstr('templated') . ' user=app',
	q{UPDATE snowid_config SET epoch = epoch + interval '30 s'});
like($err, qr/$refused.*\nDETAIL:  This database issued ids/s,
	'a CREATE DATABASE ... TEMPLATE copy, whose position came along, cannot change its epoch');

$node->safe_psql('postgres', 'CREATE DATABASE fresh OWNER app');
my $fresh = $node->connstr('fresh') . ' user=app';
($rc, $out, $err) = psql_as($fresh, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET sequence_bits = 8;
	UPDATE snowid_config SET worker_id = 1, sequence_bits = 10, epoch = '2020-01-01 00:00:00+00';
	SELECT sequence_bits FROM snowid_config});
is($out, '10', 'a fresh install changes its layout and epoch before its first worker id, and with it')
  or diag($err);
($rc, $out, $err) = psql_as($fresh, q{UPDATE snowid_config SET sequence_bits = 12});
like($err, $refused, 'and no more once it is set, which raised the generator');
like($err, qr/HINT:  Set the layout and the epoch before the first worker id, or with it in one UPDATE/,
	'the hint says when they may be set');
($rc, $out, $err) = psql_as($fresh, q{
	SELECT snowid_next();
	UPDATE snowid_config SET sequence_bits = 12});
like($err, $refused, 'nor once it issued one');

$node->stop;
done_testing();
