-- -----------------------------------------------------------------------
-- The settings every call runs under, whatever its caller's: each
-- function a role may be granted (the SECURITY DEFINER ones: run_<name>(),
-- free(), lower_fence(), reset_secret(), new_datacenter(), end_quiet())
-- runs with the planner's own settings, which the helpers it calls
-- inherit, so that no caller turns the index scans off (or the costs up,
-- or JIT and parallel workers on) to make a call slow under the lock of
-- the datacenter: each statement then reads the rows of the worker ids it
-- needs by the primary key, and a datacenter has no more rows with a
-- holder than its layout has worker ids (see check_layout()).  The time
-- a call waits for the lock holds nothing; its caller bounds it
-- (statement_timeout and lock_timeout, which snowid servers set to what
-- is left of their snowid.coordinator_timeout_ms).  The procedures the
-- servers call, which commit, cannot carry settings; they only call their
-- function, and prove(), which they call first (the one SECURITY DEFINER
-- procedure, which does not commit), carries them too.
-- -----------------------------------------------------------------------

DO $$
DECLARE
	f			regprocedure;
	setting		text;
BEGIN
	FOR f IN
		SELECT p.oid FROM pg_catalog.pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::pg_catalog.regnamespace
		  AND p.prosecdef
		ORDER BY p.oid
	LOOP
		FOREACH setting IN ARRAY ARRAY[
			'enable_bitmapscan = on', 'enable_hashagg = on',
			'enable_hashjoin = on', 'enable_incremental_sort = on',
			'enable_indexonlyscan = on', 'enable_indexscan = on',
			'enable_material = on', 'enable_memoize = on',
			'enable_mergejoin = on', 'enable_nestloop = on',
			'enable_seqscan = on', 'enable_sort = on', 'enable_tidscan = on',
			'seq_page_cost = 1', 'random_page_cost = 4',
			'cpu_tuple_cost = 0.01', 'cpu_index_tuple_cost = 0.005',
			'cpu_operator_cost = 0.0025', 'effective_cache_size = ''4GB''',
			'jit = off', 'max_parallel_workers_per_gather = 0',
			'plan_cache_mode = auto']
		LOOP
			EXECUTE pg_catalog.format('ALTER ROUTINE %s SET %s', f, setting);
		END LOOP;
	END LOOP;
END
$$;
