# A restored dump given its gone source's worker id at once (doc/managed.md,
# "Dumps and restores"): setting it raises the generator past this
# server's clock plus max_drift_ms (the larger of the row's before and
# after), since the source issued ids at most that far ahead of its own
# clock (a batch, or a clock stepped back, runs ahead of it).  That holds
# where this server's clock, when the worker id is set, lies no earlier
# than the source's when it last issued: a source whose clock ran ahead
# and stepped back (NTP) leaves its ids that much further ahead, and the
# owner adds that margin by raising max_drift_ms in the same UPDATE.
#
# - One server (one clock), the source database issuing for 12 s with the
#   clock 10 s fast, then the clock stepped back to the right time (NTP):
#   the source fails, as it should.
# - Its dump restored into a new database of the same server, the source
#   dropped, the copy given its worker id with max_drift_ms raised by those
#   10 s in the same UPDATE; the copy issues until its clock has passed the
#   source's last id.
# - No id of the copy may equal one of the source's restored ids.
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
my $dir = PostgreSQL::Test::Utils::tempdir('restore_after_clock_step');
my $node = SnowidSqlEdition::fast_server('restore_after_clock_step', $clock, 'source');

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source',
	'CREATE TABLE t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);',
	'INSERT INTO t DEFAULT VALUES;', 't', '');

# dumped and restored by the owner, as managed.md says it may
SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');
my ($rc, $out, $err) = psql_as(app_url($node, 'copy'), SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()) . ";\n"
	  . SnowidSqlEdition::past_restored_sql('t', 'INSERT INTO t (copy) VALUES (true);', 't WHERE copy'));
cmp_ok($out, '>', 0, "the copy, given its gone source's worker id, issues $out ids") or diag($err);

my ($twice, $n) = SnowidSqlEdition::marked_twice($node, 'copy', 'copy');
is($twice, '0', "no id of the copy equals a restored one ($twice of $n)");

$node->stop;
done_testing();
