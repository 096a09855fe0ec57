# test/t/sql-edition/worker_set_public_numbers_cast_hint.pl
#
# Setting the worker id (doc/managed.md, "The configuration") raises the
# generator past the clock plus max_drift_ms and reads no table of the
# application's.  Public numbers kept as text or numeric (DEFAULT
# snowid_scramble(snowid_next())::text, a cast) were, before 1.4's last
# fixes, read by the raise as values it could not read back: the step was
# refused (55000), first with a hint to remove them (ids of this very
# generator, correct as they are), then with the DROP DEFAULT way out.
# Nothing is read now: the step is taken beside them, and the public
# numbers issued after it equal none issued before.
#
# - The edition with worker id 5 and one key, a table whose columns take
#   public numbers as text and as numeric, 100 rows.
# - The owner sets the worker id again: taken; 100 more rows, and no public
#   number of them equals one of the first 100.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('worker_set_public_numbers_cast_hint', ['app'], ['appdb']);

SnowidSqlEdition::install($node, 'appdb', q{
	UPDATE snowid_config SET worker_id = 5;
	INSERT INTO snowid_public_keys VALUES ('K1', decode('00112233445566778899aabbccddeeff', 'hex'), 1);
	CREATE TABLE t (n text DEFAULT snowid_scramble(snowid_next())::text,
					m numeric DEFAULT snowid_scramble(snowid_next()));
	INSERT INTO t SELECT FROM generate_series(1, 100);});

my ($rc, $out, $err) = psql_as(app_url($node, 'appdb'), q{
	UPDATE snowid_config SET worker_id = 5;
	SELECT worker_id FROM snowid_config});
is($out, '5', 'setting the worker id again beside public numbers kept as numeric or text is taken')
  or diag($err);
($rc, $out, $err) = psql_as(app_url($node, 'appdb'), q{
	ALTER TABLE t ADD COLUMN later boolean DEFAULT true;
	UPDATE t SET later = false;
	INSERT INTO t SELECT FROM generate_series(1, 100);
	SELECT (SELECT count(*) FROM t a JOIN t b ON a.n = b.n AND a.later AND NOT b.later)
		 + (SELECT count(*) FROM t a JOIN t b ON a.m = b.m AND a.later AND NOT b.later)});
is($out, '0', 'no public number issued after it equals one issued before') or diag($err);

$node->stop;
done_testing();
