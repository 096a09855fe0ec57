# Issue 56's attack (item 4, finding F1 of the 1.2 review): managed.md says
# the owner of the database "creates, replaces and renames nothing" in the
# schema snowid_sql_private, which the install makes as the bootstrap
# superuser.  But the install's move into that schema takes every table
# and sequence of the extension's schema whose name matches
# snowid_sql_[[:alnum:]_]* (or snowid_waits and the like), without asking
# whether the extension made it: a table of the owner's own, named so
# before CREATE EXTENSION, is moved there by the superuser, and stays the
# owner's (a table there that is no part of the extension).
#
# Now the move takes only the extension's own: after CREATE EXTENSION,
# snowid_sql_private holds nothing of the owner's, whose table and
# sequence stay in public.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition;
use Test::More;

my $node = SnowidSqlEdition::new_server('att_private', ['app'], ['appdb']);
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = SnowidSqlEdition::psql_as($app, q{
	CREATE TABLE public.snowid_sql_mine (x int);
	CREATE SEQUENCE public.snowid_sql_myseq;
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 4;
	SELECT count(snowid_next()) FROM generate_series(1, 10)});
is($out, '10', 'app installs the extension over a table and a sequence of its own') or diag($err);

my $owned = $node->safe_psql(
	'appdb', q{
	SELECT string_agg(c.relname || ' ' || c.relowner::regrole, ', ' ORDER BY c.relname)
	FROM pg_class c WHERE c.relnamespace = 'snowid_sql_private'::regnamespace
	  AND c.relowner = 'app'::regrole});
is($owned, '', 'snowid_sql_private holds no relation of app\'s');

is( $node->safe_psql(
		'appdb', q{
	SELECT string_agg(c.relname || ' ' || c.relowner::regrole, ', ' ORDER BY c.relname)
	FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relname LIKE 'snowid_sql_m%'}),
	'snowid_sql_mine app, snowid_sql_myseq app', 'its table and sequence stay in public, its own');

$node->stop;
done_testing();
