-- -------------------------------------------------------------------------
-- The server a worker id holds on
-- -------------------------------------------------------------------------

-- Stamps this start in snowid_sql_started, for a writer that has checked
-- the server: the microseconds that to_timestamp() reads back as the start
-- (the nearest, or one either side where the floating point rounds
-- otherwise; none of them, which should not happen, stamps nothing, and
-- every call stays a writer)
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_stamp_start()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	us bigint := (EXTRACT(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint;
	d integer;
	done bigint;
BEGIN
	FOREACH d IN ARRAY ARRAY[0, -1, 1] LOOP
		IF to_timestamp((us + d)::double precision / 1000000) = pg_postmaster_start_time() THEN
			done := setval('snowid_sql_private.snowid_sql_started', us + d);
			RETURN;
		END IF;
	END LOOP;
END
$$;

-- This server and the generator's sequences as they are: the system
-- identifier (another for every initdb, pg_upgrade and pg_createsubscriber
-- copy), and the files of snowid_position and snowid_generation, which
-- name the database (another for a restored dump, and after any ALTER
-- SEQUENCE); no table read.  One expression, which the planner inlines
-- where it is called (each writer compares it): VOLATILE, as
-- pg_control_system() is (a STABLE function is not inlined whose body is
-- volatile), which reads pg_control at each call.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_here()
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE
RETURN pg_catalog.format('sysid=%s position=%s generation=%s',
						 (pg_catalog.pg_control_system()).system_identifier,
						 pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_position'::pg_catalog.regclass),
						 pg_catalog.pg_relation_filepath('snowid_sql_private.snowid_generation'::pg_catalog.regclass));

-- What is wrong with the options of the generator's sequences, as a
-- sentence, or NULL: its reasoning holds for INCREMENT 1, CACHE 1 and NO
-- CYCLE alone (a cache hides a writer's window from readers); and with
-- what is logged: a crash empties an UNLOGGED sequence (the generator
-- would start again below the ids it issued) or table, which their owner
-- (the plain script's, pg_tle's) may make so
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_sequences_problem()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT p.problem FROM (
		SELECT 1 AS kind, c.relname AS name,
			   pg_catalog.format('The sequence %s has INCREMENT %s, CACHE %s and %s; the generator needs INCREMENT 1, CACHE 1 and NO CYCLE.',
								 c.relname, s.seqincrement, s.seqcache,
								 CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END) AS problem
		FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.seqrelid
		WHERE s.seqrelid OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_sql_private.snowid_position'::pg_catalog.regclass,
														   'snowid_sql_private.snowid_generation'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND (s.seqincrement OPERATOR(pg_catalog.<>) 1 OR s.seqcache OPERATOR(pg_catalog.<>) 1 OR s.seqcycle)
		UNION ALL
		SELECT 2, c.relname,
			   pg_catalog.format('The %s %s is UNLOGGED; the generator needs it logged (ALTER %s %s SET LOGGED), as a crash empties it.',
								 CASE c.relkind WHEN 'S' THEN 'sequence' ELSE 'table' END, c.relname,
								 CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname)
		FROM pg_catalog.pg_class c
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_sql_private.snowid_position'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_generation'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_config'::pg_catalog.regclass,
													  'snowid_sql_private.snowid_locks'::pg_catalog.regclass]::pg_catalog.oid[])
		  AND c.relpersistence OPERATOR(pg_catalog.<>) 'p'
	) p
	ORDER BY p.kind, p.name
	LIMIT 1;
END;

-- The error of a worker id set on another server
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_elsewhere(worker_id integer)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'snowid has no worker id on this server'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = format('The worker id%s of snowid_config was set on another server, or with other sequences: this database is a copy (a restored dump, a logical subscriber, a pg_createsubscriber copy, a pg_upgrade), or snowid_position or snowid_generation was altered.',
							  ' ' || worker_id),
			  HINT = 'As the role that installed snowid_sql (the owner of the extension, or the one that ran its plain script): UPDATE snowid_config SET datacenter_id = D, worker_id = N, with D this server''s datacenter (a copy carries its source''s) and N unique among the servers of that datacenter.';
END
$$;

-- The error of a generator whose sequences a subscription synchronises,
-- or may (PostgreSQL 19 lists sequences in pg_subscription_rel; earlier
-- ones never list these).  A synchronisation sets snowid_position, then
-- snowid_generation (in the order of the publisher's reply), each by
-- itself: a call between the two found this server's generation and took
-- a position of the publisher's, below ids this server issued (a writer's
-- window closed meanwhile did the same, its setting of the generation
-- dropping the publisher's).  So a writer that finds the subscription
-- makes the generation one no call takes (the mark 8388607, no server's:
-- snowid_sql_refix() makes tokens up to 4194304) before it refuses: the
-- calls stop at once, not once the positions its last writer set fall
-- behind the clock, long before the synchronisation (a subscription's
-- workers start, connect to the publisher and start another, which
-- connects too).  A writer whose snapshot may predate the subscription (a
-- REPEATABLE READ or SERIALIZABLE transaction) cannot see it in
-- pg_subscription_rel: it refuses as well where a subscription's worker
-- runs (pg_stat_get_subscription(), shared memory) whose subscription its
-- snapshot does not show (any database's: the snapshot cannot tell; before
-- 1.4's fixes such a transaction's writers went on moving the generator
-- up to the synchronisation).  Until the subscription no longer covers
-- them, and the owner sets the worker id again, no call issues (test
-- subscriber_sequences_race, the listing and the first step of a
-- synchronisation).
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_subscribed()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	seq text;
	unseen boolean;
	done bigint;
BEGIN
	SELECT c.relname INTO seq
	FROM pg_subscription_rel r JOIN pg_class c ON c.oid = r.srrelid
	WHERE r.srrelid IN ('snowid_sql_private.snowid_position'::regclass, 'snowid_sql_private.snowid_generation'::regclass)
	ORDER BY c.relname
	LIMIT 1;
	unseen := current_setting('transaction_isolation') <> 'read committed'
		AND EXISTS (SELECT FROM pg_stat_get_subscription(NULL) w
					WHERE NOT EXISTS (SELECT FROM pg_subscription s WHERE s.oid = w.subid));
	IF seq IS NOT NULL OR unseen THEN
		done := setval('snowid_sql_private.snowid_generation', 8388607::bigint << 40);
	END IF;
	IF seq IS NOT NULL THEN
		RAISE EXCEPTION 'a subscription synchronises the sequences of the snowid generator'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('pg_subscription_rel lists the sequence %s: each synchronisation sets it to the publisher''s value, whose ids would come again.', seq),
				  HINT = 'Publish no sequence of the extension (not FOR ALL SEQUENCES), then ALTER SUBSCRIPTION ... REFRESH PUBLICATION on this server, and set the worker id again (UPDATE snowid_config SET worker_id = N).';
	ELSIF unseen THEN
		RAISE EXCEPTION 'a subscription made since this transaction began may synchronise the sequences of the snowid generator'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A logical replication worker runs for a subscription this transaction''s snapshot does not show, and a subscription of this database could set the generator''s sequences to its publisher''s values.',
				  HINT = 'Take ids in a transaction begun after the subscription was made (READ COMMITTED takes a new snapshot at each statement).  Where the subscription publishes a sequence of the extension, drop it from the publication, then set the worker id again (UPDATE snowid_config SET worker_id = N).';
	END IF;
END
$$;

-- The error of a writer that found the generator's sequences set, during
-- its window, by something but a writer: a subscription's synchronisation
-- (PostgreSQL 19), which sets them to the publisher's values one by one
-- (snowid_sql_subscribed()).  The window stays open: the calls take
-- nothing until the next writer, which reads the position anew, or
-- refuses the publisher's generation.
CREATE OR REPLACE FUNCTION snowid_sql_private.snowid_sql_set_meanwhile()
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'the sequences of the snowid generator were set while it moved them'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'snowid_position or snowid_generation was set by something other than snowid_sql while a call moved the generator: a subscription that synchronises the sequences (FOR ALL SEQUENCES), or a superuser''s setval().',
			  HINT = 'Publish no sequence of the extension (not FOR ALL SEQUENCES); where the sequences hold another server''s values, set the worker id again (UPDATE snowid_config SET worker_id = N).';
END
$$;
