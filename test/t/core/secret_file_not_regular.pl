# A file named by a secret's setting that is not a regular file (a FIFO
# with no writer, a character device, a directory) is refused at once with
# a clear error, and never read: before, open() of a FIFO blocked for good,
# deaf to a cancel and a terminate, so every role calling snowid_public()
# hung, and with the Redis password file every claim and the lease renewer
# hung too (its lease ran out).  Each refusal must come at once (within
# 30 s, slack for a loaded machine), where a hang would outlast the 60 s
# statement_timeout it is deaf to, and a stop would wait for the hung lease
# renewer until pg_ctl gave up.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use POSIX qw(mkfifo);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;
use Time::HiRes qw(time);

# What this test needs beyond PostgreSQL: a skip naming the Debian package
# where it is missing (a failure under SNOWID_REQUIRE_TOOLS=1).
SnowidRedis::need_redis();

my $node = SnowidTest::new_server('secret_files',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_id' => 2 });
my $fifo = $node->data_dir . '/keys.fifo';
mkfifo($fifo, 0600) or die "mkfifo: $!";
my $dir = $node->data_dir . '/keys.dir';
mkdir($dir, 0700) or die "mkdir: $!";

# How long a refusal may take, in seconds: half the shortest hang, so that
# the two stay apart, and far more than a slow machine adds to what takes
# hundredths of a second; the figures measured are logged.
my $at_once_s = 30;

# Runs sql with a statement_timeout far beyond what a refusal takes;
# returns psql's stderr and how long it took.
sub timed_error
{
	my ($n, $sql) = @_;
	my $t0 = time;
	my ($ret, $out, $err) = $n->psql('postgres',
		"SET statement_timeout = '60s'; $sql",
		extra_params => [ '-v', 'VERBOSITY=verbose' ],
		timeout => 90);

	return ($err, time - $t0);
}

for my $case ([ 'a FIFO', $fifo ], [ 'a character device', '/dev/zero' ],
	[ 'a directory', $dir ])
{
	my ($what, $path) = @$case;

	SnowidTest::reload_conf($node, 'snowid.public_key_file' => $path);
	for my $f ('snowid_public(1)', 'snowid_scramble(1)')
	{
		my ($err, $took) = timed_error($node, "SELECT $f");
		like($err,
			qr/ERROR:  F0000: could not use the file named by snowid.public_key_file\nDETAIL:  "\Q$path\E" is not a regular file\.\nHINT:  .*It must be a regular file/,
			"public_key_file is $what: $f refuses it");
		cmp_ok($took, '<', $at_once_s, "at once (took ${\ sprintf('%.2f', $took)} s)");
	}
}
SnowidTest::reload_conf($node, 'snowid.public_key_file' => '');

# The Redis password file a FIFO: a claim is refused at once, and a lease
# renewer keeps running and stops at once.
my $redis = SnowidRedis->new(password => 'pw-not-read');
my $claimer = $redis->new_node('claimer', { 'snowid.datacenter_id' => 3 });
SnowidTest::set_conf($claimer, 'snowid.redis_password_file' => $fifo);
$claimer->start;
$claimer->safe_psql('postgres', 'CREATE EXTENSION snowid');
my ($err, $took) = timed_error($claimer, 'SELECT snowid_next()');
like($err,
	qr/ERROR:  F0000: could not use the file named by snowid.redis_password_file\nDETAIL:  "\Q$fifo\E" is not a regular file\./,
	'a FIFO as the Redis password file: the claim refuses it');
note(sprintf('the claim was refused after %.2f s', $took));
cmp_ok($took, '<', $at_once_s, 'at once');
$claimer->stop;

my $leaser = $redis->new_node('leaser',
	{ 'snowid.datacenter_id' => 3, 'snowid.worker_lease' => '3s' });
SnowidTest::set_conf($leaser, 'snowid.redis_password_file' => $fifo);
$leaser->start;
ok($leaser->wait_for_log(qr/snowid could not take a worker id on lease: could not use the file named by snowid.redis_password_file/),
	'the lease renewer says why it has no worker id');
is($leaser->safe_psql('postgres', 'SELECT 1'), '1', 'and the server answers');
my $t0 = time;
$leaser->stop('fast');
$took = time - $t0;
note(sprintf('the server stopped after %.2f s', $took));
cmp_ok($took, '<', $at_once_s, 'and it stops at once');

done_testing();
