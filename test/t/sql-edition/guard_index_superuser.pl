# The layout and epoch guard of the SQL edition, and the copy's floor, read
# the application's tables as the bootstrap superuser (the triggers of
# snowid_config are SECURITY DEFINER): snowid_sql_ids_held() runs "SELECT
# EXISTS (SELECT FROM ONLY t WHERE id IS NOT NULL)", snowid_sql_largest_held()
# "SELECT max(id) FROM ONLY t".  Planning either opens the table's
# indexes, statistics and partitions, and PostgreSQL folds their
# expressions where it loads them (RelationGetIndexPredicate(),
# RelationGetIndexExpressions(), get_relation_statistics(), a partition
# key, the check constraints of a partition: eval_const_expressions()),
# which runs an immutable function of constant arguments as the current
# user: the superuser.  The installing role (any role with CREATE on the
# database: the extension is trusted) owns the table and makes them, so
# the function is its own.  1.4's fix of guard_cast_superuser (a bound
# compared with bigint columns alone) does not reach this: the column is a
# plain bigint.
#
# - Each owner makes an immutable function that runs ALTER ROLE itself
#   SUPERUSER through a volatile one (a non-volatile PL/pgSQL function runs
#   no ALTER itself, but may call a volatile one), a table whose bigint
#   column takes its default from snowid_next(), and one of: a partial
#   index whose predicate calls it, an expression index, extended
#   statistics on an expression, a partition's check constraint, a
#   partition key's expression.  Then, in a new session (the relation cache
#   folds them once per session), UPDATE snowid_config SET epoch = ... (the
#   guard reads the table), or for the expression index the floor: the
#   owner marks the row as stamped elsewhere (worker_server, which it may
#   write while no worker id is set), then sets the worker id, and the
#   floor reads the table for its largest id.
# - A role granted nothing of the edition, with CREATE on a schema of its
#   own, does the same with its own table (PUBLIC may call snowid_next()),
#   and the owner runs its routine step, the epoch set before the first id.
# - An owner installs VERSION '1.3' (1.3.0's script, which the package
#   keeps and the control file lets any database owner install) and does
#   the same as the first.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): each of the five owners
# is superuser after its one UPDATE, and so is the role granted nothing
# after the owner's; the function noted that it ran as postgres with
# rolsuper on.  The same on 18.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('guard_index_superuser');
$node->init;
$node->start;

# what each owner plants: $role's functions, then $index (its table of ids
# and what comes with it)
sub plant
{
	my ($role, $index) = @_;

	return qq{
	CREATE EXTENSION snowid_sql;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab() RETURNS void LANGUAGE plpgsql AS \$\$
	BEGIN
		INSERT INTO public.ran SELECT current_user, r.rolsuper FROM pg_roles r WHERE r.rolname = current_user;
		BEGIN
			EXECUTE 'ALTER ROLE $role SUPERUSER';
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
	END \$\$;
	CREATE FUNCTION folded(integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		PERFORM public.grab();
		RETURN \$1;
	END \$\$;
	$index;
	SELECT rolsuper FROM pg_roles WHERE rolname = '$role'};
}

# role, what it makes beside its table of ids (the table t or its
# partition), and what it runs then in a new session (its relation cache
# has folded nothing yet)
my @cases = (
	[ 'app', 'CREATE TABLE t (id bigint DEFAULT snowid_next()); CREATE INDEX ON t (id) WHERE folded(1) = 1',
	  q{UPDATE snowid_config SET epoch = '2020-01-01'}, 'a partial index, the epoch moved' ],
	[ 'app2', q{CREATE TABLE t (id bigint DEFAULT snowid_next()); CREATE INDEX ON t ((id + folded(1)));
		UPDATE snowid_config SET worker_server = 'a server elsewhere'},
	  'UPDATE snowid_config SET worker_id = 1', 'an expression index, the worker id set on a row stamped elsewhere' ],
	[ 'app3', 'CREATE TABLE t (id bigint DEFAULT snowid_next(), x int); CREATE STATISTICS st ON (x + folded(1)), id FROM t',
	  q{UPDATE snowid_config SET epoch = '2020-01-01'}, 'extended statistics on an expression, the epoch moved' ],
	[ 'app4', q{CREATE TABLE t (id bigint DEFAULT snowid_next(), x int) PARTITION BY RANGE (id);
		CREATE TABLE t1 PARTITION OF t FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
		ALTER TABLE t1 ADD CHECK (x < folded(1))},
	  q{UPDATE snowid_config SET epoch = '2020-01-01'}, 'a partition\'s check constraint, the epoch moved' ],
	[ 'app5', q{CREATE TABLE t (id bigint DEFAULT snowid_next(), x int) PARTITION BY RANGE ((x + folded(1)));
		CREATE TABLE t1 PARTITION OF t FOR VALUES FROM (MINVALUE) TO (MAXVALUE)},
	  q{UPDATE snowid_config SET epoch = '2020-01-01'}, 'a partition key\'s expression, the epoch moved' ]);

my ($rc, $out, $err);
for my $case (@cases)
{
	my ($role, $objects, $run, $what) = @$case;
	my $db = "${role}db";

	$node->safe_psql('postgres', "CREATE ROLE $role LOGIN; CREATE DATABASE $db OWNER $role");
	my $url = $node->connstr($db) . " user=$role";
	($rc, $out, $err) = psql_as($url, plant($role, $objects));
	like($out, qr/^f/, "$role, no superuser, installs the edition and makes its function and $what")
	  or diag($err);
	($rc, $out, $err) = psql_as($url, $run);
	note("$run: rc $rc $err");
	is($node->safe_psql($db, q{SELECT count(*) FROM ran WHERE super}), '0',
		"$what: the edition ran none of the owner's functions as a superuser");
	is($node->safe_psql('postgres', qq{SELECT rolsuper FROM pg_roles WHERE rolname = '$role'}), 'f',
		"$role is still no superuser");
}

# A role granted nothing of the edition, with CREATE on a schema of its
# own (an application's, a reporting role's): its table takes ids by its
# default (PUBLIC may call snowid_next()), the guard reads it as well, and
# the owner's own routine step (the epoch set before the first id, as
# managed.md says) runs its function as the superuser
$node->safe_psql('postgres', 'CREATE ROLE owner6 LOGIN; CREATE ROLE lesser LOGIN; CREATE DATABASE db6 OWNER owner6');
($rc, $out, $err) = psql_as($node->connstr('db6') . ' user=owner6',
	'CREATE EXTENSION snowid_sql; SELECT 1');
is($out, '1', 'owner6 installs the edition') or diag($err);
$node->safe_psql('db6', 'CREATE SCHEMA s AUTHORIZATION lesser');
($rc, $out, $err) = psql_as($node->connstr('db6') . ' user=lesser', q{
	SET search_path = s;
	CREATE TABLE ran (who name, super boolean);
	CREATE FUNCTION grab() RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
} . SnowidSqlEdition::ran_escalates_sql('s', 'lesser') . q{
	END $$;
	CREATE FUNCTION folded(integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
	BEGIN
		PERFORM s.grab();
		RETURN $1;
	END $$;
	CREATE TABLE t (id bigint DEFAULT public.snowid_next());
	CREATE INDEX ON t (id) WHERE folded(1) = 1;
	SELECT 1});
is($out, '1', 'lesser, granted nothing of the edition, makes its function, table and partial index')
  or diag($err);
($rc, $out, $err) = psql_as($node->connstr('db6') . ' user=owner6', q{UPDATE snowid_config SET epoch = '2020-01-01'});
note("owner6's epoch: rc $rc $err");
SnowidSqlEdition::no_superuser_ran($node, 'db6',
	'the owner\'s epoch set ran none of lesser\'s functions as a superuser', 'lesser', 's.ran');

# An older version the package still installs: the extension is trusted
# for every version without a control file of its own (1.0 and 1.1 have
# one), so any database owner may CREATE EXTENSION snowid_sql VERSION
# '1.3', 1.3.0's script, whose guard reads the tables as the superuser in
# the same way: a fix of 1.4 alone leaves that open
$node->safe_psql('postgres', 'CREATE ROLE owner7 LOGIN; CREATE DATABASE db7 OWNER owner7');
my $plant13 = plant('owner7', 'CREATE TABLE t (id bigint DEFAULT snowid_next()); CREATE INDEX ON t (id) WHERE folded(1) = 1');
$plant13 =~ s/CREATE EXTENSION snowid_sql;/CREATE EXTENSION snowid_sql VERSION '1.3';/;
($rc, $out, $err) = psql_as($node->connstr('db7') . ' user=owner7', $plant13);
like($out, qr/^f/, 'owner7, no superuser, installs 1.3 and makes its function and partial index')
  or diag($err);
($rc, $out, $err) = psql_as($node->connstr('db7') . ' user=owner7', q{UPDATE snowid_config SET epoch = '2020-01-01'});
note("owner7's epoch: rc $rc $err");
SnowidSqlEdition::no_superuser_ran($node, 'db7',
	'1.3, the epoch moved: the edition ran none of the owner\'s functions as a superuser', 'owner7');

$node->stop;
done_testing();
