# Setting the worker id reads no table of the application's (doc/managed.md,
# "Dumps and restores"): it raises the generator past this server's clock
# plus max_drift_ms, and nothing else.  Before 1.4's last fixes it searched
# the catalog for the columns whose default reached snowid_next() (through
# functions, by their source text) and read each column's largest id: a
# session holding a lock on such a table made the owner's step wait, then
# fail, and beside 5,000 functions calling snowid_next() the step ran for
# more than 10 minutes.
#
# - A source (app's, worker id 5) with a table t whose default takes ids,
#   5,000 PL/pgSQL functions that call snowid_next(), and 1,000 ids in t;
#   dumped and restored into a new database, the source dropped.
# - In the copy, another session holds ACCESS EXCLUSIVE on t in an open
#   transaction; the owner sets the worker id 5 (lock_timeout 30 s, so that
#   a step that waited for t would fail rather than hang): it completes,
#   having taken no lock on t, and a call then gives an id.
# - Once that session ends, the copy issues 1,000 ids into t: none equals
#   a restored one (one server, one clock: within the assumption).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('worker_set_reads_no_table');
my $node = SnowidSqlEdition::new_server('worker_set_reads_no_table', ['app'], ['source']);

my ($rc, $out, $err) = psql_as(app_url($node, 'source'), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);
	DO $$ BEGIN
		FOR i IN 1 .. 5000 LOOP
			EXECUTE format('CREATE FUNCTION app_id_%s() RETURNS bigint LANGUAGE plpgsql
							AS $f$ BEGIN RETURN public.snowid_next(); END $f$', i);
		END LOOP;
	END $$;
	INSERT INTO t SELECT FROM generate_series(1, 1000);
	SELECT count(DISTINCT id) FROM t});
is($out, '1000', 'the source, beside 5,000 functions calling snowid_next(), issues 1,000 ids') or diag($err);
SnowidSqlEdition::owner_copy($node, 'source', 'copy', "$dir/source.dump", 'the owner dumps the source');

my $holder = $node->background_psql('copy', extra_params => [ '-U', 'app' ]);
$holder->query_safe('BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE');
($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	SET lock_timeout = '30s';
	BEGIN;
	UPDATE snowid_config SET worker_id = 5;
	SELECT count(*) FROM pg_locks
	WHERE pid = pg_backend_pid() AND locktype = 'relation'
	  AND relation = (SELECT oid FROM pg_class WHERE relname = 't');
	COMMIT;
	SELECT snowid_next() IS NOT NULL});
is($rc, 0, 'the owner sets the worker id while another session holds ACCESS EXCLUSIVE on t') or diag($err);
is($out, "0\nt", 'the step took no lock on t, and a call then gives an id');
$holder->query_safe('COMMIT');
$holder->quit;

($rc, $out, $err) = psql_as(app_url($node, 'copy'), q{
	INSERT INTO t (copy) SELECT true FROM generate_series(1, 1000);
	SELECT count(*) FROM t a JOIN t b ON a.id = b.id AND a.copy AND NOT b.copy});
is($out, '0', 'none of the 1,000 ids the copy issues equals a restored one') or diag($err);

$node->stop;
done_testing();
