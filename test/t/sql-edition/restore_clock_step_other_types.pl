# A restored dump given its gone source's worker id at once (doc/managed.md,
# "The configuration"): setting it raises the generator "past the largest
# id its tables hold (in a column whose default takes ids), by that id's
# own time", which 1.4's fixes added for a source whose clock stepped back
# (restore_after_clock_step).  But snowid_sql_largest_held() reads only
# bigint columns: a column whose default takes ids and is of another type
# (numeric DEFAULT snowid_next(), text DEFAULT snowid_serial('INV-'), or a
# bigint of a domain over a domain whose default takes ids, each of which
# snowid_sql_ids_held() counts as holding ids) is skipped, and the raise
# counts max_drift_ms alone again.
#
# - One server (one clock), the source database issuing into a numeric
#   column, a text column of serials and a column of a domain over a
#   domain over bigint (DEFAULT snowid_next()) for 12 s with the clock 10 s fast,
#   then the clock stepped back to the right time (NTP): the source fails,
#   as it should.
# - Its dump restored into a new database of the same server, the source
#   dropped, the copy given its worker id; the copy issues into both
#   until its clock has passed the source's last id.
# - No id (or serial) of the copy may equal one of the source's restored
#   ones.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the source issued 83,960
# ids into each table; of the copy's 18,576, 832 ids of the numeric column
# and 830 serials equal restored ones (a later run with the domain: 367,
# 366 and 369 of 25,343; on 18: 4,697 and 4,693 of 97,160, and with the
# domain 748, 746 and 750 of 46,554).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('restore_clock_step_other_types');
my $node = SnowidSqlEdition::fast_server('restore_clock_step_other_types', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE TABLE t (id numeric DEFAULT snowid_next(), copy boolean DEFAULT false);
	CREATE TABLE s (serial text DEFAULT snowid_serial('INV-'), copy boolean DEFAULT false);
	CREATE DOMAIN snowid_key AS bigint DEFAULT snowid_next();
	CREATE DOMAIN order_id AS snowid_key;
	CREATE TABLE d (id order_id, copy boolean DEFAULT false);},
	'INSERT INTO t DEFAULT VALUES; INSERT INTO s DEFAULT VALUES; INSERT INTO d DEFAULT VALUES;', 't',
	' into each table');

SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
my ($rc, $out, $err) = psql_as($node->connstr('copy') . ' user=app', "UPDATE snowid_config SET worker_id = 5;\n"
	  . SnowidSqlEdition::past_restored_sql('t',
		'INSERT INTO t (copy) VALUES (true); INSERT INTO s (copy) VALUES (true); INSERT INTO d (copy) VALUES (true);',
		't WHERE copy'));
cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out ids into each") or diag($err);

my ($n, $twice, $serials, $domain) = split /\|/, $node->safe_psql('copy', q{
	SELECT (SELECT count(*) FROM t WHERE copy),
		   (SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.copy AND NOT b.copy),
		   (SELECT count(*) FROM s a JOIN s b ON a.serial = b.serial AND a.copy AND NOT b.copy),
		   (SELECT count(*) FROM d a JOIN d b ON a.id = b.id AND a.copy AND NOT b.copy)});
is($twice, '0', "no id of the copy's numeric column equals a restored one ($twice of $n)");
is($serials, '0', "no serial of the copy equals a restored one ($serials of about $n)");
is($domain, '0', "no id of the copy's column of a domain over a domain equals a restored one ($domain of about $n)");

$node->stop;
done_testing();
