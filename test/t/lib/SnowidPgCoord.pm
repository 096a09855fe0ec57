# A PostgreSQL coordination database as the store of the lease and
# duplicate TAP tests: the same methods as SnowidRedis offers them
# (new_node, owners, field, free, stop, start, command_calls), over a
# SnowidCoordDb (a server with the extension snowid_coordinator, its roles
# granted as doc/coordinator.md says).  The snowid servers connect as
# coord_fleet over the coordination server's unix socket.  SnowidCoord
# picks this store or Redis.
package SnowidPgCoord;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use SnowidCoordDb;
use SnowidLease;
use SnowidTest;

my $count = 0;

# SnowidPgCoord->new: starts a coordination server.  clock => a
# SnowidTest::Clock moves its clock (see SnowidCoordDb).  standby => 1
# gives it a synchronous standby, which failover() promotes; the URL then
# names both, as doc/coordinator.md says.  base_backup => 1 lets
# base_backup() take one (pg_basebackup needs a WAL sender).
sub new
{
	my ($class, %params) = @_;
	my $name = 'coord' . $count++;
	my $db = SnowidCoordDb->new($name,
		$params{clock} ? (clock => $params{clock}) : (),
		$params{standby} || $params{base_backup} ? (allows_streaming => 1) : ());

	$db->grant;
	# datacenters 0 to 63 marked brand new, as an administrator does before
	# a deployment's first claim (see SnowidRedis::new)
	$db->sql('coord_admin',
		'SELECT count(snowid_coordinator.new_datacenter(d)) FROM generate_series(0, 63) d')
	  if $params{mark_new} // 1;
	$db->node->append_conf('postgresql.conf', "track_functions = 'pl'\n");
	$db->node->reload;
	my $self = bless { db => $db }, $class;
	$self->add_standby("${name}_standby") if $params{standby};
	return $self;
}

# A synchronous standby of the coordination server (new(standby => 1)),
# and the URL of both with target_session_attrs=read-write.  After a
# failover, a new one may take the old primary's port (of the same socket
# directory), which the URL of the servers made before names.
sub add_standby
{
	my ($self, $name, $port) = @_;
	my $primary = $self->node;

	$primary->backup($name);
	my $standby = PostgreSQL::Test::Cluster->new($name,
		defined $port ? (port => $port) : ());
	$standby->init_from_backup($primary, $name, has_streaming => 1);
	# It reconnects soon after each restart of the primary, whose commits
	# wait for it meanwhile.
	$standby->append_conf('postgresql.conf',
		"cluster_name = '$name'\nwal_retrieve_retry_interval = '100ms'\n");
	$standby->start;
	$primary->append_conf('postgresql.conf',
		"synchronous_standby_names = '$name'\nsynchronous_commit = on\n");
	$primary->reload;
	$primary->poll_query_until('postgres',
		q{SELECT sync_state = 'sync' FROM pg_stat_replication})
	  or die 'the standby never became synchronous';
	$self->{standby} = $standby;
	$self->{url} = 'postgresql:///coord?host=' . $primary->host . ','
	  . $standby->host . '&port=' . $primary->port . ',' . $standby->port
	  . '&user=coord_fleet&target_session_attrs=read-write';
	return;
}

# A failover: the primary killed, its synchronous standby promoted, which
# has every claim and fence a snowid server was told of.  The snowid
# servers find it by the URL's second host; this object's node is then the
# new primary (which has no standby).
sub failover
{
	my ($self) = @_;
	my $standby = delete $self->{standby} or die 'no standby to promote';

	$self->node->stop('immediate');
	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the standby was not promoted';
	$self->{db}{node} = $standby;
	return;
}

sub db     { return $_[0]->{db}; }
sub node   { return $_[0]->{db}->node; }
sub source { return 'postgresql'; }

# The setting that names this store on a snowid server
sub setting { return 'snowid.coordinator_url'; }

# The URL snowid servers claim from: the database coord as coord_fleet,
# over the unix socket.
sub url
{
	my ($self) = @_;
	my $node = $self->node;

	return $self->{url} if $self->{url};
	return 'postgresql:///coord?host=' . $node->host . '&port='
	  . $node->port . '&user=coord_fleet';
}

# A PostgreSQL server with snowid preloaded that claims its worker id from
# this database, not started, as SnowidRedis::new_node.
sub new_node
{
	my ($self, $name, $settings, %init) = @_;

	return SnowidTest::new_node($name,
		{ 'snowid.coordinator_url' => $self->url, %$settings }, %init);
}

# Who holds each worker id of datacenter dc: { worker id => identity, or
# "lease <identity>" }, as SnowidRedis::owners.
sub owners
{
	my ($self, $dc) = @_;
	my %owners;

	for (split /\n/, $self->{db}->sql(undef, qq{
		SELECT worker_id, CASE WHEN on_lease THEN 'lease ' ELSE '' END || holder
		FROM snowid_coordinator.worker_ids
		WHERE datacenter = $dc AND holder IS NOT NULL}))
	{
		my ($id, $holder) = split /\|/, $_, 2;
		$owners{$id} = $holder;
	}
	return \%owners;
}

# A worker id's fence ("fences") or lease ("leases": "<expiry> <floor>
# <token>"), as SnowidLease::hget reads them from Redis; undef if none.
sub field
{
	my ($self, $dc, $what, $worker_id) = @_;
	my $row = $self->{db}->row($dc, $worker_id);

	return undef unless defined $row;
	return $row->{fence_ms} > 0 ? $row->{fence_ms} : undef
	  if $what eq 'fences';
	die "no field $what in a coordination database" unless $what eq 'leases';
	return undef unless $row->{on_lease} eq 't';
	return join ' ', @$row{qw(lease_expires_ms lease_floor_ms lease_token)};
}

# An administrator frees worker id of datacenter dc, fenced at the
# coordination server's clock plus margin ms; returns the fence.
sub free
{
	my ($self, $dc, $worker_id, $margin) = @_;

	return $self->{db}
	  ->call("free($dc, $worker_id, $margin)", 'coord_admin')->{fence_ms};
}

# An administrator's mistake: the holder of a worker id removed by hand,
# its fence left as it is (as HDEL of the owners field in Redis).
sub remove_holder
{
	my ($self, $dc, $worker_id) = @_;

	$self->{db}->sql(undef, qq{
		UPDATE snowid_coordinator.worker_ids
		SET holder = NULL, on_lease = false, lease_expires_ms = NULL,
			lease_floor_ms = NULL, lease_token = NULL
		WHERE datacenter = $dc AND worker_id = $worker_id});
	return;
}

# The message of a claim that cannot reach the database, and the commands
# the hints name, as SnowidRedis has them.
sub unreachable
{
	my ($self) = @_;

	return 'could not connect to the coordination database at '
	  . $self->node->host . ':' . $self->node->port . '/coord';
}

sub list_command
{
	my ($self, $dc) = @_;

	return "SELECT * FROM snowid_coordinator.workers WHERE datacenter = $dc";
}

# The command a hint gives to free worker id of datacenter dc, its margin
# a minute plus the server's snowid.max_drift_ms (1000 by default) plus 1.
sub free_command
{
	my ($self, $dc, $worker_id, $max_drift_ms) = @_;
	my $margin = 60000 + ($max_drift_ms // 1000) + 1;

	return "SELECT snowid_coordinator.free($dc, $worker_id, $margin)";
}

# A claim for good of another server: worker id of datacenter dc held by
# identity, made with claim() as that server would have made it when it
# re-asserts its id, declaring the shortest quiet period a server may
# (1101 ms: every quiet period lasts the longest declared, so it lengthens
# none a server declares) and no clock margin of its own (as Redis' HSET of
# the owners field writes no state record).
sub add_holder
{
	my ($self, $dc, $worker_id, $identity) = @_;
	my $now = $self->{db}->now_ms;
	# of the servers' layout (worker ids 0 to 31, or wider for a larger id):
	# the store keeps one layout a datacenter
	my $max = $worker_id > 31 ? $worker_id : 31;
	my $o = $self->{db}->call(
		"claim($dc, '$identity', $worker_id, $max, -1, $now, "
		  . 'quiet_ms => 1101, reassert => true, clock_margin_ms => 0)');

	die "claim() of worker id $worker_id for $identity: $o->{outcome}"
	  unless $o->{outcome} eq 'ok';
	return;
}

# Marks datacenter dc brand new (new_datacenter()), as an administrator
# does before its first claim; refused, which is ignored, if it has a
# record already
sub mark_dc_new
{
	my ($self, $dc) = @_;

	$self->{db}->sql('coord_admin',
		"DO \$\$BEGIN PERFORM snowid_coordinator.new_datacenter($dc); "
		  . 'EXCEPTION WHEN object_not_in_prerequisite_state THEN NULL; END$$');
	return;
}

# The database loses every claim, fence and holder's secret, as one
# restored from a dump taken before any claim, or failed over to a standby that had none.
sub wipe
{
	my ($self) = @_;

	# the datacenters table first, as every call locks it first: no
	# deadlock with the calls of running servers
	$self->{db}->sql(undef, 'BEGIN; LOCK TABLE snowid_coordinator.datacenters,'
		  . ' snowid_coordinator.worker_ids, snowid_coordinator.holders'
		  . ' IN ACCESS EXCLUSIVE MODE; TRUNCATE snowid_coordinator.worker_ids, '
		  . 'snowid_coordinator.holders, snowid_coordinator.datacenters; COMMIT');
	return;
}

# The database as it is now, dumped (pg_dump); restore_backup puts that
# dump back in place of the database, as an administrator restoring a
# backup does: a new database, the extension created anew by the dump.
sub backup
{
	my ($self) = @_;
	my $node = $self->node;

	$self->{dump} = $node->basedir . '/coord.dump';
	PostgreSQL::Test::Utils::system_or_bail('pg_dump', '-Fc', '-f',
		$self->{dump}, '-d', $node->connstr('coord'));
	return;
}

sub restore_backup
{
	my ($self) = @_;
	my $node = $self->node;

	$node->safe_psql('postgres', q{
		DROP DATABASE coord WITH (FORCE);
		CREATE DATABASE coord OWNER coord_owner;
	});
	PostgreSQL::Test::Utils::system_or_bail('pg_restore', '-d',
		$node->connstr('coord'), $self->{dump});
	return;
}

# A copy of the coordination server's files (copy_files: the server
# stopped at once, its data directory copied, started again);
# restore_files puts the copy back in place of its data directory and
# starts it, as an administrator restoring a file-level backup does: crash
# recovery, the same install, system identifier and timeline, an older
# state.  restore_files(before) runs before (a code ref) once the copy is
# ready to go in, just before the server stops: the restore is then a stop,
# a rename and a start, short on a loaded machine too.
sub copy_files
{
	my ($self) = @_;
	my $node = $self->node;

	$self->{files} = $node->basedir . '/coord_files';
	$node->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $self->{files});
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $node->data_dir,
		$self->{files});
	$node->start;
	return;
}

sub restore_files
{
	my ($self, $before) = @_;
	my $node = $self->node;
	my $next = "$self->{files}.next";
	my $old = $node->data_dir . '.old';

	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $next, $old);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $self->{files}, $next);
	$before->() if $before;
	$node->stop('immediate');
	rename($node->data_dir, $old) && rename($next, $node->data_dir)
	  or die "restore_files: cannot put the copy in place: $!";
	$node->start;
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $old);
	return;
}

# A base backup of the coordination server (pg_basebackup, its WAL
# streamed); restore_base_backup puts it in place of the data directory and
# starts it without recovery.signal, as an administrator who forgets the
# file does: crash recovery from its backup_label, the same install,
# system identifier and timeline, an older state.
sub base_backup
{
	my ($self) = @_;

	$self->node->backup('coord_base');
	return;
}

sub restore_base_backup
{
	my ($self) = @_;
	my $node = $self->node;
	my $copy = $node->backup_dir . '/coord_base';

	die 'the base backup has no backup_label' unless -e "$copy/backup_label";
	$node->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $node->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $copy, $node->data_dir);
	unlink map { $node->data_dir . "/$_" } qw(recovery.signal standby.signal);
	$node->start;
	return;
}

# The state record of datacenter dc as far as quiet periods go (the
# forgetting rule): { from, until (the last quiet period, Unix ms), floor
# (every grant that is not a re-assertion starts at or above it), longest
# (quiet_ms), widest (clock margin declared) }; zeros if none
sub quiet_record
{
	my ($self, $dc) = @_;
	my %q;

	@q{qw(from until floor longest widest)} = split /\|/,
	  $self->{db}->sql(undef, qq{
		SELECT coalesce(quiet_from_ms, 0), coalesce(quiet_until_ms, 0),
			forgot_floor_ms, longest_quiet_ms, widest_margin_ms
		FROM snowid_coordinator.datacenters WHERE datacenter = $dc});
	$q{$_} //= 0 for qw(from until floor longest widest);
	return \%q;
}

# Whether datacenter dc is in a quiet period (the forgetting rule) by the
# coordination server's clock
sub in_quiet
{
	my ($self, $dc) = @_;

	return $self->{db}->sql(undef, qq{
		SELECT coalesce(bool_or(quiet_until_ms >
			floor(extract(epoch FROM clock_timestamp()) * 1000)), false)
		FROM snowid_coordinator.datacenters WHERE datacenter = $dc}) eq 't';
}

# A hung database: every process of its server stopped (SIGSTOP), so that
# it accepts connections and answers nothing until thaw.
sub freeze
{
	my ($self) = @_;

	$self->{frozen} = SnowidLease::freeze($self->node);
	return;
}

sub thaw
{
	my ($self) = @_;

	SnowidLease::thaw(delete $self->{frozen} // []);
	return;
}

# What 066 and 085 ask of either store: the connections of snowid servers
# open now (as coord_fleet), the calls held until release_writes (a
# session holding the datacenters table, which every call locks first), a
# field of a worker id written by hand (as field reads it), and a URL where
# no server listens.
sub clients
{
	my ($self) = @_;

	return $self->{db}->sql(undef, q{
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = 'coord' AND usename = 'coord_fleet'});
}

sub hold_writes
{
	my ($self) = @_;

	$self->{hold} = $self->node->background_psql('coord');
	$self->{hold}->query_safe('BEGIN');
	$self->{hold}->query_safe(
		'LOCK TABLE snowid_coordinator.datacenters IN EXCLUSIVE MODE');
	return 1;
}

sub release_writes
{
	my ($self) = @_;
	my $hold = delete $self->{hold} or die 'no writes held';

	$hold->query_safe('COMMIT');
	$hold->quit;
	return 1;
}

sub set_field
{
	my ($self, $dc, $what, $worker_id, $value) = @_;
	my $set;

	if ($what eq 'fences')
	{
		$set = "fence_ms = $value";
	}
	else
	{
		die "no field $what in a coordination database" unless $what eq 'leases';
		my ($expires, $floor, $token) = split / /, $value;
		$set = "lease_expires_ms = $expires, lease_floor_ms = $floor, "
		  . "lease_token = '$token'";
	}
	$self->{db}->sql(undef, "UPDATE snowid_coordinator.worker_ids SET $set"
		  . " WHERE datacenter = $dc AND worker_id = $worker_id");
	return;
}

sub unreachable_url
{
	return 'postgresql:///coord?host=/nonexistent&port=1&user=coord_fleet';
}

# Calls of the functions of snowid_coordinator since the server started:
# { fcall => calls }, as SnowidRedis::command_calls counts FCALL.
sub command_calls
{
	my ($self) = @_;
	my $calls = $self->{db}->sql(undef, q{
		SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions
		WHERE schemaname = 'snowid_coordinator'
		  AND funcname IN ('claim', 'lease_claim', 'lease_renew',
						   'lease_release', 'free')});

	return { fcall => $calls };
}

sub stop
{
	my ($self, $mode) = @_;

	$self->node->stop($mode // 'fast');
	return;
}

sub start
{
	my ($self) = @_;

	$self->node->start;
	return;
}

1;
