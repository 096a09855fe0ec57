# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the publisher's clock ran 10 s ahead
# of the subscriber's, a margin the owner adds to max_drift_ms in the same
# UPDATE: doc/managed.md, "The configuration".)
#
# A database moved by logical replication (a blue/green switch, a move to
# another host or major version: the tables subscribed, the application
# switched, the publisher retired) and given its gone publisher's worker
# id, which nobody holds any more: the subscriber's row of snowid_config
# was never stamped (CREATE EXTENSION there; "a replica's apply changes no
# row of the extension's tables"), so setting the worker id raises nothing
# ("A row never stamped (a first install) sets nothing: no server issued
# ids with it", snowid_sql_config_stamp()).  But its tables hold the
# publisher's ids, which a publisher whose clock stepped back (NTP) left
# ahead of the clock: the raise past the largest id the tables hold, which
# a restored dump gets (restore_after_clock_step), and which the layout
# guard counts ("ids ... loaded into them"), is not made, and the
# subscriber issues those ids again.
#
# - The publisher (worker id 5, under the clock preload) issues into t for
#   12 s with the clock 10 s fast, published FOR TABLE t; a second server,
#   the subscriber, installs the edition and subscribes to t; once caught
#   up, the publisher's clock steps back (it stops, as it should), the
#   subscription is dropped and the publisher stopped.
# - The subscriber is given worker id 5 and issues into t until its clock
#   has passed the publisher's last id: no id may equal a replicated one.
#   (t's primary key refuses an id again; each refusal is counted, as a
#   row of a negative id.)
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): the publisher issued
# 400,682 ids; 1,198 of the subscriber's 702,888 equalled replicated ones.
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
my ($pub, $sub) = SnowidSqlEdition::publisher_issued_fast('subscriber_takes_worker_id', $clock);

my ($rc, $out, $err) = psql_as($sub->connstr('appdb') . ' user=app', q{
	CREATE EXTENSION snowid_sql;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowid_next(), copy boolean DEFAULT false);
	SELECT 1});
is($out, '1', 'the subscriber installs the edition and makes t') or diag($err);
SnowidSqlEdition::subscriber_takes_over($pub, $sub, $clock, 0);

$sub->stop;
done_testing();
