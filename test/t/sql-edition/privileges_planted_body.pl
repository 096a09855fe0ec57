# Who may call what (sql/snowid_sql/1.4/privileges.sql, doc/managed.md
# "Who may call what"): the install and every update grant PUBLIC the
# private functions that "a function of the API" calls as its caller,
# found from the bodies of the functions of the extension's schema named
# snowid*, whoever owns them.  The owner of that schema (public: the
# database's owner, who installs the edition) may create there a function
# of its own so named before CREATE EXTENSION (or ALTER EXTENSION UPDATE),
# whose body only names snowid_sql_private.snowid_sql_next_table(: the
# install then grants PUBLIC EXECUTE on snowid_sql_next_table() and on
# snowid_sql_take(), SECURITY DEFINER, which it calls.  Any role then
# takes the id of any position it gives, issued or not.
#
# - app, the database's owner, makes public.snowid_helper() naming
#   snowid_sql_next_table(), then installs the edition and sets worker id 1;
#   1,000 ids go into a table.
# - bob, a role with no grants of the edition, should not be able to call
#   snowid_sql_next_table() (42501), and no id may come twice (on main it
#   calls it with the position of each of the 1,000 ids, and gets them
#   again).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = SnowidSqlEdition::new_server('privileges_planted_body', [qw(app bob)], ['appdb']);
my %as = map { $_ => $node->connstr('appdb') . " user=$_" } qw(app bob);

my ($rc, $out, $err) = psql_as($as{app}, q{
	CREATE FUNCTION public.snowid_helper() RETURNS bigint LANGUAGE plpgsql
		AS $$ BEGIN RETURN snowid_sql_private.snowid_sql_next_table(NULL); END $$;
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 1;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	GRANT SELECT, INSERT ON t TO bob;
	INSERT INTO t SELECT FROM generate_series(1, 1000);
	SELECT count(*) FROM t});
is($out, '1000', 'app plants a body naming a private function, installs, and issues 1,000 ids')
  or diag($err);

($rc, $out, $err) = psql_as($as{bob}, q{
	INSERT INTO t SELECT snowid_sql_private.snowid_sql_next_table(((id >> 22) << 12) | (id & 4095)) FROM t});
like($err, qr/42501/, 'bob may not call snowid_sql_next_table()');
my ($n, $distinct) = split /\|/, $node->safe_psql('appdb', 'SELECT count(*), count(DISTINCT id) FROM t');
is($n - $distinct, 0, 'no id twice (' . ($n - $distinct) . " of $n)");

$node->stop;
done_testing();
