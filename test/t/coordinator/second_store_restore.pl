# A second restore of the store's files to an older copy of itself is
# noticed, as the first (issue 55; found by the attack att55c on its fix).
# Such a restore (crash recovery of a coordination database's files: the
# same install, system identifier and timeline; a Redis snapshot, for
# servers that may not INFO) shows no loss of the store's own: only the
# holders' word (they saw a later counter than the record's) finds it, and
# starts a quiet period.  The path: the store marked a generation made on a
# word (declared_generation, Redis' ninth field of the state record) and
# ignored every word in it (the rule declared_once of recall(), against a
# member repeating the word), so a copy taken after the first restore,
# restored in turn, went unnoticed: no quiet period, and a new server B
# took at once the worker id a server C claimed after that copy (161 and
# 264 ids issued by both on 18).  Closed: every word of a later state
# starts (or lengthens) a quiet period and a new state (recall() in
# quiet.sql and snowid.lua).  Here: restore 1 is noticed, C claims after
# copy 2, restore 2 with C's check-in stalled: a quiet period starts, B
# does not get C's worker id, and no id is issued by both.
#
# Runs against Redis, or a PostgreSQL coordination database when
# SNOWID_STORE=postgresql (test/run --part coord).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoord;
use SnowidStoreRestore;
use Test::More;
use Time::HiRes qw(time sleep);

SnowidCoord::need_store();

my $coord = SnowidCoord->new;
my $dc = 9;
my $fleet = SnowidStoreRestore->new($coord, $dc);
my ($a, $wa) = $fleet->start_a;

# copy 1; A checks in a few times (the counter moves on); restore 1: A's
# word starts a quiet period (as store_forgets.pl's scenario 5)
$coord->copy_files;
sleep 3;
$fleet->restore;
my $deadline = time + 60;
my $quiet;
sleep 0.2 until ($quiet = $coord->in_quiet($dc)) || time > $deadline;
ok($quiet, 'restore 1: A\'s word starts a quiet period');
sleep 0.5 while $coord->in_quiet($dc) && time < $deadline + 60;

# copy 2, taken in the generation restore 1 made on a word
$coord->copy_files;
sleep 2;

# C claims after copy 2 (waits for restore 1's floor) and issues; restore
# 2 with C's check-in stalled
my ($c, $wc) = $fleet->start_c($wa);
my $b = $fleet->race_after_restore('restore 2', $c, $wc);
$_->stop for ($a, $b, $c);
done_testing();
