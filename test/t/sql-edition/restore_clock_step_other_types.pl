# A restored dump given its gone source's worker id at once (doc/managed.md,
# "Dumps and restores"): setting it raises the generator past this
# server's clock plus max_drift_ms, reading no table, so the ids its
# source issued lie below every new one, whatever the type of the column
# that holds them, where this server's clock is no earlier than the
# source's was when it last issued (the owner adds a margin by raising
# max_drift_ms in the same UPDATE).  Before 1.4's last fixes the raise read
# the columns a search of the catalog found, and a numeric column, a text
# column of serials and a domain over a domain were each missed once (832
# and 830 of 18,576 ids came again on 16, its copy's clock behind its
# source's).
#
# - One server (one clock), the source database issuing into a numeric
#   column, a text column of serials and a column of a domain over a
#   domain over bigint (DEFAULT snowid_next()) for 12 s with the clock 10 s
#   fast, then the clock stepped back to the right time (NTP): the source
#   fails, as it should.
# - Its dump restored into a new database of the same server, the source
#   dropped, the copy given its worker id with max_drift_ms raised by those
#   10 s in the same UPDATE; the copy issues into each until its clock has
#   passed the source's last id.
# - No id (or serial) of the copy may equal one of the source's restored
#   ones.
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
my ($rc, $out, $err) = psql_as($node->connstr('copy') . ' user=app', SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()) . ";\n"
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
