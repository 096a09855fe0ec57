# test/t/sql-edition/guard_hint_restored_copy.pl
#
# The layout guard refuses a change of the layout or the epoch where the
# row carries another server's stamp (a restored dump: doc/managed.md,
# "The layout and the epoch").  Its hint is the same for every refusal:
# "Set the layout and the epoch before the first worker id, or with it in
# one UPDATE (a restore: set them to the dump's before restoring its
# tables)."  The owner of a restored copy, which has no worker id yet,
# that does just that (UPDATE snowid_config SET sequence_bits = 4,
# worker_id = 5, the first worker id, in one UPDATE) is refused with that
# very hint, which names a step the guard refuses; the way the docs give
# for such a copy (drop the extension and create it again, set the layout
# and the epoch, then the defaults: doc/layouts.md) comes only after it.
# The hint of a refusal on a stamp should not advise the statement refused.
#
# On fix68l (1e35e60, snowid_sql 1.4, Debian's 15.20): the hint above, on
# the UPDATE that sets the first worker id with the layout.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('guard_hint_restored_copy');
my $node = SnowidSqlEdition::new_server('guard_hint_restored_copy', ['app'], [qw(origin copy)]);

SnowidSqlEdition::install($node, 'origin', 'UPDATE snowid_config SET worker_id = 5; CREATE TABLE t AS SELECT snowid_next() AS id');
SnowidSqlEdition::dump_to(app_url($node, 'origin'), "$dir/origin.dump");
my ($rc, $err) = SnowidSqlEdition::restore_into(app_url($node, 'copy'), "$dir/origin.dump", '--exit-on-error');
is($rc, 0, 'the dump restored whole into a new database') or diag($err);

(my $out, $err) = (psql_as(app_url($node, 'copy'), 'UPDATE snowid_config SET sequence_bits = 4, worker_id = 5'))[ 1, 2 ];
like($err, qr/ERROR:  55000: snowid layout or epoch cannot change once ids are issued/,
	'the first worker id set with another layout on a restored copy is refused');
my ($hint) = $err =~ /^HINT:  (.*)$/m;
$hint //= '';
unlike($hint, qr/or with it in one UPDATE/, "the hint does not advise the UPDATE just refused ($hint)");

$node->stop;
done_testing();
