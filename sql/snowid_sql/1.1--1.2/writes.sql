-- -------------------------------------------------------------------------
-- The writes that take ids, held off until the update commits
-- -------------------------------------------------------------------------
-- A call of 1.0's or 1.1's functions that this update meets in flight
-- waits for the update's locks on the sequences and tables it moves, then
-- goes on in its old body, which plans its next statement anew once the
-- update has committed, by the names it wrote: the functions and sequences
-- in the extension's schema, which 1.2 moves to snowid_sql_private.  Such
-- calls failed with "function public.snowid_sql_fixed() does not exist"
-- (42883), every insert in flight (test update_from_1_0_under_load).  The
-- body takes no lock of the edition's before its first statement, but a
-- write locks the table it names before it plans the table's defaults: so
-- the update first locks, in SHARE mode (reads go on), every table and
-- view whose column default calls a function of the edition's, then the
-- edition's own tables and sequences, which it alters.  The writes in
-- flight end under the old version, and those that come wait, then plan
-- under the new one.  It comes before anything else of the
-- update that a call in flight could wait for.  Each try waits half of
-- deadlock_timeout, then lets go of them all and tries again: a
-- transaction that writes one of them and waits for another that the
-- update holds is never the one the deadlock detector ends.  The session's
-- own lock_timeout, if set, bounds the whole.  A call of snowid_next() in
-- flight elsewhere (a SELECT, a trigger) is not held off, and may fail
-- so: retried, it issues under the new version (doc/managed.md,
-- "Updating").
DO $$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'snowid_sql');
	tables text;
	own text;
	sequences text[];
	seq text;
	-- each try, and the whole (0: no bound), in ms
	try_ms bigint := GREATEST(1, pg_catalog.date_part('epoch', pg_catalog.current_setting('deadlock_timeout')::pg_catalog.interval) OPERATOR(pg_catalog.*) 500);
	bound text := pg_catalog.current_setting('lock_timeout');
	bound_ms bigint := pg_catalog.date_part('epoch', bound::pg_catalog.interval) OPERATOR(pg_catalog.*) 1000;
	deadline timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) bound::pg_catalog.interval;
BEGIN
	SELECT pg_catalog.string_agg(DISTINCT c.oid::pg_catalog.regclass::pg_catalog.text, ', ') INTO tables
	FROM pg_catalog.pg_depend d
	JOIN pg_catalog.pg_attrdef ad ON ad.oid OPERATOR(pg_catalog.=) d.objid
	JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) ad.adrelid
	WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
	  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
	  AND c.relkind IN ('r', 'p', 'v')
	  AND pg_catalog.has_table_privilege(c.oid, 'UPDATE, DELETE, TRUNCATE')
	  AND EXISTS (SELECT FROM pg_catalog.pg_depend m
				  WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
					AND m.objid OPERATOR(pg_catalog.=) d.refobjid
					AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
					AND m.refobjid OPERATOR(pg_catalog.=) ext AND m.deptype = 'e')
	  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend m
					  WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
						AND m.objid OPERATOR(pg_catalog.=) c.oid
						AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
						AND m.deptype = 'e');
	-- the edition's tables, and its sequences with their owners
	SELECT pg_catalog.string_agg(c.oid::pg_catalog.regclass::pg_catalog.text, ', ') FILTER (WHERE c.relkind = 'r'),
		   pg_catalog.array_agg(pg_catalog.format('%s OWNER TO %s', c.oid::pg_catalog.regclass, c.relowner::pg_catalog.regrole))
			   FILTER (WHERE c.relkind = 'S')
	INTO own, sequences
	FROM pg_catalog.pg_depend m
	JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) m.objid
	WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	  AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
	  AND m.refobjid OPERATOR(pg_catalog.=) ext AND m.deptype = 'e';
	IF tables IS NULL AND own IS NULL AND sequences IS NULL THEN
		RETURN;
	END IF;
	PERFORM pg_catalog.set_config('lock_timeout', try_ms::pg_catalog.text, true);
	LOOP
		BEGIN
			IF tables IS NOT NULL THEN
				EXECUTE 'LOCK TABLE ' OPERATOR(pg_catalog.||) tables OPERATOR(pg_catalog.||) ' IN SHARE MODE';
			END IF;
			-- then what the update alters, in the same try: a transaction
			-- that took an id (a call locks the sequences to its end) and
			-- then writes one of the tables above waits for the update,
			-- which would wait for it outside a try (the update's ALTER
			-- SEQUENCE), and the deadlock detector ended the transaction
			-- that waited first.  A sequence is locked so by an ALTER
			-- SEQUENCE that changes nothing (LOCK TABLE takes no sequence).
			IF own IS NOT NULL THEN
				EXECUTE 'LOCK TABLE ' OPERATOR(pg_catalog.||) own OPERATOR(pg_catalog.||) ' IN ACCESS EXCLUSIVE MODE';
			END IF;
			FOREACH seq IN ARRAY coalesce(sequences, '{}') LOOP
				EXECUTE 'ALTER SEQUENCE ' OPERATOR(pg_catalog.||) seq;
			END LOOP;
			EXIT;
		EXCEPTION WHEN lock_not_available THEN
			IF bound_ms OPERATOR(pg_catalog.>) 0 AND pg_catalog.clock_timestamp() OPERATOR(pg_catalog.>=) deadline THEN
				RAISE EXCEPTION 'the tables whose defaults take ids were not free within lock_timeout'
					USING ERRCODE = 'lock_not_available',
						  DETAIL = pg_catalog.format('The update waits for the writes in flight to %s and the transactions that took ids, and holds off those that come until it commits.', coalesce(tables, 'no table')),
						  HINT = 'Update when those writes are fewer, or with a longer lock_timeout.';
			END IF;
		END;
	END LOOP;
	PERFORM pg_catalog.set_config('lock_timeout', bound, true);
END
$$;
