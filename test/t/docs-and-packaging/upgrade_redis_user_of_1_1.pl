# The Redis user of release 1.1, upgraded as install.md says (issue 69's
# second attack, its test 158).  Release 1.1's README made snowid's Redis
# user as
#
#   ACL SETUSER snowid on >s3cret ~{snowid:dc:*}:owners +eval +hgetall +hset +hdel +select +config|get
#
# (the owners key alone, the claim run with EVAL).  install.md once said to
# give it +fcall; a server of this release claims with the function
# library, which reads and writes the leases and fences keys too, and
# every claim was refused (42501, NOPERM on the keys).  The page now makes
# the user again (upgrade-user-1.1.redis): with that user, a restarted
# server claims its worker id.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidRedis;
use SnowidTest;
use Test::More;

SnowidRedis::need_redis();

my $top = "$FindBin::RealBin/../../..";
my $install = slurp_file("$top/doc/install.md");
unlike($install, qr/give\s+their\s+Redis\s+user\s+`\+fcall`/,
	'install.md no longer tells an upgrade from 1.1 to give the Redis user +fcall alone');
$install =~ /^[ \t]*<!-- file upgrade-user-1\.1\.redis -->\n[ \t]*```\w*\n[ \t]*(ACL SETUSER .*)\n/m
  or die 'install.md has no upgrade-user-1.1.redis';
my @acl = split ' ', $1;
like("@acl", qr/ >s3cret /, "the page's user keeps 1.1's password (s3cret)");

my $redis = SnowidRedis->new;

# 1.1's user, then the page's
$redis->cli('ACL', 'SETUSER', 'snowid', 'on', '>s3cret', '~{snowid:dc:*}:owners',
	'+eval', '+hgetall', '+hset', '+hdel', '+select', '+config|get');
$redis->cli(@acl);

my $node = SnowidTest::new_server('upgraded',
	{
		'snowid.redis_url' => 'unix://snowid:s3cret@' . $redis->socket,
		'snowid.datacenter_id' => 3
	});
my ($rc, $id, $err) = $node->psql('postgres', 'SELECT snowid_next()');
is($rc, 0, "a server of this release claims under the user the page makes of 1.1's")
  or diag($err);
like(SnowidRedis::worker($node), qr/^\d+\|redis$/, 'and holds a worker id from Redis');

$node->stop;
$redis->stop;
done_testing();
