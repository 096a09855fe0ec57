# test/t/sql-edition/restore_row_skipped_fresh_install.pl
#
# The documented restore (doc/managed.md, "Dumps and restores"): into "a
# database that has no worker id (a new one: CREATE EXTENSION snowid_sql)",
# "pg_restore in any form: [...] a superuser's --disable-triggers or
# session_replication_role = replica", then the owner sets the worker id,
# which "raises the generator past this server's clock plus max_drift_ms
# and past the largest id of the new node its tables hold".  Both of those
# superuser's restores skip the dump's row of snowid_config (the data-only
# COPY fails on the row CREATE EXTENSION made, 23505, and pg_restore goes
# on; as a replica the trigger drops it), so the new database's row stays
# as CREATE EXTENSION made it, never stamped, and its first worker id is
# "a first install's first worker id" (snowid_sql_config_stamp(): drift 0),
# raised past the tables alone: ids the source handed out ahead of its
# clock, within max_drift_ms, come again.  (The dump's layout, epoch and
# bounds are lost with the row: the owner set them first, as the guard's
# hint says, "set them to the dump's before restoring its tables".)
#
# So do a dump of the application's schema (pg_dump -n public, where the
# edition's functions live: pg_dump -n dumps no extension) and pg_restore
# -t of the application's table, and a dump that leaves the edition's data
# out (pg_dump --exclude-table-data=snowid_sql_private.*).
#
# - One server.  source: layout 0/6/1 (2 ids a millisecond), max_drift_ms
#   60000, worker id 5; 10 rows in orders, then a batch of 100,000 ids
#   (50 s ahead of the clock) handed to a client (kept by the test, in no
#   table).  Dumped whole, data-only and -n public by its owner, and
#   stopped.
# - data: a new install given the dump's layout and max_drift_ms, and the
#   table orders; the superuser restores the data-only dump with
#   --disable-triggers.
#   replica: the same, the whole dump restored with
#   PGOPTIONS=-c session_replication_role=replica.  schema: the -n public
#   dump restored by the owner.  onetable: the owner's pg_restore --data-only
#   -t orders of the whole dump.  nodata: the dump without the edition's
#   data restored by the owner.  owner: the whole dump restored by the
#   owner (this holds).
# - In each, the owner sets worker id 5 and takes a batch of 2,000: its
#   first id lies past the last the source handed out, and none equals one.
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): with a batch of 36,000
# (9 s ahead) the batch after repeated 31,358 (data) and 30,626 (replica)
# of them (15: 32,026 and 30,786); as now, data, replica, schema and
# onetable each start below the last id handed out, 2,000 of 2,000 again
# (owner: 0), on 19 and 15; nodata the same on 19.  (restore_row_skipped_superuser restores into databases whose
# worker id was set first, stamped here, which the rule raises in full.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_row_skipped_fresh_install');
my @targets = qw(data replica schema onetable nodata owner);
my $node = SnowidSqlEdition::new_server('restore_row_skipped_fresh_install', ['app'], [ 'source', @targets ]);
my $layout = 'datacenter_bits = 0, worker_bits = 6, sequence_bits = 1, max_drift_ms = 60000';

SnowidSqlEdition::install($node, $_, "UPDATE snowid_config SET $layout") for @targets;
# (a data-only restore, and pg_restore -t, go into the tables the
# application made)
$node->safe_psql($_, 'CREATE TABLE orders (id bigint DEFAULT snowid_next(), n int); ALTER TABLE orders OWNER TO app')
  for qw(data onetable);

my ($rc, $out, $err) = psql_as(app_url($node, 'source'), qq{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET $layout, worker_id = 5;
	CREATE TABLE orders (id bigint DEFAULT snowid_next(), n int);
	INSERT INTO orders (n) SELECT g FROM generate_series(1, 10) g;
	SELECT snowid_next_batch(100000)});
my %handed = map { $_ => 1 } split /\n/, $out;
my $largest = (sort { $b <=> $a } keys %handed)[0];
is(scalar(keys %handed), 100000, 'the source hands a batch of 100,000 ids to a client') or diag($err);
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/whole.dump");
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/data.dump", '--data-only');
# (the schema of the edition's functions, public: pg_dump -n dumps no
# extension, nor its row)
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/schema.dump", '-n', 'public');
# (the edition's own data left out, as of any extension's tables)
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/nodata.dump", '--exclude-table-data=snowid_sql_private.*');

($rc, $err) = SnowidSqlEdition::restore_into($node->connstr('data'), "$dir/data.dump", '--disable-triggers');
note("data: pg_restore --data-only --disable-triggers: exit code $rc: $err");
{
	local $ENV{PGOPTIONS} = '-c session_replication_role=replica';
	($rc, $err) = SnowidSqlEdition::restore_into($node->connstr('replica'), "$dir/whole.dump");
}
note("replica: pg_restore with session_replication_role = replica: exit code $rc: $err");
($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'schema'), "$dir/schema.dump");
note("schema: pg_restore of pg_dump -n public: exit code $rc: $err");
($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'onetable'), "$dir/whole.dump", '--data-only', '-t', 'orders');
note("onetable: pg_restore --data-only -t orders: exit code $rc: $err");
($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'nodata'), "$dir/nodata.dump");
note("nodata: pg_restore of pg_dump --exclude-table-data=snowid_sql_private.*: exit code $rc: $err");
($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'owner'), "$dir/whole.dump", '--exit-on-error');
is($rc, 0, 'owner: the owner restores the whole dump') or diag($err);

for my $db (@targets)
{
	is($node->safe_psql($db, 'SELECT count(*) FROM orders'), '10', "$db: the restore brought the source's rows");
	($rc, $out, $err) = psql_as(app_url($node, $db), 'UPDATE snowid_config SET worker_id = 5');
	diag($err) if $rc;
	($rc, $out, $err) = psql_as(app_url($node, $db), 'SELECT snowid_next_batch(2000)');
	my @got = split /\n/, $out;
	is(scalar(@got), 2000, "$db: the restore over, the owner sets the gone source's worker id and takes a batch")
	  or diag($err);
	cmp_ok($got[0], '>', $largest, "$db: its first id lies past the last the source handed out");
	my $twice = grep { $handed{$_} } @got;
	is($twice, 0, "$db: no id equals one the source handed out ($twice of " . scalar(@got) . ')');
}

$node->stop;
done_testing();
