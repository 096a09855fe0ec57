# test/t/sql-edition/restore_clock_step_public_ids.pl
#
# A restored dump given its gone source's worker id (doc/managed.md, "Dumps
# and restores": restore, then set the worker id): setting it raises the
# generator past this server's clock plus max_drift_ms, reading no table,
# so that the ids its source issued lie below every new one where this
# server's clock is no earlier than the source's was when it last issued
# (the owner adds a margin by raising max_drift_ms in the same UPDATE).  A
# text column of public ids (DEFAULT snowid_public(snowid_next()),
# doc/managed.md "Public ids") holds one id each, under the key the dump
# brought along: an id issued again is the same public id again.  Before
# 1.4's last fixes the raise read the columns a search found, and first
# counted a public id as no id (4,215 of 40,494 came again on 19, the
# copy's clock behind its source's), then read each back (0.4 ms an id).
#
# - One server (one clock), the source database issuing public ids into t
#   for 12 s with the clock 10 s fast, then the clock stepped back to the
#   right time (NTP): the source fails, as it should.
#   (at, its clock when it made each, says how far its last id lies ahead)
# - Its dump (with its key) restored into a new database, the source
#   dropped, the copy given its worker id with max_drift_ms raised by those
#   10 s in the same UPDATE; the copy issues public ids until its clock has
#   passed the source's last id, and for a second more.
# - No public id of the copy may equal a restored one.
# - The copy's first id (read back from its first public id) lies past the
#   largest restored one, whatever the phases of the two generators (which
#   decide how many ids meet).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('restore_clock_step_public_ids');
my $node = SnowidSqlEdition::fast_server('restore_clock_step_public_ids', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	INSERT INTO snowid_public_keys VALUES ('K1', decode('00112233445566778899aabbccddeeff', 'hex'), 1);
	CREATE TABLE t (ref text DEFAULT snowid_public(snowid_next()), copy boolean DEFAULT false,
		at timestamptz DEFAULT clock_timestamp());},
	'INSERT INTO t DEFAULT VALUES;', 't', ' as public ids');

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()) . ";\n"
	  . SnowidSqlEdition::past_restored_sql(
		'(SELECT snowid_from_time(greatest(max(at), clock_timestamp()) + interval \'1 s\') AS id FROM t) r',
		'INSERT INTO t (copy) VALUES (true);', 't WHERE copy'));
cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out public ids") or diag($err);

# the promise itself, whatever the phases of the two generators (which
# decide how many of their ids meet): the copy's first id lies past the
# largest restored one
my ($first, $largest) = split /\|/, $node->safe_psql('copy', q{
	SELECT (SELECT snowid_from_public(ref) FROM t WHERE copy ORDER BY at LIMIT 1),
		   (SELECT max(snowid_from_public(ref)) FROM t WHERE NOT copy)});
cmp_ok($first, '>', $largest,
	"the copy's first id lies past the largest id its restored public ids hold ("
	  . (($largest >> 22) - ($first >> 22)) . ' ms below it if not)');

my ($n, $twice) = split /\|/, $node->safe_psql('copy', q{
	SELECT (SELECT count(*) FROM t WHERE copy),
		   (SELECT count(*) FROM t a JOIN t b ON a.ref = b.ref AND a.copy AND NOT b.copy)});
is($twice, '0', "no public id of the copy equals a restored one ($twice of $n)");

$node->stop;
done_testing();
