# A coordination database for the TAP tests (sql/snowid_coordinator--1.1.sql):
# a PostgreSQL server without snowid, its clock moved with SnowidTest::Clock if
# asked, a database "coord" owned by the role coord_owner, which created the
# extension snowid_coordinator there as a role that is no superuser, and the
# roles the extension's comment grants to: coord_fleet (the servers: claims,
# leases) and coord_admin (free() and the view workers).
package SnowidCoordDb;

use strict;
use warnings;

use Digest::SHA;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;

# The columns of snowid_coordinator.outcome, in order
my @outcome_columns = qw(outcome worker_id floor_ms fence_ms lease_ms holder generation
  counter);

# Starts the server (under a SnowidTest::Clock if clock gives one; with
# allows_streaming => 1 for a standby; of the installation install_path if
# given, PostgreSQL::Test::Cluster's), creates the roles and the database,
# and the extension in it as coord_owner (of version if given, else the
# default).
sub new
{
	my ($class, $name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		$opt{install_path} ? (install_path => $opt{install_path}) : ());

	$node->init(allows_streaming => $opt{allows_streaming} ? 1 : 0);
	$node->append_conf('postgresql.conf', "max_connections = 40\n");
	if ($opt{clock})
	{
		$opt{clock}->start_node($node);
	}
	else
	{
		$node->start;
	}
	$node->safe_psql('postgres', q{
		CREATE ROLE coord_owner LOGIN;
		CREATE ROLE coord_fleet LOGIN;
		CREATE ROLE coord_admin LOGIN;
		CREATE DATABASE coord OWNER coord_owner;
	});
	my $self = bless { node => $node }, $class;
	$self->sql('coord_owner', 'CREATE EXTENSION snowid_coordinator'
		  . ($opt{version} ? " VERSION '$opt{version}'" : ''));
	return $self;
}

sub node { return $_[0]->{node}; }

# The grants of the comment at the top of the extension's script, made by
# its owner.
sub grant
{
	my ($self) = @_;

	$self->sql('coord_owner', q{
		GRANT USAGE ON SCHEMA snowid_coordinator TO coord_fleet;
		GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA snowid_coordinator
			TO coord_fleet;
		GRANT EXECUTE ON FUNCTION
			snowid_coordinator.run_claim(integer, text, text, integer, integer, integer, bigint, bigint, boolean, bigint, bigint, bigint, bigint),
			snowid_coordinator.run_lease_claim(integer, text, text, integer, bigint, bigint, bigint, integer, bigint, text, bigint, bigint, bigint, bigint),
			snowid_coordinator.run_lease_renew(integer, text, text, integer, bigint, bigint, text, bigint, bigint, bigint, bigint, bigint),
			snowid_coordinator.run_lease_release(integer, text, text, integer, bigint, boolean, text),
			snowid_coordinator.run_claim_4(integer, text, text, integer, bigint, boolean, integer),
			snowid_coordinator.run_extend_4(integer, text, text, integer, integer, bigint, bigint, boolean),
			snowid_coordinator.run_release_4(integer, text, text, integer, integer)
			TO coord_fleet;
		GRANT USAGE ON SCHEMA snowid_coordinator TO coord_admin;
		GRANT EXECUTE ON FUNCTION snowid_coordinator.free(integer, integer, bigint),
			snowid_coordinator.lower_fence(integer, integer, bigint),
			snowid_coordinator.reset_secret(integer, text),
			snowid_coordinator.new_datacenter(integer),
			snowid_coordinator.end_quiet(integer),
			snowid_coordinator.free_4(integer, integer)
			TO coord_admin;
		GRANT SELECT ON snowid_coordinator.workers TO coord_admin;
	});
	# the holder secrets, parameters of the fleet's calls, kept out of the
	# coordination server's log (doc/coordinator.md, "Holder secrets")
	$self->sql(undef,
		'ALTER ROLE coord_fleet SET log_parameter_max_length = 0');
	return;
}

# The GRANT statements that the head comment (the first comment) of an
# extension's script gives, for the roles it names (snowid_fleet,
# snowid_admin), as one string: those of the release that made the script.
sub head_grants
{
	my ($file) = @_;
	my ($head) = PostgreSQL::Test::Utils::slurp_file($file) =~ m{/\*(.*?)\*/}s;
	my $text = join "\n", map { s/^ \*\s?//r } split /\n/, $head // '';

	return join "\n", $text =~ /^\s*(GRANT\b.*?;)/msg;
}

# A connection string to the database as a role
sub connstr
{
	my ($self, $role) = @_;

	return $self->{node}->connstr('coord') . " user=$role";
}

# Runs sql as a role (the superuser that ran initdb if undef); dies on an
# error, returns psql's output.
sub sql
{
	my ($self, $role, $sql) = @_;

	return $self->{node}->safe_psql('coord', $sql,
		defined $role ? (extra_params => [ '-U', $role ]) : ());
}

# Runs sql as a role; returns its SQLSTATE and message (psql's verbose
# form: "22023: invalid ...") if it fails, else undef.
sub sql_error
{
	my ($self, $role, $sql) = @_;
	my ($ret, $out, $err) = $self->{node}->psql('coord', $sql,
		extra_params => [
			'-v', 'VERBOSITY=verbose', defined $role ? ('-U', $role) : ()
		]);

	return undef if $ret == 0;
	my ($state_msg) = $err =~ /ERROR:  (\w{5}: [^\n]*)/;
	return $state_msg // $err;
}

# The holder secret the calls below send for an identity (as SQL text:
# 'a' or NULL): one of its own, 64 hex digits
sub secret_of
{
	my ($identity) = @_;

	return Digest::SHA::sha256_hex("holder secret of $identity");
}

# The SQL of a call of the extension written as a function call
# ("claim(1, 'a', -1, 3, -1, 0)"): the servers' calls become a CALL of
# their procedure, the identity's holder secret (or the one given, as SQL)
# added after the identity; others (free, reset_secret) a SELECT.
sub call_sql
{
	my ($self, $call, $secret) = @_;
	my ($name, $dc, $identity, $rest) =
	  $call =~ /^((?:lease_)?(?:claim|renew|release))\(([^,]*), ((?:E?'(?:[^']|'')*'|\w+\([^)]*\)|NULL)), (.*)\)$/s
	  or return "SELECT * FROM snowid_coordinator.$call";

	$secret //= "'" . secret_of($identity) . "'";
	return "CALL snowid_coordinator.$name($dc, $identity, $secret, $rest)";
}

# Calls a function of the extension ("claim(1, 'a', -1, 3, -1, 0)", see
# call_sql) as a role (coord_fleet unless given), with the identity's
# holder secret unless another is given (as SQL); returns its outcome as a
# hash.
sub call
{
	my ($self, $call, $role, $secret) = @_;
	my $out = $self->sql($role // 'coord_fleet',
		$self->call_sql($call, $secret));
	my @values = split /\|/, $out, -1;

	die "snowid_coordinator.$call returned '$out'"
	  unless @values == @outcome_columns;
	my %o;
	@o{@outcome_columns} = map { $_ eq '' ? undef : $_ } @values;
	return \%o;
}

# The coordination server's clock, Unix ms
sub now_ms
{
	my ($self) = @_;

	return $self->sql(undef,
		'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint');
}

# A worker id's row as a hash (holder, on_lease, lease_expires_ms,
# lease_floor_ms, lease_token, fence_ms), or undef if it has none.
sub row
{
	my ($self, $dc, $wid) = @_;
	my @cols = qw(holder on_lease lease_expires_ms lease_floor_ms lease_token
	  fence_ms);
	my $out = $self->sql(undef,
		'SELECT ' . join(', ', @cols) . ' FROM snowid_coordinator.worker_ids'
		  . " WHERE datacenter = $dc AND worker_id = $wid");

	return undef if $out eq '';
	my %r;
	@r{@cols} = map { $_ eq '' ? undef : $_ } split /\|/, $out, -1;
	return \%r;
}

# Every row of both tables as one string, to check that nothing changed
sub state
{
	my ($self) = @_;

	return $self->sql(undef, q{
		SELECT string_agg(format('%s', d), ';' ORDER BY d.datacenter)
		FROM snowid_coordinator.datacenters d
		UNION ALL
		SELECT string_agg(format('%s xmin=%s', w, w.xmin), ';'
						  ORDER BY w.datacenter, w.worker_id)
		FROM snowid_coordinator.worker_ids w});
}

# Starts psql in the background as a role, running sql from a file
# statement by statement (each in a transaction of its own), after waiting
# at the gate (advisory lock 1 of the database) if one is given; see
# SnowidTest::Session.
sub start_psql
{
	my ($self, $role, $sql, $gate) = @_;
	my ($out, $err) = ('', '');
	my $file = sprintf('%s/session%d.sql',
		$self->{dir} //= PostgreSQL::Test::Utils::tempdir('coord'),
		++$self->{sessions});

	PostgreSQL::Test::Utils::append_to_file($file,
		($gate ? "SELECT pg_advisory_lock_shared(1);\n"
			  . "SELECT pg_advisory_unlock_shared(1);\n" : '')
		  . $sql);
	my $handle = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v',
			'VERBOSITY=verbose', '-d', $self->connstr($role), '-f', $file
		],
		'<', \undef, '>', \$out, '2>', \$err);

	return bless {
		handle => $handle,
		out => \$out,
		err => \$err,
		node => $self->{node},
		db => 'coord'
	}, 'SnowidTest::Session';
}

# Closes the gate: a session holds advisory lock 1 of the database, behind
# which the sessions started with a gate wait.  Returns that session.
sub close_gate
{
	my ($self) = @_;
	my $session = $self->{node}->background_psql('coord');

	$session->query_safe('SELECT pg_advisory_lock(1)');
	return $session;
}

# Waits until n sessions wait at the gate, then opens it.
sub open_gate
{
	my ($self, $session, $n) = @_;

	$self->{node}->poll_query_until('coord', qq{
		SELECT count(*) = $n FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted})
	  or die 'sessions did not reach the gate';
	$session->query_safe('SELECT pg_advisory_unlock(1)');
	$session->quit;
	return;
}

1;
