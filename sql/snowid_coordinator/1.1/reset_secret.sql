-- An administrator's step for a server that lost its secret file (its
-- calls are refused as those of another server): the hash registered for
-- identity dropped, so that the next call of that identity registers its
-- new secret.  Call it only once sure that the server refused is the one
-- that claims under that identity: whoever calls first then becomes it.
-- True if a hash was dropped.
CREATE OR REPLACE FUNCTION snowid_coordinator.reset_secret(datacenter integer,
												identity text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
	dc			integer := datacenter;
	me			text := identity;
BEGIN
	PERFORM snowid_coordinator.check_id('datacenter', dc, 0);
	PERFORM snowid_coordinator.check_identity(me);
	IF snowid_coordinator.lock_datacenter(dc, false) IS NULL THEN
		RETURN false;
	END IF;
	DELETE FROM snowid_coordinator.holders h
	WHERE h.datacenter = dc AND h.identity = me;
	RETURN FOUND;
END
$$;

