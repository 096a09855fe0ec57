# A member of a fleet calling the store's functions by hand, under a holder
# name of its own, for the tests of what the stores refuse: Redis'
# function library (FCALL as the servers' user) or the coordination
# database's procedures (as coord_fleet), with the same numbers; and the
# administrator's functions beside them.  Over a SnowidCoord store.
package SnowidMember;

use strict;
use warnings;

use Digest::SHA;
use IO::Socket::UNIX;
use Test::More ();

# SnowidMember->new($coord, $dc, name): a member of datacenter dc named
# "dc=<dc> host=<name> port=1 sysid=1", with a holder secret of its own
sub new
{
	my ($class, $coord, $dc, $name) = @_;

	return bless {
		coord => $coord,
		dc => $dc,
		pg => $coord->source eq 'postgresql',
		identity => "dc=$dc host=$name port=1 sysid=1",
		secret => Digest::SHA::sha256_hex("holder secret of member $name"),
	}, $class;
}

# SnowidMember->named($coord, $dc, identity): a member calling under an
# identity of its own making, whatever it holds
sub named
{
	my ($class, $coord, $dc, $identity) = @_;
	my $self = $class->new($coord, $dc, 'named');

	$self->{identity} = $identity;
	return $self;
}

sub identity { return $_[0]->{identity}; }

# The keys of the datacenter in Redis
sub keys
{
	my ($self) = @_;
	my $base = "{snowid:dc:$self->{dc}}";

	return map { "$base:$_" } qw(owners leases fences);
}

# The store's clock, Unix ms
sub store_now
{
	my ($self) = @_;

	return $self->{coord}->db->now_ms if $self->{pg};
	my ($s, $us) = split /\n/, $self->{coord}->cli('TIME');
	return $s * 1000 + int($us / 1000);
}

# Everything the store holds of the datacenter, to check that nothing
# changed
sub state
{
	my ($self) = @_;

	return $self->{coord}->db->state if $self->{pg};
	return join ';', map { join ',', $self->{coord}->cli('HGETALL', $_) } $self->keys;
}

# The datacenter's state record: generation and counter
sub record
{
	my ($self) = @_;

	if ($self->{pg})
	{
		return split /\|/, $self->{coord}->db->sql(undef,
			"SELECT generation, counter FROM snowid_coordinator.datacenters WHERE datacenter = $self->{dc}");
	}
	my ($g, $c) = ($self->{coord}->cli('HGET', ($self->keys)[0], 'state') // '')
	  =~ /^(\w+) \S+ \d+ \d+ (\d+)/
	  or return (0, 0);
	return (hex $g, $c);
}

# A call of the member: the function (claim, lease_claim, lease_renew,
# lease_release), its arguments as the coordination database's procedure
# takes them after identity and secret, and the same as the Redis
# library's numbers; a lease function's token.  Returns the refusal
# ("SQLSTATE: message", "SNOWID_... message") or "ok <worker id>
# <generation> <counter>" (a claim) or "ok <worker id>" (the others), or
# for a refusal as an outcome "SNOWID_<OUTCOME> <fence_ms>".
sub call
{
	my ($self, $function, $sql_args, $numbers, $token) = @_;

	if ($self->{pg})
	{
		my $sql = "CALL snowid_coordinator.$function($self->{dc}, '$self->{identity}', "
		  . "'$self->{secret}', $sql_args)";
		my ($ret, $out, $err) = $self->{coord}->node->psql('coord', $sql,
			extra_params => [ '-U', 'coord_fleet', '-v', 'VERBOSITY=verbose' ]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		my ($outcome, $id, $floor, $fence, $lease, $holder, $g, $c) = split /\|/, $out, -1;
		return 'SNOWID_' . uc($outcome) . ' ' . $fence if $outcome ne 'ok';
		return join ' ', grep { $_ ne '' } 'ok', $id, $g // '', $c // '';
	}
	my $last = defined $token ? "$token $self->{secret}" : $self->{secret};
	my @reply = eval {
		$self->{coord}->cli('FCALL', "snowid_3_$function", 3, $self->keys,
			$self->{identity}, $numbers, $last);
	};
	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	my @v = split /\n/, join("\n", @reply);
	return "ok $v[0] $v[2] $v[3]" if $function eq 'claim' && @v >= 4;
	return "ok $v[0]";
}

# A claim for good: want, max, usable_ms, and optionally quiet, generation,
# counter, margin
sub claim
{
	my ($self, %a) = @_;
	my $usable = $a{usable} // $self->store_now;
	my $max = $a{max} // 31;
	my $want = $a{want} // -1;
	my $sql = "$want, $max, -1, $usable";
	$sql .= ", quiet_ms => $a{quiet}" if defined $a{quiet};
	$sql .= ", seen_generation => $a{generation}, seen_counter => $a{counter}"
	  if defined $a{generation};
	$sql .= ", clock_margin_ms => $a{margin}" if defined $a{margin};
	my $numbers = "$want $max -1 0 $usable";
	$numbers .= join(' ', '', $a{quiet} // 9000, 0,
		map { $_ // '' } @a{qw(generation counter margin)})
	  if defined $a{quiet};
	return $self->call('claim', $sql, $numbers);
}

# A lease claim: max, lease, client, token, and optionally usable, prefer
sub lease_claim
{
	my ($self, %a) = @_;
	my $usable = $a{usable} // $self->store_now;
	my $prefer = $a{prefer} // -1;
	return $self->call('lease_claim',
		"$a{max}, $a{lease}, $a{client}, $usable, $prefer, 0, '$a{token}'",
		"$a{max} $a{lease} $a{client} $usable $prefer 0", $a{token});
}

# An administrator's function (free, lower_fence, end_quiet) with its
# numbers after the datacenter ("9 61001", or "" for none), as the
# administrator (coord_admin), or as the fleet's role if as_fleet.
# Returns the refusal ("SQLSTATE: message", "SNOWID_... message") or
# "ok <fence_ms>".
sub admin
{
	my ($self, $function, $numbers, $as_fleet) = @_;

	if ($self->{pg})
	{
		my $args = join ', ', $self->{dc}, split / /, $numbers;
		my ($ret, $out, $err) = $self->{coord}->node->psql('coord',
			"SELECT fence_ms FROM snowid_coordinator.$function($args)",
			extra_params => [
				'-U', $as_fleet ? 'coord_fleet' : 'coord_admin',
				'-v', 'VERBOSITY=verbose'
			]);
		return $err =~ /ERROR:  (\w{5}: [^\n]*)/ ? $1 : $err if $ret != 0;
		return "ok $out";
	}
	my @reply = eval {
		$self->{coord}->cli('FCALL', "snowid_3_$function", 3, $self->keys, 'admin',
			$numbers eq '' ? () : $numbers);
	};
	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	return "ok $reply[0]";
}

# The member's claim saying it saw the generation the store's bound allows
# now (its clock plus an hour, plus ahead ms: the call may land a few
# milliseconds later) and counter seen_counter, the clock read and the call
# sent at once.  Returns the generation sent.
#
# The word lands only if the store reads its clock exactly ahead ms after
# the caller did.  Before, the coordination database's clock was read in
# one psql statement and the claim called in the next: a round trip apart,
# which a loaded machine stretched past 7 ms every time (200 tries, none
# landed).  Now both are one DO block, with no round trip between the
# clock read and the CALL, which says the word again up to 20 times while
# the store reads its clock later than aimed (a new generation past the
# one sent), so that the jitter of a loaded machine is sampled at the
# cost of a call rather than a psql; a word the store refuses (its clock
# read sooner than aimed) ends the block.  The last generation sent comes
# back as a notice.  On Redis, TIME and FCALL go one after the other on
# one open socket, the command built in between: no process started, one
# local round trip.
sub word_at_bound
{
	my ($self, $ahead, $seen_counter) = @_;
	my ($dc, $me, $secret) = @$self{qw(dc identity secret)};

	if ($self->{pg})
	{
		my $into = join(', ',
			map { "$_ => o.$_" }
			  qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter));
		my ($ret, $out, $err) = $self->{coord}->node->psql('coord', qq{
DO \$do\$
DECLARE
	n bigint;
	seen bigint;
	o snowid_coordinator.outcome;
BEGIN
	FOR i IN 1 .. 20 LOOP
		n := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
		seen := n + 3600000 + $ahead;
		RAISE NOTICE 'seen %', seen;
		CALL snowid_coordinator.claim($dc, '$me', '$secret', -1, 31, -1, n,
			quiet_ms => 1101, seen_generation => seen, seen_counter => $seen_counter,
			clock_margin_ms => 0, $into);
		EXIT WHEN o.generation <= seen;
	END LOOP;
END
\$do\$},
			extra_params => [ '-U', 'coord_fleet' ]);
		my @seen = $err =~ /NOTICE:  seen (\d+)/g
		  or die "word at the bound: $ret $out $err";
		return $seen[-1];
	}
	my $sock = IO::Socket::UNIX->new(Peer => $self->{coord}->socket)
	  or die "cannot connect to Redis: $!";
	my ($s, $us) = @{ resp($sock, 'TIME') };
	my $now = $s * 1000 + int($us / 1000);
	my $seen = $now + 3600000 + $ahead;
	resp($sock, 'FCALL', 'snowid_3_claim', 3, $self->keys, $me,
		join(' ', -1, 31, -1, 0, $now, 1101, 0, $seen, $seen_counter, 0), $secret);
	close $sock;
	return $seen;
}

# Says the word at the bound until it lands in the millisecond it was sent
# for (the generation held at the one sent), up to 200 times.  Returns
# the generation, or undef.
#
# The store reads its clock some milliseconds after the caller (its
# procedure commits, checks its arguments and takes the datacenter's lock
# first): under 1 ms on an idle machine, 1 to 20 ms and more on a loaded
# one.  Before, each try aimed at 0 to 7 ms in turn, and a loaded machine
# never landed in 200 tries (on such a machine a DO block's read and the
# store's lay 23 ms apart); now each try aims by what the last one found:
# after a generation past the one sent (the store read its clock later
# than aimed) it aims later, by a step that doubles while the store stays
# later, and after a refusal (sooner) a millisecond sooner.
sub land_word_at_bound
{
	my ($self, $seen_counter) = @_;
	my ($ahead, $step) = (0, 1);

	for my $try (1 .. 200)
	{
		my $s = $self->word_at_bound($ahead, $seen_counter);
		my ($g) = $self->record;
		if ($g == $s)
		{
			Test::More::note("a word at the bound landed at try $try, $ahead ms ahead");
			return $s;
		}
		if ($g > $s)
		{
			$ahead += $step;
			$step *= 2;
		}
		else
		{
			$step = 1;
			$ahead-- if $ahead > 0;
		}
	}
	return undef;
}

# A command sent to Redis on sock, and its reply
sub resp
{
	my ($sock, @args) = @_;

	print $sock '*' . @args . "\r\n", map { '$' . length($_) . "\r\n$_\r\n" } @args;
	$sock->flush;
	return read_reply($sock);
}

sub read_reply
{
	my ($sock) = @_;
	my $line = <$sock> // die 'Redis closed the connection';
	$line =~ s/\r\n$//;
	my ($type, $rest) = (substr($line, 0, 1), substr($line, 1));
	return [ map { read_reply($sock) } 1 .. $rest ] if $type eq '*';
	if ($type eq '$')
	{
		return undef if $rest < 0;
		read($sock, my $bulk, $rest + 2);
		return substr($bulk, 0, $rest);
	}
	return $rest;
}

1;
