# The updates of the SQL edition to 1.4 drop objects of snowid_sql_private
# whose types any role may use: the update from 1.3 drops and makes anew
# the type snowid_sql_fixed (1.3--1.4/changed.sql), the update from 1.2
# drops the claim's tables snowid_coordination, snowid_coordinator_state
# and snowid_holder (1.2--1.4/drop.sql), each a row type.  PUBLIC has
# USAGE on the schema and, by PostgreSQL's default, on every type, so a
# role granted nothing of the edition, with CREATE on a schema of its own
# (an application role, a reporting role), may make a column (or a
# function argument) of such a type; the update then fails on the
# dependency (PostgreSQL's 2BP01 "cannot drop type
# snowid_sql_private.snowid_sql_fixed because other objects depend on it",
# no message of the edition's) and the database stays on the old version
# for as long as that role likes: on a claiming 1.2, the claim mode whose
# findings issue 68 closes.
#
# - For 1.2 (worker id 2) and 1.3 (worker id 2): the owner app installs the
#   edition; the role other, granted nothing of it, owns a schema s and
#   makes a table there with a column of the type the update drops.
# - The owner's ALTER EXTENSION snowid_sql UPDATE TO '1.4' should go
#   through, and ids go on.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): both updates fail with
# 2BP01 and the database stays on 1.2 and 1.3 (the same on 18).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('update_type_used_elsewhere');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE ROLE other LOGIN');

for my $case ([ '1.2', 'snowid_sql_private.snowid_coordination' ],
	[ '1.3', 'snowid_sql_private.snowid_sql_fixed' ])
{
	my ($from, $type) = @$case;
	(my $db = "db$from") =~ s/\./_/;

	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	my $app = $node->connstr($db) . ' user=app';
	my ($rc, $out, $err) = psql_as($app, qq{CREATE EXTENSION snowid_sql VERSION '$from';
		UPDATE snowid_config SET worker_id = 2;
		SELECT snowid_sql_version()});
	is($out, $from, "$from installed by its owner") or diag($err);
	$node->safe_psql($db, 'CREATE SCHEMA s AUTHORIZATION other');
	($rc, $out, $err) = psql_as($node->connstr($db) . ' user=other',
		"CREATE TABLE s.x (f $type); SELECT 'made'");
	is($out, 'made', "other, granted nothing of the edition, makes a column of $type") or diag($err);

	($rc, $out, $err) = psql_as($app, q{ALTER EXTENSION snowid_sql UPDATE TO '1.4';
		SELECT snowid_sql_version(), snowid_next() > 0});
	is($out, '1.4|t', "the owner's update from $from to 1.4 goes through, and ids go on") or diag($err);
}

$node->stop;
done_testing();
