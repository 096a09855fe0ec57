# Every snowid.* setting, walked from pg_settings: no value that ALTER
# SYSTEM accepts is refused by the next start.  For each setting it tries
# the bounds pg_settings shows (min - 1, min, max, max + 1), a value of the
# wrong type, and the values its own rules are about; a value ALTER SYSTEM
# refuses never reaches postgresql.auto.conf, and the server must come up
# with every value it accepts.  snowid.worker_lease = '50ms' is refused.
#
# The servers have a snowid.redis_url (no Redis listens there; nothing
# here asks it), so that a lease is a value a start can accept.  One runs
# with the defaults and takes the ALTER SYSTEM commands; the other starts
# with each postgresql.auto.conf the first accepted.
use strict;
use warnings;

use File::Copy ();
use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidTest;
use Test::More;

my ($node, $starter) = map {
	my $n = PostgreSQL::Test::Cluster->new($_);
	$n->init;
	$n->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowid'
snowid.redis_url = 'redis://127.0.0.1:1'
});
	$n;
} ('settings_table', 'settings_start');
$node->start;

# The values each setting's own rules are about, beyond its bounds.
my %special = (
	'snowid.worker_lease' => [ '50ms', '99ms', '100ms', '1d', '25h' ],
	'snowid.datacenter_bits' => [ '7', '8' ],
	'snowid.worker_bits' => [ '7', '8' ],
	'snowid.sequence_bits' => [ '14', '15' ],
	'snowid.datacenter_id' => [ '31', '32' ],
	'snowid.worker_id' => [ '31', '32' ],
	'snowid.max_drift_ms' => [ '1h', '2h' ],
	'snowid.epoch' => [
		'now', '2024-01-01 00:00:00+00', '1969-12-31 23:59:59+00',
		'1970-01-01 00:00:00+00', '10000-01-01 00:00:00+00',
		'2020-01-01 00:00 Europe/Nowhere', '1704067200000'
	],
	'snowid.redis_url' => [
		'', 'redis://127.0.0.1:1/0', 'http://127.0.0.1:1', 'redis://',
		'unix:///tmp/none.sock?db=1', 'unix://relative',
		'redis-sentinel://127.0.0.1:1/master',
		'rediss://127.0.0.1:1', 'rediss-sentinel://127.0.0.1:1/master'
	],
	'snowid.coordinator_url' => [
		'', 'redis://127.0.0.1:1/0', 'postgresql://127.0.0.1:1/coord',
		'postgres:///coord?host=/tmp&passfile=/nonexistent',
		'postgresql://u:secret@127.0.0.1:1/coord', 'postgresql://127.0.0.1:1',
		'postgresql://127.0.0.1:1/coord?replication=true',
		'postgresql://127.0.0.1:1/coord?nosuch=1', 'http://127.0.0.1:1'
	],
	'snowid.redis_key_prefix' => [ '', 'snowid', 'a b', 'x' x 64, 'x' x 65 ],
	'snowid.redis_tls_ca_file' => [ '', '/nonexistent' ],
	'snowid.redis_tls_cert_file' => [ '', '/nonexistent' ],
	'snowid.redis_tls_key_file' => [ '', '/nonexistent' ],
	'snowid.public_key_file' => [ '', '/nonexistent', 'relative/keys' ],
	'snowid.redis_tls_key_passphrase_file' => [ '', '/nonexistent' ],
	'snowid.redis_password_file' => [ '', '/nonexistent' ],
	'snowid.redis_sentinel_password_file' => [ '', '/nonexistent' ],
	'snowid.release_on_shutdown' => [ 'on', 'off', 'maybe' ]);

# The values to try for one row of pg_settings.
sub candidates
{
	my ($name, $vartype, $min, $max) = @_;
	my @values = @{ $special{$name} // [] };

	if ($vartype eq 'integer')
	{
		push @values, $min - 1, $min, $max, $max + 1, 'abc';
	}
	return @values;
}

# Quotes a value for ALTER SYSTEM.
sub quoted
{
	my ($value) = @_;

	$value =~ s/'/''/g;
	return "'$value'";
}

my $settings = $node->safe_psql('postgres',
	"SELECT name, vartype, coalesce(min_val, ''), coalesce(max_val, '')
	 FROM pg_settings WHERE name LIKE 'snowid.%' ORDER BY name");
my @rows = map { [ split /\|/, $_, -1 ] } split /\n/, $settings;
cmp_ok(scalar @rows, '>=', 20, 'pg_settings lists every snowid setting');

my %seen;
for my $row (@rows)
{
	my ($name, $vartype, $min, $max) = @$row;
	my ($accepted, $refused) = (0, 0);

	$seen{$name} = 1;
	for my $value (candidates($name, $vartype, $min, $max))
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"ALTER SYSTEM SET $name = " . quoted($value));

		if ($ret != 0)
		{
			$refused++;
			next;
		}
		$accepted++;

		# Accepted: a start with it must accept it too.
		File::Copy::copy($node->data_dir . '/postgresql.auto.conf',
			$starter->data_dir . '/postgresql.auto.conf')
		  or die "could not copy postgresql.auto.conf: $!";
		my $log_offset = -s $starter->logfile;
		my $started = $starter->start(fail_ok => 1);
		ok($started, "$name = '$value': ALTER SYSTEM accepts it, and so does a start");
		if ($started)
		{
			$starter->stop;
		}
		else
		{
			diag("the start refused it:\n"
				  . slurp_file($starter->logfile, $log_offset));
		}
		$node->safe_psql('postgres', "ALTER SYSTEM RESET $name");
	}
	note("$name: $accepted values accepted, $refused refused");
}

for my $name (sort keys %special)
{
	ok($seen{$name}, "$name is in pg_settings");
}

# The range is written once: 50ms was accepted by ALTER SYSTEM, and then
# refused by the next start, before it was.
like(
	SnowidTest::psql_error($node,
		"ALTER SYSTEM SET snowid.worker_lease = '50ms'"),
	qr/22023: invalid value for parameter "snowid.worker_lease": "?50"?.*\n.*DETAIL:  "snowid.worker_lease" must be 0 \(no lease\) or from 100 milliseconds to 1 day\./,
	'ALTER SYSTEM SET snowid.worker_lease = 50ms: refused, as at start');
unlike(slurp_file($node->data_dir . '/postgresql.auto.conf'),
	qr/snowid/, 'no refused value reached postgresql.auto.conf');

# And a start refuses it with the same words.
$node->stop;
$node->append_conf('postgresql.conf', "snowid.worker_lease = '50ms'\n");
SnowidTest::fails_to_start($node, "snowid.worker_lease = '50ms'",
	qr/invalid value for parameter "snowid.worker_lease": "50ms"/,
	qr/"snowid.worker_lease" must be 0 \(no lease\) or from 100 milliseconds to 1 day\./);

done_testing();
