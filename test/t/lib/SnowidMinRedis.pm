# The worker-id protocol in brief (doc/internals.md) as Redis' function
# library keeps it (snowid_4_... of src/redis/snowid.lua), for the tests
# that call it by hand: the protocol's numbers from the headers, a copy of
# the library with another longest range and margin (the harness changes a
# copy; what is installed holds no switch), holder names with secrets of
# their own, and calls with holder proofs made as a server makes them.
# Used by test/t/coordinator/min_protocol_redis.pl and
# min_protocol_redis_trails.pl.
package SnowidMinRedis;

use strict;
use warnings;

use Digest::SHA;
use Exporter 'import';
use File::Spec;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Time::HiRes ();

our @EXPORT = qw(holder secret call fcall proof free granted slot record redis_now run_id);

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");

# The headers the Makefile makes the library's numbers from
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
sub values
{
	return { map { split ' ' } split /\n/, protocol('', 'values', headers()) };
}

# The library made from src/redis/snowid.lua as the Makefile makes it, but
# from a copy of the headers whose longest range is $range ms and margin
# $margin ms
sub library_copy
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

	return protocol(slurp_file("$top/src/redis/snowid.lua"), 'subst', @headers);
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
# the last n sent (and past the one Redis names when it took a later one)
my %last_n;

sub next_n
{
	my ($name) = @_;
	my $n = int(Time::HiRes::time() * 1_000_000);

	$n = $last_n{$name} + 1 if $n <= ($last_n{$name} // 0);
	return $last_n{$name} = $n;
}

# The proof of a call (a list of strings) as a server makes it
# (doc/security.md): the SHA-1 of the key (the SHA-1 of the secret), n and
# the call, each followed by a line feed but the last; with the key after
# it when $register
sub proof
{
	my ($secret, $name, $call, $register) = @_;
	my $key = Digest::SHA::sha1_hex($secret);
	my $n = next_n($name);

	return "$n:" . Digest::SHA::sha1_hex(join "\n", $key, $n, @$call)
	  . ($register ? ":$key" : '');
}

# FCALL snowid_4_$fn with the datacenter's key and @args: "ok" and the
# reply's words, or the refusal's line
sub fcall
{
	my ($redis, $fn, $key, @args) = @_;
	my @reply = eval { split /\n/, $redis->cli('FCALL', "snowid_4_$fn", 1, $key, @args) };

	return $@ =~ /(SNOWID_\w+[^\n]*)/ ? $1 : "error $@" if $@;
	return join ' ', 'ok', @reply;
}

# A call of $fn (claim, extend, release) of datacenter key $key under
# $name with its secret (or $secret), with $numbers; as a server does, it
# sends its key once when Redis asks for it (SNOWID_REGISTER), and a
# larger n when Redis took a later one (SNOWID_STALE_PROOF <n>: n made
# before this run of Redis started count as taken).  Returns "ok W END
# NOW" for a grant ("ok 1" or "ok 0" for a release), or the refusal.
sub call
{
	my ($redis, $fn, $key, $name, $numbers, $secret) = @_;
	my @call = ("snowid_4_$fn", $key, $name, $numbers);
	my ($register, $reply) = (0);
	$secret //= $secret{$name};

	for (1 .. 3)
	{
		$reply = fcall($redis, $fn, $key, $name, $numbers,
			proof($secret, $name, \@call, $register));
		if ($reply =~ /^SNOWID_STALE_PROOF (\d+)$/)
		{
			$last_n{$name} = $1 if $1 > ($last_n{$name} // 0);
		}
		elsif ($reply =~ /^SNOWID_REGISTER /)
		{
			$register = 1;
		}
		else
		{
			last;
		}
	}
	return $reply;
}

# The administrator's free() of worker id $id
sub free
{
	my ($redis, $key, $id) = @_;

	return fcall($redis, 'free', $key, 'admin', $id);
}

# A grant's worker id, end and Redis' clock, or () for a refusal
sub granted { return $_[0] =~ /^ok (\d+) (\d+) (\d+)$/ ? ($1, $2, $3) : (); }

# What the datacenter's hash holds of worker id $id: "<fence>", or
# "<fence> good|lease <holder name>"; '' if nothing
sub slot
{
	my ($redis, $key, $id) = @_;

	return $redis->cli('HGET', $key, $id);
}

# The record of datacenter key $key: its run id and the end of its quiet
# period
sub record
{
	my ($redis, $key) = @_;

	return split ' ', $redis->cli('HGET', $key, 'record');
}

# Redis' clock, Unix ms
sub redis_now
{
	my ($redis) = @_;
	my ($s, $us) = split /\n/, $redis->cli('TIME');

	return $s * 1000 + int($us / 1000);
}

# Redis' run id
sub run_id
{
	my ($redis) = @_;

	return $redis->cli('INFO', 'server') =~ /run_id:(\w+)/ ? $1 : '';
}

1;
