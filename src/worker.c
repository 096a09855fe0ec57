/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  Which worker id this server's ids carry, and where it came from.
 *
 * A worker id set in snowid.worker_id is known when shared memory is
 * initialised.  Otherwise it is resolved on first use, by the first backend
 * that needs one; the caller (generator.c) holds the generator's LWLock
 * across snowid_worker_resolve(), so it runs once per server start however
 * many sessions ask at once.  Nothing here touches the spinlock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "snowid.h"

/*
 * snowid_worker_startup
 *		The worker id known at shared memory initialisation, if any.  Runs in
 *		the postmaster: no network or error reports here.
 */
void
snowid_worker_startup(int *worker_id, SnowidWorkerSource *source)
{
	if (snowid_worker_id >= 0)
	{
		*worker_id = snowid_worker_id;
		*source = SNOWID_WORKER_CONFIG;
	}
	else
	{
		*worker_id = -1;
		*source = SNOWID_WORKER_NONE;
	}
}

/*
 * snowid_worker_resolve
 *		Finds the worker id on first use, or reports why there is none.
 */
void
snowid_worker_resolve(int *worker_id, SnowidWorkerSource *source)
{
	snowid_worker_startup(worker_id, source);
	if (*worker_id >= 0)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowid has no worker id"),
			 errdetail("snowid.worker_id is not set."),
			 errhint("Set snowid.worker_id in postgresql.conf to a number from 0 to %lld that no other server of datacenter %d uses, and restart the server.",
					 (long long) SNOWID_FIELD_MAX(snowid_layout.worker_bits),
					 snowid_datacenter_id)));
}

/*
 * snowid_worker_source_name
 *		The name snowid_status() shows for a worker id's source.
 */
const char *
snowid_worker_source_name(SnowidWorkerSource source)
{
	switch (source)
	{
		case SNOWID_WORKER_CONFIG:
			return "config";
		case SNOWID_WORKER_REDIS:
			return "redis";
		case SNOWID_WORKER_CACHE:
			return "cache";
		case SNOWID_WORKER_NONE:
			break;
	}
	return "none";
}
