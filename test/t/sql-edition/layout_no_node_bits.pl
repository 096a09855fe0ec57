# A layout without datacenter, worker or sequence bits (0/0/0: all 63 bits
# the timestamp), which the trigger of snowid_config and the table's
# constraint accept ("the timestamp keeps at least 39 bits", as the C
# edition's settings check), breaks the edition: snowid_sql_max_ms()
# computes (1::bigint << 63) - 1, which overflows, so the trigger that
# makes snowid_sql_fixed() anew fails the owner's UPDATE with PostgreSQL's
# own "bigint out of range" (22003), no message of the edition's.
#
# - The owner sets datacenter_bits, worker_bits and sequence_bits to 0 and
#   worker id 0 on a fresh install: it should be taken, and snowid_next()
#   issue, or be refused with the edition's message.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('layout_no_node_bits', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 0, sequence_bits = 0, worker_id = 0;
	SELECT count(snowid_next())});
unlike($err, qr/bigint out of range/, 'the layout 63/0/0/0 fails with no overflow of PostgreSQL\'s');
ok($out eq '1' || $err =~ /ERROR:  22023: invalid snowid configuration/,
	'it issues, or is refused with the edition\'s message') or diag($err);

$node->stop;
done_testing();
