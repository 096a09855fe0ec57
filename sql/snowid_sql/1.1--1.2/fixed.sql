-- -------------------------------------------------------------------------
-- snowid_sql_fixed(), with the server it was made on
-- -------------------------------------------------------------------------
-- server is snowid_sql_here() where it was made, and position_path the
-- file of snowid_position then, which names the database: the common path
-- compares the latter (cheap) at every call, every writer the former.  A
-- restored dump has another file, a copy made by CREATE DATABASE ...
-- TEMPLATE the same one in another database (its readers took the
-- source's window, and issued ids the source issued).  Its worker id is the
-- row's only where the row's was set on this server.
--
-- token is this server's mark in snowid_generation (see
-- snowid_sql_move()): 1 to 4194304, from the server and sequences.
--
-- adopted is a value of snowid_generation carrying another token that the
-- generator takes as this server's (snowid_sql_move()), or NULL: the value
-- it held when the worker id was set again, or when snowid_sql_fixed() was
-- made on another server or with other sequences (a copy whose worker id
-- is set, or claimed, anew).
ALTER TYPE @extschema@.snowid_sql_fixed ADD ATTRIBUTE position_path text, ADD ATTRIBUTE server text,
	ADD ATTRIBUTE token bigint, ADD ATTRIBUTE adopted bigint;

-- A worker id set (an INSERT or UPDATE that names it) says so to
-- snowid_sql_refix() for the rest of the transaction: the generation then
-- held is adopted
CREATE FUNCTION @extschema@.snowid_sql_config_worker_set()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM set_config('snowid_sql.worker_set', 'on', true);
	RETURN NEW;
END
$$;

CREATE TRIGGER snowid_config_worker_set BEFORE INSERT OR UPDATE OF worker_id
	ON @extschema@.snowid_config
	FOR EACH ROW WHEN (NEW.worker_id IS NOT NULL)
	EXECUTE FUNCTION @extschema@.snowid_sql_config_worker_set();

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
	before @extschema@.snowid_sql_fixed;
	adopted bigint;
	done bigint;
BEGIN
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'the sequences or tables of the snowid generator were altered'
			USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = problem,
				  HINT = 'Put them back as the detail says (a superuser, where the extension''s objects are the superuser''s), then set the worker id again.';
	END IF;
	-- a claim kept by a holder made elsewhere is not this database's: a
	-- CREATE DATABASE ... TEMPLATE copy keeps its source's snowid_claimed
	-- (and snowid_sql_claimed_run, the same server's start), and the
	-- common path, which reads snowid_claimed alone, takes positions as
	-- soon as snowid_sql_fixed() names this snowid_position, as made
	-- below: any change of the copy's snowid_config made it issue with the
	-- worker id its source held beside it (the attack on 1.2: 774 ids of
	-- 8,660 twice; test 141).  Dropped, the next call claims, as a new
	-- holder (snowid_sql_holder_renew()).
	IF NOT @extschema@.snowid_sql_holder_here() THEN
		done := setval('@extschema@.snowid_claimed', 0, true);
	END IF;
	SELECT * INTO c FROM @extschema@.snowid_config;
	-- the one made before (none, or one of fewer attributes, before the
	-- update to 1.2 ends)
	BEGIN
		before := @extschema@.snowid_sql_fixed();
	EXCEPTION WHEN OTHERS THEN
		before := NULL;
	END;
	-- the generation as it is now is this server's where the worker id was
	-- set in this transaction, or this is another server (or other
	-- sequences): a copy's, which sets its worker id (or claims) anew;
	-- otherwise the one adopted before stays
	adopted := CASE WHEN current_setting('snowid_sql.worker_set', true) = 'on'
						 OR before.server IS DISTINCT FROM here
					THEN pg_sequence_last_value('@extschema@.snowid_generation')
					ELSE before.adopted END;
	EXECUTE format($f$CREATE OR REPLACE FUNCTION @extschema@.snowid_sql_fixed()
RETURNS @extschema@.snowid_sql_fixed
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ROW(%s, %s, %s, %s, %s, %s, %s, %s, %s, %L, %L, %s, %s)::@extschema@.snowid_sql_fixed$f$,
		CASE WHEN c.claim_worker_id THEN 'true' ELSE 'false' END, coalesce(c.datacenter_id, 0),
		coalesce(CASE WHEN c.claim_worker_id OR c.worker_server = here THEN c.worker_id END::text, 'NULL'),
		coalesce(c.datacenter_bits, 0),
		coalesce(c.worker_bits, 0), coalesce(c.sequence_bits, 0),
		coalesce(@extschema@.snowid_sql_unix_ms(c.epoch), 0),
		coalesce(@extschema@.snowid_sql_max_ms(c), 0),
		coalesce(least(100, c.max_drift_ms), 0),
		pg_relation_filepath('@extschema@.snowid_position'), here,
		1 + (hashtext(here)::bigint & 4194303), coalesce(adopted::text, 'NULL'));
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

