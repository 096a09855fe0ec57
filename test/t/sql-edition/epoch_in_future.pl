# An epoch set in the future (a typo, a year off; the table's constraint
# takes any epoch from 1970 to 9999): the C edition refuses a clock before
# its epoch before it moves anything ("the clock is outside the range of
# snowid timestamps", 22008, hint: check the system clock and
# snowid.epoch).  The SQL edition's first call takes a position with
# nextval(), its writer moves the generator to the epoch itself (position
# 0 and up lie at the epoch, in the future), and the call fails with "the
# system clock is 31460893561 ms behind the snowid generator" (hint:
# correct the system clock, or raise max_drift_ms or max_wait_ms).  The
# generator has moved, so the owner's correction of the epoch is then
# refused ("snowid layout or epoch cannot change once ids are issued:
# This database issued ids"), though it issued none: the database issues
# nothing until the epoch's time comes, or the extension is dropped.
#
# - The owner sets the epoch a year ahead and a worker id; an application's
#   call fails (as it should), saying something of the epoch.
# - The owner corrects the epoch: it should be taken, and the database
#   issue ids.
# On main (e5ac58e, snowid_sql 1.4, PostgreSQL 16): the call fails with
# the clock message (31,460,893,561 ms behind for the epoch a year ahead;
# by hand 97,556,931,742 ms for 2030-01-01, snowid_status() showing
# last_time at the epoch), naming no epoch, and the correction is refused
# with 55000 (the same on 18: 31,460,612,144 ms).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('epoch_in_future');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN; CREATE DATABASE appdb OWNER app');
my $app = $node->connstr('appdb') . ' user=app';

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET epoch = date_trunc('day', now()) + interval '1 year', worker_id = 1;
	SELECT count(*) FROM snowid_config WHERE worker_id = 1});
is($out, '1', 'the owner sets an epoch a year ahead, and a worker id') or diag($err);

($rc, $out, $err) = psql_as($app, 'SELECT snowid_next()');
isnt($rc, 0, 'a call fails: the clock lies before the epoch');
like($err, qr/epoch/, 'and says so') or diag($err);

($rc, $out, $err) = psql_as($app, q{
	UPDATE snowid_config SET epoch = '2020-01-01';
	SELECT count(snowid_next()) FROM generate_series(1, 100)});
is($out, '100', 'the owner corrects the epoch, and the database issues') or diag($err);

$node->stop;
done_testing();
