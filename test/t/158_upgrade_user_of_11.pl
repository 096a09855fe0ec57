# The Redis user of release 1.1, upgraded as install.md says (issue 69's
# attack).  Release 1.1's README made snowid's Redis user as
#
#   ACL SETUSER snowid on >s3cret ~{snowid:dc:*}:owners +eval +hgetall +hset +hdel +select +config|get
#
# (the owners key alone, the claim run with EVAL).  install.md's
# "Upgrading", step 2, says of it: "From 1.1, whose servers ran their claim
# with EVAL, give their Redis user +fcall".  A server of this release then
# claims with the function library, which reads and writes the leases and
# fences keys too and calls HGET and TIME: with that user and +fcall, as
# the page says, every claim of a restarted server must succeed; on main
# each is refused (42501, NOPERM on the keys), so that after step 3 no
# server of the datacenter has a worker id until the user is made again.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();

my $top = "$FindBin::RealBin/../..";
like(slurp_file("$top/doc/install.md"),
	qr/From\s+1\.1,\s+whose\s+servers\s+ran\s+their\s+claim\s+with\s+`EVAL`,\s+give\s+their\s+Redis\s+user\s+`\+fcall`/,
	'install.md tells an upgrade from 1.1 to give the Redis user +fcall');

my $redis = SnowidRedis->new;

# 1.1's user, then what the page adds
$redis->cli('ACL', 'SETUSER', 'snowid', 'on', '>s3cret', '~{snowid:dc:*}:owners',
	'+eval', '+hgetall', '+hset', '+hdel', '+select', '+config|get');
$redis->cli('ACL', 'SETUSER', 'snowid', '+fcall');

my $node = SnowidTest::new_node('upgraded',
	{
		'snowid.redis_url' => 'unix://snowid:s3cret@' . $redis->socket,
		'snowid.datacenter_id' => 3
	});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
my ($rc, $id, $err) = $node->psql('postgres', 'SELECT snowid_next()');
is($rc, 0, "a server of this release claims under 1.1's user given +fcall")
  or diag($err);
like(SnowidRedis::worker($node), qr/^\d+\|redis$/, 'and holds a worker id from Redis');

$node->stop;
$redis->stop;
done_testing();
