-- The tables first, in both updates to 1.4 (from 1.2 and from 1.3).  A
-- prepared transaction that holds a lock on the edition's tables (1.2's
-- claim's row lock, say: 1.2 took it in a first call, which a prepared
-- transaction keeps across restarts; or a mere read of snowid_config, which
-- PUBLIC may) would keep the update waiting for good, and every
-- snowid_next() behind it: it refuses instead, naming it.  A prepared
-- transaction's locks are those of pg_locks without a pid (1.3.0's update
-- from 1.2 looked for them under virtualtransaction '-1/<xid>', where no
-- version lists them, and missed one that read snowid_config: test 173).
-- Then the update takes the locks its changes need on the edition's tables
-- at once, so that no call takes ids while it remakes the generator's
-- functions and snowid_sql_fixed(), waiting at most 10 s (the update's
-- lock_timeout, for the rest of the script too): a session that holds one
-- longer is named rather than waited for.
SELECT pg_catalog.set_config('lock_timeout', '10s', true);
DO $$
DECLARE
	gids text;
BEGIN
	SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_literal(x.gid), ', ') INTO gids
	FROM pg_catalog.pg_prepared_xacts x
	WHERE x.database OPERATOR(pg_catalog.=) pg_catalog.current_database()
	  AND EXISTS (SELECT FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) l.relation
				  WHERE l.pid IS NULL
					AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d
														   WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
					AND c.relnamespace OPERATOR(pg_catalog.=) ANY (ARRAY['snowid_sql_private'::pg_catalog.regnamespace,
																	  '@extschema@'::pg_catalog.regnamespace]::pg_catalog.oid[])
					AND c.relname OPERATOR(pg_catalog.~~) 'snowid%');
	IF gids IS NOT NULL THEN
		RAISE EXCEPTION 'a prepared transaction holds a lock on the tables of snowid_sql'
			USING ERRCODE = 'object_in_use',
				  DETAIL = pg_catalog.format('The prepared transactions %s of this database (pg_prepared_xacts) hold locks on the tables of snowid_sql; the update would wait for them for good.', gids),
				  HINT = 'End them first (COMMIT PREPARED or ROLLBACK PREPARED, as a superuser or the role that prepared them), then update.';
	END IF;
	BEGIN
		LOCK TABLE snowid_sql_private.snowid_config, snowid_sql_private.snowid_locks,
			@extschema@.snowid_config IN ACCESS EXCLUSIVE MODE;
	EXCEPTION WHEN lock_not_available THEN
		RAISE EXCEPTION 'the tables of snowid_sql were not free within the update''s lock_timeout'
			USING ERRCODE = 'lock_not_available',
				  DETAIL = 'Another session, or a prepared transaction, held a lock on snowid_config or snowid_locks for 10 s; the update waits no longer, so that the sessions taking ids do not wait behind it.',
				  HINT = 'Find it in pg_locks and pg_stat_activity (a prepared one in pg_prepared_xacts), end it, then update.';
	END;
END
$$;
