# The worker-id protocol in brief (doc/internals.md) as either store keeps
# it, for the tests that call it by hand: Redis' function library
# (snowid_4_... of src/redis/snowid.lua) or a coordination database's
# procedures (claim_4, extend_4, release_4 and free_4() of
# sql/snowid_coordinator/1.1/ranges.sql), the store of this run
# (SnowidCoord: SNOWID_STORE).  Here: the protocol's numbers from the
# headers; a copy of the store's side with another longest range and
# margin (the harness changes a copy; what is installed holds no switch);
# the store's clock, which stands still until the test moves it; holder
# names with secrets of their own, and calls with holder proofs made as a
# server makes them for that store.  Each store's answers are given in
# the words of Redis' library ("ok W END NOW", "SNOWID_FENCED W T", ...),
# so that one test compares both, answer for answer.
# Used by test/t/coordinator/min_protocol.pl and min_protocol_trails.pl.
package SnowidMinStore;

use strict;
use warnings;

use Digest::SHA;
use Exporter 'import';
use File::Spec;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidTest;
use Time::HiRes ();

our @EXPORT = qw(holder secret call raw proof free granted slot record store_now run_id kept);

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");

# The headers the Makefile makes the stores' numbers from
sub headers
{
	my ($list) = slurp_file("$top/Makefile") =~
	  /^PROTOCOL_HEADERS = \$\(addprefix \$\(srcdir\)\/,((?:[^\n]*\\\n)*[^\n]*)\)$/m;

	die 'the Makefile lists no PROTOCOL_HEADERS' unless defined $list;
	return map { "$top/$_" } split ' ', $list =~ s/\\\n/ /gr;
}

# test/tools/protocol with @args, $in on its standard input: its output
sub protocol
{
	my ($in, @args) = @_;
	my ($out, $err) = ('', '');

	IPC::Run::run([ "$top/test/tools/protocol", @args ],
		'<', \$in, '>', \$out, '2>', \$err)
	  or die "test/tools/protocol $args[0] failed: $err";
	return $out;
}

# The protocol's numbers: { SNOWID_NAME => value }
sub numbers
{
	return { map { split ' ' } split /\n/, protocol('', 'values', headers()) };
}

# The store's side of the protocol in brief made as the Makefile makes it,
# but from a copy of the headers whose longest range is $range ms and
# margin $margin ms: Redis' library, or the coordination database's
# functions and procedures (ranges.sql's, without its tables and types,
# which the installed extension has), for load_copy()
sub store_copy
{
	my ($range, $margin) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my @headers = map {
		my $h = $_;
		if ($h =~ m{/store\.h$})
		{
			my $text = slurp_file($h);
			$text =~ s/^(#define SNOWID_RANGE_MAX_MS\s+)\d+$/$1$range/m
			  or die 'store.h defines no SNOWID_RANGE_MAX_MS';
			$text =~ s/^(#define SNOWID_RANGE_MARGIN_MS\s+)\d+$/$1$margin/m
			  or die 'store.h defines no SNOWID_RANGE_MARGIN_MS';
			$h = "$dir/store.h";
			open my $fh, '>', $h or die "$h: $!";
			print $fh $text;
			close $fh;
		}
		$h
	} headers();

	return protocol(slurp_file("$top/src/redis/snowid.lua"), 'subst', @headers)
	  if SnowidCoord::store() eq 'redis';
	my $sql = protocol(slurp_file("$top/sql/snowid_coordinator/1.1/ranges.sql"),
		'subst', @headers);
	return join "\n",
	  $sql =~ /^(CREATE OR REPLACE (?:FUNCTION|PROCEDURE) .*?^\$\$;)$/msg;
}

# The longest range and the margin a copy (store_copy()) grants with
sub copy_limits
{
	my ($copy) = @_;

	return $copy =~ /^local RANGE_MAX, MARGIN = (\d+), (\d+)$/m
	  if SnowidCoord::store() eq 'redis';
	return $copy =~ /now_ms \+ (\d+) \+ 2 \* (\d+)\);$/m;
}

# Puts a copy in place of the store's side: FUNCTION LOAD REPLACE of the
# library, or the functions and procedures replaced by the extension's owner
sub load_copy
{
	my ($store, $copy) = @_;

	if ($store->source eq 'redis')
	{
		$store->cli('FUNCTION', 'LOAD', 'REPLACE', $copy);
	}
	else
	{
		$store->db->sql('coord_owner', $copy);
	}
	return;
}

# A holder name of datacenter $dc, with a secret of its own
my %secret;

sub holder
{
	my ($dc, $name) = @_;
	my $identity = "dc=$dc host=$name port=1 sysid=1";

	$secret{$identity} //= Digest::SHA::sha256_hex("holder secret of $identity");
	return $identity;
}

sub secret { return $secret{ $_[0] }; }

# The n of a name's next proof: this machine's clock in microseconds, past
# the last n sent (and past the one the store names when it took a later
# one)
my %last_n;

# The callers' clock, Unix microseconds, which the n of their proofs is:
# this machine's, or under a store of SnowidMinStore->new, whose clock
# stands still where a test moves it, the store's (every caller's clock
# within the margin of the store's, assumption 1, which the stores refuse
# a proof outside of), less what callers_behind() set
my $callers_us;

sub next_n
{
	my ($name) = @_;
	my $n = $callers_us ? $callers_us->() : int(Time::HiRes::time() * 1_000_000);

	$n = $last_n{$name} + 1 if $n <= ($last_n{$name} // 0);
	return $last_n{$name} = $n;
}

# Redis' key of datacenter $dc
sub key { return "{snowid:dc:$_[0]}:workers"; }

# What a proof of $fn of datacenter $dc under $name with $numbers (the
# words of Redis' call, which the procedures take in the same order, good
# 1 or 0 as true or false) is made for: Redis' function's name, the key,
# the name and the numbers; the procedure's name and every argument but
# the proof
sub made_for
{
	my ($store, $fn, $dc, $name, $numbers) = @_;

	return [ "snowid_4_$fn", key($dc), $name, $numbers ] if $store->source eq 'redis';
	my @n = split ' ', $numbers;
	my %good = (claim => 2, extend => 4);
	$n[ $good{$fn} ] = $n[ $good{$fn} ] ? 'true' : 'false' if defined $good{$fn};
	return [ "${fn}_4", $dc, $name, @n ];
}

# The proof of a call of $fn as a server makes it (doc/security.md): the
# hash of the key (the hash of the secret), n and what the call is made
# for, each followed by a line feed but the last; SHA-1 for Redis, SHA-256
# for a coordination database.  With the key after it when the store asked
# for it: as it is for Redis ($register true), XORed with the SHA-256 of
# the pad for a coordination database ($register the pad).
sub proof
{
	my ($store, $fn, $dc, $name, $numbers, $secret, $register) = @_;
	my $call = made_for($store, $fn, $dc, $name, $numbers);
	my $n = next_n($name);

	$secret //= $secret{$name};
	if ($store->source eq 'redis')
	{
		my $key = Digest::SHA::sha1_hex($secret);

		return "$n:" . Digest::SHA::sha1_hex(join "\n", $key, $n, @$call)
		  . ($register ? ":$key" : '');
	}
	my $key = Digest::SHA::sha256_hex($secret);
	my $masked = '';
	if ($register)
	{
		my $pad = Digest::SHA::sha256_hex($register);
		$masked = ':' . join '', map {
			sprintf '%08x', hex(substr($key, $_, 8)) ^ hex(substr($pad, $_, 8))
		} grep { $_ % 8 == 0 } 0 .. 63;
	}
	return "$n:" . Digest::SHA::sha256_hex(join "\n", $key, $n, @$call) . $masked;
}

# A coordination database's error (psql's verbose stderr) in the words of
# Redis' library: a value out of bounds (22023), the secret itself, a
# proof of another key (42501), an n taken (28000).  The procedures'
# held_worker_id and held_until_ms are the library's worker_id and end_ms
# (their outcome's worker_id and end_ms take those names).
sub pg_error
{
	my ($err) = @_;
	my ($state, $msg) = $err =~ /ERROR:  (\w{5}): ([^\n]*)/
	  or return "error $err";
	my ($detail) = $err =~ /^DETAIL:  ([^\n]*)/m;

	if ($state eq '22023')
	{
		my %named = (held_worker_id => 'worker_id', held_until_ms => 'end_ms');
		return "SNOWID_USAGE " . ($named{$1} // $1) . " must lie between $2 and $3"
		  if ($detail // '') =~ /^(\w+) must lie between (-?\d+) and (\d+)/;
		return "SNOWID_USAGE $msg";
	}
	return "SNOWID_WRONG_SECRET $msg" if $state eq '42501';
	return "SNOWID_STALE_PROOF $1" if $state eq '28000' && $msg =~ /the last n taken is (\d+)/;
	return "error $err";
}

# A coordination database's outcome of $fn (its row: outcome, worker_id,
# end_ms, now_ms, holder) in the words of Redis' library; $max the
# layout's highest worker id
sub pg_answer
{
	my ($fn, $max, $row) = @_;
	my ($outcome, $w, $end, $now, $holder) = map { $_ eq '' ? undef : $_ } split /\|/, $row, -1;

	$outcome //= '';
	return $fn eq 'free' ? "ok $end" : $fn eq 'release' ? 'ok 1' : "ok $w $end $now"
	  if $outcome eq 'ok';
	return 'ok 0' if $fn eq 'release' && $outcome eq 'lost';
	return 'SNOWID_REGISTER ' . $holder if $outcome eq 'register';
	return "SNOWID_QUIET $end" if $outcome eq 'quiet';
	return "SNOWID_FENCED $w $end" if $outcome eq 'fenced';
	return 'SNOWID_ALL_HELD ' . ($max + 1) if $outcome eq 'all_held';
	return "SNOWID_ENDED $end" if $outcome eq 'ended';
	return 'SNOWID_LOST ' . ($holder // '') if $outcome eq 'lost';
	return "error: an outcome of $fn no Redis answer is: $row";
}

# The call of $fn (claim, extend, release) of datacenter $dc under $name
# with $numbers, sending $proof as it is: "ok" and the reply's words, or
# the refusal's line, in the words of Redis' library
sub raw
{
	my ($store, $fn, $dc, $name, $numbers, $proof) = @_;

	if ($store->source eq 'redis')
	{
		my @reply = eval {
			split /\n/,
			  $store->cli('FCALL', "snowid_4_$fn", 1, key($dc), $name, $numbers, $proof);
		};
		return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
		return join ' ', 'ok', @reply;
	}
	my @n = @{ made_for($store, $fn, $dc, $name, $numbers) };
	my $args = join ', ', "'$proof'", map { /^-?\d+$|^(?:true|false)$/ ? $_ : die "not a number: $_" }
	  @n[ 3 .. $#n ];
	my ($ret, $out, $err) = $store->node->psql('coord',
		"CALL snowid_coordinator.${fn}_4($dc, '$name', $args)",
		extra_params => [ '-U', 'coord_fleet', '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? pg_answer($fn, $n[3], $out) : pg_error($err);
}

# A call of $fn (claim, extend, release) of datacenter $dc under $name with
# its secret (or $secret), with $numbers; as a server does, it sends its
# key once when the store asks for it (SNOWID_REGISTER: with the pad a
# coordination database answers), and a larger n when the store took a
# later one (SNOWID_STALE_PROOF <n>: n made before this run of the store
# started count as taken).  Returns "ok W END NOW" for a grant ("ok 1" or
# "ok 0" for a release), or the refusal.
sub call
{
	my ($store, $fn, $dc, $name, $numbers, $secret) = @_;
	my ($register, $reply);

	for (1 .. 3)
	{
		$reply = raw($store, $fn, $dc, $name, $numbers,
			proof($store, $fn, $dc, $name, $numbers, $secret, $register));
		if ($reply =~ /^SNOWID_STALE_PROOF (\d+)$/)
		{
			$last_n{$name} = $1 if $1 > ($last_n{$name} // 0);
		}
		elsif ($reply =~ /^SNOWID_REGISTER (\S*)/)
		{
			$register = $store->source eq 'redis' ? 1 : $1;
		}
		else
		{
			last;
		}
	}
	return $reply;
}

# The administrator's free() of worker id $id of datacenter $dc
sub free
{
	my ($store, $dc, $id) = @_;

	if ($store->source eq 'redis')
	{
		my $reply = eval { $store->cli('FCALL', 'snowid_4_free', 1, key($dc), 'admin', $id) };
		return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
		return "ok $reply";
	}
	my ($ret, $out, $err) = $store->node->psql('coord',
		"SELECT * FROM snowid_coordinator.free_4($dc, $id)",
		extra_params => [ '-U', 'coord_admin', '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? pg_answer('free', undef, $out) : pg_error($err);
}

# A grant's worker id, end and the store's clock, or () for a refusal
sub granted { return $_[0] =~ /^ok (\d+) (\d+) (\d+)$/ ? ($1, $2, $3) : (); }

# Runs $sql as the coordination database's superuser: its output
sub pg { return $_[0]->db->sql(undef, $_[1]); }

# What the store keeps of worker id $id of datacenter $dc: "<fence>", or
# "<fence> good|lease <holder name>"; '' if nothing
sub slot
{
	my ($store, $dc, $id) = @_;

	return $store->cli('HGET', key($dc), $id) if $store->source eq 'redis';
	return pg($store, qq{
		SELECT fence_ms || coalesce(CASE WHEN for_good THEN ' good ' ELSE ' lease ' END || holder, '')
		FROM snowid_coordinator.ranges WHERE datacenter = $dc AND worker_id = $id});
}

# The record of datacenter $dc: the run of the store that wrote it and the
# end of its quiet period
sub record
{
	my ($store, $dc) = @_;

	return split ' ', $store->cli('HGET', key($dc), 'record') if $store->source eq 'redis';
	return split /\|/, pg($store, qq{
		SELECT run, quiet_until_ms FROM snowid_coordinator.range_records
		WHERE datacenter = $dc});
}

# What the store keeps of datacenter $dc but the n of the names' proofs:
# its worker ids, its record and the names' keys, one line
sub kept
{
	my ($store, $dc) = @_;

	if ($store->source eq 'redis')
	{
		my %h = split /\n/, $store->cli('HGETALL', key($dc));

		return join ', ', map { "$_ => $h{$_}" } grep { !/^proof / } sort keys %h;
	}
	return pg($store, qq{
		SELECT concat_ws(', ',
			(SELECT string_agg(format('%s => %s %s %s', worker_id, fence_ms, for_good, holder), ', '
							   ORDER BY worker_id)
			 FROM snowid_coordinator.ranges WHERE datacenter = $dc),
			(SELECT format('record => %s %s', run, quiet_until_ms)
			 FROM snowid_coordinator.range_records WHERE datacenter = $dc),
			(SELECT string_agg(format('secret %s => %s', identity, secret_sha256), ', '
							   ORDER BY identity)
			 FROM snowid_coordinator.holders WHERE datacenter = $dc))});
}

# The store loses what it keeps of datacenter $dc, as a FLUSHALL or an
# eviction of its hash: its worker ids, its record and the names' keys
sub lose
{
	my ($store, $dc) = @_;

	return $store->cli('DEL', key($dc)) if $store->source eq 'redis';
	pg($store, qq{
		BEGIN;
		DELETE FROM snowid_coordinator.ranges WHERE datacenter = $dc;
		DELETE FROM snowid_coordinator.range_records WHERE datacenter = $dc;
		DELETE FROM snowid_coordinator.holders WHERE datacenter = $dc;
		DELETE FROM snowid_coordinator.proofs_taken WHERE datacenter = $dc;
		DELETE FROM snowid_coordinator.pads WHERE datacenter = $dc;
		COMMIT});
	return;
}

# The store's clock, Unix ms
sub store_now
{
	my ($store) = @_;

	if ($store->source eq 'redis')
	{
		my ($s, $us) = split /\n/, $store->cli('TIME');

		return $s * 1000 + int($us / 1000);
	}
	return pg($store, 'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint');
}

# The run of the store, as its record names it: Redis' run id and
# replication id ("<run_id>:<master_replid>"), the coordination server's
# (snowid_coordinator.server_now())
sub run_id
{
	my ($store) = @_;

	if ($store->source eq 'redis')
	{
		my ($run) = $store->cli('INFO', 'server') =~ /run_id:(\w+)/;
		my ($replid) = $store->cli('INFO', 'replication') =~ /master_replid:(\w+)/;

		return join ':', $run // '', $replid // '';
	}
	return $store->db->sql('coord_owner', 'SELECT snowid_coordinator.server_now()');
}

# -- the store, under a clock that stands still ------------------------------

# SnowidMinStore->new($copy): a store of this run (SnowidCoord) started
# under a clock of its own that stands still at a whole second ahead, its
# side of the protocol in brief the copy given (store_copy()); datacenters
# unmarked, a coordination database able to take base backups
sub new
{
	my ($class, $copy) = @_;
	my $self = bless {
		clock => SnowidTest::Clock->new,
		base => int(time()) + 1,
		copy => $copy,
		at => 0,
		restarts => 0,
	}, $class;

	$self->set(0);
	$self->{behind} = 0;
	$callers_us = sub { return ($self->{base} * 1000 + $self->{at} - $self->{behind}) * 1000; };
	$self->{store} = $self->under(sub {
		SnowidCoord->new(library => 0, mark_new => 0, clock => $self->{clock},
			base_backup => 1);
	});
	load_copy($self->{store}, $copy);
	return $self;
}

# SnowidMinStore->started($range, $margin, @dcs): a store of this run
# (new()) whose side of the protocol in brief grants ranges of at most
# $range ms with a margin of $margin ms (store_copy()), the first quiet
# period of each datacenter of @dcs over (quiet_over()); skips the test,
# naming the package, where the store or the clock cannot be had
sub started
{
	my ($class, $range, $margin, @dcs) = @_;

	SnowidCoord::need_store();
	SnowidTest::need_clock();
	my $self = $class->new(store_copy($range, $margin));
	$self->{margin} = $margin;
	$self->quiet_over(@dcs) if @dcs;
	return $self;
}

# The first quiet period of each datacenter given over: a call (a release
# of nothing, under a name of its own) notes the run of the store, and the
# store's clock moves a margin past the end the last one's record names
# (started()'s margin)
sub quiet_over
{
	my ($self, @dcs) = @_;
	my $til;

	for my $dc (@dcs)
	{
		Test::More::like(call($self->{store}, 'release', $dc, holder($dc, 'probe'), '0 0'),
			qr/^ok 0$/, "datacenter $dc: a first call notes the run of the store");
		(undef, $til) = record($self->{store}, $dc);
	}
	$self->move_to($til + $self->{margin});
	return;
}

sub store  { return $_[0]->{store}; }
sub base   { return $_[0]->{base}; }
# the store's time, ms past base seconds
sub at     { return $_[0]->{at}; }

# Sets the store's clock to $at ms past base seconds (and as many
# microseconds as the store was started: a coordination server's run is
# its start's time, which a clock that stands still would repeat)
sub set
{
	my ($self, $at) = @_;

	$self->{at} = $at;
	$self->{clock}->set(sprintf '@%d.%03d%03d', $self->{base} + int($at / 1000),
		$at % 1000, $self->{restarts} % 1000);
	return;
}

# The callers' clock (the n of their proofs) from now on $ms behind the
# store's (negative: ahead)
sub callers_behind
{
	my ($self, $ms) = @_;

	$self->{behind} = $ms;
	return;
}

# Moves the store's clock to Unix ms $t, unless it is there already
sub move_to
{
	my ($self, $t) = @_;

	$self->set($t - $self->{base} * 1000) if $t > $self->{base} * 1000 + $self->{at};
	return;
}

# Runs $sub with the environment that puts a store it starts under the
# clock
sub under
{
	my ($self, $sub) = @_;
	my %env = $self->{clock}->env;
	local @ENV{ keys %env } = values %env;

	return $sub->();
}

# A snapshot of the store, as it is now, that restore() brings it back as:
# Redis' data saved, a coordination server's base backup
sub backup
{
	my ($self) = @_;
	my $store = $self->{store};

	if ($store->source eq 'redis')
	{
		$store->cli('SAVE');
		$self->{snapshot} = "$store->{dir}/backup.rdb";
		PostgreSQL::Test::Utils::system_or_bail('cp', "$store->{dir}/dump.rdb",
			$self->{snapshot});
		return;
	}
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf',
		$store->node->backup_dir . '/coord_base');
	$store->base_backup;
	return;
}

# The store stopped, its data kept
sub stop
{
	my ($self) = @_;
	my $store = $self->{store};

	$store->cli('SAVE') if $store->source eq 'redis';
	$store->source eq 'redis' ? $store->stop : $store->node->stop;
	$self->{down} = 1;
	return;
}

# The store started again (stopped first if it runs) under its clock, with
# its data ('data'), without it ('empty', datacenter $dc's), or as the
# snapshot backup() took ('backup'), its side of the protocol the copy
sub start
{
	my ($self, $how, $dc) = @_;
	my $store = $self->{store};

	$self->stop unless $self->{down};
	$self->{restarts}++;
	$self->set($self->{at});
	if ($store->source eq 'redis')
	{
		my $dump = "$store->{dir}/dump.rdb";

		unlink $dump if $how eq 'empty';
		PostgreSQL::Test::Utils::system_or_bail('cp', $self->{snapshot}, $dump)
		  if $how eq 'backup';
		$self->under(sub { $store->start });
	}
	elsif ($how eq 'backup')
	{
		$self->under(sub { $store->restore_base_backup });
	}
	else
	{
		$self->{clock}->start_node($store->node);
	}
	$self->{down} = 0;
	load_copy($store, $self->{copy});
	lose($store, $dc) if $how eq 'empty';
	return;
}

sub down { return $_[0]->{down}; }

1;
