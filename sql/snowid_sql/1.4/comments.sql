-- -------------------------------------------------------------------------
-- What the tables, views and sequences are, as \d+ shows it
-- -------------------------------------------------------------------------

COMMENT ON TABLE snowid_sql_private.snowid_config IS
'the settings of the snowid SQL edition: one row, as snowid.* of the C edition; worker_id NULL until its owner sets it';
COMMENT ON COLUMN snowid_sql_private.snowid_config.worker_server IS
'the server and sequences the worker id was set with (snowid_sql_here()), set by the table''s trigger: elsewhere, the worker id does not hold';
COMMENT ON COLUMN snowid_sql_private.snowid_config.claim_worker_id IS
'false: kept so that a dump of snowid_sql 1.2 or earlier restores; the edition claims no worker id since 1.3';
COMMENT ON TABLE snowid_sql_private.snowid_public_keys IS
'the keys of public ids: the key of the smallest rank makes new ones, every key reads them';
COMMENT ON TABLE snowid_sql_private.snowid_locks IS
'the lock of the snowid generator''s writers: a row lock no other role can take';
COMMENT ON VIEW @extschema@.snowid_config IS
'snowid''s configuration (the table snowid_sql_private.snowid_config): the owner sets the worker id here';
COMMENT ON VIEW @extschema@.snowid_public_keys IS
'the keys of public ids (the table snowid_sql_private.snowid_public_keys)';
COMMENT ON SEQUENCE @extschema@.snowid_position IS
'not the generator''s position (snowid_sql_private.snowid_position): takes the setval() of a dump of 1.0 or 1.1, which nothing reads';
