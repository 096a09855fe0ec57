# A dump restored data-only with pg_restore -j into a database that has
# the edition, its worker id set, and the tables (doc/managed.md: "pg_restore
# of any format ... or --data-only into a database that has it").  Since
# 1.4's sixth fixes what says a restore came is a number in the sequence
# snowid_sql_dumped, "which pg_dump dumps (whole or --data-only) and the
# restore sets to its source's by setval(), at the end of the data", and "a
# call made while the restore runs raises too early only until it comes":
# the first call after the number raises the generator past the ids the
# tables hold, and sets the number back.  pg_restore -j restores the data
# in parallel, each item once what it depends on is restored: the SEQUENCE
# SET of snowid_sql_dumped (and the row of snowid_config) depend on nothing
# else, and a second worker restores them while the first still copies a
# large table.  (A whole restore happens to hold: pg_restore -j truncates a
# table it created in the COPY's transaction, and the raise's lock waits
# for it; a data-only restore copies without one.)  A call made then (the
# application, a health check, a scheduled job already connected) raises
# past the tables as they are, reading the table whose COPY has not
# committed as empty, and sets the number back: nothing raises again, and
# the calls after the restore issue the table's ids again.
#
# - One server (one clock); the target installed, given worker id 5 and
#   the table store.t first; the source, worker id 5, issues into store.t
#   (each row with 400 bytes of padding, so that its COPY lasts) for 12 s
#   with the clock 10 s fast, then the clock steps back (NTP): the source
#   fails, as it should; it is dumped (pg_dump -Fc) and dropped.
# - pg_restore --data-only -j 2 into the target, while another session of
#   the target calls snowid_next() every 20 ms (its ids kept nowhere: only
#   the ids issued after the restore count).
# - After the restore, the target issues into store.t until its clock has
#   passed the source's last id: no such id may equal a restored one.
# On main (1891eaa, snowid_sql 1.4): on PostgreSQL 15, 14,387 of 99,874, 38,104
# of 245,433 and 11,726 of 120,341 ids after the restore equalled restored
# ones (76 to 99 calls during the restore, none failed); without -j (the
# same steps, pg_restore --data-only alone) 0 of 47,824; on 19beta1, 8,392
# of 156,722.
#
# Since issue 68's redesign (1.4 tells no restore on the call path), a
# restore into a database that has a worker id, with calls meanwhile, lies
# outside what the edition guarantees (doc/managed.md, "Dumps and
# restores": a database's own ids come back into it only by restore, then
# set the worker id): the restore of the row clears the worker id, and this
# test now follows the documented step, the owner setting the worker id
# once pg_restore --data-only -j 2 is over, which raises past every id the tables then hold: no id
# after it may equal a restored one.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $file = PostgreSQL::Test::Utils::tempdir('restore_raise_parallel_restore') . '/source.dump';
my $node = SnowidSqlEdition::fast_server('restore_raise_parallel_restore', $clock, qw(source target));
my $target = SnowidSqlEdition::app_url($node, 'target');
my ($rc, $out, $err);

my $tables = q{CREATE SCHEMA store;
	CREATE TABLE store.t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false, pad text);};

SnowidSqlEdition::first_installed($node, 'target', $tables,
	'the target is installed and given worker id 5 and store.t first');
SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', $tables,
	q{INSERT INTO store.t (pad) VALUES (repeat('x', 400));},
	'store.t', ' into store.t');
$node->command_ok([ 'pg_dump', '-Fc', '-Z0', '-f', $file, '-d', SnowidSqlEdition::app_url($node, 'source') ],
	'the owner dumps the source');
$node->safe_psql('postgres', 'DROP DATABASE source');

# the restore in parallel, and meanwhile a session of the target calling
my $caller = $node->background_psql('target', on_error_stop => 0, extra_params => [ '-U', 'app' ]);
my ($rout, $rerr) = ('', '');
my $restore = IPC::Run::start([ 'pg_restore', '--data-only', '-j', '2', '--exit-on-error', '-d', $target, $file ],
	'>', \$rout, '2>', \$rerr);
my ($calls, $failed) = (0, 0);
while ($restore->pumpable)
{
	my ($o, $r) = $caller->query('SELECT snowid_next()');
	$calls++;
	$failed++ if $caller->{stderr} ne '';
	$caller->{stderr} = '';
	$restore->pump_nb;
	select(undef, undef, undef, 0.02);
}
$restore->finish;
is($? >> 8, 0, "pg_restore --data-only -j 2 restores the dump ($calls calls meanwhile, $failed failed)") or diag($rerr);
$caller->quit;
SnowidSqlEdition::worker_set_after_restore($node, 'target', 1);

($rc, $out, $err) = psql_as($target,
	SnowidSqlEdition::past_restored_sql('store.t', 'INSERT INTO store.t (copy) VALUES (true);', 'store.t WHERE copy'));
note("the target, with its gone source's worker id, issues $out ids after the restore $err");

my ($twice, $n, $restored) = SnowidSqlEdition::marked_twice($node, 'target', 'copy', 'store.t');
is($twice, '0', "no id of the target after the restore equals a restored one ($twice of $n, beside $restored)");

$node->stop;
done_testing();
