# test/t/sql-edition/copy_drift_lowered_stamp_named.pl
#
# A restored copy's max_drift_ms is what setting its worker id counts
# (config.sql, the invariant: the raise goes past the clock plus the
# larger of the row's max_drift_ms before and after), so its lowering is
# refused until the worker id is set (snowid_sql_config_check(): "max_drift_ms
# of a copy cannot be lowered before its worker id is set").  That check
# applies only where the UPDATE leaves worker_server as it was (NEW.worker_server
# IS NOT DISTINCT FROM OLD.worker_server), and it runs before the stamp
# (triggers fire in the order of their names), which then puts the old stamp
# back where the UPDATE named NULL or this server: so an UPDATE that names
# worker_server (SET worker_server = NULL, or any text) with the lowered
# max_drift_ms is taken, the row keeps its source's stamp, and the worker
# id set next raises past the clock plus 0 ms, beside ids the source
# issued up to its max_drift_ms ahead of the same clock (the assumption
# holds: one server, one clock).
#
# - One server.  source: layout 0/6/1 (2 ids a millisecond), worker id 5,
#   then max_drift_ms 60000 and a batch of 100,000 ids (50 s ahead of the
#   clock) in t.  pg_dump -Fc, and the source is dropped.
# - Three copies restored whole into new databases; the owner of each lowers
#   max_drift_ms to 0: alone (copy_plain, refused: the check holds), or with
#   worker_server = NULL (copy_null) or worker_server = 'elsewhere'
#   (copy_named) named in the same UPDATE, each of which should be refused
#   as the first is.
# - Then the owner sets the gone source's worker id 5 and issues 1,000 ids:
#   none may equal a restored one.
# On fix68l (834477f, snowid_sql 1.4, Debian's 15.20; 1e35e60 on 16beta2
# too): both UPDATEs taken, and 1,000 of 1,000 new ids equal restored ones
# in each of copy_null and copy_named (copy_plain: 0).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('copy_drift_lowered_stamp_named');
my $node = SnowidSqlEdition::new_server('copy_drift_lowered_stamp_named', ['app'], ['source']);

my ($rc, $out, $err) = psql_as(app_url($node, 'source'), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 1, worker_id = 5;
	UPDATE snowid_config SET max_drift_ms = 60000;
	CREATE TABLE t (id bigint, later boolean DEFAULT false);
	INSERT INTO t SELECT snowid_next_batch(100000);
	SELECT count(*) FROM t WHERE snowid_time(id) > clock_timestamp() + interval '20 s'});
cmp_ok($out, '>', 0, "the source issues 100,000 ids, $out of them more than 20 s ahead of the clock")
  or diag($err);
SnowidSqlEdition::dump_to(app_url($node, 'source'), "$dir/source.dump");
$node->safe_psql('postgres', 'DROP DATABASE source');

foreach my $copy ([ 'copy_plain', '' ], [ 'copy_null', 'worker_server = NULL, ' ], [ 'copy_named', q{worker_server = 'elsewhere', } ])
{
	my ($db, $named) = @$copy;

	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, $db), "$dir/source.dump", '--exit-on-error');
	is($rc, 0, "$db: the dump restored whole into a new database") or diag($err);
	($rc, $out, $err) = psql_as(app_url($node, $db),
		"UPDATE snowid_config SET ${named}max_drift_ms = 0");
	like($err, qr/ERROR:  55000: max_drift_ms of a copy cannot be lowered before its worker id is set/,
		"$db: UPDATE snowid_config SET ${named}max_drift_ms = 0 is refused before the worker id is set");
	($rc, $out, $err) = psql_as(app_url($node, $db), q{
	UPDATE snowid_config SET worker_id = 5;
	INSERT INTO t (id, later) SELECT snowid_next_batch(1000), true;
	SELECT count(*) FROM t WHERE later});
	is($out, '1000', "$db: the owner sets the gone source's worker id 5, and the copy issues 1,000 ids")
	  or diag($err);
	my ($twice, $n) = SnowidSqlEdition::marked_twice($node, $db, 'later');
	is($twice, '0', "$db: no id of the copy equals a restored one ($twice of $n)");
}

$node->stop;
done_testing();
