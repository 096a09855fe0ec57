/*-------------------------------------------------------------------------
 *
 * bgworker.c
 *	  The registration of snowid's background workers (util/bgworker.h).
 *	  Called from _PG_init() in the postmaster; no locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgworker.h"

#include "util/bgworker.h"

/*
 * snowid_bgworker_register
 *		Registers a background worker of the snowid library that runs
 *		function_name, shown as name (its name and its type), with flags
 *		(BGWORKER_SHMEM_ACCESS and what else it needs).  It starts once
 *		recovery has ended and comes back a second after it exits.
 */
void
snowid_bgworker_register(const char *function_name, const char *name,
						 int flags)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = flags;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "snowid", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function_name, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, name, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}
