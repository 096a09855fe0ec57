# The update of a claiming 1.2 straight to 1.4 (sql/snowid_sql--1.2--1.4.sql,
# the path PostgreSQL takes) refuses where the claim is not confirmed, and
# warns where it keeps the claimed worker id; both messages name 1.3
# ("snowid_sql cannot be updated to 1.3 ...", "1.3 claims no worker id",
# "snowid_sql 1.3 re-asserts it no more"), which the database is not
# being updated to: the operator of a 1.4 update reads of a version it does
# not install.
#
# - 1.2 with claim_worker_id on and no claim, updated to 1.4: the refusal
#   should name 1.4, not 1.3.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use Test::More;

my $node = SnowidSqlEdition::new_server('update_names_its_version', ['app'], ['appdb']);
my $app = app_url($node, 'appdb');

my ($rc, $out, $err) = psql_as($app, q{
	CREATE EXTENSION snowid_sql VERSION '1.2';
	UPDATE snowid_config SET claim_worker_id = true});
is($rc, 0, '1.2 with claim_worker_id on') or diag($err);
($rc, $out, $err) = psql_as($app, q{ALTER EXTENSION snowid_sql UPDATE TO '1.4'});
like($err, qr/55000: snowid_sql cannot be updated to 1\.4/, 'the update to 1.4 refuses, naming 1.4');
my ($said) = $err =~ /^(ERROR:.*\nDETAIL:.*)$/m;
unlike($said // '', qr/\b1\.3\b/, 'nor names another version in its message and detail') or diag($err);

$node->stop;
done_testing();
