/*-------------------------------------------------------------------------
 *
 * bgworker.c
 *	  The registration of snowid's background workers (util/bgworker.h).
 *	  Called from _PG_init() in the postmaster; no locking applies.
 *
 * The postmaster registers no more background workers than
 * max_worker_processes allows, and says so at LOG level alone: the worker
 * then never runs.  A registration is therefore checked against the list
 * of registered workers, and one that did not happen is remembered.  Every
 * process the postmaster forks inherits what it remembers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"

#include "util/bgworker.h"

/* The name of the last worker whose registration failed, or NULL */
static const char *snowid_bgworker_failed = NULL;

static int	snowid_bgworker_count(void);

/*
 * snowid_bgworker_register
 *		Registers a background worker of the snowid library that runs
 *		function_name, shown as name (its name and its type), with flags
 *		(BGWORKER_SHMEM_ACCESS and what else it needs).  It starts once
 *		recovery has ended and comes back a second after it exits.  A
 *		registration the postmaster refused is remembered
 *		(snowid_bgworker_missing()).
 */
void
snowid_bgworker_register(const char *function_name, const char *name,
						 int flags)
{
	BackgroundWorker worker;
	int			before = snowid_bgworker_count();

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = flags;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "snowid", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function_name, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, name, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
	if (snowid_bgworker_count() <= before)
		snowid_bgworker_failed = name;
}

/*
 * snowid_bgworker_missing
 *		The name of a snowid background worker that the postmaster did not
 *		register (too few max_worker_processes), or NULL if none.
 */
const char *
snowid_bgworker_missing(void)
{
	return snowid_bgworker_failed;
}

/*
 * snowid_bgworker_count
 *		How many background workers the postmaster has registered so far.
 */
static int
snowid_bgworker_count(void)
{
	int			count = 0;
#if PG_VERSION_NUM >= 180000
	dlist_iter	iter;

	dlist_foreach(iter, &BackgroundWorkerList)
		count++;
#else
	slist_iter	iter;

	slist_foreach(iter, &BackgroundWorkerList)
		count++;
#endif
	return count;
}
