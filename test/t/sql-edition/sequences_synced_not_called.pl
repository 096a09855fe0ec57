# A subscription that synchronises the generator's sequences (PostgreSQL 19:
# FOR ALL SEQUENCES) sets them to the publisher's values in place, and the
# subscription gone, they keep them: "A generation that carries another
# server's mark is a copy's, and a writer refuses it ... until the owner
# sets the worker id again" (doc/managed.md; snowid_sql_move()).  The mark
# is read with pg_sequence_last_value(), which is NULL for a sequence never
# called: a publisher whose edition never moved its generator (installed,
# no id yet: a new database, the blue of a blue/green switch not yet
# used) sends its sequences not called, the writer skips the check ("IF g
# >> 40 <> 0 AND ..." is NULL), takes the generation as its own, and reads
# the position as the one below its first (-1): the generator starts again
# from the clock, below the ids the subscriber issued ahead of it.
#
# - On every version, the synchronisation done by hand as the superuser
#   (setval(..., false) of snowid_generation and snowid_position, the
#   values a never-called publisher's sequences carry): appdb, worker id
#   5, 4 sequence bits and max_drift_ms 5000, puts a batch of 50,000 ids
#   into t (it runs ahead of the clock), then the sequences are set; it
#   should refuse (the sequences are not its own), or issue above its ids;
#   2,000 ids into t.
# - On 19, the same through a real subscription FOR ALL SEQUENCES of a
#   publisher whose edition never issued, dropped once synchronised.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): by hand, 2,000 of
# 2,000 ids equal ids of the batch (which ran 3.0 s ahead of the clock);
# through the subscription, 2,000 of 2,000 too, no call refused.
#
# Since issue 68's redesign (1.4 tells no restore on the call path, and
# snowid_sql_dumped is gone), such sequences fail every call (55000, "the
# sequences of the snowid generator were set back") until the owner sets
# the worker id again, which raises past the clock plus max_drift_ms: the test
# asserts the refusal (by hand), then the 2,000 ids after the owner's step.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sequences_synced_not_called');
$node->init(allows_streaming => 'logical');
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app');
my $app = $node->connstr('appdb') . ' user=app';

# appdb's batch ahead of the clock, then its sequences set by $sync; 2,000
# ids after: (the ids that equal the batch's, the calls' error)
sub ahead_then
{
	my ($target, $db, $url, $sync) = @_;
	my ($rc, $out, $err) = psql_as($url, q{
		CREATE EXTENSION snowid_sql;
		UPDATE snowid_config SET worker_id = 5, sequence_bits = 4, max_drift_ms = 5000;
		CREATE TABLE t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);
		INSERT INTO t SELECT id FROM snowid_next_batch(50000) id;
		SELECT (EXTRACT(epoch FROM snowid_time(max(id)) - clock_timestamp()) * 1000)::int FROM t});
	note("the batch runs $out ms ahead of the clock $err");
	$sync->();
	($rc, $out, $err) = psql_as($url, 'SELECT snowid_next()');
	# (by hand both are set at once; a subscription may not have set the
	# generation yet, and the call then takes the position as it stands)
	if ($db eq 'appdb')
	{
		like($err, qr/55000: the sequences of the snowid generator were set back/,
			'a call after the sequences were set back is refused');
	}
	else
	{
		note("the first call after the subscription's synchronisation: $out $err");
	}
	($rc, $out, $err) = psql_as($url, q{
		UPDATE snowid_config SET worker_id = worker_id;
		INSERT INTO t (id, copy) SELECT snowid_next(), true FROM generate_series(1, 2000)});
	return ($target->safe_psql($db, q{
		SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.copy AND NOT b.copy}), $rc, $err);
}

my ($twice, $rc, $err) = ahead_then($node, 'appdb', $app, sub {
	$node->safe_psql('appdb', q{
		SELECT setval('snowid_sql_private.snowid_generation', 1, false),
			   setval('snowid_sql_private.snowid_position', 0, false)});
});
note("by hand: exit code $rc: $err");
is($twice, '0', "sequences set never called: no id again ($twice of 2000)");

if ($node->pg_version->major >= 19)
{
	my $sub = PostgreSQL::Test::Cluster->new('sequences_synced_not_called_sub');
	$sub->init;
	$sub->start;
	$sub->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE subdb OWNER app');
	$node->safe_psql('postgres', 'CREATE DATABASE blue OWNER app');
	my ($prc, $pout, $perr) = psql_as($node->connstr('blue') . ' user=app', 'CREATE EXTENSION snowid_sql; SELECT 1');
	is($pout, '1', 'the publisher installs the edition, and issues nothing') or diag($perr);
	$node->safe_psql('blue', 'CREATE PUBLICATION seqs FOR ALL SEQUENCES');
	my $pubconn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=blue';
	($twice, $rc, $err) = ahead_then($sub, 'subdb', $sub->connstr('subdb') . ' user=app', sub {
		$sub->safe_psql('subdb', "CREATE SUBSCRIPTION seqs CONNECTION '$pubconn' PUBLICATION seqs");
		$sub->poll_query_until('subdb', q{
			SELECT pg_sequence_last_value('snowid_sql_private.snowid_position') IS NULL})
		  or diag('the subscriber did not take the publisher\'s sequences');
		$sub->safe_psql('subdb', 'DROP SUBSCRIPTION seqs');
	});
	note("through the subscription: exit code $rc: $err");
	is($twice, '0', "synchronised from a publisher that never issued: no id again ($twice of 2000)");
	$sub->stop;
}

$node->stop;
done_testing();
