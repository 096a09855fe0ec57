# snowid under Patroni, with etcd: a Patroni cluster of a primary and two
# standbys on loopback (Debian's patroni, a three-member etcd cluster),
# snowid preloaded and its worker id set in Patroni's own configuration
# (postgresql.parameters), the same on every node.  Clients take ids all the
# time through whichever node is the primary (libpq's multi-host connection
# string, target_session_attrs=read-write), and store them, through a
# switchover, a failover by SIGKILL of the primary's postmaster (the old
# primary rejoins through pg_rewind), and a failover to a standby whose
# clock runs 5 s behind the old primary's; synchronous_mode is on.  No id
# repeats, and each primary's ids lie above every id of the primaries
# before it.  The time the clients waited for ids across each event is
# reported (SnowidPatroni.pm runs the scenario; doc/patroni.md shows the
# numbers).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidPatroni;
use SnowidTest;
use Test::More;

my $libfaketime = SnowidPatroni::need_tools();

SnowidPatroni::run_scenario(
	libfaketime => $libfaketime,
	parameters  => {
		'snowid.datacenter_id' => 1,
		'snowid.worker_id'     => 7,
	},
	started => sub {
		my ($primary, @nodes) = @_;

		is($primary->safe_psql(
				'SELECT datacenter_id, worker_id, worker_source FROM snowid_status()'),
			'1|7|config', 'the primary issues under the configured worker id');
		for my $node (@nodes)
		{
			is($node->safe_psql(
					"SELECT current_setting('snowid.worker_id')"), '7',
				$node->name . ' has the worker id from Patroni');
		}
	},
	check => sub {
		my ($primary) = @_;

		is($primary->safe_psql(q{
			SELECT count(*) FROM got, snowid_decode(got.id) d
			WHERE (d.datacenter_id, d.worker_id) <> (1, 7)}), 0,
			'every id carries datacenter 1, worker id 7');
	});

done_testing();
