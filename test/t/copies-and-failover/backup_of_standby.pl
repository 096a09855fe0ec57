# A base backup taken from a standby claims under a holder name of its own.
# Backups are commonly taken from a standby (pgBackRest backup-standby,
# Barman).  Primary P, its standby S, a pg_basebackup of S restored as C:
# C used to carry S's instance (the copied mark file asks for a takeover
# already, S having never issued an id, and the takeover gave a new
# instance only to a mark that asked for none), so S and C, promoted on
# the same host name and port (a restore on a rebuilt host), claimed as
# one holder and shared a worker id (87,712 of 300,000 ids measured issued
# by both).  Now every start from a backup or in recovery is a life of its
# own; a standby that restarts gets a new instance too, which claims
# nothing until its promotion.  Run against Redis and, with test/run
# --part coord, a PostgreSQL coordination database (SnowidCoord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidLease;
use SnowidRedis;
use SnowidTest;
use Test::More;

my $dc = 2;
my $coord = SnowidCoord::start();
my $ids = SnowidTest::Ledger->new;

# The instance the mark file of a data directory names
sub instance
{
	my ($node) = @_;
	my ($instance) = slurp_file($node->data_dir . '/snowid_state')
	  =~ / instance=([0-9a-f]+) /;

	return $instance // '';
}

my $p = SnowidLease::start_node($coord, 'p', { 'snowid.datacenter_id' => $dc },
	allows_streaming => 1);
$ids->collect($p, 1000);
my ($wp) = split /\|/, SnowidRedis::worker($p);

# Its standby S, and C, a base backup of S, set up on S's port in a
# socket directory of its own: the same host name and port.
$p->backup('p_base');
my $s = PostgreSQL::Test::Cluster->new('s');
$s->init_from_backup($p, 'p_base', has_streaming => 1);
$s->start;
$ids->collect($p, 1000);
$p->wait_for_catchup($s, 'replay', $p->lsn('insert'));
my $s_instance = instance($s);

# A standby that restarts gets a new instance, and still follows P.
$s->restart;
isnt(instance($s), $s_instance, 'a standby restarted has a new instance');
$ids->collect($p, 1000);
$p->wait_for_catchup($s, 'replay', $p->lsn('insert'));

$s->backup('s_base');
my $c = PostgreSQL::Test::Cluster->new('c', port => $s->port, own_host => 1);
$c->init_from_backup($s, 's_base');
ok(-e $c->data_dir . '/backup_label', 'C starts from a backup label');

# S promoted, then C (a standby of P, as S was, with the standby.signal
# the backup copied): each claims.
SnowidTest::promote($s);
$ids->collect($s, 1000);
$c->start;
SnowidTest::promote($c);
$ids->collect($c, 1000);
is($c->port, $s->port, 'C runs on the port of S');
isnt(instance($c), instance($s), 'C has an instance of its own');
isnt(SnowidRedis::identity($c, $dc), SnowidRedis::identity($s, $dc),
	'and so a holder name of its own');
my ($ws) = split /\|/, SnowidRedis::worker($s);
my ($wc) = split /\|/, SnowidRedis::worker($c);
isnt($ws, $wp, 'S, promoted, claims a worker id other than P\'s');
isnt($wc, $ws, 'C, a backup of S, does not share S\'s worker id');
isnt($wc, $wp, 'nor P\'s');

# Both issue ids at once: none repeats.
for (1 .. 3)
{
	$ids->collect($_, 1000) for $p, $s, $c;
}
$ids->no_duplicates;

# A restart keeps each one's name and worker id (no signal file left).
SnowidLease::restart_keeps_worker_ids($coord,
	[ $s, $ws, 'S, restarted, keeps its worker id' ],
	[ $c, $wc, 'C, restarted, keeps its own' ]);
$_->stop for $p, $s, $c;

done_testing();
