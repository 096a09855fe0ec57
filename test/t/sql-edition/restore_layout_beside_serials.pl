# test/t/sql-edition/restore_layout_beside_serials.pl
#
# The documented restore (doc/managed.md, "Dumps and restores" and "The
# layout and the epoch") of a database whose layout is not the default:
# "The restore of a dump's row (an insert where the row is) brings the
# layout and the epoch its tables' ids were made under [...]: it may set
# them where this database issued nothing, its row came from nowhere else,
# and every id its tables hold lies, under the restored layout and epoch,
# at most the restored max_drift_ms ahead of the clock".  The guard
# compares the restore's bound with bigint columns alone
# (snowid_sql_ids_held()): a text column of serials (DEFAULT
# snowid_serial('INV-'), doc/managed.md's own example of a column whose
# default takes ids) or a numeric column DEFAULT snowid_next() that holds
# any value refuses the restore of the row ("holds values, and is of type
# text, not bigint: they are not compared"), though its ids lie at the
# clock.  pg_restore reports one error and goes on: the restored database
# keeps the default layout and epoch beside ids made under the dump's, and
# its row, never stamped, takes its worker id as a first install's.
#
# - One server; source: layout 0/6/4 (layout_sql), worker id 5, 10
#   serials in inv and 10 ids in amounts (numeric); its owner dumps it and
#   restores it into a new database (owner_copy: pg_restore --exit-on-error,
#   which stops at that error).
# - The restore must pass, the copy have the dump's layout, and, given
#   worker id 5, issue serials of that layout (as long as the restored
#   ones).
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19, by hand and here): the
# row refused (55000, naming inv's column serial), the copy at 5/5/12, its
# serials 25 digits where the restored ones have 22; the same on 15
# (Debian's 15.20).
#
# Since 1.4's last fixes the guard reads no table: the restore of the row
# into a fresh install is taken by its rule (nothing issued here, no stamp
# of elsewhere), beside whatever the tables hold.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('restore_layout_beside_serials');
my $node = SnowidSqlEdition::new_server('restore_layout_beside_serials', ['app'], ['source']);

SnowidSqlEdition::install($node, 'source', SnowidSqlEdition::layout_sql('worker_id = 5') . q{;
	CREATE TABLE inv (serial text DEFAULT snowid_serial('INV-'), copy boolean DEFAULT false);
	INSERT INTO inv SELECT FROM generate_series(1, 10);
	CREATE TABLE amounts (id numeric DEFAULT snowid_next(), copy boolean DEFAULT false);
	INSERT INTO amounts SELECT FROM generate_series(1, 10);});

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps a database of layout 0/6/4');
is($node->safe_psql('copy', q{SELECT datacenter_bits || '/' || worker_bits || '/' || sequence_bits FROM snowid_config}),
	'0/6/4', 'the restored database has the layout of its dump');

my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), 'UPDATE snowid_config SET worker_id = 5');
is($rc, 0, "the restore over, the owner sets the gone source's worker id") or diag($err);
($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	INSERT INTO inv (copy) SELECT true FROM generate_series(1, 10);
	SELECT count(*) FROM inv a JOIN inv b ON length(a.serial) = length(b.serial) AND a.copy AND NOT b.copy});
is($out, '100', "the copy's serials are of the restored ones' layout (as long)") or diag($err);

$node->stop;
done_testing();
