# test/t/sql-edition/restore_clock_step_public_ids.pl
#
# A restored dump given its gone source's worker id (doc/managed.md, "Dumps
# and restores": restore, then set the worker id): setting it raises the
# generator past the largest id of its node the tables hold, "in a column
# whose default takes ids, whatever its type", by that id's own time
# (restore_after_clock_step, restore_clock_step_other_types).  A text column
# of public ids (DEFAULT snowid_public(snowid_next()), doc/managed.md
# "Public ids": a short link, an order's reference) is such a column, but
# snowid_sql_largest_held() reads a text only as serials or an id's digits,
# and counts a public id as "no id at all", which "can equal none": it is
# one id, under the key the dump brought along, and an id issued again is
# the same public id again.
#
# - One server (one clock), the source database issuing public ids into t
#   for 12 s with the clock 10 s fast, then the clock stepped back to the
#   right time (NTP): the source fails, as it should.
#   (at, its clock when it made each, says how far its last id lies ahead:
#   reading the public ids back takes longer than the copy has to issue)
# - Its dump (with its key) restored into a new database, the source
#   dropped, the copy given its worker id; the copy issues public ids until
#   its clock has passed the source's last id.
# - No public id of the copy may equal a restored one.
# - The copy's first id (read back from its first public id) lies past the
#   largest restored one, which is what the raise promises, whatever the
#   phases of the two generators (which decide how many ids meet).
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): the source issued
# 63,701 public ids; 4,215 of the copy's 40,494 equal restored ones (its
# first id 6.3 s below the largest restored one in a later run, where 0 of
# 32,517 met).  On 15 (Debian's 15.20): 1,008 of 13,371, and 410 of
# 9,248 with the first id 5.0 s below.
#
# Since fix68i (issue 68) the step reads each public id back with the key
# it names, which takes about 0.4 ms an id (PL/pgSQL's SipHash): with the
# machine loaded, longer than the source's lead, and the copy's clock may
# have passed the source's last id before the step ends.  The copy then
# issues for a second after the step (not only until its clock passes the
# source's last id), so that there is a first id to compare.
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
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), "UPDATE snowid_config SET worker_id = 5;\n"
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
