# The layout and epoch guard (snowid_sql_config_check(), doc/managed.md
# "The layout and the epoch") by its two rules alone, reading no table: a
# change of the layout or the epoch is refused where ids made under the
# old row's may exist where this database's ids meet them: its generator
# moved (snowid_position called), or the row carries the stamp of another
# server (worker_server set and not this one's: a restored dump, a copy).
# Otherwise it is taken: a fresh install, a restore into one.  The restore
# of a dump's row is checked as the owner's UPDATE is.
#
# - A source (app's) in the layout 0/6/4 with worker id 5 issues 100 ids;
#   its dump restored into a fresh install of the default layout: the
#   restore takes the dump's layout, and the row its source's stamp.
# - On that copy, the owner's UPDATE of the epoch or the layout is refused,
#   naming the stamp; so is the restore of another dump (of another
#   layout) over it.
# - In the source (used), the same UPDATE is refused, naming the
#   generator.
# - In a fresh install, the layout and the epoch change.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $dir = PostgreSQL::Test::Utils::tempdir('guard_stamp_rule');
my $refused = qr/snowid layout or epoch cannot change once ids are issued/;
my $node = SnowidSqlEdition::new_server('guard_stamp_rule', ['app'],
	[qw(source copy other fresh)]);
my %as = map { $_ => app_url($node, $_) } qw(source copy other fresh);

my ($rc, $out, $err) = psql_as($as{source}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET datacenter_bits = 0, worker_bits = 6, sequence_bits = 4, worker_id = 5;
	CREATE TABLE t (id bigint DEFAULT snowid_next());
	INSERT INTO t SELECT FROM generate_series(1, 100);
	SELECT count(DISTINCT id) FROM t});
is($out, '100', 'the source issues 100 ids (0/6/4, worker id 5)') or diag($err);

psql_as($as{copy}, 'CREATE EXTENSION snowid_sql');
SnowidSqlEdition::dump_to($as{source}, "$dir/source.dump");
($rc, $err) = SnowidSqlEdition::restore_into($as{copy}, "$dir/source.dump", '--exit-on-error');
is($rc, 0, 'its dump is restored into a fresh install of the default layout') or diag($err);
is($node->safe_psql('copy', q{
	SELECT format('%s/%s/%s', datacenter_bits, worker_bits, sequence_bits) FROM snowid_config}),
	'0/6/4', 'the restore takes the dump\'s layout');
is($node->safe_psql('copy', 'SELECT worker_server IS NOT NULL FROM snowid_config'), 't',
	'and the row carries its source\'s stamp');

($rc, $out, $err) = psql_as($as{copy}, q{UPDATE snowid_config SET epoch = epoch + interval '30 s'});
like($err, $refused, 'on the copy, the owner\'s UPDATE of the epoch is refused');
like($err, qr/DETAIL:  The row comes from another server, which issued ids with it \(it was stamped there/,
	'naming the stamp of another server');
($rc, $out, $err) = psql_as($as{copy}, q{UPDATE snowid_config SET sequence_bits = 6});
like($err, $refused, 'and so is a change of the layout');

psql_as($as{other}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET sequence_bits = 8, worker_id = 7;
	SELECT snowid_next()});
SnowidSqlEdition::dump_to($as{other}, "$dir/other.dump");
($rc, $err) = SnowidSqlEdition::restore_into($as{copy}, "$dir/other.dump", '--exit-on-error', '--data-only');
isnt($rc, 0, 'the restore of another dump\'s row, of another layout, over the copy is refused');
like($err, $refused, 'by the same rule');
is($node->safe_psql('copy', q{SELECT sequence_bits FROM snowid_config}), '4', 'the copy keeps its layout');

($rc, $out, $err) = psql_as($as{source}, q{UPDATE snowid_config SET epoch = epoch + interval '30 s'});
like($err, $refused, 'in the used source, the change is refused');
like($err, qr/DETAIL:  This database issued ids, or its worker id was set/, 'naming the generator');

($rc, $out, $err) = psql_as($as{fresh}, q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET sequence_bits = 8, epoch = '2021-01-01 00:00:00+00';
	SELECT sequence_bits FROM snowid_config});
is($out, '8', 'in a fresh install the layout and the epoch change') or diag($err);

$node->stop;
done_testing();
