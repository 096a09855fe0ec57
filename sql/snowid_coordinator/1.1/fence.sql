-- -----------------------------------------------------------------------
-- THE FENCE RULE in SQL, as the top of this script states it and, for
-- every claim store, snowid's src/coord/store.h in C: for every worker id,
-- each new holder's first id lies above every id any earlier holder could
-- have issued.  retire() is the only way a worker id leaves its holder,
-- its fence raised first; pick() takes no id fenced past what its caller
-- can start above; fence_of() reads the fence a claim starts at or above.
-- The lease functions below move only their own lease's fence: up as it
-- is renewed, down to just past its last id when given back, never below
-- the floor it was taken with.
-- -----------------------------------------------------------------------

-- Takes worker id id of datacenter dc from its holder: its fence raised to
-- at least v first (0: the fence as it is, which covers every lease), then
-- the holder and its lease removed.  The fence never falls.
CREATE OR REPLACE FUNCTION snowid_coordinator.retire(dc integer, id integer, v bigint)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.worker_ids AS w (datacenter, worker_id, fence_ms)
	VALUES (dc, id, greatest(v, 0))
	ON CONFLICT (datacenter, worker_id) DO UPDATE
	SET fence_ms = greatest(w.fence_ms, excluded.fence_ms),
		holder = NULL,
		on_lease = false,
		lease_expires_ms = NULL,
		lease_floor_ms = NULL,
		lease_token = NULL
	RETURNING w.fence_ms
$$;

-- The id a server without one takes, in 0..hi of datacenter dc at now_ms:
-- first if it is free, else the lowest free id, else the one fenced least
-- far of those not live, which the caller refuses as fenced; NULL when
-- every id is held.  Free is: open (no holder, a lease run out, or mine's
-- own lease) and fenced no later than usable.  mine is the identity of a
-- lease claim (whose own lease, run out or not, it may take), or NULL.
CREATE OR REPLACE FUNCTION snowid_coordinator.pick(dc integer, hi integer,
										usable bigint, first integer,
										mine text, now_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	w			snowid_coordinator.worker_ids;
	gap			integer;
	found_id	integer;
BEGIN
	IF first BETWEEN 0 AND hi THEN
		SELECT * INTO w FROM snowid_coordinator.worker_ids x
		WHERE x.datacenter = dc AND x.worker_id = first;
		IF NOT FOUND OR
			((w.holder IS NULL OR
			  (w.on_lease AND (w.lease_expires_ms <= now_ms OR w.holder = mine)))
			 AND w.fence_ms <= usable) THEN
			RETURN first;
		END IF;
	END IF;

	-- the lowest id without a row (no holder, no fence), and the lowest
	-- free one with a row
	SELECT min(c.id) INTO gap
	FROM (SELECT 0 AS id
		  UNION ALL
		  SELECT x.worker_id + 1 FROM snowid_coordinator.worker_ids x
		  WHERE x.datacenter = dc AND x.worker_id < hi) c
	WHERE NOT EXISTS (SELECT FROM snowid_coordinator.worker_ids y
					  WHERE y.datacenter = dc AND y.worker_id = c.id);
	SELECT min(x.worker_id) INTO found_id
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id <= hi
	  AND (x.holder IS NULL OR
		   (x.on_lease AND (x.lease_expires_ms <= now_ms OR x.holder = mine)))
	  AND x.fence_ms <= usable;
	IF gap IS NOT NULL OR found_id IS NOT NULL THEN
		RETURN least(gap, found_id);
	END IF;

	-- none free: the open one fenced least far, if any
	SELECT x.worker_id INTO found_id
	FROM snowid_coordinator.worker_ids x
	WHERE x.datacenter = dc AND x.worker_id <= hi
	  AND (x.holder IS NULL OR
		   (x.on_lease AND (x.lease_expires_ms <= now_ms OR x.holder = mine)))
	ORDER BY x.fence_ms, x.worker_id
	LIMIT 1;
	RETURN found_id;
END
$$;

-- The fence of a worker id, or 0
CREATE OR REPLACE FUNCTION snowid_coordinator.fence_of(dc integer, id integer)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT coalesce((SELECT w.fence_ms FROM snowid_coordinator.worker_ids w
					 WHERE w.datacenter = dc AND w.worker_id = id), 0)
$$;

