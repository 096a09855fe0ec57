# snowid under Patroni with its worker id on lease from Redis: the scenario
# of integrations/patroni.pl (a primary and two standbys under Patroni and etcd;
# clients taking ids throughout a switchover, a failover by SIGKILL with the
# old primary rejoining through pg_rewind, and a failover to a standby whose
# clock runs 5 s behind), with snowid.coordinator_url naming a real
# redis-server and snowid.worker_lease set, the same on every node, in
# Patroni's configuration.  A standby holds no worker id; each primary takes
# one on lease when it is promoted (the old primary's lease may still run,
# parked or unrenewed).  No id repeats, each primary's ids lie above every
# id of the primaries before it, and each primary issues under one worker
# id.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Utils;
use SnowidPatroni;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $libfaketime = SnowidPatroni::need_tools();
if (SnowidRedis->can('need_redis'))
{
	SnowidRedis::need_redis();
}
else
{
	SnowidTest::need_program('redis-server', 'redis-server');
	SnowidTest::need_program('redis-cli',    'redis-tools');
}

my $dc = 2;
my $redis = SnowidRedis->new;

SnowidPatroni::run_scenario(
	libfaketime => $libfaketime,
	parameters  => {
		'snowid.datacenter_id'   => $dc,
		'snowid.coordinator_url' => $redis->url,
		'snowid.worker_lease'    => '10s',
	},
	started => sub {
		my ($primary, @nodes) = @_;

		$primary->safe_psql('SELECT snowid_next()');
		like($primary->safe_psql(
				'SELECT datacenter_id, worker_id, worker_source FROM snowid_status()'),
			qr/^$dc\|\d+\|lease$/, 'the primary issues under a worker id on lease');
		for my $standby (grep { $_ != $primary } @nodes)
		{
			is($standby->safe_psql(
					'SELECT worker_id IS NULL FROM snowid_status()'), 't',
				$standby->name . ' holds no worker id');
		}
	},
	check => sub {
		my ($primary, $terms) = @_;

		is($primary->safe_psql(qq{
			SELECT count(*) FROM got, snowid_decode(got.id) d
			WHERE d.datacenter_id <> $dc}), 0,
			"every id carries datacenter $dc");
		for my $term (@$terms)
		{
			my $ids = join(',', map { $_->[1] } @{ $term->{ids} });
			my $workers = $primary->safe_psql(qq{
				SELECT string_agg(DISTINCT (snowid_decode(id)).worker_id::text, ',')
				FROM unnest('{$ids}'::bigint[]) id});
			my $name = sprintf('timeline %d (%s)', $term->{timeline},
				$term->{node}->name);

			like($workers, qr/^\d+$/, "$name: one worker id, $workers");
		}
		diag("Redis' owners at the end:\n"
			  . $redis->cli('HGETALL', "{snowid:dc:$dc}:owners"));
	});

done_testing();
