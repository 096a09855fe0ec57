/* snowid_sql--1.1--1.2.sql: the SQL edition, read from outside (issue 56) */

\echo Use "ALTER EXTENSION snowid_sql UPDATE TO '1.2'" to load this file. \quit

-- What this version changes, each for a way the ids repeated or the
-- generator stopped (doc/managed.md, doc/security.md):
--
-- - Every call that takes a position makes its transaction write WAL of
--   its own, so that its commit flushes the WAL that logged the position
--   (which another transaction may have written and not yet flushed) and
--   waits for a synchronous standby like any other commit.
-- - The worker id holds only on the server, and with the sequences, it was
--   set with: snowid_config gains worker_server, stamped by the
--   configuration's trigger whenever the worker id is set.  A restored
--   dump, a pg_createsubscriber copy (another system identifier) or a
--   sequence made anew has no worker id until it is set there again; the
--   holder of a claim likewise (snowid_holder.server: a copy becomes
--   another holder at its next claim).  A replica's apply
--   (session_replication_role = replica) changes no row of snowid_config.
-- - The sequences of the generator keep INCREMENT 1, CACHE 1 and NO CYCLE:
--   checked when the worker id is set, and any ALTER SEQUENCE makes a
--   sequence anew (another filenode), which drops the worker id.
-- - The locks of the generator and of the claim are row locks of
--   snowid_locks, which no role but the owner may lock, not advisory
--   locks, which any role may take.
-- - Public ids are read with ASCII folding, not upper() of the database's
--   collation (Turkish folds i to a dotted capital I; key ids, which have
--   no i, fold alike either way).
-- - Installed as an extension by a role that is no superuser, the objects
--   belong to the superuser the script runs as (snowid_sql.control:
--   superuser = true, trusted = true), as after a fresh install; the
--   installing role keeps what the page says it gets.

-- -------------------------------------------------------------------------
-- Ownership: the superuser's, as a fresh install has it
-- -------------------------------------------------------------------------
-- Run as a superuser (a trusted extension's update runs as the bootstrap
-- superuser), the objects that an earlier install left to the role that
-- installed it pass to the role this runs as, but the functions that run
-- as that role (the claim's), which stay its own.  Run as the owner (pg_tle,
-- the plain script), nothing changes hands.
DO $$
DECLARE
	old oid := (SELECT c.relowner FROM pg_catalog.pg_class c
				WHERE c.oid = '@extschema@.snowid_config'::pg_catalog.regclass);
	o record;
BEGIN
	IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER)
		OR old = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
		RETURN;
	END IF;
	FOR o IN
		SELECT pg_catalog.format('ALTER %s %s OWNER TO %I',
				CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass,
				CURRENT_USER) AS stmt
		FROM pg_catalog.pg_class c
		WHERE c.relnamespace = '@extschema@'::pg_catalog.regnamespace AND c.relkind IN ('r', 'S')
		  AND c.relname LIKE 'snowid%' AND c.relowner = old
		UNION ALL
		SELECT pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', p.oid::pg_catalog.regprocedure, CURRENT_USER)
		FROM pg_catalog.pg_proc p
		WHERE p.pronamespace = '@extschema@'::pg_catalog.regnamespace AND p.proname LIKE 'snowid%'
		  AND p.proowner = old
		  AND p.proname NOT IN ('snowid_new_holder', 'snowid_sql_connstr', 'snowid_sql_claim_now',
								'snowid_claim', 'snowid_sql_claim_once')
		UNION ALL
		SELECT pg_catalog.format('ALTER TYPE %s OWNER TO %I', t.oid::pg_catalog.regtype, CURRENT_USER)
		FROM pg_catalog.pg_type t
		WHERE t.typnamespace = '@extschema@'::pg_catalog.regnamespace AND t.typname = 'snowid_sql_fixed'
		  AND t.typowner = old
	LOOP
		EXECUTE o.stmt;
	END LOOP;
END
$$;


-- -------------------------------------------------------------------------
-- The locks
-- -------------------------------------------------------------------------
-- One row per lock: 'generator', held by a writer (snowid_sql_move()) for
-- a few statements, in a subtransaction that it rolls back to let the
-- lock go (the sequences keep what it set); 'claim', held by a claim to
-- the end of its transaction.  Only the owner may lock a row (UPDATE), and
-- the installing role, whose claim functions take the second.
CREATE TABLE @extschema@.snowid_locks (
	name text PRIMARY KEY CHECK (name IN ('generator', 'claim'))
);

COMMENT ON TABLE @extschema@.snowid_locks IS
'the locks of the snowid generator and of its claim: row locks no other role can take';

INSERT INTO @extschema@.snowid_locks VALUES ('generator'), ('claim');
REVOKE ALL ON @extschema@.snowid_locks FROM PUBLIC;

-- -------------------------------------------------------------------------
-- The server a worker id holds on
-- -------------------------------------------------------------------------

-- This server and the generator's sequences as they are: the system
-- identifier (another for every initdb, pg_upgrade and pg_createsubscriber
-- copy), and the files of snowid_position and snowid_generation, which
-- name the database (another for a restored dump, and after any ALTER
-- SEQUENCE); no table read
CREATE FUNCTION @extschema@.snowid_sql_here()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT pg_catalog.format('sysid=%s position=%s generation=%s', s.system_identifier,
							 pg_catalog.pg_relation_filepath('@extschema@.snowid_position'::pg_catalog.regclass),
							 pg_catalog.pg_relation_filepath('@extschema@.snowid_generation'::pg_catalog.regclass))
	FROM pg_catalog.pg_control_system() s;
END;

-- What is wrong with the options of the generator's sequences, as a
-- sentence, or NULL: its reasoning holds for INCREMENT 1, CACHE 1 and NO
-- CYCLE alone (a cache hides a writer's window from readers)
CREATE FUNCTION @extschema@.snowid_sql_sequences_problem()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT pg_catalog.format('The sequence %s has INCREMENT %s, CACHE %s and %s; the generator needs INCREMENT 1, CACHE 1 and NO CYCLE.',
							 c.relname, s.seqincrement, s.seqcache,
							 CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END)
	FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid = s.seqrelid
	WHERE s.seqrelid IN ('@extschema@.snowid_position'::pg_catalog.regclass,
						 '@extschema@.snowid_generation'::pg_catalog.regclass)
	  AND (s.seqincrement <> 1 OR s.seqcache <> 1 OR s.seqcycle)
	ORDER BY c.relname
	LIMIT 1;
END;

-- The error of a worker id set on another server
CREATE FUNCTION @extschema@.snowid_sql_elsewhere(worker_id integer)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'snowid has no worker id on this server'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = format('The worker id %s of snowid_config was set on another server, or with other sequences: this database is a copy (a restored dump, a logical subscriber, a pg_createsubscriber copy, a pg_upgrade), or snowid_position or snowid_generation was altered.', worker_id),
			  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter; or, claiming, SELECT snowid_claim().';
END
$$;

ALTER TABLE @extschema@.snowid_config ADD COLUMN worker_server text;

COMMENT ON COLUMN @extschema@.snowid_config.worker_server IS
'the server and sequences the worker id was set with (snowid_sql_here()), set by the table''s trigger: elsewhere, the worker id does not hold';

ALTER TABLE @extschema@.snowid_holder ADD COLUMN server text;

COMMENT ON COLUMN @extschema@.snowid_holder.server IS
'the server and sequences the holder was made on (snowid_sql_here()): elsewhere, the next claim makes another holder';

-- A database updated to this version holds its worker id and holder where
-- it is (it cannot tell whether it is a copy)
UPDATE @extschema@.snowid_holder SET server = @extschema@.snowid_sql_here();

-- The configuration's check, as in 1.0, as the owner of the extension,
-- whose sequence it reads (the role that installed it owns it no more)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_config_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	problem text := @extschema@.snowid_sql_config_problem(NEW);
	used boolean;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem;
	END IF;
	SELECT is_called INTO used FROM @extschema@.snowid_position;
	IF used AND (OLD.epoch, OLD.datacenter_bits, OLD.worker_bits, OLD.sequence_bits)
		IS DISTINCT FROM (NEW.epoch, NEW.datacenter_bits, NEW.worker_bits, NEW.sequence_bits) THEN
		RAISE EXCEPTION 'snowid layout or epoch cannot change once ids are issued'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'An id of one layout can equal an id of the other, so new ids could collide with old ones.',
				  HINT = 'To switch layouts deliberately, follow doc/managed.md: drop the extension and create it again with the new layout.';
	END IF;
	RETURN NEW;
END
$$;

-- An UPDATE that names the worker id (or worker_server) stamps it with
-- this server, even where the value stays: so its owner sets the worker
-- id of a copy, or after an ALTER SEQUENCE, again.  An UPDATE that names
-- neither (the restore's of snowid_sql_config_restore(), a change of
-- max_drift_ms on a copy) leaves the stamp as it was.
CREATE FUNCTION @extschema@.snowid_sql_config_stamp()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	NEW.worker_server := CASE WHEN NEW.worker_id IS NOT NULL THEN @extschema@.snowid_sql_here() END;
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_stamp BEFORE INSERT OR UPDATE OF worker_id, worker_server
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_stamp();

-- A replica's apply (and any session with session_replication_role =
-- replica) changes no row of snowid_config: a publication carries the
-- publisher's row, whose worker id and layout are not this server's
CREATE FUNCTION @extschema@.snowid_sql_config_replica()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RETURN NULL;
END
$$;

CREATE TRIGGER snowid_config_replica BEFORE INSERT OR UPDATE OR DELETE
	ON @extschema@.snowid_config
	FOR EACH ROW EXECUTE FUNCTION @extschema@.snowid_sql_config_replica();
ALTER TABLE @extschema@.snowid_config ENABLE REPLICA TRIGGER snowid_config_replica;

-- The configuration, checked: as in 1.0, and a worker id needed is one set
-- on this server
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_config(need_worker boolean)
RETURNS @extschema@.snowid_config
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	c @extschema@.snowid_config;
	problem text;
BEGIN
	SELECT * INTO c FROM @extschema@.snowid_config;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid_sql has no configuration'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The table snowid_config holds no row.',
				  HINT = 'Drop the extension and create it again, then set the worker id.';
	END IF;
	problem := @extschema@.snowid_sql_config_problem(c);
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid snowid configuration in snowid_config'
			USING ERRCODE = 'invalid_parameter_value', DETAIL = problem,
				  HINT = 'Correct the row of snowid_config as the owner of the extension (doc/managed.md).';
	END IF;
	IF c.claim_worker_id THEN
		-- the worker id claimed for this configuration, or none
		c.worker_id := @extschema@.snowid_sql_claimed(c);
		IF need_worker AND c.worker_id IS NULL THEN
			RAISE EXCEPTION 'snowid has not claimed a worker id'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'claim_worker_id of snowid_config is on, and no worker id is claimed for its datacenter_id, worker_bits and worker_id.',
					  HINT = 'The first call of snowid_next() by a role that is no superuser claims one, or the owner of the extension with SELECT snowid_claim().';
		END IF;
	ELSIF need_worker AND c.worker_id IS NOT NULL
		AND c.worker_server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
		PERFORM @extschema@.snowid_sql_elsewhere(c.worker_id);
	END IF;
	IF need_worker AND c.worker_id IS NULL THEN
		RAISE EXCEPTION 'snowid has no worker id'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The worker_id of snowid_config is not set.',
				  HINT = 'As the owner of the extension: UPDATE snowid_config SET worker_id = N, with N unique among the servers of the datacenter.';
	END IF;
	RETURN c;
END
$$;

-- Whether this database's holder was made on this server
CREATE FUNCTION @extschema@.snowid_sql_holder_here()
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT coalesce(bool_or(h.server = @extschema@.snowid_sql_here()), false)
	FROM @extschema@.snowid_holder h;
END;

-- The worker id claimed for a configuration, or NULL: one claimed by a
-- holder of this server for its datacenter id and worker bits, and its
-- worker id if it names one
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claimed(c @extschema@.snowid_config)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT @extschema@.snowid_sql_claimed_of(CASE WHEN s.is_called THEN s.last_value END,
											 c.datacenter_id, c.worker_bits, c.worker_id)
	FROM @extschema@.snowid_claimed s
	WHERE @extschema@.snowid_sql_holder_here();
END;

-- -------------------------------------------------------------------------
-- snowid_sql_fixed(), with the server it was made on
-- -------------------------------------------------------------------------
-- server is snowid_sql_here() where it was made, and position_node the
-- filenode of snowid_position then: the common path compares the latter
-- (cheap) at every call, every writer the former.  Its worker id is the
-- row's only where the row's was set on this server.
ALTER TYPE @extschema@.snowid_sql_fixed ADD ATTRIBUTE position_node oid, ADD ATTRIBUTE server text;

CREATE FUNCTION @extschema@.snowid_sql_refix()
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
	here text := @extschema@.snowid_sql_here();
	problem text := @extschema@.snowid_sql_sequences_problem();
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'the sequences of the snowid generator were altered'
			USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = problem,
				  HINT = 'ALTER SEQUENCE them back to INCREMENT 1, CACHE 1 and NO CYCLE (a superuser, where the extension''s objects are the superuser''s), then set the worker id again.';
	END IF;
	SELECT * INTO c FROM @extschema@.snowid_config;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %L)::@extschema@.snowid_sql_fixed$f$,
		CASE WHEN c.claim_worker_id THEN 'true' ELSE 'false' END, coalesce(c.datacenter_id, 0),
		coalesce(CASE WHEN c.claim_worker_id OR c.worker_server = here THEN c.worker_id END::text, 'NULL'),
		coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(@extschema@.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(@extschema@.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0),
		pg_relation_filenode('@extschema@.snowid_position'), here);
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_refix() FROM PUBLIC;

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fix()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.snowid_sql_refix();
	RETURN NULL;
END
$$;

-- -------------------------------------------------------------------------
-- The generator
-- -------------------------------------------------------------------------

-- A writer (see 1.0): the lock is the row 'generator' of snowid_locks,
-- locked in the block's subtransaction, which the block ends with an error
-- of its own: the lock goes with it, on success, error or cancel alike,
-- and the sequences keep what was set (they do not roll back).  A
-- generator made on another server, or with other sequences, moves
-- nothing.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_move(low bigint, n bigint, high bigint, wait boolean,
	OUT first bigint, OUT got bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	locked boolean;
	-- what a call returns that is not used (an assignment is cheaper than
	-- PERFORM, which runs a query)
	done bigint;
BEGIN
	BEGIN
		IF wait THEN
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE;
		ELSE
			SELECT true INTO locked FROM @extschema@.snowid_locks l
			WHERE l.name = 'generator' FOR UPDATE SKIP LOCKED;
		END IF;
		IF locked THEN
			IF (@extschema@.snowid_sql_fixed()).server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
				PERFORM @extschema@.snowid_sql_elsewhere((@extschema@.snowid_sql_fixed()).worker_id);
			END IF;
			-- the window opens: the generation odd (a window left open by
			-- a writer that failed is one step further)
			done := pg_catalog.nextval('@extschema@.snowid_generation');
			IF done % 2 = 0 THEN
				done := pg_catalog.nextval('@extschema@.snowid_generation');
			END IF;
			-- the last position, read under the sequence's buffer lock (a
			-- nextval() may run meanwhile); before the first, the one below
			last := pg_catalog.pg_sequence_last_value('@extschema@.snowid_position');
			IF last IS NULL THEN
				SELECT s.last_value - 1 INTO last FROM @extschema@.snowid_position s;
			END IF;
			first := greatest(last + 1, low);
			got := greatest(least(n, high - first + 1), 0);
			IF first + got - 1 > last THEN
				done := pg_catalog.setval('@extschema@.snowid_position', first + got - 1);
			END IF;
			-- and closes: even again
			done := pg_catalog.nextval('@extschema@.snowid_generation');
		END IF;
		RAISE SQLSTATE 'SN000';
	EXCEPTION WHEN SQLSTATE 'SN000' THEN
		NULL;
	WHEN lock_not_available THEN
		RAISE EXCEPTION 'the snowid generator''s lock was not free within lock_timeout'
			USING ERRCODE = 'lock_not_available',
				  DETAIL = 'Another session held the row ''generator'' of snowid_locks for 10 s.',
				  HINT = 'Look for that session in pg_locks; snowid_sql holds the lock only while it moves the generator, and only its owner can take it otherwise.';
	END;
END
$$;

-- One id (see 1.0).  The common path also checks that snowid_sql_fixed()
-- was made with this snowid_position (a restored dump has another), and
-- makes its transaction write WAL of its own once (a transactional
-- logical message, which also gives it an xid): its commit then flushes
-- the WAL that logged the position (written maybe by another transaction,
-- not yet flushed) and waits for a synchronous standby.  An xid alone
-- would not do: a transaction that wrote no WAL of its own commits
-- asynchronously, also one that has an xid (pg_current_xact_id(), or
-- writes to temporary or unlogged tables only).  SQL cannot tell whether
-- a transaction wrote WAL, so the message's own: the setting
-- snowid_sql.message_written, on once the transaction wrote it, is local
-- to it (gone at its end, or with a subtransaction rolled back, where the
-- next call writes another).  A constant is cheaper to compare at every
-- call than the xid; a session that sets it on itself skips the message,
-- as one that sets synchronous_commit = off skips the flush.
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_next(claimed boolean)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	c @extschema@.snowid_config;
	w integer;
	now_ms bigint;
	g bigint;
	v bigint;
BEGIN
	w := CASE WHEN pg_relation_filenode('@extschema@.snowid_position')
			IS DISTINCT FROM (@extschema@.snowid_sql_fixed()).position_node
		THEN NULL
		WHEN (@extschema@.snowid_sql_fixed()).claim_worker_id
		THEN @extschema@.snowid_sql_claimed_of(pg_sequence_last_value('@extschema@.snowid_claimed'),
											   (@extschema@.snowid_sql_fixed()).datacenter_id,
											   (@extschema@.snowid_sql_fixed()).worker_bits,
											   (@extschema@.snowid_sql_fixed()).worker_id)
		ELSE (@extschema@.snowid_sql_fixed()).worker_id END;
	now_ms := CASE WHEN w IS NOT NULL AND NOT pg_is_in_recovery()
		THEN floor(EXTRACT(epoch FROM clock_timestamp()) * 1000)::bigint
			- (@extschema@.snowid_sql_fixed()).epoch_ms END;
	g := pg_sequence_last_value('@extschema@.snowid_generation');
	v := CASE WHEN now_ms <= (@extschema@.snowid_sql_fixed()).max_ms
		THEN CASE WHEN current_setting('snowid_sql.message_written', true) = 'on'
					   OR (pg_logical_emit_message(true, 'snowid_sql', '') IS NOT NULL
						   AND set_config('snowid_sql.message_written', 'on', true) IS NOT NULL)
			THEN nextval('@extschema@.snowid_position') END END;
	IF g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
		AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
		RETURN @extschema@.snowid_sql_fixed_id(w, v);
	END IF;
	IF v IS NOT NULL THEN
		-- unless the position is this call's and far ahead of the clock
		-- (kept for the path below), the call becomes a writer
		IF NOT coalesce(g % 2 = 0 AND pg_sequence_last_value('@extschema@.snowid_generation') = g
						AND (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
							> now_ms + (@extschema@.snowid_sql_fixed()).near_ms, false) THEN
			v := (@extschema@.snowid_sql_move(now_ms << (@extschema@.snowid_sql_fixed()).sequence_bits,
											  1, NULL, false)).first;
		END IF;
		IF (v >> (@extschema@.snowid_sql_fixed()).sequence_bits)
			BETWEEN now_ms AND now_ms + (@extschema@.snowid_sql_fixed()).near_ms THEN
			RETURN @extschema@.snowid_sql_fixed_id(w, v);
		END IF;
	END IF;

	c := @extschema@.snowid_sql_config(false);
	IF c.worker_id IS NULL AND c.claim_worker_id AND NOT claimed THEN
		RETURN NULL;
	END IF;
	c := @extschema@.snowid_sql_config(true);
	RETURN @extschema@.snowid_sql_compose(c, (@extschema@.snowid_sql_take(1, c, v)).first);
END
$$;

-- -------------------------------------------------------------------------
-- The claim
-- -------------------------------------------------------------------------

-- Before a claim, as the owner: a holder made on another server (this
-- database is a copy) is replaced by one of this server's, with nothing
-- claimed
CREATE FUNCTION @extschema@.snowid_sql_holder_renew()
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	h record;
BEGIN
	IF NOT @extschema@.snowid_sql_holder_here() THEN
		h := @extschema@.snowid_sql_new_holder();
		UPDATE @extschema@.snowid_holder
		SET name = h.name, secret = h.secret, server = @extschema@.snowid_sql_here();
		PERFORM setval('@extschema@.snowid_claimed', 0, true);
		RAISE LOG 'snowid_sql made a new holder "%": its holder was made on another server', h.name;
	END IF;
	IF (@extschema@.snowid_sql_fixed()).server IS DISTINCT FROM @extschema@.snowid_sql_here() THEN
		PERFORM @extschema@.snowid_sql_refix();
	END IF;
END
$$;

-- One claim at a time in a database: the row 'claim' of snowid_locks,
-- held to the end of the transaction
CREATE OR REPLACE FUNCTION @extschema@.snowid_claim(
	OUT datacenter_id integer, OUT worker_id integer,
	OUT floor_time timestamptz, OUT holder text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
AS $$
DECLARE
	r record;
BEGIN
	PERFORM FROM @extschema@.snowid_locks l WHERE l.name = 'claim' FOR UPDATE;
	PERFORM @extschema@.snowid_sql_holder_renew();
	r := @extschema@.snowid_sql_claim_now();
	datacenter_id := r.datacenter_id;
	worker_id := r.worker_id;
	floor_time := r.floor_time;
	holder := r.holder;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_claim_once()
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '70s'
AS $$
BEGIN
	PERFORM FROM @extschema@.snowid_locks l WHERE l.name = 'claim' FOR UPDATE;
	PERFORM @extschema@.snowid_sql_holder_renew();
	IF (@extschema@.snowid_sql_config(false)).worker_id IS NULL THEN
		PERFORM @extschema@.snowid_sql_claim_now();
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowid_new_holder()
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	h record := @extschema@.snowid_sql_new_holder();
BEGIN
	UPDATE @extschema@.snowid_holder
	SET name = h.name, secret = h.secret, server = @extschema@.snowid_sql_here();
	PERFORM setval('@extschema@.snowid_claimed', 0, true);
	RETURN h.name;
END
$$;

REVOKE ALL ON FUNCTION @extschema@.snowid_sql_holder_renew() FROM PUBLIC;

-- -------------------------------------------------------------------------
-- Public ids: ASCII folding, whatever the collation
-- -------------------------------------------------------------------------

-- A text's ASCII letters in upper case, and nothing else changed (upper()
-- follows the collation: in Turkish, i becomes a dotted capital I)
CREATE FUNCTION @extschema@.snowid_sql_ascii_upper(s text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.translate(s, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_conninfo_keywords(conninfo text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE WHEN conninfo ~ $re$^\s*([A-Za-z_]+\s*=\s*('([^'\\]|\\.)*'|([^\s'\\]|\\.)([^\s\\]|\\.)*)\s*)*$$re$
		THEN ARRAY(SELECT pg_catalog.translate(m[1], 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
				   FROM pg_catalog.regexp_matches(conninfo,
				$re$([A-Za-z_]+)\s*=\s*(?:'(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)(?:[^\s\\]|\\.)*)$re$, 'g') m)
		END;
END;

CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_read_public(input text, OUT id bigint, OUT problem text)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	symbols text := @extschema@.snowid_sql_symbols();
	s integer[] := '{}';
	ch text;
	v integer;
	key_len integer;
	state integer := 0;
	number bigint := 0;
	kid text := '';
	key bytea;
BEGIN
	IF octet_length(input) > 64 THEN
		RETURN;
	END IF;
	FOREACH ch IN ARRAY regexp_split_to_array(input, '') LOOP
		CONTINUE WHEN ch = '-';
		v := CASE WHEN ch ~ '^[A-Za-z0-9]$'
			THEN strpos(symbols, translate(@extschema@.snowid_sql_ascii_upper(ch), 'OIL', '011')) - 1
			ELSE -1 END;
		IF v < 0 THEN
			problem := CASE
				WHEN ch = ' ' THEN 'It contains a space.'
				WHEN ascii(ch) < 32 OR ascii(ch) = 127
					THEN format('It contains the control character 0x%s.', lpad(to_hex(ascii(ch)), 2, '0'))
				ELSE format('It contains "%s", which public ids do not use.', ch) END;
			RETURN;
		END IF;
		IF cardinality(s) = 22 THEN
			problem := 'A public id is a key id of 1 to 8 characters followed by 14 characters; this one is longer.';
			RETURN;
		END IF;
		s := s || v;
	END LOOP;
	key_len := cardinality(s) - 14;
	IF key_len < 1 THEN
		problem := format('A public id is a key id of 1 to 8 characters followed by 14 characters; this one has %s besides hyphens.',
						  cardinality(s));
		RETURN;
	END IF;
	FOR i IN 1 .. cardinality(s) LOOP
		state := @extschema@.snowid_sql_damm(state, s[i]);
	END LOOP;
	IF state <> 0 THEN
		problem := 'Its check character does not match: a character is wrong, or two are swapped.';
		RETURN;
	END IF;
	IF s[key_len + 1] > 7 THEN
		problem := 'It lies outside the range of public ids.';
		RETURN;
	END IF;
	FOR i IN 1 .. 13 LOOP
		number := (number << 5) | s[key_len + i];
	END LOOP;
	FOR i IN 1 .. key_len LOOP
		kid := kid || substr(symbols, s[i] + 1, 1);
	END LOOP;
	SELECT k.key INTO key FROM @extschema@.snowid_public_keys k WHERE k.key_id = kid;
	IF NOT FOUND THEN
		PERFORM @extschema@.snowid_sql_first_key();
		problem := format('No key of snowid_public_keys has the id "%s".', kid);
		RETURN;
	END IF;
	id := @extschema@.snowid_sql_permute(key, number, true);
END
$$;

-- What the role that installed the edition may do, granted anew (the
-- owner of the extension, whoever runs this update; the role that runs the
-- plain script): a change of owner gives the new owner the privileges the
-- old one had granted itself.  The claim, which runs as that role, writes
-- the state record, locks its row of snowid_locks and makes
-- snowid_sql_fixed() anew; snowid_sql_holder_renew() is one of its
-- functions.
DO $$
DECLARE
	installer name := coalesce(
		(SELECT e.extowner::pg_catalog.regrole::name FROM pg_catalog.pg_depend d
		 JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
		 WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.objid = '@extschema@.snowid_config'::pg_catalog.regclass AND d.deptype = 'e'),
		CURRENT_USER);
BEGIN
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %s TO %I', '@extschema@.snowid_config', installer);
	EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s, %s, %s TO %I',
							  '@extschema@.snowid_public_keys', '@extschema@.snowid_coordination',
							  '@extschema@.snowid_coordinator_state', installer);
	EXECUTE pg_catalog.format('GRANT SELECT, UPDATE ON %s, %s, %s TO %I', '@extschema@.snowid_holder',
							  '@extschema@.snowid_claimed', '@extschema@.snowid_locks', installer);
	EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s, %s TO %I',
							  '@extschema@.snowid_sql_raise_floor(bigint)', '@extschema@.snowid_sql_refix()',
							  installer);
	EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', '@extschema@.snowid_sql_holder_renew()',
							  installer);
END
$$;

-- snowid_sql_fixed() made anew, with this server, from the row: a worker
-- id set before this update holds here (stamped: an installation cannot
-- tell whether it is a copy; the page says to set it again in one)
UPDATE @extschema@.snowid_config SET worker_server = @extschema@.snowid_sql_here()
WHERE worker_id IS NOT NULL;
SELECT @extschema@.snowid_sql_refix();

-- The version this update installs (a plain script records it nowhere else)
CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_version()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$SELECT '1.2'$$;
