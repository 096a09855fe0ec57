# The update of the SQL edition from 1.3, as 1.3.0 installed it, to the
# newest version (sql/snowid_sql/1.3--1.4/): 1.3.0's scripts are kept whole
# (sql/snowid_sql--1.3.sql, sql/snowid_sql--1.2--1.3.sql), and the fixes
# made since to 1.3's parts are 1.4, which a database of 1.3.0 gets only by
# ALTER EXTENSION snowid_sql UPDATE.
#
# - A database installs 1.3 (the frozen script), the owner sets a worker
#   id and takes ids, then updates: its catalog of the edition's schemas
#   (SnowidSqlEdition::objects: functions with their bodies, settings,
#   security, owners and privileges; tables, columns, types, constraints,
#   triggers) should equal that of a fresh install of the newest version,
#   and its ids lie above those it issued before.
# - From 1.2, along the path PostgreSQL takes by itself (ALTER EXTENSION
#   ... UPDATE: straight to the newest, 1.2--1.4), and through 1.3 for one
#   that stops there (UPDATE TO '1.3', then UPDATE): the same catalog, and
#   ids above those before.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $version = SnowidSqlEdition::version();

my @dbs = qw(fresh from13 from12 from12via13);
my $node = SnowidSqlEdition::new_server('update_1_3', ['app'], \@dbs);
my %conn = map { $_ => app_url($node, $_) } @dbs;
my $worker = 0;

# installs version $from (or the default) as the owner, sets a worker id of
# its own and takes ids: the largest of them
sub install
{
	my ($db, $from) = @_;
	$worker++;
	my ($rc, $out, $err) = psql_as($conn{$db},
		'CREATE EXTENSION snowid_sql' . ($from ? " VERSION '$from'" : '') . ";
		UPDATE snowid_config SET worker_id = $worker;
		SELECT max(id) FROM (SELECT snowid_next() AS id FROM generate_series(1, 200)) x");
	is($rc, 0, "$db: the owner installs " . ($from // $version) . ', sets worker id ' . $worker . ' and takes ids')
	  or diag($err);
	return $out;
}

# the update (the statements given), then the version, the path it took
# and whether its next ids lie above those issued before
sub update
{
	my ($db, $sql, $before) = @_;
	my ($rc, $out, $err) = psql_as($conn{$db}, $sql);
	is($rc, 0, "$db: $sql") or diag($err);
	is($node->safe_psql($db, q{SELECT extversion || ' ' || public.snowid_sql_version()
		FROM pg_extension WHERE extname = 'snowid_sql'}),
		"$version $version", "$db: at $version after the update");
	is($node->safe_psql($db, "SELECT bool_and(snowid_next() > $before) FROM generate_series(1, 200)"),
		't', "$db: its ids after the update lie above those it issued before");
}

install('fresh');
my $fresh = SnowidSqlEdition::objects($node, 'fresh');
like($fresh, qr/^function snowid_sql_private\.snowid_sql_fixed\(\) /m, 'the catalog lists the functions');

# from 1.3, the script 1.3.0 installed
my $before = install('from13', '1.3');
is($node->safe_psql('from13', 'SELECT snowid_sql_version()'), '1.3', 'from13: 1.3 is installed');
isnt(SnowidSqlEdition::objects($node, 'from13'), $fresh,
	'from13: before the update its catalog is not the newest version\'s');
update('from13', 'ALTER EXTENSION snowid_sql UPDATE', $before);
is(SnowidSqlEdition::objects($node, 'from13'), $fresh,
	'from13: the catalog of the edition equals that of a fresh install');

# from 1.2, the path PostgreSQL takes: the shortest, straight to the newest
is($node->safe_psql('postgres', qq{SELECT path FROM pg_extension_update_paths('snowid_sql')
	WHERE source = '1.2' AND target = '$version'}),
	"1.2--$version", 'the path from 1.2 goes straight to the newest version');
is($node->safe_psql('postgres', qq{SELECT path FROM pg_extension_update_paths('snowid_sql')
	WHERE source = '1.3' AND target = '$version'}),
	"1.3--$version", 'the path from 1.3 is its update');
$before = install('from12', '1.2');
update('from12', 'ALTER EXTENSION snowid_sql UPDATE', $before);
is(SnowidSqlEdition::objects($node, 'from12'), $fresh,
	'from12: the catalog of the edition equals that of a fresh install');

# from 1.2 through 1.3, for one that stopped there
$before = install('from12via13', '1.2');
update('from12via13', q{ALTER EXTENSION snowid_sql UPDATE TO '1.3'; ALTER EXTENSION snowid_sql UPDATE},
	$before);
is(SnowidSqlEdition::objects($node, 'from12via13'), $fresh,
	'from12via13: the catalog of the edition equals that of a fresh install');

$node->stop;
done_testing();
