# Uninstalled as install.md says, then installed again on the same data
# directory with the worker id it had (issue 69's second attack, its test
# 157).  install.md's "Uninstalling" step 3 once removed snowid_state, the
# high-water mark, and a server installed again with the same worker id
# after its clock stepped back issued every id again; the page now keeps
# the mark.  Here the server's clock ran 40 s ahead while it issued ids (a
# wrong clock, later stepped back by NTP); the server is taken out of
# snowid as the page says (uninstall-files.sh as it stands), snowid is
# installed again with the same snowid.worker_id, and the clock then
# stands where it stood when the first ids were made.  The server must
# issue above its earlier ids, or refuse while its clock is behind: no id
# comes twice.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;

# The page's steps, with its uninstall-files.sh as it stands
sub reinstall
{
	my ($name) = @_;

	my %settings = ('snowid.datacenter_id' => 3, 'snowid.worker_id' => 7);
	my $node = SnowidTest::new_node($name, \%settings);
	my $ids = SnowidTest::Ledger->new;

	# The clock 40 s ahead, standing, so that the test knows the ids' time
	my $ahead = sprintf('%.3f', time() + 40);
	$clock->set("\@$ahead");
	$clock->start_node($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	$ids->take($node, 20000, "$name: before uninstalling, the clock 40 s ahead",
		'SELECT snowid_next_batch(20000)');

	# Uninstalling: step 1 (no table uses it here), step 3 (the settings out,
	# a restart, then the page's uninstall-files.sh in the data directory)
	my $data = $node->data_dir;
	$node->safe_psql('postgres', 'DROP EXTENSION snowid');
	$node->adjust_conf('postgresql.conf', $_, undef)
	  for ('shared_preload_libraries', map { quotemeta } keys %settings);
	$clock->set('+0');
	$node->restart;
	my $remove = SnowidTest::page_file('doc/install.md', 'uninstall-files.sh');
	$remove =~ s{^cd /var/lib/postgresql/15/main}{cd '$data'}m
	  or die 'uninstall-files.sh no longer goes into /var/lib/postgresql/15/main';
	my ($out, $err) = ('', '');
	ok(IPC::Run::run([ 'bash', '-ec', $remove ], '<', \undef, '>', \$out, '2>', \$err),
		"$name: install.md's uninstall-files.sh runs")
	  or diag("$out$err");
	is(join(' ', map { s{.*/}{}r } glob("$data/snowid*")), 'snowid_state',
		"$name: the files of snowid are removed but the mark");
	$node->stop;

	# Installed again, "a worker id to set again": the one it had.  The clock,
	# stepped back by NTP meanwhile, now reads the time of the first ids.
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowid'\n");
	SnowidTest::set_conf($node, %settings);
	$clock->set("\@$ahead");
	$clock->start_node($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	my ($rc, $again, $stderr) = $node->psql('postgres', 'SELECT snowid_next_batch(20000)');
	if ($rc == 0)
	{
		my @again = split /\n/, $again;
		my $max = $ids->max;

		$ids->add(@again);
		cmp_ok($again[0], '>', $max,
			"$name: after the reinstall, the ids lie above those issued before it");
	}
	else
	{
		like($stderr, qr/55000: the system clock is \d+ ms behind the snowid generator/,
			"$name: after the reinstall the server refuses, its clock behind its mark");
	}
	$ids->no_duplicates("$name: no id issued both before the uninstall and after the reinstall");
	$node->stop;
	return;
}

reinstall('as_the_page_says');

done_testing();
