# Setting a copy's worker id raises its generator past the clock plus
# max_drift_ms (snowid_sql_config_floor(), an AFTER trigger) before any id
# is issued under it (doc/managed.md, "The configuration": "Setting a
# worker id ... raises the generator, so that the next id lies past this
# server's clock plus max_drift_ms").  An UPDATE's RETURNING (and the rest
# of a statement whose WITH holds the UPDATE) runs after the row is
# written and before the AFTER triggers fire: a call there reads the new
# row, stamped here with the worker id, and issues under it from the
# position as it was, at the clock.
#
# - The source (layout 0/6/2, worker id 5, then max_drift_ms 60000)
#   issues a batch of 100,000 ids, from its clock to 25 s ahead of it; the
#   owner dumps it and restores it into a new database, and the source is
#   dropped (all on one server: one clock, within the assumption).
# - The owner sets the copy's worker id to its gone source's, taking 1,000
#   ids (a batch, then one snowid_next()) in the UPDATE's RETURNING: the
#   statement is refused (55000) and changes nothing; set in one statement,
#   then 1,000 ids taken in the next, none may equal a restored one.
# On fix68m (12f1df0, 15.20, 16beta2, 17beta2) the RETURNING issued, and
# 1,000 of 1,000 ids equalled restored ones (attack68k).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('worker_set_returning_call');
my $node = SnowidSqlEdition::new_server('worker_set_returning_call', ['app'], ['source']);
my %as = map { $_ => app_url($node, $_) } qw(source copy);

my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 2, worker_id = 5;
	UPDATE snowid_config SET max_drift_ms = 60000;
	CREATE TABLE t (id bigint, copy boolean DEFAULT false);
	INSERT INTO t SELECT snowid_next_batch(100000);
	SELECT count(*) FROM t});
is($out, '100000', 'the source issues a batch of 100,000 ids, ahead of its clock') or diag($err);
SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps it');

for my $take ('(SELECT array_agg(x) FROM snowid_next_batch(1000) x)', 'ARRAY[snowid_next()]')
{
	($rc, $out, $err) = psql_as($as{copy}, qq{
	WITH s AS (UPDATE snowid_config SET worker_id = 5
			   RETURNING $take AS ids)
	INSERT INTO t (id, copy) SELECT unnest(ids), true FROM s});
	like($err, qr/55000: snowid issues no id in the statement that sets the worker id/,
		"the owner's UPDATE that sets its gone source's worker id, taking ids in its RETURNING ($take), is refused");
	is($node->safe_psql('copy', 'SELECT worker_id IS NULL FROM snowid_config'), 't', 'and changes nothing');
}
($rc, $out, $err) = psql_as($as{copy}, q{
	UPDATE snowid_config SET worker_id = 5;
	INSERT INTO t (id, copy) SELECT snowid_next_batch(1000), true;
	SELECT count(*) FROM t WHERE copy});
is($out, '1000', 'the owner sets it, then takes 1,000 ids in the next statement') or diag($err);
my ($twice) = SnowidSqlEdition::marked_twice($node, 'copy', 'copy');
is($twice, '0', "no id of the copy equals a restored one ($twice of " . ($out || 0) . ')');

$node->stop;
done_testing();
