# A coordination database of snowid 1.3.0, updated to this release's
# snowid_coordinator as doc/install.md's "From 1.3" says, is what an
# install of this release makes, and keeps its claims.  snowid_coordinator
# 1.0 is installed exactly as release 1.3.0 built it: its script made by
# 1.3.0's own Makefile from its sources (SNOWID_RELEASE_1_3 of
# test/versions.sh; test/run unpacks them from the clone's history into
# SNOWID_EARLIER_RELEASES, else this clone's git history), put into a
# private copy of the PostgreSQL under test beside this release's files.
# One database gets 1.0, the grants its script's head gives, and three
# holders of datacenter 1 made by the calls of 1.3.0's servers (two for
# good, one on lease); another gets an install of this release and the
# grants its head gives.  The owner's default privileges grant to another
# role in both, which neither install nor update may leave on what they
# make.  The update refuses a role other than the extension's owner
# (a superuser too) and changes nothing then; the page's block, run as the
# owner, updates it.  Then the two databases hold the same extension:
# every function and procedure (its definition, settings, owner,
# privileges and initial privileges), table, column, default, constraint,
# type, comment, member and configuration table alike, and pg_dump
# --schema-only of both the same.  The holders still hold their worker
# ids: a check-in of a 1.3.0 server (its secret), one of a server of this
# release (a holder proof, through prove(), which the block granted the
# servers' role) and a renewal of the lease each keep theirs, and a new
# server is granted another.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use Cwd qw(realpath);
use Digest::SHA qw(sha256_hex);
use File::Copy qw(copy);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidCoordDb;
use SnowidTest;
use Test::More;
use Time::HiRes;

# (required, not used: test/run prepares the client builds for a file
# that uses it)
require SnowidClients;

my $top = realpath("$FindBin::RealBin/../../..");
my %versions = SnowidTest::versions();
my $commit = $versions{SNOWID_RELEASE_1_3}
  // BAIL_OUT('test/versions.sh names no SNOWID_RELEASE_1_3');

# ---------------------------------------------------------------------------
# snowid_coordinator 1.0 as 1.3.0 built it

my $sources = defined $ENV{SNOWID_EARLIER_RELEASES}
  ? "$ENV{SNOWID_EARLIER_RELEASES}/1.3" : undef;
if (!defined $sources || !-d $sources)
{
	$sources = PostgreSQL::Test::Utils::tempdir('release_1_3');
	IPC::Run::run([ 'git', '-C', $top, 'archive', $commit ],
		'|', [ 'tar', '-C', $sources, '-xf', '-' ], '2>', \my $err)
	  or SnowidTest::missing_tool(
		"needs the sources of release 1.3.0 ($commit): the git history of a clone, "
		  . 'which test/run unpacks into SNOWID_EARLIER_RELEASES');
}
ok(-f "$sources/sql/snowid_coordinator/1.0/fence.sql",
	"the sources of 1.3.0 hold snowid_coordinator 1.0's parts");

# made by its own Makefile, in a copy of its own (the unpacked sources are
# shared by the runs of every version)
my $build = PostgreSQL::Test::Utils::tempdir('build_1_3');
system('cp', '-R', "$sources/.", $build) == 0
  or die "could not copy $sources to $build";
my ($pg_config) = SnowidTest::pg_config_in_path();
my ($ok, $out) = SnowidTest::run_in($build, 'make', "PG_CONFIG=$pg_config",
	'sql/snowid_coordinator--1.0.sql');
ok($ok, "1.3.0's Makefile makes its sql/snowid_coordinator--1.0.sql") or diag($out);
my $script_10 = "$build/sql/snowid_coordinator--1.0.sql";

# a private copy of the PostgreSQL under test, which has this release's
# files, and 1.3.0's script beside them
my %inst = SnowidTest::private_installation();
my $extdir = "$inst{root}$inst{sharedir}/extension";
ok(!-e "$extdir/snowid_coordinator--1.0.sql",
	'this release installs no snowid_coordinator--1.0.sql');
copy($script_10, "$extdir/snowid_coordinator--1.0.sql")
  or die "could not copy $script_10 into $extdir: $!";
ok(-f "$extdir/snowid_coordinator--1.1.sql" && -f "$extdir/snowid_coordinator--1.0--1.1.sql",
	'this release installs snowid_coordinator 1.1 and its update from 1.0');

my $grants_10 = SnowidCoordDb::head_grants($script_10);
my $grants_11 = SnowidCoordDb::head_grants("$extdir/snowid_coordinator--1.1.sql");
like($grants_10, qr/TO snowid_fleet;.*TO snowid_admin;/s,
	"1.3.0's script gives the grants of the servers' role and the administrators'");
like($grants_11, qr/lower_fence.*TO snowid_admin;/s,
	"this release's gives lower_fence() to the administrators too");

# ---------------------------------------------------------------------------
# The two databases

my $db = SnowidCoordDb->new('coordver', install_path => $inst{install_path},
	version => '1.0');
my $node = $db->node;
$node->safe_psql('postgres', q{
	CREATE ROLE snowid_fleet LOGIN;
	CREATE ROLE snowid_admin LOGIN;
	CREATE ROLE bystander;
	CREATE DATABASE fresh OWNER coord_owner;
});
is($db->sql(undef, "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'"),
	'1.0', 'the database "coord" has snowid_coordinator 1.0');
$db->sql('coord_owner', $grants_10);

# the owner's default privileges give another role what it makes: before
# the update there, before the install in fresh
my $defaults = q{
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT ALL ON TABLES TO bystander;
	ALTER DEFAULT PRIVILEGES FOR ROLE coord_owner GRANT EXECUTE ON ROUTINES TO bystander;
};
$db->sql('coord_owner', $defaults);
$node->safe_psql('fresh', $defaults . q{
	CREATE EXTENSION snowid_coordinator;
} . $grants_11, extra_params => [ '-U', 'coord_owner' ]);
is($node->safe_psql('fresh', "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'"),
	'1.1', 'the database "fresh" has this release\'s, 1.1');

# Calls a procedure of the servers as snowid_fleet in coord; returns its
# outcome as a hash
my @outcome = qw(outcome worker_id floor_ms fence_ms lease_ms holder generation counter);
my $now = q{(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint};

sub fleet_call
{
	my ($sql) = @_;
	my @values = split /\|/, $db->sql('snowid_fleet', "CALL snowid_coordinator.$sql"), -1;
	my %o;

	@o{@outcome} = map { $_ eq '' ? undef : $_ } @values;
	return \%o;
}

my %secret = map { $_ => SnowidCoordDb::secret_of($_) } qw(server-a server-b server-c server-d);
my $token = 'a1b2c3d4e5f60718';
my %held;
my %seen;

# the holders of datacenter 1, marked new by an administrator before its
# first claim (doc/coordinator.md), each called as a server of 1.3.0 calls
# (its secret, a quiet period and a clock margin declared)
$db->sql('coord_owner', 'SELECT snowid_coordinator.new_datacenter(1)');
for my $server ('server-a', 'server-b')
{
	my $o = fleet_call("claim(1, '$server', '$secret{$server}', -1, 31, -1, $now + 1000,"
		  . " 60000, false, NULL, NULL, 60000, NULL)");
	is($o->{outcome}, 'ok', "1.0: $server claims a worker id for good");
	$held{$server} = $o->{worker_id};
	$seen{$server} = [ $o->{generation}, $o->{counter} ];
}
my $lease = fleet_call("lease_claim(1, 'server-c', '$secret{'server-c'}', 31, 600000, $now,"
	  . " $now + 1000, -1, 0, '$token', 60000, NULL, NULL, 60000)");
is($lease->{outcome}, 'ok', '1.0: server-c takes a worker id on lease');
$held{'server-c'} = $lease->{worker_id};
$seen{'server-c'} = [ $lease->{generation}, $lease->{counter} ];
is(scalar(keys %{ { reverse %held } }), 3, 'three worker ids held ('
	  . join(' ', map { "$_=$held{$_}" } sort keys %held) . ')');
my $rows_before = $db->sql(undef, q{
	SELECT string_agg(format('%s %s %s %s', worker_id, holder, on_lease, lease_token), ';' ORDER BY worker_id)
	FROM snowid_coordinator.worker_ids WHERE datacenter = 1});

# ---------------------------------------------------------------------------
# The update

my $refused = $db->sql_error(undef, 'ALTER EXTENSION snowid_coordinator UPDATE');
like($refused // '', qr/^42501: snowid_coordinator is updated by its owner coord_owner, not by/,
	'the update run by a superuser that does not own the extension is refused, naming the owner');
is($db->sql(undef, "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'"),
	'1.0', 'and changes nothing');

my %block = SnowidClients::recipes("$top/doc/install.md");
ok(defined $block{'upgrade-1.3-coordinator.sql'},
	'doc/install.md shows the block upgrade-1.3-coordinator.sql');
my ($ret, $stdout, $stderr) = $node->psql('coord', $block{'upgrade-1.3-coordinator.sql'} // '',
	on_error_stop => 1, extra_params => [ '-U', 'coord_owner' ]);
is($ret, 0, "the page's block updates it, run by the extension's owner") or diag($stderr);
like($stderr, qr/WARNING:  the servers' role may not call prove\(\)/,
	'the update warns that the servers\' role may not call prove() before the block grants it');
is($db->sql(undef, "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'"),
	'1.1', 'the database "coord" has snowid_coordinator 1.1');
is($db->sql(undef, q{
	SELECT string_agg(format('%s %s %s %s', worker_id, holder, on_lease, lease_token), ';' ORDER BY worker_id)
	FROM snowid_coordinator.worker_ids WHERE datacenter = 1}),
	$rows_before, 'it keeps every claim');

# ---------------------------------------------------------------------------
# The same extension as an install

# The catalog of the extension, a line an object or attribute
my $catalog = q{
	SELECT 'routine ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid)
		   || ' owner=' || p.proowner::regrole || ' acl=' || coalesce(p.proacl::text, '-')
		   || ' init=' || coalesce((SELECT i.privtype::text || ':' || i.initprivs::text
									 FROM pg_init_privs i
									 WHERE i.classoid = 'pg_proc'::regclass AND i.objoid = p.oid), '-')
		   || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
	FROM pg_proc p WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
	UNION ALL
	SELECT 'relation ' || c.relname || ' kind=' || c.relkind::text || ' owner=' || c.relowner::regrole
		   || ' acl=' || coalesce(c.relacl::text, '-')
		   || ' init=' || coalesce((SELECT i.privtype::text || ':' || i.initprivs::text
									 FROM pg_init_privs i
									 WHERE i.classoid = 'pg_class'::regclass AND i.objoid = c.oid
									   AND i.objsubid = 0), '-')
		   || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '-')
		   || CASE WHEN c.relkind = 'v' THEN ' ' || pg_get_viewdef(c.oid) ELSE '' END
	FROM pg_class c WHERE c.relnamespace = 'snowid_coordinator'::regnamespace
	UNION ALL
	SELECT 'column ' || c.relname || '.' || a.attname || ' #' || a.attnum || ' '
		   || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
		   || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
		   || ' acl=' || coalesce(a.attacl::text, '-')
		   || ' comment=' || coalesce(col_description(c.oid, a.attnum), '-')
	FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		 LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	WHERE c.relnamespace = 'snowid_coordinator'::regnamespace AND a.attnum > 0
	  AND NOT a.attisdropped
	UNION ALL
	SELECT 'constraint ' || coalesce(n.conrelid::regclass::text, n.contypid::regtype::text) || ' '
		   || n.conname || ' ' || pg_get_constraintdef(n.oid)
	FROM pg_constraint n WHERE n.connamespace = 'snowid_coordinator'::regnamespace
	UNION ALL
	SELECT 'index ' || pg_get_indexdef(x.indexrelid)
	FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid
	WHERE c.relnamespace = 'snowid_coordinator'::regnamespace
	UNION ALL
	SELECT 'type ' || t.typname || ' owner=' || t.typowner::regrole || ' acl=' || coalesce(t.typacl::text, '-')
		   || ' init=' || coalesce((SELECT i.privtype::text || ':' || i.initprivs::text
									 FROM pg_init_privs i
									 WHERE i.classoid = 'pg_type'::regclass AND i.objoid = t.oid), '-')
	FROM pg_type t WHERE t.typnamespace = 'snowid_coordinator'::regnamespace
	UNION ALL
	SELECT 'schema owner=' || n.nspowner::regrole || ' acl=' || coalesce(n.nspacl::text, '-')
		   || ' init=' || coalesce((SELECT i.privtype::text || ':' || i.initprivs::text
									 FROM pg_init_privs i
									 WHERE i.classoid = 'pg_namespace'::regclass AND i.objoid = n.oid), '-')
	FROM pg_namespace n WHERE n.nspname = 'snowid_coordinator'
	UNION ALL
	SELECT 'extension ' || e.extversion || ' owner=' || e.extowner::regrole
		   || ' relocatable=' || e.extrelocatable
		   || ' config=' || coalesce((SELECT string_agg(c::regclass::text || ' ' || w, ', ' ORDER BY c::regclass::text)
									   FROM unnest(e.extconfig, e.extcondition) u(c, w)), '-')
	FROM pg_extension e WHERE e.extname = 'snowid_coordinator'
	UNION ALL
	SELECT 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
	FROM pg_depend d JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
		 AND d.refobjid = e.oid
	WHERE e.extname = 'snowid_coordinator' AND d.deptype = 'e'
	ORDER BY 1
};
my %lines;
for my $dbname ('coord', 'fresh')
{
	$lines{$dbname} = [ split /\n(?=(?:routine|relation|column|constraint|index|type|schema|extension|member) )/,
		$node->safe_psql($dbname, $catalog) ];
}
cmp_ok(scalar @{ $lines{fresh} }, '>', 100,
	'the catalog of the installed extension has its objects ('
	  . scalar(@{ $lines{fresh} }) . ' lines)');
my %in_fresh = map { $_ => 1 } @{ $lines{fresh} };
my %in_coord = map { $_ => 1 } @{ $lines{coord} };
my @only_updated = grep { !$in_fresh{$_} } @{ $lines{coord} };
my @only_installed = grep { !$in_coord{$_} } @{ $lines{fresh} };
is(scalar(@only_updated) + scalar(@only_installed), 0,
	'the updated extension is the installed one: every routine\'s definition, settings and privileges, '
	  . 'every table, column, default, constraint, type, comment, member and configuration table')
  or diag("only in the update:\n" . join("\n", map { substr($_, 0, 600) } @only_updated)
	  . "\nonly in the install:\n" . join("\n", map { substr($_, 0, 600) } @only_installed));
unlike(join("\n", @{ $lines{coord} }), qr/bystander/,
	'the owner\'s default privileges gave nothing the update made to another role');
like(join("\n", @{ $lines{coord} }), qr/routine snowid_coordinator\.prove\(integer,text,text,text\[\]\) .* acl=\{[^}]*snowid_fleet=X/s,
	'the servers\' role may call prove()');

# pg_dump of both (the grants of an administrator that a restore makes
# again: those on what 1.0 had must not have become initial privileges)
my %dump;
for my $dbname ('coord', 'fresh')
{
	my ($dump_out, $dump_err) = ('', '');
	IPC::Run::run([ "$inst{root}$inst{bindir}/pg_dump", '--schema-only', '--no-comments',
			'-d', $node->connstr($dbname) ],
		'>', \$dump_out, '2>', \$dump_err)
	  or die "pg_dump of $dbname failed: $dump_err";
	# a random key of newer minor releases
	$dump{$dbname} = $dump_out =~ s/^\\(?:un)?restrict \S+\n//mgr;
}
like($dump{coord}, qr/GRANT ALL ON PROCEDURE snowid_coordinator\.claim\(.*\) TO snowid_fleet;/,
	'pg_dump of the updated database keeps the grant of the servers\' procedures');
is($dump{coord}, $dump{fresh}, 'pg_dump --schema-only of the updated database is that of the installed one');

# ---------------------------------------------------------------------------
# The holders keep their worker ids

my $check_a = fleet_call("claim(1, 'server-a', '$secret{'server-a'}', -1, 31, $held{'server-a'},"
	  . " $now + 1000, 60000, true, $seen{'server-a'}[0], $seen{'server-a'}[1], 60000, NULL)");
is("$check_a->{outcome} $check_a->{worker_id}", "ok $held{'server-a'}",
	'a check-in of a 1.3.0 server (its secret) keeps its worker id');

# the proof of a server of this release: its key, n (its clock in
# microseconds) and the call, its procedure's name and every argument but
# the proof (NULL as nothing), each but the last followed by a line feed
my $key = sha256_hex($secret{'server-b'});
my $usable = $db->sql(undef, "SELECT $now + 1000");
my @call = ('claim', 1, 'server-b', -1, 31, $held{'server-b'}, $usable, 60000, 'true',
	$seen{'server-b'}[0], $seen{'server-b'}[1], 60000, '');
my $n = int(Time::HiRes::time() * 1_000_000);
my $proof = "$n:" . sha256_hex(join "\n", $key, $n, @call);
my $check_b = fleet_call("claim(1, 'server-b', '$proof', -1, 31, $held{'server-b'},"
	  . " $usable, 60000, true, $seen{'server-b'}[0], $seen{'server-b'}[1], 60000, NULL)");
is("$check_b->{outcome} $check_b->{worker_id}", "ok $held{'server-b'}",
	'a check-in of a server of this release (a holder proof) keeps its worker id');
is($db->sql(undef, q{SELECT max(n) FROM snowid_coordinator.proofs_taken WHERE datacenter = 1 AND identity = 'server-b'}),
	$n, 'prove() took its n');

my $c = fleet_call("lease_renew(1, 'server-c', '$secret{'server-c'}', $held{'server-c'}, 600000,"
	  . " $now + 600000, '$token', 60000, $now, $seen{'server-c'}[0], $seen{'server-c'}[1], 60000)");
is("$c->{outcome} $c->{worker_id}", "ok $held{'server-c'}",
	'a renewal of the lease keeps its worker id');

my $d = fleet_call("claim(1, 'server-d', '$secret{'server-d'}', -1, 31, -1, $now + 1000,"
	  . " 60000, false, NULL, NULL, 60000, NULL)");
is($d->{outcome}, 'ok', 'a new server is granted a worker id at once');
ok(defined $d->{worker_id} && !grep({ $_ == $d->{worker_id} } values %held),
	'one no other holder holds (' . ($d->{worker_id} // 'none') . ')');

$node->stop;
done_testing();
