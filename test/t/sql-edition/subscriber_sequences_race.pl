# From PostgreSQL 19 a subscription synchronises the sequences a
# publication FOR ALL SEQUENCES carries, the generator's among them, each
# set to the publisher's value by itself, in the order of the publisher's
# reply: snowid_position came before snowid_generation (a trial on
# 19beta1).  Between the two, a call found this server's generation and
# took the publisher's position, under this server's worker id: where it
# lay among positions the subscriber had used (ahead of the clock: a
# batch, the writers' 9 ms, a clock stepped back), ids came again.  A
# writer refused once pg_subscription_rel listed the sequences, but a call
# took positions without one while they lay ahead of the clock (up to
# max_drift_ms, on the slower path), and a writer's window, opened and
# closed by setval(), dropped a synchronisation's setting of the
# generation made meanwhile.  Since, the first call after the listing
# refuses on either path and makes the generation one no call takes, and
# a writer moves the generation by nextval() alone.
#
# The synchronisation's first step is made by hand, as the superuser
# (setval() of snowid_position alone, as other_roles_and_dumps.pl sets the
# sequences to another server's values), at a position the subscriber
# used: the subscription itself is real, made disabled (its sequences
# listed, none synchronised meanwhile).
#
# - A publisher (FOR ALL SEQUENCES) and a subscriber under a clock 5 s
#   fast; the subscriber (worker id 6, max_drift_ms 10000) issues into sent
#   for 2 s; its clock steps back 5 s: its ids lie ahead of it.
# - It subscribes (enabled = false): pg_subscription_rel lists the
#   sequences.  A call refuses.
# - As the superuser, in one transaction, once the first id it issued lies
#   60 ms ahead of the clock: the position set just below an id it issued
#   20 ms ahead (the synchronisation's setting of snowid_position, before
#   the generation), then 50 calls: none may give an id the subscriber
#   issued before (each call that refuses is counted).
# On main (5c1408b, snowid_sql 1.4, PostgreSQL 19): the call after the
# listing issued, and 50 of 50 calls after the position's setting repeated
# ids.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowidSqlEdition qw(psql_as app_url);
use SnowidTest;
use Test::More;

SnowidTest::need_clock();

my $clock = SnowidTest::Clock->new;
$clock->set('+5');
my $pub = SnowidSqlEdition::new_server('sequences_race_pub', ['app'], ['appdb'], allows_streaming => 'logical');
my $sub = SnowidSqlEdition::new_server('sequences_race_sub', ['app'], ['appdb'], clock => $clock);
plan skip_all => 'a subscription synchronises sequences from PostgreSQL 19 on' if $sub->pg_version->major < 19;
my ($rc, $out, $err);

SnowidSqlEdition::install($pub, 'appdb', 'UPDATE snowid_config SET worker_id = 5');
$pub->safe_psql('appdb', 'CREATE PUBLICATION seqs FOR ALL SEQUENCES');
($rc, $out, $err) = psql_as(app_url($sub, 'appdb'), q{
	CREATE EXTENSION snowid_sql;
	UPDATE snowid_config SET worker_id = 6, max_drift_ms = 10000;
	CREATE TABLE sent (id bigint PRIMARY KEY);
	DO $$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
		WHILE clock_timestamp() < t0 + interval '2 s' LOOP
			INSERT INTO sent SELECT snowid_next() FROM generate_series(1, 10);
		END LOOP;
	END $$;
	SELECT count(*) FROM sent});
cmp_ok($out // 0, '>', 0, "the subscriber issues $out ids") or diag($err);
$clock->set('+0');
$sub->safe_psql('appdb', q{CREATE SUBSCRIPTION seqs CONNECTION '}
	  . ($pub->connstr('appdb') =~ s/'/''/gr) . q{' PUBLICATION seqs WITH (enabled = false)});
is($sub->safe_psql('appdb', q{SELECT count(*) FROM pg_subscription_rel
	WHERE srrelid = 'snowid_sql_private.snowid_position'::regclass}), '1',
	'it subscribes: pg_subscription_rel lists snowid_position');

($rc, $out, $err) = psql_as(app_url($sub, 'appdb'), 'SELECT snowid_next()');
like($err, qr/ERROR:  55000: a subscription synchronises the sequences of the snowid generator/,
	'a call refuses');

($rc, $out, $err) = psql_as($sub->connstr('appdb'), q{
	DO $$
	DECLARE
		epoch_ms bigint := (SELECT floor(EXTRACT(epoch FROM c.epoch) * 1000) FROM snowid_config c);
		pos bigint;
		got bigint[] := '{}';
		again integer;
		refused integer := 0;
	BEGIN
		-- (once the first id the subscriber issued lies 60 ms ahead)
		PERFORM pg_sleep(greatest(EXTRACT(epoch FROM (SELECT snowid_time(min(s.id)) FROM sent s)
											  - interval '60 ms' - clock_timestamp()), 0));
		SELECT ((s.id >> 22) << 12) | (s.id & 4095) INTO pos FROM sent s
		WHERE s.id >= (floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint + 20 - epoch_ms) << 22
		ORDER BY s.id LIMIT 1;
		IF pos IS NULL THEN
			RAISE EXCEPTION 'no id issued ahead of the clock';
		END IF;
		PERFORM setval('snowid_sql_private.snowid_position', pos - 1);
		FOR i IN 1..50 LOOP
			BEGIN
				got := got || snowid_next();
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				refused := refused + 1;
			END;
		END LOOP;
		SELECT count(*) INTO again FROM sent s WHERE s.id = ANY (got);
		RAISE NOTICE 'again: % refused: %', again, refused;
	END $$});
my ($again, $refused) = $err =~ /again: (\d+) refused: (\d+)/;
is($again, '0', 'after the synchronisation\'s setting of the position, no call gives an id issued before ('
	  . ($again // '?') . ' of 50, ' . ($refused // '?') . ' refused)')
  or diag($err);

$sub->safe_psql('appdb', 'DROP SUBSCRIPTION seqs');
$sub->stop;
$pub->stop;
done_testing();
