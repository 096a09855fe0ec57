# A superuser's data-only restore with --disable-triggers (pg_dump's
# advice for data-only restores with foreign keys) ends with ALTER TABLE
# ... ENABLE TRIGGER ALL on every table it restored, snowid_config among
# them: the triggers the edition enables for replicas (snowid_config_replica,
# which drops a replica's changes of the row, and snowid_config_fix, which
# makes snowid_sql_fixed() anew at every change) then fire only outside
# one.  A logical subscription's apply (a publication FOR ALL TABLES,
# subscribed with copy_data = false after the tables were loaded) then
# writes its publisher's row into the subscriber's, unchecked: the
# publisher's datacenter id, worker id and stamp, while the generator goes
# on under its own.  The owner, finding the worker id gone, sets it again
# (UPDATE snowid_config SET worker_id = 6): that UPDATE compared with the
# row alone, and the subscriber then issued with the publisher's datacenter
# id and the same worker id, the publisher's node, beside it.  And the
# two servers, made from one initdb template, share their system
# identifier and filenodes, as a copy of a server's files does: the
# publisher's stamp named the subscriber, and a call on the slower path
# (which reads the row) composed ids of the publisher's node.  Since, the
# UPDATE and such a call are refused (55000), naming the superuser's step
# and the datacenter id, layout and epoch to put back.
#
# - Two servers; the publisher's owner installs the edition with
#   datacenter id 3 and worker id 6, the subscriber's with datacenter id 0
#   and worker id 6 (two nodes), each with a table sent (id, mine); the
#   superuser restores a data-only dump of the publisher's edition into the
#   subscriber with --disable-triggers, and the owner sets worker id 6
#   again (the documented step).
# - The publisher publishes FOR ALL TABLES, the subscriber subscribes
#   (copy_data = false), the publisher changes its row (max_wait_ms) and
#   the change is applied.
# - The subscriber's owner sets worker id 6 again: refused.  Both issue
#   into sent for 3 s at once (the publisher's rows replicated into the
#   subscriber's sent): no id of the subscriber equals one of the
#   publisher's.
# - The superuser enables the triggers as the hint says; a change of the
#   publisher's row is then dropped; the owner puts the datacenter id back
#   with the worker id.
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): the UPDATE was taken,
# and 10,595 of 129,990 ids of the subscriber equalled the publisher's;
# with the UPDATE refused alone, 1,623 of 428,020 in one run of two.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $file = PostgreSQL::Test::Utils::tempdir('restore_disable_triggers_apply') . '/data.dump';
my $pub = SnowidSqlEdition::new_server('triggers_apply_pub', ['app'], ['appdb'], allows_streaming => 'logical');
my $sub = SnowidSqlEdition::new_server('triggers_apply_sub', ['app'], ['appdb']);
my ($rc, $out, $err);

my $sent = 'CREATE TABLE sent (id bigint, mine boolean DEFAULT false)';

SnowidSqlEdition::install($pub, 'appdb', "UPDATE snowid_config SET datacenter_id = 3, worker_id = 6; $sent");
SnowidSqlEdition::install($sub, 'appdb', "UPDATE snowid_config SET worker_id = 6; $sent");
$pub->command_ok([ 'pg_dump', '-Fc', '--data-only', '-f', $file, '-d', $pub->connstr('appdb') ],
	'the publisher is dumped, data alone');
($rc, $err) = SnowidSqlEdition::restore_into($sub->connstr('appdb'), $file, '--disable-triggers');
note("the superuser restores it with --disable-triggers: exit code $rc: $err");
SnowidSqlEdition::worker_set_after_restore($sub, 'appdb', 0, 6);
note('the triggers of the replica: '
	  . $sub->safe_psql('appdb', q{SELECT string_agg(tgname || ' ' || tgenabled::text, ', ' ORDER BY tgname) FROM pg_trigger
		WHERE tgrelid = 'snowid_sql_private.snowid_config'::regclass AND tgname ~ 'replica|fix'}));

# the publisher's row applied
$pub->safe_psql('appdb', 'CREATE PUBLICATION everything FOR ALL TABLES');
$sub->safe_psql('appdb', 'CREATE SUBSCRIPTION everything CONNECTION \''
	  . ($pub->connstr('appdb') =~ s/'/''/gr) . '\' PUBLICATION everything WITH (copy_data = false)');
$sub->wait_for_subscription_sync($pub, 'everything', 'appdb');
$pub->safe_psql('appdb', 'UPDATE snowid_config SET max_wait_ms = 2001');
$pub->wait_for_catchup('everything');
note('the subscriber\'s row: ' . $sub->safe_psql('appdb', 'SELECT datacenter_id, worker_id, max_wait_ms FROM snowid_config'));

($rc, $out, $err) = psql_as(app_url($sub, 'appdb'), 'UPDATE snowid_config SET worker_id = 6');
like($err,
	qr/ERROR:  55000: snowid_config was changed without its triggers\n(?:.*\n)*HINT:  As a superuser: ALTER TABLE snowid_sql_private\.snowid_config ENABLE REPLICA TRIGGER.* SET datacenter_id = 0,/,
	'the owner\'s UPDATE of the worker id is refused, the hint naming the superuser\'s step and the datacenter id');

# both at once
my %run;
for my $node ($pub, $sub)
{
	my $r = $run{ $node->name } = { out => '', err => '' };
	my $mine = $node == $sub ? 'true' : 'false';

	$r->{h} = IPC::Run::start([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', app_url($node, 'appdb'), '-c', qq{
	DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '3 s' LOOP
			INSERT INTO sent (id, mine) SELECT snowid_next(), $mine FROM generate_series(1, 10);
		END LOOP;
	END \$\$;
	SELECT count(*) FROM sent WHERE mine = $mine} ], '<', \undef, '>', \$r->{out}, '2>', \$r->{err});
}
$_->{h}->finish for values %run;
note(join(', ', map { "$_ issued: $run{$_}{out} $run{$_}{err}" } sort keys %run));
$pub->wait_for_catchup('everything');
my ($twice, $n, $theirs) = SnowidSqlEdition::marked_twice($sub, 'appdb', 'mine', 'sent');
is($twice, '0', "no id of the subscriber's equals one of the publisher's ($twice of $n, beside $theirs)")
  or diag($sub->safe_psql('appdb', q{SELECT a.id, snowid_decode(a.id) FROM sent a JOIN sent b ON a.id = b.id
	AND a.mine AND NOT b.mine ORDER BY a.id LIMIT 3}));

$sub->safe_psql('appdb', 'ALTER TABLE snowid_sql_private.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica,
	ENABLE ALWAYS TRIGGER snowid_config_fix, ENABLE ALWAYS TRIGGER snowid_config_fix_truncate');
$pub->safe_psql('appdb', 'UPDATE snowid_config SET max_wait_ms = 2002');
$pub->wait_for_catchup('everything');
is($sub->safe_psql('appdb', 'SELECT max_wait_ms FROM snowid_config'), '2001',
	'the triggers enabled again, the publisher\'s change is dropped');
($rc, $out, $err) = psql_as(app_url($sub, 'appdb'), 'UPDATE snowid_config SET datacenter_id = 0, worker_id = 6');
is($rc, 0, 'the owner puts the datacenter id back with the worker id') or diag($err);
is($sub->safe_psql('appdb', 'SELECT (snowid_decode(snowid_next())).datacenter_id'), '0',
	'the subscriber issues with its own datacenter id');

$sub->stop;
$pub->stop;
done_testing();
