# What the client tests (test/t/05x_*.pl) share: the orders schema the
# clients in test/clients/ write to, running a client as a subprocess with
# a node's connection parameters, and checking on the server what it wrote.
package SnowidClients;

use strict;
use warnings;

use File::Basename;
use File::Spec;
use IPC::Run;
use JSON::PP;
use Test::More;

# test/clients/, beside test/t/
our $dir =
  File::Spec->rel2abs(dirname(__FILE__) . '/../clients');

# An order and its lines, both keyed by snowid_next().
sub create_schema
{
	my ($node, $db) = @_;

	$node->safe_psql($db // 'postgres', q{
		CREATE EXTENSION IF NOT EXISTS snowid;
		CREATE TABLE orders (
			id bigint PRIMARY KEY DEFAULT snowid_next(),
			customer text NOT NULL);
		CREATE TABLE order_lines (
			id bigint PRIMARY KEY DEFAULT snowid_next(),
			order_id bigint NOT NULL REFERENCES orders,
			product text NOT NULL);
	});
	return;
}

# Runs a client (a command and its arguments) against a node, with the
# libpq environment pointing at it; returns its exit code, stdout and
# stderr.
sub run
{
	my ($node, $cmd, %opts) = @_;
	my ($out, $err) = ('', '');
	my $user = $node->safe_psql('postgres', 'SELECT current_user');

	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = $opts{dbname} // 'postgres';
	local $ENV{PGUSER} = $user;
	local $ENV{NODE_PATH} = $opts{node_path} if $opts{node_path};
	IPC::Run::run($cmd, '<', \undef, '>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return ($? >> 8, $out, $err);
}

# Runs a client that prints one line of JSON ({"order", "lines",
# "checks"}); checks that it succeeded, that it checked something, and
# that the server has the order and its lines under the keys it reports
# (three tests).  Returns the decoded summary.
sub run_order_client
{
	my ($node, $name, $cmd, %opts) = @_;
	my ($rc, $out, $err) = run($node, $cmd, %opts);
	my $summary = eval { decode_json((split /\n/, $out)[-1] // '') };

	is($rc, 0, "$name: the client succeeds")
	  or diag("stdout: $out\nstderr: $err");
	cmp_ok($summary ? $summary->{checks} : 0, '>', 0,
		"$name: the client checked its keys");
	$summary //= { order => '0', lines => [] };
	is( $node->safe_psql(
			$opts{dbname} // 'postgres', qq{
		SELECT string_agg(l.id::text, ',' ORDER BY l.id)
		FROM orders o JOIN order_lines l ON l.order_id = o.id
		WHERE o.id = '$summary->{order}'}),
		join(',', @{ $summary->{lines} }),
		"$name: the server has the order and its lines under the client's keys"
	);
	return $summary;
}

1;
