# The model's trails played against either store: for each rule of the
# protocol in brief (doc/internals.md), SPIN searches
# src/coord/protocol_min.pml with the rule off (-DNO_<RULE>, the flags of
# test/t/coordinator/protocol_min_whole_space.pl) and finds a path to a
# duplicate; its steps are then played, one by one, against the store of
# this run (SnowidCoord; test/run's coord part runs it against the
# second) with the rule on: Redis' functions snowid_4_... of
# src/redis/snowid.lua, or a coordination database's procedures claim_4,
# extend_4, release_4 and free_4() of sql/snowid_coordinator/1.1/ranges.sql,
# in a real store whose clock stands still but where the trail lets a
# millisecond pass (SnowidMinStore, SnowidTest::Clock), restarted,
# snapshotted (a base backup) and flushed where the trail's store is.  The
# servers' side is played here as the model's servers play it, with the
# rule on (a refusal drops the id).
#
# Every call of the trail up to one is answered by the store as the model
# answered it (granted, refused, out of bounds; the worker id granted);
# that one, the model's grant with the rule off, the store refuses or
# grants with another worker id; or (REFUSAL_ENDS, a rule of the servers)
# a server's step the path needs cannot be taken: the duplicate the trail
# ends in is never issued.  So both stores answer each trail alike.
#
# The store's side played is a copy the test makes with the model's
# numbers: a longest range R and a margin M of 1 ms (test/tools/protocol
# from a copy of the headers).  Needs spin and gcc, as the model's test
# does.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use SnowidCoord;
use SnowidMinStore;
use SnowidTest;
use Test::More;

SnowidCoord::need_store();
SnowidTest::need_clock();
SnowidTest::need_program('spin', 'spin');
SnowidTest::need_program('gcc', 'gcc');

my $model = "$FindBin::RealBin/../../../src/coord/protocol_min.pml";
my ($R, $M) = (1, 1);
# a lease longer than the quiet period covers (the model's LONG)
my $LONG = $R + 2 * $M + 1;
my $copy = SnowidMinStore::store_copy($R, $M);
is(join(' ', SnowidMinStore::copy_limits($copy)), "$R $M",
	'the copy has the model\'s longest range and margin, 1 ms each');

# The kinds of steps the searches leave out, as protocol_min_whole_space.pl
my %out = (member => '-DNO_MEMBER', copy => '-DNO_COPY',
	backup => '-DNO_BACKUP', admin => '-DNO_ADMIN');
sub without { return map { $out{$_} } @_ }
my @servers = without(qw(member copy backup admin));
my @rules = (
	[ FENCE => @servers ],
	[ MARGIN => @servers ],
	[ QUIET => @servers ],
	[ RESTART_LOSS => without(qw(member copy admin)) ],
	[ CONTINUATION => without(qw(member copy admin)) ],
	[ OWN_END => @servers ],
	[ BOUND => @servers ],
	[ REFUSAL_ENDS => without(qw(member copy backup)) ]);

# -- the store, under a clock that stands still ------------------------------

my $s = SnowidMinStore->new($copy);
my $store = $s->store;
is(store_now($store), $s->base * 1000, 'the store\'s clock stands where the test set it');

# -- a trail played --------------------------------------------------------

# Plays the steps of a trail against datacenter $dc (a key of its own);
# returns where it parted from the trail ("step N (TEXT): the library
# answered X" or "step N (TEXT): server S cannot ...") and the number of
# calls answered as the model answered them, or '' if it never parted.
sub play
{
	my ($dc, @steps) = @_;
	my @name = map { holder($dc, "s$_") } 0 .. 2;
	my $probe = holder($dc, 'probe');
	my (%s, $down, $agreed);

	$s{$_} = { run => 0, lease => 0, long => 0, w => undef, hi => undef, skew => 0 } for 0 .. 1;
	$s->start('data') if $s->down;
	SnowidMinStore::lose($store, $dc);
	($down, $agreed) = (0, 0);

	# the model's servers' view
	my $holding = sub {
		my $v = $s{ $_[0] };
		return $v->{run} && defined $v->{w} && $s->at + $v->{skew} < $v->{hi};
	};
	# the model's replies: 0 granted, 1 refused, 2 out of bounds or not
	# proved; and the worker id granted
	my $answer = sub {
		my ($reply) = @_;
		return (0, $1) if $reply =~ /^ok (\d+)/;
		return (1) if $reply =~ /^SNOWID_(?:QUIET|FENCED|ALL_HELD|ENDED|LOST) /;
		return (2) if $reply =~ /^SNOWID_(?:USAGE|WRONG_SECRET) /;
		die "an answer the model has not: $reply";
	};
	# a possible loss noticed at once, as the model notices it (the store
	# notices it at the first call after: a call of a name of its own)
	my $notice = sub {
		call($store, 'release', $dc, $probe, '0 1');
	};
	my $len = sub { return $s{ $_[0] }{long} ? $LONG : $R; };

	# the model's store starts with a record and no quiet period
	$notice->();
	$s->set($s->at + $R + 3 * $M);

	for my $i (0 .. $#steps)
	{
		my $step = $steps[$i];
		my $at = "step @{[ $i + 1 ]} ($step)";

		if ($step eq 'wait')
		{
			$s->set($s->at + 1);
		}
		elsif ($step =~ /^start (\d) clock (-?\d+) lease (\d) longer than R (\d)$/)
		{
			@{ $s{$1} }{qw(run skew lease long)} = (1, $2, $3, $4);
		}
		elsif ($step =~ /^claim (\d) -> (\d) (\d)$/)
		{
			my ($n, $r, $w) = ($1, $2, $3);
			my $v = $s{$n};
			my ($got, $id) = (3);

			($got, $id) = $answer->(call($store, 'claim', $dc, $name[$n],
					join(' ', 1, $len->($n), $v->{lease} ? 0 : 1, $v->{w} // -1)))
			  unless $down;
			if ($got != $r || ($r == 0 && $id != $w))
			{
				return ("$at: the store answered $got" . ($got == 0 ? " $id" : ''), $agreed);
			}
			$agreed++;
			@$v{qw(w hi)} = ($id, $s->at + $len->($n)) if $got == 0;
		}
		elsif ($step =~ /^extend (past its end )?(\d) -> (\d)$/)
		{
			my ($n, $r) = ($2, $3);
			my $v = $s{$n};
			my ($got, $reply) = (3);

			return ("$at: server $n holds no worker id", $agreed) unless defined $v->{w};
			if (!$down)
			{
				$reply = call($store, 'extend', $dc, $name[$n],
					join(' ', $v->{w}, 1, $s->base * 1000 + $v->{hi}, $len->($n), $v->{lease} ? 0 : 1));
				($got) = $answer->($reply);
			}
			return ("$at: the store answered $got", $agreed) if $got != $r;
			$agreed++;
			my $til = $s->at + $len->($n);
			if ($got == 0)
			{
				$v->{hi} = $til if $til > $v->{hi};
			}
			elsif ($got == 3)
			{
				# REFUSAL_ENDS: only no answer at all lets a holder for good
				# extend its own range
				$v->{hi} = $til if !$v->{lease} && $til > $v->{hi};
			}
			else
			{
				$v->{w} = undef;
			}
		}
		elsif ($step =~ /^issue (\d) worker (\d) at (-?\d+)$/)
		{
			return ("$at: server $1 does not hold worker id $2", $agreed)
			  unless $holding->($1) && $s{$1}{w} == $2;
		}
		elsif ($step =~ /^stop (\d)$/)
		{
			my $v = $s{$1};
			if ($v->{lease} && $holding->($1))
			{
				call($store, 'release', $dc, $name[$1], "$v->{w} 1") unless $down;
				$v->{w} = undef;
			}
			@$v{qw(run skew lease long)} = (0, 0, 0, 0);
		}
		elsif ($step =~ /^crash (\d)$/)
		{
			@{ $s{$1} }{qw(run skew lease long)} = (0, 0, 0, 0);
		}
		elsif ($step =~ /^clock (\d) ([+-])$/)
		{
			$s{$1}{skew} += $2 eq '+' ? 1 : -1;
		}
		elsif ($step eq 'store backup')
		{
			$s->backup;
		}
		elsif ($step eq 'store down')
		{
			$s->stop;
			$down = 1;
		}
		elsif ($step =~ /^store up (with its data|without its data|as the backup)$/)
		{
			my %how = ('with its data' => 'data', 'without its data' => 'empty',
				'as the backup' => 'backup');
			$s->start($how{$1}, $dc);
			$down = 0;
			$notice->();
		}
		elsif ($step eq 'store loses its data')
		{
			SnowidMinStore::lose($store, $dc);
			$notice->();
		}
		elsif ($step =~ /^admin free (\d)$/)
		{
			free($store, $dc, $1);
		}
		else
		{
			die "a step this test does not play: $step";
		}
	}

	# the trail's next step, which SPIN does not print, issues an id twice:
	# here no two servers may both issue with one worker id
	for my $w (0, 1)
	{
		my @both = grep { $holding->($_) && $s{$_}{w} == $w } 0 .. 1;
		return ("the end: servers @both both hold worker id $w", $agreed) if @both > 1;
	}
	return ('', $agreed);
}

# -- each rule ---------------------------------------------------------------

my $dc = 0;
for my $rule (@rules)
{
	my ($name, @flags) = @$rule;
	my ($out, $steps) = SnowidTest::spin_search(name => "NO_$name", model => $model,
		flags => [ "-DNO_$name", @flags ],
		cc => [ '-O2', '-w', '-DSAFETY', '-DBFS', '-DMEMLIM=4096' ],
		pan => ['-w24']);
	like($out, qr/errors: 1\b/, "NO_$name: the model checker finds a duplicate");

	$s->set($s->at + 10_000);
	my ($parted, $agreed) = play($dc++, split /\n/, $steps);
	if ($name eq 'REFUSAL_ENDS')
	{
		# the servers' rule: the store answers as the model does
		like($parted, qr/^$|: server \d (?:holds no|does not hold) worker id/,
			"$name on: the server refused drops its id, and no two servers hold one"
			  . " ($agreed calls answered as the model did" . ($parted ? "; $parted" : '') . ')');
		next;
	}
	# the first answer that differs is the model's grant (of worker id w),
	# refused, or granted with another worker id
	my ($w, $got, $other) =
	  $parted =~ / \((?:claim|extend)[^)]* -> 0 ?(\d?)\): the store answered (\d) ?(\d?)$/;
	ok(defined $got && ($got == 1 || $got == 2 || ($got == 0 && $w ne '' && $other ne $w)),
		"$name on: after $agreed calls answered as the model did, the store refuses the"
		  . " grant the model made, or grants another worker id ($parted)");
}

$store->stop;
done_testing();
