# Monitoring with Prometheus (doc/operations.md#monitoring): Debian's
# prometheus-postgres-exporter (0.11) with doc/prometheus/snowid-queries.yaml
# and only that (its default metrics off), connected over the unix socket
# as a role with no privilege beyond calling snowid_status(), exports what
# snowid_status() says; doc/prometheus/snowid-alerts.yml passes promtool
# check rules and its unit tests (snowid-alerts.test.yml), and its runbook
# links resolve.
#
# 1. A server with a worker id from its configuration: the metrics before
#    and after ids are taken lie within what snowid_status() says before
#    and after the scrape; the info metric names the worker id, its source
#    and the layout.  With EXECUTE on snowid_status() revoked from PUBLIC
#    the scrape reports an error and no snowid metric; granted to the
#    exporter's role alone, they are back.
# 2. A server on lease from a PostgreSQL coordination database: the lease's
#    metrics (held, time left, renewals); with the coordination database
#    stopped, failed renewals show, as snowid_status() counts them.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use File::Spec;
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidPgCoord;
use SnowidProcess;
use SnowidTest;
use Test::More;

my $exporter = SnowidTest::need_program('prometheus-postgres-exporter',
	'prometheus-postgres-exporter');
my $promtool = SnowidTest::need_program('promtool', 'prometheus');

my $top = File::Spec->rel2abs("$FindBin::RealBin/../../..");
my $dir = "$top/doc/prometheus";
my $queries = "$dir/snowid-queries.yaml";
my $alerts = "$dir/snowid-alerts.yml";
my $role = 'snowid_exporter';

# ---------------------------------------------------------------------------
# The queries file: its metrics, as the exporter names them
# (<namespace>_<column>), and their usage.

my (%usage, $namespace, $column);
for (split /\n/, slurp_file($queries))
{
	if (/^(\w+):\s*$/)
	{
		$namespace = $1;
	}
	elsif (/^    - (\w+):\s*$/)
	{
		$column = "${namespace}_$1";
	}
	elsif (/^\s+usage:\s*"(\w+)"/)
	{
		$usage{$column} = $1;
	}
}
my @metrics = sort grep { $usage{$_} ne 'LABEL' } keys %usage;
cmp_ok(scalar @metrics, '>=', 15, 'the queries file defines the metrics');

# ---------------------------------------------------------------------------
# The exporter

# Starts an exporter for the database postgres of node as role, on a free
# loopback port; returns [ process, port ].
sub start_exporter
{
	my ($node) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $process = SnowidProcess->new('prometheus-postgres-exporter');

	local $ENV{DATA_SOURCE_NAME} =
	    'host=' . $node->host
	  . ' port=' . $node->port
	  . " user=$role dbname=postgres sslmode=disable";
	# the exporter reads these too: none may point elsewhere
	local $ENV{PG_EXPORTER_EXTEND_QUERY_PATH};
	local $ENV{DATA_SOURCE_URI};
	local $ENV{DATA_SOURCE_USER};
	local $ENV{DATA_SOURCE_PASS};
	$process->start(
		[
			$exporter, "--web.listen-address=127.0.0.1:$port",
			"--extend.query-path=$queries", '--disable-default-metrics',
			'--disable-settings-metrics', '--no-collector.database',
			'--no-collector.bgwriter', '--log.level=debug'
		],
		port => $port);
	return [ $process, $port ];
}

# One scrape of /metrics: { name => [ { labels => {...}, value => v } ] },
# and { name => type } from the TYPE lines.
sub scrape
{
	my ($exp) = @_;
	my $response = HTTP::Tiny->new(timeout => $PostgreSQL::Test::Utils::timeout_default)
	  ->get("http://127.0.0.1:$exp->[1]/metrics");
	my (%samples, %types);

	die "GET /metrics: $response->{status} $response->{reason}"
	  unless $response->{success};
	for (split /\n/, $response->{content})
	{
		if (/^# TYPE (\S+) (\S+)$/)
		{
			$types{$1} = $2;
			next;
		}
		next if /^#/ || !/\S/;
		/^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/
		  or die "cannot read the metrics line: $_";
		my ($name, $labels, $value) = ($1, $2 // '', $3);
		my %labels;
		while ($labels =~ /\G(\w+)="((?:[^"\\]|\\.)*)",?/gc)
		{
			$labels{$1} = $2;
		}
		push @{ $samples{$name} }, { labels => \%labels, value => $value };
	}
	note 'scraped: ', join(' ',
		map { "$_=$samples{$_}[0]{value}" } grep { /^snowid_/ } sort keys %samples);
	return { samples => \%samples, types => \%types, text => $response->{content} };
}

# The value of the only sample of a metric (NaN as the string NaN); undef
# if there is none; dies if there are several.
sub value
{
	my ($scrape, $name) = @_;
	my $s = $scrape->{samples}{$name} or return undef;

	die "$name has " . scalar(@$s) . ' samples' if @$s != 1;
	return $s->[0]{value};
}

# snowid_status() of a node as a hash, the times and intervals in seconds.
sub status
{
	my ($node) = @_;
	my @cols = qw(datacenter_id worker_id worker_source ids_issued waits
	  clock_steps clock_errors drift_ms renewals failed_renewals layout
	  ceiling_ids_per_s last_time high_water_time time_left lease_held
	  lease_left fence_left);
	my $row = $node->safe_psql('postgres', q{
		SELECT datacenter_id, coalesce(worker_id, -1), worker_source,
			ids_issued, waits, clock_steps, clock_errors, drift_ms, renewals,
			failed_renewals, layout, ceiling_ids_per_s,
			coalesce(extract(epoch FROM last_time)::text, 'NaN'),
			extract(epoch FROM high_water_time),
			extract(epoch FROM time_left),
			lease_expires_at IS NOT NULL,
			extract(epoch FROM lease_expires_at - clock_timestamp()),
			extract(epoch FROM fence_time - clock_timestamp())
		FROM snowid_status()});
	my %s;

	@s{@cols} = split /\|/, $row, -1;
	return \%s;
}

# The counters and gauges of a scrape against snowid_status() just before
# ($before) and just after ($after) it.
sub check_against_status
{
	my ($scrape, $before, $after, $what) = @_;

	for (
		[ 'snowid_ids_issued_total', 'ids_issued' ],
		[ 'snowid_waits_total', 'waits' ],
		[ 'snowid_clock_steps_total', 'clock_steps' ],
		[ 'snowid_clock_errors_total', 'clock_errors' ],
		[ 'snowid_lease_renewals_total', 'renewals' ],
		[ 'snowid_lease_failed_renewals_total', 'failed_renewals' ])
	{
		my ($metric, $col) = @$_;
		my $v = value($scrape, $metric);

		ok( defined $v
			  && $v >= $before->{$col}
			  && $v <= $after->{$col},
			"$what: $metric lies within snowid_status().$col before and after"
		) or diag "got " . ($v // 'none') . ", status $before->{$col} .. $after->{$col}";
	}
	cmp_ok(value($scrape, 'snowid_worker_id'), '==', $after->{worker_id},
		"$what: snowid_worker_id is snowid_status().worker_id");
	cmp_ok(value($scrape, 'snowid_datacenter_id'), '==', $after->{datacenter_id},
		"$what: snowid_datacenter_id is snowid_status().datacenter_id");
	cmp_ok(value($scrape, 'snowid_ceiling_ids_per_second'), '==', $after->{ceiling_ids_per_s},
		"$what: snowid_ceiling_ids_per_second is snowid_status().ceiling_ids_per_s");
	my $left = value($scrape, 'snowid_layout_seconds_left');
	ok($left <= $before->{time_left} + 1 && $left >= $after->{time_left} - 1,
		"$what: snowid_layout_seconds_left lies within snowid_status().time_left before and after")
	  or diag "got $left, status $before->{time_left} .. $after->{time_left}";
	my $hw = value($scrape, 'snowid_high_water_timestamp_seconds');
	ok($hw >= $before->{high_water_time} - 0.001 && $hw <= $after->{high_water_time} + 0.001,
		"$what: snowid_high_water_timestamp_seconds lies within snowid_status().high_water_time before and after")
	  or diag "got $hw, status $before->{high_water_time} .. $after->{high_water_time}";
	my $drift = value($scrape, 'snowid_drift_seconds');
	ok($drift >= 0 && $drift <= value($scrape, 'snowid_max_drift_seconds'),
		"$what: snowid_drift_seconds lies within the drift budget");

	my $info = $scrape->{samples}{snowid_generator_info} // [];
	is(scalar @$info, 1, "$what: one snowid_generator_info sample");
	my %labels = %{ $info->[0]{labels} // {} };
	is( join(' ', map { $labels{$_} // 'none' } qw(worker_source worker_id datacenter_id layout)),
		join(' ', $after->{worker_source},
			$after->{worker_id} < 0 ? '' : $after->{worker_id},
			$after->{datacenter_id}, $after->{layout}),
		"$what: snowid_generator_info names the worker source, worker id, datacenter id and layout of snowid_status()"
	);
	return;
}

# ---------------------------------------------------------------------------
# 1. A worker id from the configuration

my $node = SnowidTest::new_node('prom',
	{ 'snowid.datacenter_id' => 2, 'snowid.worker_id' => 9, 'snowid.max_drift_ms' => 1500 });
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION snowid;
	CREATE ROLE $role LOGIN;});
is( $node->safe_psql('postgres', qq{
		SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls,
			pg_has_role('$role', 'pg_monitor', 'MEMBER'),
			pg_has_role('$role', 'pg_read_all_settings', 'MEMBER'),
			has_function_privilege('$role', 'snowid_status()', 'EXECUTE')
		FROM pg_roles WHERE rolname = '$role'}),
	'f|f|f|t',
	"the exporter's role has no attribute, is no member of pg_monitor, and may call snowid_status() (granted to PUBLIC)");

my $exp = start_exporter($node);

my $before = status($node);
my $m = scrape($exp);
my $after = status($node);
is(value($m, 'pg_up'), 1, 'pg_up is 1');
is(value($m, 'pg_exporter_last_scrape_error'), 0, 'the scrape had no error');
my $load = $m->{samples}{pg_exporter_user_queries_load_error} // [];
ok( (grep { $_->{labels}{filename} eq $queries && $_->{value} == 0 } @$load),
	'the exporter loaded the queries file without an error');
is_deeply(
	[ grep { !exists $m->{samples}{$_} } @metrics ], [],
	'every metric of the queries file is exported');
is_deeply(
	[
		grep {
			($m->{types}{$_} // '') ne
			  ($usage{$_} eq 'COUNTER' ? 'counter' : 'gauge')
		} @metrics
	],
	[],
	'each with the type of its usage');
is_deeply([ grep { /_total$/ } @metrics ],
	[ grep { $usage{$_} eq 'COUNTER' } @metrics ],
	'the counters, and only they, end in _total');
is(value($m, 'snowid_ids_issued_total'), 0, 'before the first id: no id issued');
is(value($m, 'snowid_last_id_timestamp_seconds'), 'NaN',
	'before the first id: the last id time is NaN');
check_against_status($m, $before, $after, 'before the first id');

# ids, one at a time and in a batch
my $taken = scalar SnowidTest::next_ids($node, 20);
$taken += $node->safe_psql('postgres',
	'SELECT count(*) FROM snowid_next_batch(500)');
$before = status($node);
$m = scrape($exp);
$after = status($node);
cmp_ok(value($m, 'snowid_ids_issued_total'), '>=', $taken,
	'snowid_ids_issued_total counts at least the ids taken');
check_against_status($m, $before, $after, 'after ids');
my $last = value($m, 'snowid_last_id_timestamp_seconds');
ok(abs($last - $after->{last_time}) < 0.002,
	'snowid_last_id_timestamp_seconds is snowid_status().last_time')
  or diag "got $last, status $after->{last_time}";
cmp_ok(value($m, 'snowid_worker_id'), '==', 9, 'the worker id of the configuration');
is($m->{samples}{snowid_generator_info}[0]{labels}{worker_source}, 'config',
	'worker_source config');
cmp_ok(value($m, 'snowid_max_drift_seconds'), '==', 1.5,
	'snowid_max_drift_seconds is snowid.max_drift_ms');
is(join(' ', map { value($m, $_) } qw(snowid_lease_held snowid_lease_length_seconds
	  snowid_lease_seconds_left snowid_fence_seconds_left)),
	'0 0 0 0', 'no lease: held, length and time left are 0');
is(value($m, 'snowid_in_recovery'), 0, 'a primary');
is(value($m, 'snowid_js_safe_seconds_left'), 0,
	'the default layout: ids already reach 2^53');
{
	my ($lint, $lint_err) = ('', '');
	IPC::Run::run([ $promtool, 'check', 'metrics' ],
		'<', \$m->{text}, '>', \$lint, '2>', \$lint_err);
	is(join('', grep { /snowid/ } split /^/, $lint . $lint_err), '',
		'promtool check metrics finds no problem with the snowid metrics');
}

# EXECUTE on snowid_status() for the exporter's role alone
$node->safe_psql('postgres',
	'REVOKE EXECUTE ON FUNCTION snowid_status() FROM PUBLIC');
$m = scrape($exp);
is(value($m, 'pg_exporter_last_scrape_error'), 1,
	'without EXECUTE on snowid_status(): the scrape reports an error');
is(value($m, 'pg_up'), 1, 'and PostgreSQL is up');
is_deeply([ grep { /^snowid_/ } keys %{ $m->{samples} } ], [],
	'and there is no snowid metric');
$node->safe_psql('postgres',
	"GRANT EXECUTE ON FUNCTION snowid_status() TO $role");
$m = scrape($exp);
is(value($m, 'pg_exporter_last_scrape_error'), 0,
	"with EXECUTE granted to $role alone: no error");
cmp_ok(value($m, 'snowid_ids_issued_total'), '>=', $taken,
	'and the metrics are back');
$exp->[0]->stop;

# ---------------------------------------------------------------------------
# 2. A worker id on lease

my $coord = SnowidPgCoord->new;
# 6 s, renewed every 2 s: on a busy machine a renewal may come up to 4 s
# late and the lease still have time left when the exporter is scraped.
my $lease_ms = 6000;
my $leased = $coord->new_node('prom_lease',
	{ 'snowid.datacenter_id' => 1, 'snowid.worker_lease' => "${lease_ms}ms" });
$leased->start;
$leased->safe_psql('postgres', qq{
	CREATE EXTENSION snowid;
	CREATE ROLE $role LOGIN;});
$leased->poll_query_until('postgres',
	q{SELECT worker_source = 'lease' AND renewals >= 1 FROM snowid_status()})
  or die 'no lease renewed';
SnowidTest::next_ids($leased, 10);
$exp = start_exporter($leased);

$before = status($leased);
$m = scrape($exp);
$after = status($leased);
is(value($m, 'pg_exporter_last_scrape_error'), 0, 'on lease: the scrape had no error');
check_against_status($m, $before, $after, 'on lease');
is(value($m, 'snowid_lease_held'), 1, 'on lease: snowid_lease_held is 1');
cmp_ok(value($m, 'snowid_lease_length_seconds'), '==', $lease_ms / 1000,
	'on lease: snowid_lease_length_seconds is snowid.worker_lease');
my $lease_left = value($m, 'snowid_lease_seconds_left');
ok($lease_left > 0 && $lease_left <= $lease_ms / 1000,
	'on lease: snowid_lease_seconds_left lies within the lease')
  or diag "got $lease_left";
cmp_ok(value($m, 'snowid_fence_seconds_left'), '>', 0,
	'on lease: the fence lies ahead of the clock');
cmp_ok(value($m, 'snowid_lease_renewals_total'), '>=', 1,
	'on lease: renewals counted');
# what the server knows of its coordinator's forgetting (snowid_status()
# of 1.3): answered by the renewals, never found to have forgotten
my $answered = value($m, 'snowid_coordinator_answered_timestamp_seconds');
my ($answered_before, $now) = split /\|/, $leased->safe_psql('postgres', q{
	SELECT extract(epoch FROM coordinator_answered_at),
		extract(epoch FROM clock_timestamp()) FROM snowid_status()});
ok($answered > 0 && $answered <= $now && $answered >= $answered_before - 10,
	'on lease: snowid_coordinator_answered_timestamp_seconds is a renewal\'s answer')
  or diag "got $answered, status $answered_before, now $now";
is(join(' ', map { value($m, $_) } qw(snowid_coordinator_reassertions_total
	  snowid_coordinator_quiet_seconds_left)), '0 0',
	'on lease: the coordinator forgot nothing, and no quiet period refused a claim');

# the coordination database goes away: renewals fail
$coord->stop;
$leased->poll_query_until('postgres',
	'SELECT failed_renewals >= 1 FROM snowid_status()')
  or die 'no renewal failed';
$before = status($leased);
$m = scrape($exp);
$after = status($leased);
check_against_status($m, $before, $after, 'coordinator down');
cmp_ok(value($m, 'snowid_lease_failed_renewals_total'), '>=', 1,
	'coordinator down: snowid_lease_failed_renewals_total counts the failed renewals');

# less than half the lease left, or none held: SnowidLeaseExpiring's
# condition holds on what the exporter reports
$leased->poll_query_until('postgres', qq{
	SELECT lease_expires_at IS NULL
		OR lease_expires_at < clock_timestamp() + interval '@{[ $lease_ms * 0.4 ]} ms'
	FROM snowid_status()})
  or die 'the lease does not run down';
$m = scrape($exp);
ok( value($m, 'snowid_lease_seconds_left') <
	  0.5 * value($m, 'snowid_lease_length_seconds'),
	'coordinator down: snowid_lease_seconds_left falls below half of snowid_lease_length_seconds (SnowidLeaseExpiring)'
);
$exp->[0]->stop;
$coord->start;

# ---------------------------------------------------------------------------
# The alerting rules

# Runs a command; returns its exit status and its output (stdout and
# stderr).
sub run_promtool
{
	my (@cmd) = @_;
	my $out = '';
	my $ok = IPC::Run::run(\@cmd, '<', \undef, '>&', \$out);

	return ($ok ? 0 : 1, $out);
}

my ($rc, $out) = run_promtool($promtool, 'check', 'rules', $alerts);
is($rc, 0, 'promtool check rules snowid-alerts.yml passes') or diag $out;
like($out, qr/SUCCESS: \d+ rules found/, 'and finds the rules');

{
	# rule_files in the test file are relative to its directory
	($rc, $out) = run_promtool($promtool, 'test', 'rules',
		"$dir/snowid-alerts.test.yml");
	is($rc, 0, 'promtool test rules snowid-alerts.test.yml passes') or diag $out;
}

# Every alert has a for, a severity, a description and a runbook link
# that resolves: a file of doc/ and one of its headings (GitHub's anchors).
my $rules = slurp_file($alerts);
my @alerts = split /^\s+- alert: /m, $rules;
shift @alerts;
cmp_ok(scalar @alerts, '>=', 10, 'the rules file has the alerts');
for my $alert (@alerts)
{
	my ($name) = $alert =~ /^(\w+)/;
	my ($link) = $alert =~ /^\s+runbook: "([^"]*)"/m;

	like($alert, qr/^\s+for: \d+[smh]\s*$/m, "$name has a for");
	like($alert, qr/^\s+severity: (critical|warning)\s*$/m,
		"$name has a severity");
	like($alert, qr/^\s+description: /m, "$name has a description");
	ok(defined $link && link_resolves($link), "$name: its runbook $link resolves")
	  or diag 'runbook: ' . ($link // 'none');
}

# Whether doc/page.md#anchor names a heading of an existing page
sub link_resolves
{
	my ($link) = @_;
	my ($page, $anchor) = split /#/, $link, 2;

	return 0 unless -f "$top/$page" && defined $anchor;
	for (split /\n/, slurp_file("$top/$page"))
	{
		next unless /^#+\s+(.*?)\s*$/;
		my $slug = lc $1;
		$slug =~ s/[^\w\- ]//g;
		$slug =~ s/ /-/g;
		return 1 if $slug eq $anchor;
	}
	return 0;
}

# The Monitoring section of doc/operations.md lists every metric and alert
my ($monitoring) = slurp_file("$top/doc/operations.md") =~ /^## Monitoring\n(.*?)(?=^## |\z)/ms;
is_deeply([ grep { index($monitoring // '', "`$_`") < 0 } @metrics ], [],
	'doc/operations.md#monitoring names every metric');
is_deeply(
	[ grep { index($monitoring // '', "`$_`") < 0 } map { /^(\w+)/ } @alerts ],
	[], 'doc/operations.md#monitoring names every alert');

done_testing();
