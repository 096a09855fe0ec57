# The Java recipe of doc/adopting.md, compiled as the page shows it with
# test/clients/frameworks/CheckJdbc.java (javac of default-jdk-headless;
# test/run compiles it once for every version, SnowidClients::build), run
# with Debian's libpostgresql-jdbc-java over TCP with
# reWriteBatchedInserts=true.  Orders of 1, 3 and 5 lines, keys taken
# first from SnowidKeys (snowid_next_batch()), the lines in one batch: the
# driver sends it as multi-row INSERTs of 2^k rows (5 lines: 4 + 1), which
# the server's log shows.  Then SnowidKeys.Decoded and publicIdChecks
# against snowid_decode() and snowid_public_is_valid() on 10,000 ids and
# texts.  Without java, javac or the driver this test skips itself, naming
# the package (a failure under SNOWID_REQUIRE_TOOLS=1, as test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidTest;
use Test::More;

my $java = SnowidTest::need_program('java', 'default-jdk-headless');
SnowidTest::need_program('javac', 'default-jdk-headless');
my $jdbc = SnowidTest::need_file('/usr/share/java/postgresql.jar',
	'libpostgresql-jdbc-java');

my $classes = SnowidClients::builds() . '/java/classes';
ok(-f "$classes/CheckJdbc.class", 'the JDBC recipe is compiled');
my @client = ($java, '-cp', "$classes:$jdbc", 'CheckJdbc');

my $node = SnowidClients::new_framework_node('jdbc', 8, 31);
my $user = $node->safe_psql('postgres', 'SELECT current_user');
my $url = sprintf(
	'jdbc:postgresql://127.0.0.1:%d/jdbc?user=%s&reWriteBatchedInserts=true&ApplicationName=snowid-jdbc',
	$node->port, $user);

# The driver's statements for a batch of n lines: one per power of two in
# n (5 lines: 4 + 1), sent together by executeBatch.
sub rewritten
{
	my ($n) = @_;
	my $k = 0;

	for (; $n > 0; $n >>= 1)
	{
		$k += $n & 1;
	}
	return $k;
}

# (the client's URL names the application, snowid-jdbc)
SnowidClients::check_orders($node, 'JDBC', 'jdbc', [ @client, 'orders', $url ],
	lines_statements => \&rewritten);

# the page's program (Main.java), compiled and run with the page's lines
{
	my $recipes = SnowidClients::write_recipes(PostgreSQL::Test::Utils::tempdir('recipes'),
		qw(SnowidKeys.java Orders.java Main.java run-jdbc.sh));
	local $ENV{JDBC_URL} = $url =~ s/&ApplicationName=[^&]*//r;

	SnowidClients::run_page_program($node, 'JDBC', 'run-jdbc.sh', qr/^(\d+)$/m,
		dbname => 'jdbc', dir => $recipes);
}

my $samples = SnowidClients::id_samples($node, PostgreSQL::Test::Utils::tempdir('ids'));
SnowidClients::check_id_reader($node, 'Java', [ @client, 'ids' ], $samples);

$node->stop;
done_testing();
