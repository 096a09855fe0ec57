# test/t/sql-edition/worker_set_layout_ended.pl
#
# Setting the worker id raises the generator past the clock plus
# max_drift_ms under the new row's layout and epoch
# (snowid_sql_config_floor(), snowid_sql_raise_floor()).  Where that
# layout's time has run out under that epoch (39 bits of time, 17.4 years,
# from an epoch of 2009), or runs out within max_drift_ms of the clock,
# the UPDATE fails in snowid_sql_raise_floor() with an error meant for
# none to see ("nothing else calls this function"): "22003: the floor
# 1795960611926 lies past the last time of the layout 39/0/12/12", a Unix
# millisecond count and the edition's inner word "floor", no detail, no
# hint.  A call under such a row says "snowid has run out of timestamps",
# naming when the layout's time ended; the owner's UPDATE should say as
# much, with a detail and a hint as full sentences (what the owner can
# change: the epoch or the layout, before the first worker id).
#
# On fix68l (53f9cb0, snowid_sql 1.4, Debian's 15.20): the message above,
# its only lines the message and the context.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('worker_set_layout_ended', ['app'], ['app']);
SnowidSqlEdition::install($node, 'app');

my ($rc, $out, $err) = psql_as(app_url($node, 'app'), q{
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 12, sequence_bits = 12,
		epoch = '2009-01-01 00:00:00+00', worker_id = 1});
like($err, qr/ERROR:  /, 'a worker id set with a layout whose time ran out under its epoch is refused');
my ($message) = $err =~ /ERROR:  (?:[0-9A-Z]{5}: )?(.*)/;
$message //= '';
unlike($message, qr/\b\d{13}\b/, "the message names no Unix millisecond count ($message)");
unlike($message, qr/\bfloor\b/, 'nor the edition\'s inner word "floor"');
like($err, qr/^DETAIL:  [A-Z].*\.$/m, 'a detail, a full sentence, says why');
like($err, qr/^HINT:  [A-Z].*\.$/m, 'a hint, a full sentence, says what to change');
($rc, $out, $err) = psql_as(app_url($node, 'app'), 'SELECT worker_id IS NULL FROM snowid_config');
is($out, 't', 'the row is as it was');

$node->stop;
done_testing();
