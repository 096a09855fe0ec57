-- An administrator's repair: worker_id taken from whoever holds it (a
-- server gone for good, or a lease that will not come back), its fence
-- raised to this server's clock plus margin_ms, never lowered.  A server
-- may have issued up to its clock plus its drift budget, that millisecond
-- included: the margin covers how far its clock ran ahead of this
-- server's, plus its snowid.max_drift_ms, plus 1, unless it stopped longer
-- ago than that.
--
-- ok: worker_id, fence_ms (the fence now), holder (who held it, or NULL).
CREATE OR REPLACE FUNCTION snowid_coordinator.free(datacenter integer, worker_id integer,
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


-- An administrator's undoing of a fence no holder's ids need: the fence of
-- worker_id set to this server's clock plus margin_ms, lowered too, which
-- no other call does.  For a fence a fleet member's call set far ahead (a
-- lease claim's generator, a renewal's or a release's fence, a claim's
-- usable_ms), once the administrator knows that no server issued ids with
-- that worker id past this server's clock plus margin_ms: the margin as
-- free() takes it.  Refused while a live holder holds the id (free() it
-- first).  The same as snowid.lua's lower_fence().
--
-- ok: worker_id, fence_ms (the fence now), holder (a holder whose lease
-- had run out, removed with it, or NULL).
CREATE OR REPLACE FUNCTION snowid_coordinator.lower_fence(datacenter integer,
											   worker_id integer,
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
	IF w.holder IS NOT NULL AND
		(NOT w.on_lease OR w.lease_expires_ms > now_ms) THEN
		RAISE EXCEPTION 'worker id % of datacenter % is held by %', id, dc,
				quote_literal(snowid_coordinator.holder_name(w.holder, w.on_lease))
			USING ERRCODE = 'object_in_use',
				  DETAIL = 'A fence is lowered only for a worker id that no live holder holds: its holder may issue up to its fence.',
				  HINT = format('Once that server is stopped for good, free its id with SELECT snowid_coordinator.free(%s, %s, <margin ms>), then lower the fence.', dc, id);
	END IF;
	-- the one place an administrator lowers a fence: to what every holder
	-- may have issued, by the administrator's word
	INSERT INTO snowid_coordinator.worker_ids AS x (datacenter, worker_id, fence_ms)
	VALUES (dc, id, now_ms + margin)
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET fence_ms = excluded.fence_ms,
		holder = NULL,
		on_lease = false,
		lease_expires_ms = NULL,
		lease_floor_ms = NULL,
		lease_token = NULL
	RETURNING x.fence_ms INTO o.fence_ms;
	o.outcome := 'ok';
	o.worker_id := id;
	o.holder := snowid_coordinator.holder_name(w.holder, w.on_lease);
	RETURN o;
END
$$;
