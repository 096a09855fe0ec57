/*-------------------------------------------------------------------------
 *
 * snowid.c
 *	  Loading the library: the settings, the shared memory hooks, the
 *	  coordinator and, with a lease, its renewer.  The SQL-callable
 *	  functions are in src/functions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "coord/checkin.h"
#include "coord/lease.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "coord/worker.h"
#include "core/clock.h"
#include "core/generator.h"
#include "functions/public.h"
#include "settings.h"
#include "util/bgworker.h"

PG_MODULE_MAGIC_EXT(.name = "snowid", .version = SNOWID_VERSION);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);
static void snowid_shmem_request(void);
static void snowid_shmem_startup(void);
static void snowid_shmem_exit(int code, Datum arg);

/*
 * _PG_init
 *		Defines the settings and, when preloaded, asks for shared memory,
 *		registers the WAL resource manager of the high-water mark and, with
 *		a lease, the worker that renews it.
 */
void
_PG_init(void)
{
	snowid_define_settings(process_shared_preload_libraries_in_progress);
	snowid_public_register();

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowid_shmem_startup;

	snowid_clock_calibrate();
	snowid_coord_install();
	snowid_generator_preload();
	if (snowid_worker_lease_ms > 0)
		snowid_lease_register();
	else if (snowid_store != NULL)
		snowid_checkin_register();
}

/*
 * snowid_shmem_request
 *		Reserves the shared memory and LWLocks of the generator, of the
 *		public ids' keys, of what this server remembers of its store and of
 *		its background worker.
 */
static void
snowid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(snowid_shmem_size());
	RequestNamedLWLockTranche("snowid", 1);
	RequestAddinShmemSpace(snowid_public_shmem_size());
	RequestNamedLWLockTranche("snowid public keys", 1);
	snowid_recall_shmem_request();
	RequestAddinShmemSpace(snowid_bgworker_shmem_size());
}

/*
 * snowid_shmem_startup
 *		Creates or attaches to the generator.  In the postmaster (at start and
 *		after a crash reinitialises shared memory) this also reads the
 *		high-water mark and arranges for it to be tightened at a clean exit.
 */
static void
snowid_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowid_shmem_init();
	snowid_public_shmem_init();
	snowid_recall_shmem_init();
	snowid_bgworker_shmem_init();
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(snowid_shmem_exit, (Datum) 0);
}

/*
 * snowid_shmem_exit
 *		At a clean postmaster exit, records where the generator stopped.
 */
static void
snowid_shmem_exit(int code, Datum arg)
{
	if (code == 0)
		snowid_shmem_detach();
}

