-- settings that users cannot change at run time, and the reserved prefix
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

SHOW snowid.datacenter_id;
SHOW snowid.worker_id;
SHOW snowid.epoch;
SHOW snowid.max_drift_ms;
SHOW snowid.max_wait_ms;

SET snowid.worker_id = 1;
SET snowid.datacenter_id = 1;
SET snowid.epoch = '2020-01-01 00:00:00+00';
SET snowid.max_drift_ms = 0;
SET snowid.max_wait_ms = 0;
SET snowid.no_such_setting = 1;
SET snowid.worker_lease = '10s';
SET snowid.release_on_shutdown = on;

-- a failed call changes nothing: the generator goes on from where it was
SELECT snowid_next() AS a \gset
SELECT snowid_decode(-42);
SELECT snowid_next_batch(0);
SELECT snowid_from_time('1999-12-31');
SELECT snowid_next() > :a AS still_increasing;

-- giving the worker id back needs a lease
SELECT snowid_release_worker();
SELECT worker_id IS NOT NULL AS kept, lease_expires_at, fence_time,
	renewals, failed_renewals
FROM snowid_status();
