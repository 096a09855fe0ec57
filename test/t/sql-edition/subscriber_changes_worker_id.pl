# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the publisher's clock ran 10 s ahead
# of the subscriber's, a margin the owner adds to max_drift_ms in the same
# UPDATE: doc/managed.md, "The configuration".)
#
# As subscriber_takes_worker_id (a database moved by logical replication,
# its publisher retired, and given the publisher's worker id, which nobody
# holds any more), but the subscriber had a worker id of its own first (it
# issued ids of its own beside the subscription: a server of the fleet
# that takes over a retired one's tables and its node).  1.4's sixth fixes
# raise past the ids of its node the tables hold where the worker id is set
# on a row never stamped ("a logical subscriber given its gone publisher's
# worker id holds its ids", snowid_sql_config_stamp()), and past the
# clock plus max_drift_ms and the ids held where the row was stamped on
# another server (a copy); a row stamped here, whose worker id changes, is
# raised past nothing: the tables hold the publisher's ids, which a
# publisher whose clock stepped back (NTP) left ahead of the clock, and the
# subscriber issues them again.
#
# - The publisher (worker id 5, under the clock preload) issues into t for
#   12 s with the clock 10 s fast, published FOR TABLE t; a second server,
#   the subscriber, installs the edition, is given worker id 6, issues 100
#   ids into t and subscribes to it; once caught up, the publisher's clock
#   steps back (it stops, as it should), the subscription is dropped and
#   the publisher stopped.
# - The subscriber is given worker id 5 and issues into t until its clock
#   has passed the publisher's last id: no id may equal a replicated one.
#   (t's primary key refuses an id again; each refusal is counted, as a
#   row of a negative id.)
# On main (1891eaa, snowid_sql 1.4): on PostgreSQL 15, 2,251 of 199,098 and
# 1,724 of 153,815 of the subscriber's ids equalled replicated ones; on
# 19beta1, 1,357 of 139,127.
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
my ($pub, $sub) = SnowidSqlEdition::publisher_issued_fast('subscriber_changes_worker_id', $clock);

my ($rc, $out, $err) = psql_as($sub->connstr('appdb') . ' user=app', q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 6;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowid_next(), copy boolean DEFAULT false);
	INSERT INTO t SELECT FROM generate_series(1, 100);
	SELECT count(*) FROM t});
is($out, '100', 'the subscriber installs the edition, is given worker id 6 and issues 100 ids into t') or diag($err);
SnowidSqlEdition::subscriber_takes_over($pub, $sub, $clock, 100);

$sub->stop;
done_testing();
