# A restored dump given its gone source's worker id at once (doc/managed.md,
# "Dumps and restores"): setting it raises the generator past this
# server's clock plus max_drift_ms, reading no table, so that every id
# its source issued lies below the new ones wherever it lies, where this
# server's clock is no earlier than the source's was when it last issued
# (the owner adds a margin by raising max_drift_ms in the same UPDATE).  A
# foreign table that inherits the table (INHERITS, the older way of
# keeping an archive on another server) takes the ids of the same default;
# its ids, on the archive server, survive the source.  Before 1.4's last
# fixes the raise read the columns a search found, with ONLY, and missed
# the foreign child (8,520 of 193,803 ids came again on 19, the copy's
# clock behind its source's).
#
# - One server (one clock): a database archive holds the table arch; the
#   source (worker id 5, app's) has ev (id DEFAULT snowid_next()) and
#   ev_archive, a foreign table (postgres_fdw, the superuser's server and
#   app's mapping) of arch that INHERITS ev; it issues into ev_archive for
#   12 s with the clock 10 s fast, then the clock steps back (NTP): the
#   source fails, as it should.
# - Its dump restored by the superuser into a new database copy, the
#   source dropped, the copy given worker id 5 with max_drift_ms raised by
#   those 10 s in the same UPDATE; it issues into ev until its clock has
#   passed the archive's last id.
# - No id of the copy may equal one in the archive.
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
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
SnowidTest::need_file("$sharedir/extension/postgres_fdw.control",
	'postgresql-NN, or contrib/postgres_fdw of a source build');

my $clock = SnowidTest::Clock->new;
my $dir = PostgreSQL::Test::Utils::tempdir('restore_foreign_child_raise');
my $node = SnowidSqlEdition::fast_server('restore_foreign_child_raise', $clock, qw(source archive));
$node->safe_psql('archive', 'CREATE TABLE arch (id bigint, copy boolean); ALTER TABLE arch OWNER TO app');
my $server = sprintf(q{CREATE EXTENSION postgres_fdw;
	CREATE SERVER archive FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%s', dbname 'archive');
	CREATE USER MAPPING FOR app SERVER archive OPTIONS (user 'app', password_required 'false');
	CREATE USER MAPPING FOR CURRENT_USER SERVER archive OPTIONS (user 'app');
	GRANT USAGE ON FOREIGN SERVER archive TO app}, $node->host, $node->port);
$node->safe_psql('source', $server);

SnowidSqlEdition::issue_then_step_back($node, $clock, 'source', q{
	CREATE TABLE ev (id bigint DEFAULT snowid_next(), copy boolean DEFAULT false);
	CREATE FOREIGN TABLE ev_archive () INHERITS (ev) SERVER archive OPTIONS (table_name 'arch');},
	'INSERT INTO ev_archive SELECT FROM generate_series(1, 500);', 'ev_archive', ' into ev_archive');
my ($rc, $out, $err);

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/source.dump", '-d', $node->connstr('source') ],
	'the source is dumped');
$node->safe_psql('postgres', 'CREATE DATABASE copy OWNER app');
($rc, $err) = SnowidSqlEdition::restore_into($node->connstr('copy'), "$dir/source.dump");
note("restored into copy: exit code $rc: $err");
$node->safe_psql('postgres', 'DROP DATABASE source');
($rc, $out, $err) = psql_as($node->connstr('copy'),
	SnowidSqlEdition::worker_set_sql(5, SnowidSqlEdition::fast_margin_ms()) . ";\nSELECT worker_id FROM snowid_config");
is($out, '5', "the copy is given worker id 5, max_drift_ms raised by the source's 10 s in the same UPDATE")
  or diag($err);
($rc, $out, $err) = psql_as($node->connstr('copy') . ' user=app',
	SnowidSqlEdition::past_restored_sql('ev_archive', 'INSERT INTO ev (copy) VALUES (true);', 'ONLY ev WHERE copy'));
note("the copy, given its gone source's worker id, issues: $out $err");

my ($n, $twice) = split /\|/, $node->safe_psql('copy', q{
	SELECT (SELECT count(*) FROM ONLY ev WHERE copy),
		   (SELECT count(*) FROM ONLY ev a JOIN ev_archive b ON a.id = b.id)});
is($twice, '0', "no id of the copy equals one in the archive ($twice of $n)");

$node->stop;
done_testing();
