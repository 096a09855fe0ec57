# The raise of a copy's generator when its worker id is set
# (snowid_sql_config_floor(), an AFTER trigger) reads the session setting
# snowid_sql.copy_drift_ms that the BEFORE trigger snowid_config_stamp set
# for the statement.  An UPDATE's RETURNING runs between the two: the
# owner's UPDATE snowid_config SET worker_id = N RETURNING
# set_config('snowid_sql.copy_drift_ms', '', true) leaves the floor trigger
# nothing to read, and the copy starts at its clock, below the ids its
# source issued ahead of it.  doc/security.md: "the floor trigger reads no
# more of the session setting snowid_sql.copy_drift_ms than the row's
# max_drift_ms.  The settings a session may set count for nothing where
# they would loosen a check".
#
# - The source (layout 0/6/2, worker id 5, max_drift_ms 10000) issues a
#   batch of 20,000 ids, 5 s ahead of its clock; the owner dumps it and
#   restores it into a new database, and the source is dropped.
# - The owner sets the copy's worker id to its gone source's with that
#   RETURNING, and the copy issues 20,000 ids at once: none may equal a
#   restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('copy_drift_returning');
my $node = SnowidSqlEdition::new_server('copy_drift_returning', ['app'], ['source']);
my %as = map { $_ => app_url($node, $_) } qw(source copy);

my ($rc, $out, $err) = psql_as($as{source}, SnowidSqlEdition::batch_ahead_sql(5, 10000, 'copy', 20000));
is($out, '20000', 'the source issues a batch of 20,000 ids, ahead of its clock') or diag($err);
SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps it');

($rc, $out, $err) = psql_as($as{copy}, q{
	UPDATE snowid_config SET worker_id = 5 RETURNING set_config('snowid_sql.copy_drift_ms', '', true)});
is($rc, 0, 'the owner sets its gone source\'s worker id, with a RETURNING') or diag($err);
($rc, $out, $err) = psql_as($as{copy}, SnowidSqlEdition::marked_batch_sql('copy', 20000));
my ($twice) = SnowidSqlEdition::marked_twice($node, 'copy', 'copy');
is($twice, '0', "no id of the copy equals a restored one ($twice of " . ($out || 0) . ')');

$node->stop;
done_testing();
