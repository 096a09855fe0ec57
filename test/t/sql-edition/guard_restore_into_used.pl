# The layout and epoch guard of the SQL edition (snowid_sql_config_check(),
# doc/managed.md "The layout and the epoch") takes any INSERT of the row
# of snowid_config where the row is as a restore, and a restore's update
# reads no table (snowid_sql_ids_held(..., restoring)): the change of the
# epoch that an UPDATE is refused beside a table of ids goes through as
# an INSERT, or as the pg_restore of another database's dump into a
# database that holds ids already.  The page's rule is "the layout and the
# epoch change only while no id made under them may exist where this
# database's ids may meet it", and it refuses on "a column whose default
# takes ids holds one"; here the check can see the ids, and the UPDATE it
# refuses goes through by the other statement.
#
# - The source issues 5,000 ids into a table whose default takes ids
#   (0/6/4, worker id 5); its tables alone are dumped and restored into a
#   used database (CREATE EXTENSION, the layout), then the source is gone
#   and the used database given its worker id (a fresh install's worker
#   id set raises nothing: no server issued with its row).
# - The UPDATE that moves its epoch later (by as much as makes its first
#   ids fall among the source's) is refused, as the page says.
# - The dump of another database of the fleet, whose epoch is that later
#   one, restored into it (pg_restore of the whole dump, as into any used
#   database): should be refused as the UPDATE is (pg_restore reports the
#   error), or else, none of 5,000 new ids should equal a restored one.
# - The same change as an INSERT of the row by hand, the owner's.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('guard_restore_used');
my $refused = qr/55000: snowid layout or epoch cannot change once ids are issued/;

my $node = SnowidSqlEdition::new_server('guard_restore_used', ['app'], [qw(source used other byhand)]);
my %as = map { $_ => app_url($node, $_) } qw(source used other byhand);

my ($rc, $out, $err) = psql_as($as{source}, SnowidSqlEdition::spread_source_sql());
is($out, '5000', 'the source issues 5,000 ids, over 15 s or more') or diag($err);

SnowidSqlEdition::dump_to($as{source}, "$dir/t.dump", '-t', 't');
for my $db (qw(used byhand))
{
	psql_as($as{$db}, 'CREATE EXTENSION snowid_sql; ' . SnowidSqlEdition::layout_sql());
	($rc, $err) = SnowidSqlEdition::restore_into($as{$db}, "$dir/t.dump", '--exit-on-error');
	is($rc, 0, "the source's table restored into $db") or diag($err);
}
$node->safe_psql('postgres', 'DROP DATABASE source');
for my $db (qw(used byhand))
{
	($rc, $out, $err) = psql_as($as{$db}, 'UPDATE snowid_config SET worker_id = 5');
	is($rc, 0, "$db is given its gone source's worker id") or diag($err);
}

# the epoch later by as much as makes the first new ids fall among the
# restored ones (which span 15 s or more)
sub shift_ms
{
	my ($db) = @_;
	return $node->safe_psql(
		$db, q{
		SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
			- floor(extract(epoch FROM (SELECT snowid_time(min(id)) FROM t)) * 1000)::bigint});
}
my $shift = shift_ms('used');
($rc, $out, $err) = psql_as($as{used}, "UPDATE snowid_config SET epoch = epoch + $shift * interval '1 ms'");
like($err, $refused, 'the UPDATE that moves the epoch later beside the restored ids is refused');

# another database of the fleet, of that epoch, dumped whole
($rc, $out, $err) = psql_as($as{other}, 'CREATE EXTENSION snowid_sql; '
	  . SnowidSqlEdition::layout_sql("epoch = epoch + $shift * interval '1 ms', worker_id = 9"));
is($rc, 0, 'another database, of the later epoch') or diag($err);
SnowidSqlEdition::dump_to($as{other}, "$dir/other.dump");
($rc, $err) = SnowidSqlEdition::restore_into($as{used}, "$dir/other.dump");
like($err, qr/snowid layout or epoch cannot change once ids are issued/, "its dump restored into the used database: the epoch's change is refused");

sub new_ids_again
{
	my ($db) = @_;
	my ($rc, $out, $err) = psql_as($as{$db}, q{
		DO $$ BEGIN FOR i IN 5001 .. 10000 LOOP INSERT INTO t (n) VALUES (i); END LOOP; END $$;
		SELECT count(*) FROM t WHERE n > 5000});
	diag($err) if $rc;
	return $node->safe_psql(
		$db, q{
		SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.n <= 5000 AND b.n > 5000});
}

is(new_ids_again('used'), '0', 'after the restore, none of 5,000 new ids equals a restored one');

# the owner's INSERT of the row, where the UPDATE is refused
$shift = shift_ms('byhand');
my $epoch = $node->safe_psql('byhand',
	"SELECT epoch + $shift * interval '1 ms' FROM snowid_config");
($rc, $out, $err) = psql_as($as{byhand}, qq{
	INSERT INTO snowid_config (datacenter_bits, worker_bits, sequence_bits, epoch)
	VALUES (0, 6, 4, '$epoch')});
like($err, $refused, 'the same change as the owner\'s INSERT of the row is refused');
is(new_ids_again('byhand'), '0', 'after the INSERT, none of 5,000 new ids equals a restored one');

$node->stop;
done_testing();
