# A stale claim holds whatever a caller says.  Any role may call
# snowid_sql_private.snowid_sql_next(claimed, recovery); with claimed true
# the table's path skipped the check of a claim made under another start
# of the server, and a position ahead of the clock (a batch) was handed out
# without a writer: after a restart, a role that may not claim took 100 of
# 100 ids before the claim was re-asserted (the attack on test 132's fix).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as claim_when_quiet_ends);
use SnowidTest;
use Test::More;
use Time::HiRes qw(time sleep);

my ($coord, $conninfo, $password) = SnowidSqlEdition::claim_fleet();

sub sql_server
{
	return SnowidSqlEdition::claim_server($_[0], $conninfo, $password,
		'sequence_bits = 2, max_drift_ms = 60000, ');
}

my ($sqla, $appa, $clerka) = sql_server('sqla');
$sqla->safe_psql('postgres', 'CREATE ROLE stranger LOGIN');
my $stranger = $sqla->connstr('appdb') . ' user=stranger';

my $wa = claim_when_quiet_ends($clerka);
like($wa, qr/^\d+$/, "A claims worker id $wa");
my ($rc, $out, $err) = psql_as($appa, q{
	SELECT count(*) FROM snowid_next_batch(100000)});
is($out, '100000', 'a batch runs A\'s generator ahead of its clock') or diag($err);
$sqla->restart;
($rc, $out, $err) = psql_as($stranger, 'SELECT snowid_next()');
isnt($rc, 0, 'after the restart, the stranger\'s snowid_next() is refused until the claim is re-asserted');
($rc, $out, $err) = psql_as($stranger, q{
	SELECT count(DISTINCT snowid_sql_private.snowid_sql_next(true, false)) FROM generate_series(1, 100)});
note("direct calls: rc $rc, $out $err");
ok($rc != 0 || $out eq '0',
	'and its direct call of snowid_sql_private.snowid_sql_next(true, false) takes no id')
  or diag("the stranger took $out ids with the stale claim");
is($sqla->safe_psql('appdb', q{SELECT snowid_sql_private.snowid_sql_claim_stale()}),
	't', 'the claim is still stale (not re-asserted)');

$sqla->stop;
done_testing();
