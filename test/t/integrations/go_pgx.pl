# The Go recipe of doc/adopting.md, built as the page shows it with
# test/clients/frameworks/check_pgx.go, offline from Debian's Go packages
# (golang-go, golang-github-jackc-pgx-v4-dev: GOPATH=/usr/share/gocode,
# GO111MODULE=off, GOPROXY=off); test/run builds it once for every version
# (SnowidClients::build), and the page's program (main.go) with the page's
# build line.  Orders of 1, 3 and 5 lines, keys taken first
# from the KeyPool (snowid_next_batch()), the lines with one COPY; the
# server logs every statement.  Then Decode and PublicIDChecks against
# snowid_decode() and snowid_public_is_valid() on 10,000 ids and texts.
# Without go or pgx this test skips itself, naming the package (a failure
# under SNOWID_REQUIRE_TOOLS=1, as test/run sets it).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidClients;
use SnowidTest;
use Test::More;

SnowidTest::need_program('go', 'golang-go');
SnowidTest::need_file('/usr/share/gocode/src/github.com/jackc/pgx/v4',
	'golang-github-jackc-pgx-v4-dev');

my $builds = SnowidClients::builds();
my $client = "$builds/go/check_pgx";
ok(-x $client, 'the pgx recipe is built');
ok(-x "$builds/go/app/orders", "the page's program is built with the page's build line");

my $node = SnowidClients::new_framework_node('pgx', 7, 30);
SnowidClients::check_orders($node, 'pgx', 'pgx', [ $client, 'orders' ]);

# the page's program (main.go): an order of three lines, its key printed
SnowidClients::run_page_program($node, 'pgx', [ "$builds/go/app/orders" ],
	qr/^(\d+)$/m, dbname => 'pgx');

my $samples = SnowidClients::id_samples($node, PostgreSQL::Test::Utils::tempdir('ids'));
SnowidClients::check_id_reader($node, 'Go', [ $client, 'ids' ], $samples);

$node->stop;
done_testing();
