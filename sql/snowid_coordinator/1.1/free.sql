-- An administrator's repair: worker_id taken from whoever holds it (a
-- server gone for good, or a lease that will not come back), its fence
-- raised to this server's clock plus margin_ms, never lowered.  A server
-- may have issued up to its clock plus its drift budget, that millisecond
-- included: the margin covers how far its clock ran ahead of this
-- server's, plus its snowid.max_drift_ms, plus 1, unless it stopped longer
-- ago than that.
--
-- ok: worker_id, fence_ms (the fence now), holder (who held it, or NULL).
CREATE FUNCTION snowid_coordinator.free(datacenter integer, worker_id integer,
										margin_ms bigint)
RETURNS snowid_coordinator.outcome
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	id			integer := worker_id;
	margin		bigint := margin_ms;
	now_ms		bigint;
	w			snowid_coordinator.worker_ids;
	o			snowid_coordinator.outcome;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_id('worker_id', id, 0);
	PERFORM snowid_coordinator.check_ms('margin_ms', margin, 0, @SNOWID_FENCE_SLACK_MS@,
		'two days and an hour: no snowid server issues ids further ahead');
	now_ms := snowid_coordinator.lock_datacenter(dc, true);

	SELECT * INTO w FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id = id;
	o.outcome := 'ok';
	o.worker_id := id;
	o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
	o.fence_ms := snowid_coordinator.retire(dc, id, now_ms + margin);
	RETURN o;
END
$$;

