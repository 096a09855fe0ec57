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
-- view whose column default calls a function of the edition's, then
-- the edition's own tables and sequences, which it alters.  The writes in
-- flight end under the old version, and those that come wait, then plan
-- under the new one.  It comes before anything else of the update that a
-- call in flight could wait for.  Each try waits at most half of
-- deadlock_timeout for those tables, then takes the edition's own without
-- waiting (NOWAIT, and 1 ms for a sequence): a call of snowid_next() never
-- waits behind a try, and a transaction that took an id and then writes
-- one of those tables is never the one the deadlock detector ends.  Where
-- one is not free, it lets go of them all, sleeps 50 ms and tries again,
-- for at most the session's lock_timeout, or 60 s where none is set, then
-- refuses, naming the sessions that hold them (55P03), changing nothing.
-- A prepared transaction that holds one (a role granted nothing makes one
-- with a call of 1.0's snowid_next(), which PUBLIC may) refuses it at
-- once, named by its gid (55006), as the update from 1.2 or 1.3 does
-- (1.3--1.4/locks.sql): no process holds it, and it stays until its owner
-- or a superuser ends it.  Before 1.4's fixes the update tried again for
-- good under lock_timeout 0, holding snowid_config and snowid_locks in
-- ACCESS EXCLUSIVE mode while it waited for a sequence, and every call
-- took up to half of deadlock_timeout meanwhile (test
-- update_from_1_0_finds_prepared).  A call of snowid_next() in flight
-- elsewhere (a SELECT, a trigger) is not held off, and may fail so:
-- retried, it issues under the new version (doc/managed.md, "Updating").
DO $$
DECLARE
	ext oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'snowid_sql');
	tables text;
	own text;
	sequences text[];
	-- the tables above and the edition's sequences (which a lock that
	-- only reads does not stop), and the edition's tables (which any does)
	rels oid[];
	own_rels oid[];
	seq text;
	holders text;
	prepared text;
	-- each try's wait for the tables, in ms, and the whole: the session's
	-- lock_timeout, or 60 s where it is 0
	try_ms bigint := GREATEST(1, pg_catalog.date_part('epoch', pg_catalog.current_setting('deadlock_timeout')::pg_catalog.interval) OPERATOR(pg_catalog.*) 500);
	bound text := pg_catalog.current_setting('lock_timeout');
	whole interval := CASE WHEN bound::pg_catalog.interval OPERATOR(pg_catalog.>) '0'::pg_catalog.interval
		THEN bound::pg_catalog.interval ELSE '60 s'::pg_catalog.interval END;
	deadline timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) whole;
BEGIN
	SELECT pg_catalog.string_agg(DISTINCT c.oid::pg_catalog.regclass::pg_catalog.text, ', '),
		   pg_catalog.array_agg(DISTINCT c.oid) INTO tables, rels
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
			   FILTER (WHERE c.relkind = 'S'),
		   coalesce(rels, '{}') OPERATOR(pg_catalog.||) pg_catalog.array_agg(c.oid) FILTER (WHERE c.relkind = 'S'),
		   pg_catalog.array_agg(c.oid) FILTER (WHERE c.relkind = 'r')
	INTO own, sequences, rels, own_rels
	FROM pg_catalog.pg_depend m
	JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) m.objid
	WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	  AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
	  AND m.refobjid OPERATOR(pg_catalog.=) ext AND m.deptype = 'e';
	IF tables IS NULL AND own IS NULL AND sequences IS NULL THEN
		RETURN;
	END IF;
	LOOP
		BEGIN
			IF tables IS NOT NULL THEN
				PERFORM pg_catalog.set_config('lock_timeout', try_ms::pg_catalog.text, true);
				EXECUTE 'LOCK TABLE ' OPERATOR(pg_catalog.||) tables OPERATOR(pg_catalog.||) ' IN SHARE MODE';
			END IF;
			-- then what the update alters, in the same try, without waiting:
			-- a transaction that took an id (a call locks the sequences to
			-- its end) and then writes one of the tables above waits for the
			-- update, which lets go at once.  A sequence is locked so by an
			-- ALTER SEQUENCE that changes nothing (LOCK TABLE takes no
			-- sequence, and ALTER SEQUENCE has no NOWAIT).
			IF own IS NOT NULL THEN
				EXECUTE 'LOCK TABLE ' OPERATOR(pg_catalog.||) own OPERATOR(pg_catalog.||) ' IN ACCESS EXCLUSIVE MODE NOWAIT';
			END IF;
			PERFORM pg_catalog.set_config('lock_timeout', '1ms', true);
			FOREACH seq IN ARRAY coalesce(sequences, '{}') LOOP
				EXECUTE 'ALTER SEQUENCE ' OPERATOR(pg_catalog.||) seq;
			END LOOP;
			EXIT;
		EXCEPTION WHEN lock_not_available THEN
			-- (a prepared transaction's locks are those of pg_locks without
			-- a pid, its gid by its transaction id's lock)
			SELECT pg_catalog.string_agg(DISTINCT l.pid::pg_catalog.text, ', '),
				   pg_catalog.string_agg(DISTINCT coalesce(pg_catalog.quote_literal(g.gid), 'of virtual transaction ' OPERATOR(pg_catalog.||) l.virtualtransaction), ', ')
					   FILTER (WHERE l.pid IS NULL)
			INTO holders, prepared
			FROM pg_catalog.pg_locks l
			LEFT JOIN pg_catalog.pg_locks x ON l.pid IS NULL AND x.pid IS NULL AND x.locktype OPERATOR(pg_catalog.=) 'transactionid'
				AND x.virtualtransaction OPERATOR(pg_catalog.=) l.virtualtransaction
			LEFT JOIN pg_catalog.pg_prepared_xacts g ON g.transaction OPERATOR(pg_catalog.=) x.transactionid
			WHERE l.granted AND l.pid IS DISTINCT FROM pg_catalog.pg_backend_pid()
			  AND l.locktype OPERATOR(pg_catalog.=) 'relation'
			  AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d
													  WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
			  AND (l.relation OPERATOR(pg_catalog.=) ANY (own_rels)
				   OR (l.relation OPERATOR(pg_catalog.=) ANY (rels)
					   AND l.mode OPERATOR(pg_catalog.<>) ALL (ARRAY['AccessShareLock', 'RowShareLock'])));
			IF prepared IS NOT NULL THEN
				RAISE EXCEPTION 'a prepared transaction holds a lock on the tables of snowid_sql'
					USING ERRCODE = 'object_in_use',
						  DETAIL = pg_catalog.format('The prepared transactions %s of this database (pg_prepared_xacts) hold locks on the tables whose defaults take ids or the tables and sequences of snowid_sql; the update would wait for them for good.', prepared),
						  HINT = 'End them first (COMMIT PREPARED or ROLLBACK PREPARED, as a superuser or the role that prepared them), then update.';
			END IF;
			IF pg_catalog.clock_timestamp() OPERATOR(pg_catalog.>=) deadline THEN
				RAISE EXCEPTION 'the tables whose defaults take ids were not free within %',
						CASE WHEN bound::pg_catalog.interval OPERATOR(pg_catalog.>) '0'::pg_catalog.interval THEN 'lock_timeout' ELSE '60 s' END
					USING ERRCODE = 'lock_not_available',
						  DETAIL = pg_catalog.format('The update waits for the writes in flight to %s and the transactions that took ids (%s), and holds off those that come until it commits.',
													 coalesce(tables, 'no table'), coalesce('process ' OPERATOR(pg_catalog.||) holders, 'their processes have ended since')),
						  HINT = 'End those transactions (pg_terminate_backend(), as a role that may signal them), or update when those writes are fewer, or with a longer lock_timeout.';
			END IF;
		END;
		PERFORM pg_catalog.pg_sleep(0.05);
	END LOOP;
	PERFORM pg_catalog.set_config('lock_timeout', bound, true);
END
$$;
