# Attack on the SQL edition 1.2 (claim mode, a CREATE DATABASE ... TEMPLATE
# copy): the copy keeps its source's snowid_claimed, holder and sequences.
# Its holder is stamped with the source's server (snowid_holder.server,
# which names the source's snowid_position), so the table path finds no
# claim there and the copy's first id claims anew; and the common path
# takes no position while snowid_sql_fixed() names the source's
# snowid_position.  But any change of the copy's snowid_config (here its
# owner raises max_wait_ms) makes snowid_sql_fixed() anew with the copy's
# own snowid_position and adopts the generation; the common path then
# reads the source's claim from snowid_claimed, and checks neither the
# holder nor the claim's start (snowid_sql_claimed_run, which the copy
# took from its source too): the copy issues with the worker id its source
# holds, beside it.
#
# Expected: the copy issues no id with the source's worker id (it claims
# one of its own), so no id is issued by both.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

my ($node, $app, $clerk) = SnowidSqlEdition::claim_server('sqla', $conninfo, $password);
my $w = SnowidSqlEdition::claim_when_quiet_ends($clerk);
like($w, qr/^\d+$/, "appdb claims worker id $w");

# an operator copies appdb (a test database, say) while it is idle
$node->safe_psql('postgres', 'CREATE DATABASE copydb TEMPLATE appdb OWNER app');
my $copy_app = $node->connstr('copydb') . ' user=app';
my $copy_clerk = $node->connstr('copydb') . ' user=clerk';

# the copy's owner changes its configuration before its first id
my ($rc, $out, $err) = psql_as($copy_app, 'UPDATE snowid_config SET max_wait_ms = 3000');
is($rc, 0, 'the copy\'s owner raises max_wait_ms') or diag($err);

# both issue at once, in bursts of 1.5 s until an id comes twice (at most 5)
my $took = SnowidSqlEdition::bursts_at_once({ a => $clerk, copy => $copy_clerk }, 1.5, 5);
my $copy_w = $took->{worker}{copy}{$w} // 0;
diag(sprintf('appdb issued %d ids, the copy %d (%d with worker id %s); %d ids by both',
	$took->{n}{a} // 0, $took->{n}{copy} // 0, $copy_w, $w, $took->{both}));
cmp_ok($took->{n}{copy} // 0, '>', 0, 'the copy issues ids (with a worker id it claims)');
is($copy_w, 0, "the copy issues no id with worker id $w, which appdb holds");
is($took->{both}, 0, 'no id is issued by both appdb and the copy');

$node->stop;
done_testing();
