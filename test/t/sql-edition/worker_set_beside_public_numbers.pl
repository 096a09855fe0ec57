# test/t/sql-edition/worker_set_beside_public_numbers.pl
#
# The documented restore (doc/managed.md, "Dumps and restores": restore,
# then set the worker id) of a database that keeps public numbers
# (snowid_scramble(), doc/managed.md "Public ids") in a column whose default
# makes them: CREATE TABLE t (no bigint DEFAULT snowid_scramble(snowid_next())).
# Setting the worker id reads every column whose default calls a function
# of the edition as ids (snowid_sql_largest_held()); a public number is a
# permutation of the id, spread over the whole of bigint, so about one in
# 1,024 (the node's 10 bits, default layout) reads as an id of the
# database's own node, most of them decades ahead of the clock: the owner's
# UPDATE snowid_config SET worker_id = 5 is refused ("the ids this database
# holds lie more than an hour ahead of the clock", naming a time in 2040 to
# 2080), and stays so until then.  The same refusal meets the source itself
# at any change of its worker id.
#
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): of 3,000 public numbers
# 6 read as ids of worker id 5, the largest made in 2072; the source's own
# UPDATE ... SET worker_id = 6 and = 5 were refused; here 20,000 are issued
# (about 15 such numbers, 13 in a run), so that the refusal is all but
# certain.  The same on 15 (Debian's 15.20).
#
# And under a layout of the operator's (0/6/4), even 100 public numbers
# break the restore itself: the restore of the dump's row sets its layout,
# which the guard allows only where no id the tables hold lies more than
# max_drift_ms ahead of the clock under it (snowid_sql_ids_held() with the
# restore's bound), and public numbers, spread over bigint, lie decades
# ahead: the row is refused (55000, "snowid layout or epoch cannot change
# once ids are issued"), pg_restore goes on, and the new database keeps the
# default layout, its row never stamped.  On main (5c1408b, PostgreSQL 19,
# by hand and here): refused, the restored database at 5/5/12.
#
# Since 1.4's last fixes setting the worker id reads no table, and the
# guard reads none for the restore of the row: both steps are taken beside
# public numbers, which this test asserts.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('worker_set_beside_public_numbers');
my $node = SnowidSqlEdition::new_server('worker_set_beside_public_numbers', ['app'], ['source']);

SnowidSqlEdition::install($node, 'source', q{
	UPDATE snowid_config SET worker_id = 5;
	INSERT INTO snowid_public_keys VALUES ('K1', decode('00112233445566778899aabbccddeeff', 'hex'), 1);
	CREATE TABLE t (no bigint PRIMARY KEY DEFAULT snowid_scramble(snowid_next()), copy boolean DEFAULT false);
	INSERT INTO t SELECT FROM generate_series(1, 20000);});

my $ahead = $node->safe_psql('source', q{
	SELECT count(*) FROM t
	WHERE no >= 0 AND (no >> 12) & 1023 = 5 AND snowid_time(no) > clock_timestamp() + interval '1 hour'});
note("of 20,000 public numbers, $ahead read as ids of worker id 5 more than an hour ahead");

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	UPDATE snowid_config SET worker_id = 5 RETURNING worker_id});
is($out, '5', 'the restore over, the owner sets the worker id beside a column of public numbers')
  or diag($err);

($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	INSERT INTO t (copy) SELECT true FROM generate_series(1, 1000);
	SELECT count(*) FROM t WHERE copy});
is($out, '1000', 'and the copy issues public numbers, none equal to a restored one') or diag($err);

# the dump of a database of another layout
$node->safe_psql('postgres', 'CREATE DATABASE laid OWNER app');
SnowidSqlEdition::install($node, 'laid', SnowidSqlEdition::layout_sql('worker_id = 5') . q{;
	INSERT INTO snowid_public_keys VALUES ('K1', decode('00112233445566778899aabbccddeeff', 'hex'), 1);
	CREATE TABLE t (no bigint PRIMARY KEY DEFAULT snowid_scramble(snowid_next()));
	INSERT INTO t SELECT FROM generate_series(1, 100);});
SnowidSqlEdition::owner_copy($node, 'laid', 'laid_copy', "$dir/laid.dump", 'the owner dumps a database of layout 0/6/4');
is($node->safe_psql('laid_copy', 'SELECT datacenter_bits || \'/\' || worker_bits || \'/\' || sequence_bits FROM snowid_config'),
	'0/6/4', 'the restored database has the layout of its dump');

$node->stop;
done_testing();
