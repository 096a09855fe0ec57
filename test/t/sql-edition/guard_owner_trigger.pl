# The layout and epoch guard of the SQL edition takes the setting
# snowid_sql.restoring as the restore's where it finds it at a trigger
# depth above 1 (snowid_sql_config_check(), since 1.3.0's fixes: test 168
# closed the owner's SET of a statement of its own).  Any trigger is
# deeper than 1: the owner's trigger on a table of its own that sets the
# setting and updates snowid_config makes the guard read no table, and the
# epoch moves beside a table of ids, as the owner's SET did before.  The
# page says "an owner's SET snowid_sql.restoring = on changes nothing".
#
# - The source issues 5,000 ids over 15 s or more (0/6/4, worker id 5);
#   its table alone is restored beside a fresh install, the source gone
#   and its worker id given to the copy.
# - The owner's own trigger sets snowid_sql.restoring and moves the epoch
#   later (by as much as makes the first new ids fall among the
#   restored): should be refused (55000), as the UPDATE alone is; or else
#   none of 5,000 new ids should equal a restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('guard_owner_trigger');
my $refused = qr/55000: snowid layout or epoch cannot change once ids are issued/;

my $node = SnowidSqlEdition::new_server('guard_owner_trigger', ['app'], [qw(source copy)]);
my %as = map { $_ => app_url($node, $_) } qw(source copy);

my ($rc, $out, $err) = psql_as($as{source}, SnowidSqlEdition::spread_source_sql());
is($out, '5000', 'the source issues 5,000 ids, over 15 s or more') or diag($err);

SnowidSqlEdition::dump_to($as{source}, "$dir/t.dump", '-t', 't');
psql_as($as{copy}, 'CREATE EXTENSION snowid_sql; ' . SnowidSqlEdition::layout_sql());
($rc, $err) = SnowidSqlEdition::restore_into($as{copy}, "$dir/t.dump", '--exit-on-error');
is($rc, 0, "the source's table restored beside a fresh install") or diag($err);
$node->safe_psql('postgres', 'DROP DATABASE source');
($rc, $out, $err) = psql_as($as{copy}, 'UPDATE snowid_config SET worker_id = 5');
is($rc, 0, "the copy is given its gone source's worker id") or diag($err);

my $shift_sql = q{
	floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
	- floor(extract(epoch FROM (SELECT snowid_time(min(id)) FROM t)) * 1000)::bigint};
($rc, $out, $err) = psql_as($as{copy}, "BEGIN; UPDATE snowid_config SET epoch = epoch + ($shift_sql) * interval '1 ms'; ROLLBACK");
like($err, $refused, 'the UPDATE alone is refused');

# the owner's trigger on a table of its own
($rc, $out, $err) = psql_as($as{copy}, qq{
	CREATE TABLE k (x int);
	CREATE FUNCTION k_move() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN
		PERFORM set_config('snowid_sql.restoring', 'on', true);
		UPDATE snowid_config SET epoch = epoch + ($shift_sql) * interval '1 ms';
		RETURN NEW;
	END \$\$;
	CREATE TRIGGER k_move BEFORE INSERT ON k FOR EACH ROW EXECUTE FUNCTION k_move();
	INSERT INTO k VALUES (1)});
like($err, $refused, 'the same UPDATE in the owner\'s trigger, after setting snowid_sql.restoring, is refused');

($rc, $out, $err) = psql_as($as{copy}, q{
	DO $$ BEGIN FOR i IN 5001 .. 10000 LOOP INSERT INTO t (n) VALUES (i); END LOOP; END $$;
	SELECT count(*) FROM t WHERE n > 5000});
is($out, '5000', 'the copy issues 5,000 ids') or diag($err);
is( $node->safe_psql(
		'copy', q{
		SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.n <= 5000 AND b.n > 5000}),
	'0',
	'none of them equals a restored id');

$node->stop;
done_testing();
