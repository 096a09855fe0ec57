# (Since 1.4's last fixes setting the worker id reads no table, and raises
# past the clock plus max_drift_ms; the source's clock ran 10 s ahead
# here, a margin the owner adds to max_drift_ms in the same UPDATE:
# doc/managed.md, "Dumps and restores".)
#
# A dump of snowid_sql 1.3 restored where 1.4 is the default: the
# scenario of fast68's restore_old_dump_noticed (written for 1.4 before
# issue 68's redesign, when a dump of 1.4 carried a number that told a
# restore, and one of 1.3 none), brought to the design of doc/managed.md
# ("Dumps and restores": a dump of 1.0 to 1.4, restore, then set the worker
# id).  The dump's CREATE EXTENSION names no version, so it makes 1.4.
# Restored into a new database, the copy has no worker id until its owner
# sets one, which raises the generator past the clock plus max_drift_ms.
# Restored into a database whose worker id was set first (outside the
# assumption), the row of snowid_config comes between the data of public
# and of store (pg_restore restores it in the order of the schemas' names):
# its restore clears the worker id, so every call after it refuses (55000)
# until the owner sets the worker id again, which raises past the clock
# plus max_drift_ms, past those restored after the row too.
#
# - One server, under a clock 10 s fast: the source installs 1.3 (CREATE
#   EXTENSION snowid_sql VERSION '1.3'), worker id 5, and issues into
#   public.orders and store.items for 12 s; the clock steps back (NTP), the
#   owner dumps it (pg_dump -Fc) and it is dropped: a gone source.
# - target, installed (1.4) and given worker id 5 first: pg_restore, while
#   another session calls snowid_next() every 20 ms; fresh, a new
#   database: pg_restore makes 1.4.  In each the first call refuses
#   (55000: no worker id).
# - In both at once, the owner sets (again) the gone source's worker id 5:
#   the first id lies above every id the tables hold, and it issues until
#   its clock has passed the source's last id: none equals a restored one.
# On main (5c1408b, snowid_sql 1.4) it passes on PostgreSQL 15 and 19.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
my $file = PostgreSQL::Test::Utils::tempdir('restore_old_dump_worker_set_first') . '/source.dump';
my $node = SnowidSqlEdition::fast_server('restore_old_dump_worker_set_first', $clock, qw(source target fresh));

SnowidSqlEdition::first_installed($node, 'target', undef, 'the target is installed and given worker id 5 first');
SnowidSqlEdition::issue_then_step_back(
	$node, $clock, 'source', q{
	CREATE SCHEMA store;
	CREATE TABLE public.orders (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);
	CREATE TABLE store.items (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);
	CREATE VIEW all_ids AS SELECT id, copy FROM public.orders UNION ALL SELECT id, copy FROM store.items;},
	'INSERT INTO public.orders DEFAULT VALUES; INSERT INTO store.items (copy) SELECT false FROM generate_series(1, 5);',
	'all_ids', ' into public.orders and store.items', '1.3');
is($node->safe_psql('source', q{SELECT extversion FROM pg_extension WHERE extname = 'snowid_sql'}), '1.3',
	'the source runs 1.3');
$node->command_ok([ 'pg_dump', '-Fc', '-f', $file, '-d', SnowidSqlEdition::app_url($node, 'source') ],
	'its owner dumps it');
$node->safe_psql('postgres', 'DROP DATABASE source');

SnowidSqlEdition::restore_while_calling_in($node, 'target', $file);
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', SnowidSqlEdition::app_url($node, 'fresh'), $file ],
	'fresh: pg_restore restores the dump into a new database');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'snowid_sql'}),
	SnowidSqlEdition::version(), 'fresh: the restore makes the default version');

for my $db (qw(target fresh))
{
	my ($rc, $out, $err) = psql_as(SnowidSqlEdition::app_url($node, $db), 'SELECT snowid_next()');

	like($err, qr/ERROR:  55000: snowid has no worker id/, "$db: after the restore, a call refuses");
}
SnowidSqlEdition::copies_issue_past_restored([ map { [ $node, $_, $_ ] } qw(target fresh) ],
	'all_ids', 'store.items', 1);

$node->stop;
done_testing();
