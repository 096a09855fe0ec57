# snowid_span() of an infinite interval (PostgreSQL 17 takes 'infinity' and
# '-infinity' as intervals): the C edition refuses it as a span without a
# fixed length (22023, "interval "infinity" has no fixed length in
# milliseconds", with its detail and hint, as for months), the SQL edition
# fails inside its own arithmetic with PostgreSQL's 0A000 "cannot convert
# infinity to bigint", no detail, no hint (snowid_span() line 5, in the
# initialisation of a variable).  The same call, another answer: the
# editions should agree (doc/managed.md: "the same ids, decodes, serials,
# time bounds and public ids as the C edition").
#
# One server, the C edition and the SQL edition each in a database of its
# own, both of the default layout; each interval's SQLSTATE and message
# compared.  On 15 and 16 there is no infinite interval: nothing to
# compare.
# On main (3aeda13, snowid_sql 1.4, PostgreSQL 19beta1): C 22023 and SQL
# 0A000, for 'infinity' and '-infinity' alike.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('span_infinite_interval');
$node->init;
$node->start;

if ($node->safe_psql('postgres', 'SHOW server_version_num') < 170000)
{
	note('PostgreSQL before 17 has no infinite interval');
	ok(1, 'nothing to compare');
	$node->stop;
	done_testing();
	exit;
}

$node->safe_psql('postgres', 'CREATE DATABASE c; CREATE DATABASE s');
$node->safe_psql('c', 'CREATE EXTENSION snowid');
$node->safe_psql('s', 'CREATE EXTENSION snowid_sql');

# the SQLSTATE and message of snowid_span($span) in $db, or its value
sub answer
{
	my ($db, $span) = @_;
	return $node->safe_psql($db, qq{
		DO \$\$
		DECLARE
			v bigint;
		BEGIN
			v := snowid_span('$span');
			RAISE NOTICE 'value %', v;
		EXCEPTION WHEN OTHERS THEN
			CREATE TEMP TABLE answer AS SELECT SQLSTATE AS state, SQLERRM AS message;
		END \$\$;
		SELECT state || ' ' || message FROM answer});
}

for my $span ('infinity', '-infinity')
{
	my ($c, $s) = (answer('c', $span), answer('s', $span));
	note("$span: C: $c; SQL: $s");
	is($s, $c, "snowid_span('$span'): the SQL edition answers as the C edition");
}

$node->stop;
done_testing();
