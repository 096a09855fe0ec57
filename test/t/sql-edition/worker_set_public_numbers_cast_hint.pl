# test/t/sql-edition/worker_set_public_numbers_cast_hint.pl
#
# Setting the worker id (doc/managed.md, "The configuration") reads back
# "snowid_scramble(snowid_next()) (with the first key, while
# snowid_public_keys holds one key)" and "a cast of" snowid_next(); "a
# column whose default makes anything else of the id ... or holds another
# type ... refuses the UPDATE with 55000 while it holds a value, naming
# it: once this server's clock has passed the source's last id ..., set
# the worker id in one transaction with that default dropped".
#
# Public numbers kept as text or numeric (DEFAULT
# snowid_scramble(snowid_next())::text, a cast the edition's form reading
# strips) are refused, as they may be, but with the message meant for a
# column that holds no ids at all: "holds values that are not ids of this
# layout (nor serials of them)", and the hint "Correct or remove those
# values (or, if the column holds no ids of this database's generator,
# give it a default that calls no function of snowid_sql)".  They are ids
# of this very generator, correct as they are: the owner told to remove
# them loses data, and the way out managed.md names (the default dropped
# while the worker id is set, once the clock has passed the last id) is
# not said.
#
# - The edition with worker id 5 and one key, a table whose columns take
#   public numbers as text and as numeric, 100 rows.
# - The owner sets the worker id again: refused (55000), and the error
#   should say what the column holds (public numbers, which the edition
#   does not read in that type) and name the way out (DROP DEFAULT), not
#   tell the owner to remove the values.
# On main (0b4bcd5, snowid_sql 1.4, PostgreSQL 19 and 15): "holds values
# that are not ids of this layout", hint "Correct or remove those values".
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

my ($rc, $out, $err) = psql_as(app_url($node, 'appdb'), 'UPDATE snowid_config SET worker_id = 5');
like($err, qr/ERROR:  55000: a column whose default takes ids holds values snowid_sql cannot read/,
	"setting the worker id again beside public numbers kept as numeric or text is refused (55000)");
unlike($err, qr/not ids of this layout/,
	'the detail does not call public numbers of this generator values that are no ids');
unlike($err, qr/HINT:  Correct or remove those values/,
	'the hint does not tell the owner to remove them');
like($err, qr/HINT:  .*DROP DEFAULT/,
	"the hint names managed.md's way out: the worker id set with the column's default dropped");

$node->stop;
done_testing();
