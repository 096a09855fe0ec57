-- -------------------------------------------------------------------------
-- What the claim was made of, and what 1.4 calls otherwise
-- -------------------------------------------------------------------------
-- After the functions of 1.4 (above), which call none of it: the claim's
-- functions (1.2's signatures of the generator stay, for its calls in
-- flight: 1.4/generator.sql), its tables (the
-- coordination database's connection and password, the holder's name and
-- secret, the state record), their views and its lock (its sequences stay:
-- 1.4/kept.sql);
-- then the table and the lock as 1.4 makes them.  The type
-- snowid_sql_fixed keeps its attribute claim_worker_id, false (see
-- objects.sql).

DROP FUNCTION @extschema@.snowid_claim();
DROP FUNCTION @extschema@.snowid_new_holder();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_first();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_once();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_owned();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_caller(text);
DROP FUNCTION snowid_sql_private.snowid_sql_holder_renew();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_noted();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_now();
DROP FUNCTION snowid_sql_private.snowid_sql_claim_run();
DROP FUNCTION snowid_sql_private.snowid_sql_not_owner();
DROP FUNCTION snowid_sql_private.snowid_sql_claimed_of(bigint, integer, integer, integer);
DROP FUNCTION snowid_sql_private.snowid_sql_holder_here();
DROP FUNCTION snowid_sql_private.snowid_sql_new_holder();
DROP FUNCTION snowid_sql_private.snowid_sql_connstr();
DROP FUNCTION snowid_sql_private.snowid_sql_conninfo_quote(text);
DROP FUNCTION snowid_sql_private.snowid_sql_coordination_problem(snowid_sql_private.snowid_coordination);
DROP FUNCTION snowid_sql_private.snowid_sql_conninfo_keywords(text);

-- (each left in place, renamed and emptied, where another role's object
-- uses its type: 1.3--1.4/retire.sql)
SELECT snowid_sql_private.snowid_sql_retire('VIEW', x)
FROM pg_catalog.unnest(ARRAY['@extschema@.snowid_coordination', '@extschema@.snowid_coordinator_state',
							 '@extschema@.snowid_holder', '@extschema@.snowid_locks']) x;
SELECT snowid_sql_private.snowid_sql_retire('TABLE', x)
FROM pg_catalog.unnest(ARRAY['snowid_sql_private.snowid_coordination', 'snowid_sql_private.snowid_coordinator_state',
							 'snowid_sql_private.snowid_holder']) x;
DROP FUNCTION snowid_sql_private.snowid_sql_retire(text, text);
DROP FUNCTION snowid_sql_private.snowid_sql_coordination_check();

DELETE FROM snowid_sql_private.snowid_locks WHERE name = 'claim';
ALTER TABLE snowid_sql_private.snowid_locks DROP CONSTRAINT snowid_locks_name_check,
	ADD CONSTRAINT snowid_locks_name_check CHECK (name = 'generator');
ALTER TABLE snowid_sql_private.snowid_config
	ADD CONSTRAINT snowid_config_claim_worker_id_check CHECK (NOT claim_worker_id);

