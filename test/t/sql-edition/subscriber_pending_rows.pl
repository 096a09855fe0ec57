# A replica's apply changes no row of the edition's tables (doc/managed.md,
# "The configuration": "A replica's apply ... changes no row of
# snowid_config ... Nor of snowid_locks: the initial copy of a
# subscription skips its rows, where before it failed on the
# subscriber's keys").  1.4 added a third table that its triggers write,
# snowid_sql_private.snowid_config_pending (a row per transaction that
# changed snowid_config, keyed by its transaction id, xid8), with no
# trigger of a replica: a publication FOR ALL TABLES carries the
# publisher's rows into the subscriber's table, where a row of the
# subscriber's own transaction of the same id is already, and the
# subscription fails on the subscriber's key, again and again.  (A row
# the subscriber's own transaction of that id finds later counts as its
# own note: snowid_sql_noted().)
#
# - Two servers install the edition; the subscriber sets its worker id in
#   a transaction of some id; the publisher sets its own in a transaction
#   of the same id (two servers count their transaction ids each on its
#   own).
# - The publisher publishes FOR ALL TABLES, the subscriber subscribes: the
#   subscription's tables must all become ready, and the subscriber's
#   snowid_config_pending must hold only its own rows.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my ($pub, $sub) = SnowidSqlEdition::logical_pair('pending',
	'CREATE TABLE t (id bigint PRIMARY KEY, n integer);');
my %as = (publisher => $pub->connstr('appdb') . ' user=app', subscriber => $sub->connstr('appdb') . ' user=app');

# the subscriber's transaction ids run some way ahead, then it sets its
# worker id
$sub->safe_psql('appdb', q{
	DO $$ BEGIN FOR i IN 1 .. 300 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$});
my ($rc, $out, $err) = psql_as($as{subscriber}, q{
	UPDATE snowid_config SET worker_id = 2;
	SELECT xact FROM snowid_sql_private.snowid_config_pending});
like($out, qr/^\d+$/, "the subscriber sets its worker id, in transaction $out") or diag($err);
my $xact = $out;

# the publisher sets its own in a transaction of the same id
SnowidSqlEdition::in_transaction($pub, $xact, 'UPDATE snowid_config SET worker_id = 1');
is($pub->safe_psql('appdb', 'SELECT xact FROM snowid_sql_private.snowid_config_pending'), $xact,
	'the publisher sets its worker id, in a transaction of the same id');

$pub->safe_psql('appdb', 'CREATE PUBLICATION everything FOR ALL TABLES');
my $pubconn = 'host=' . $pub->host . ' port=' . $pub->port . ' dbname=appdb';
$sub->safe_psql('appdb', "CREATE SUBSCRIPTION everything CONNECTION '$pubconn' PUBLICATION everything");
$pub->safe_psql('appdb', 'INSERT INTO t VALUES (1, 1)');

# ready within a minute, or not
my $ready = SnowidSqlEdition::answer_within($sub, q{
	SELECT count(*) > 0 AND bool_and(srsubstate = 'r') AND (SELECT count(*) FROM t) = 1
	FROM pg_subscription_rel}, 't') eq 't';
ok($ready, 'every table of the subscription is ready, and the row of t comes')
  or diag(scalar(grep { /ERROR/ } split /\n/, slurp_file($sub->logfile)) . ' errors in the subscriber\'s log, the first: '
	  . ((grep { /ERROR/ } split /\n/, slurp_file($sub->logfile))[0] // 'none'));
is($sub->safe_psql('appdb', 'SELECT string_agg(xact::text, \',\') FROM snowid_sql_private.snowid_config_pending'),
	$xact, 'the subscriber\'s snowid_config_pending holds its own row alone');

$sub->safe_psql('appdb', 'DROP SUBSCRIPTION everything');
$sub->stop;
$pub->stop;
done_testing();
