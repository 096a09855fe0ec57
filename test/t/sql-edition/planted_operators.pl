# The SQL edition (doc/managed.md) against operators and functions planted
# in public: the owner of a database (who may create in public) plants, for
# every operator and function that the edition's scripts name, an operator
# or an overload that matches better than pg_catalog's (an operand type of
# pg_catalog's operator reached by a cast, say = (oid, regclass)), and
# that, run as a superuser, makes the owner one.  Each returns what
# pg_catalog's would, so that a script that calls it runs on.  None runs:
#
# - when the owner creates the extension (its script runs as the bootstrap
#   superuser), or updates it from 1.0 or 1.1 (refused: the owner owns
#   those), or a superuser updates an install of 1.0 or 1.1 of its own;
# - when the owner runs the plain script (as itself: none runs at all);
# - when a superuser calls the functions of the API with public in its
#   search_path;
# and no function of the extension depends on a planted object.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $src = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('sql_planted'));

my $node = SnowidSqlEdition::new_server('sql_planted', [qw(app clerk)], ['planted']);

my $plant = SnowidSqlEdition::plant_sql($node->config_data('--sharedir'));
my ($rc, $out, $err) = psql_as($node->connstr('planted') . ' user=app', $plant);
is($rc, 0, 'the owner of a database plants operators and functions in public') or diag($err);
note($err);
my ($planted_ops) = $err =~ /planted (\d+) operators/;
my ($planted_fns) = $err =~ /planted (\d+) functions/;
cmp_ok($planted_ops // 0, '>', 100, 'among them, operators that match better than pg_catalog\'s');
cmp_ok($planted_fns // 0, '>', 100, 'and functions');
$node->safe_psql('postgres', 'ALTER DATABASE planted IS_TEMPLATE true');

# A database of the planted template, owned by app
sub planted_db
{
	my ($name) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $name OWNER app TEMPLATE planted");
	return ($node->connstr($name) . ' user=app', $node->connstr($name) . ' user=clerk');
}

sub planted_runs { return SnowidSqlEdition::planted_runs($node, @_); }
sub bound_to_planted { return SnowidSqlEdition::bound_to_planted($node, @_); }

# What a superuser and a role with no grants call, public in the path
my $calls = q{
	SELECT snowid_next() > 0;
	SELECT count(*) FROM snowid_next_batch(3);
	SELECT snowid_time(snowid_next()) IS NOT NULL;
	SELECT (snowid_decode(snowid_next())).worker_id;
	SELECT snowid_from_time(now()) > 0, snowid_span('1 day') > 0;
	SELECT snowid_from_serial(snowid_serial('INV')) > 0;
	SELECT snowid_from_public(snowid_public(12345)) = 12345;
	SELECT snowid_public_is_valid(snowid_public(12345));
	SELECT snowid_unscramble(snowid_scramble(12345)) = 12345;
	SELECT (snowid_status()).worker_id;
};
my $keys = q{INSERT INTO snowid_public_keys VALUES ('k1', decode(repeat('ab', 16), 'hex'), 1)};

# ---------------------------------------------------------------------------
# CREATE EXTENSION by the owner, then the API as a superuser and a clerk
# ---------------------------------------------------------------------------
my ($app, $clerk) = planted_db('fresh');
($rc, $out, $err) = psql_as($app,
	"CREATE EXTENSION snowid_sql; UPDATE snowid_config SET worker_id = 4; $keys");
is($rc, 0, 'the owner creates the extension among the planted objects') or diag($err);
is(planted_runs('fresh'), '0|0|f', 'CREATE EXTENSION ran no planted operator or function');
is(bound_to_planted('fresh'), '', 'no function of the extension depends on a planted object');
($rc, $out, $err) = psql_as($clerk, $calls);
is($rc, 0, 'a role with no grants calls the API') or diag($err);
($rc, $out, $err) = psql_as($node->connstr('fresh'), "SET search_path = \"\$user\", public; $calls");
is($rc, 0, 'a superuser calls the API with public in its search_path') or diag($err);
like(planted_runs('fresh'), qr/^\d+\|0\|f$/, 'the API ran no planted code as a superuser');

# ---------------------------------------------------------------------------
# Updates from 1.0 and 1.1
# ---------------------------------------------------------------------------
for my $from ('1.0', '1.1')
{
	# installed by the owner (who owns it: the update refuses it)
	my ($o) = planted_db("own$from" =~ s/\.//r);
	($rc, $out, $err) = psql_as($o, "CREATE EXTENSION snowid_sql VERSION '$from'");
	is($rc, 0, "the owner creates $from among the planted objects") or diag($err);
	($rc, $out, $err) = psql_as($o, 'ALTER EXTENSION snowid_sql UPDATE');
	like($err, qr/cannot be updated to 1\.2 where a role that is no superuser owns it/,
		"the update of the owner's $from is refused");
	like(planted_runs("own$from" =~ s/\.//r), qr/^\d+\|0\|f$/,
		"and ran no planted code as a superuser");

	# installed by a superuser before the plant: updated by a superuser
	my $db = "su$from" =~ s/\.//r;
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app");
	$node->safe_psql($db, "CREATE EXTENSION snowid_sql VERSION '$from'");
	($rc, $out, $err) = psql_as($node->connstr($db) . ' user=app', $plant);
	is($rc, 0, "the owner plants in public after a superuser installed $from") or diag($err);
	($rc, $out, $err) = psql_as($node->connstr($db), 'ALTER EXTENSION snowid_sql UPDATE');
	is($rc, 0, "a superuser updates its $from among the planted objects") or diag($err);
	is(planted_runs($db), '0|0|f', "the update from $from ran no planted operator or function");
	is(bound_to_planted($db), '', "no function of the extension updated from $from depends on a planted object");
	($rc, $out, $err) = psql_as($node->connstr($db),
		"UPDATE snowid_config SET worker_id = 6; $keys; SET search_path = \"\$user\", public; $calls");
	is($rc, 0, "a superuser calls the API updated from $from with public in its search_path") or diag($err);
	like(planted_runs($db), qr/^\d+\|0\|f$/, 'which ran no planted code as a superuser');
}

# ---------------------------------------------------------------------------
# The plain script, run by the owner
# ---------------------------------------------------------------------------
system("$src/test/tools/sql-edition plain $src 1.2 public > $dir/plain.sql") == 0
  or die 'could not make the plain script';
my ($plain, $plain_clerk) = planted_db('plain');
IPC::Run::run([ 'psql', '-Xq', '-v', 'ON_ERROR_STOP=1', '-d', $plain, '-f', "$dir/plain.sql" ],
	'>', \$out, '2>', \$err);
is($?, 0, 'the owner runs the plain script among the planted objects') or diag($err);
is(planted_runs('plain'), '0|0|f', 'the plain script ran no planted operator or function');
is(bound_to_planted('plain'), '', 'no function of the plain script depends on a planted object');
($rc, $out, $err) = psql_as($plain, "UPDATE snowid_config SET worker_id = 5; $keys");
($rc, $out, $err) = psql_as($node->connstr('plain'), "SET search_path = \"\$user\", public; $calls");
is($rc, 0, 'a superuser calls the plain script\'s API with public in its search_path') or diag($err);
like(planted_runs('plain'), qr/^\d+\|0\|f$/, 'which ran no planted code as a superuser');

is($node->safe_psql('postgres', "SET search_path = pg_catalog; SELECT rolsuper FROM pg_roles WHERE rolname = 'app'"), 'f',
	'the owner of the databases is no superuser');

$node->stop;
done_testing();
