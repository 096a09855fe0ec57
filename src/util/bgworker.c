/*-------------------------------------------------------------------------
 *
 * bgworker.c
 *	  snowid's background workers (util/bgworker.h): the one worker a server
 *	  runs, the check-in (claims for good) or the lease renewer (leases),
 *	  registered from _PG_init() in the postmaster, and what every such
 *	  worker shares: its signals, its exit, and its state in shared memory.
 *
 * The postmaster registers no more background workers than
 * max_worker_processes allows, and says so at LOG level alone: the worker
 * then never runs.  A registration is therefore checked against the list
 * of registered workers, and one that did not happen is remembered.  Every
 * process the postmaster forks inherits what it remembers.
 *
 * A worker ends for good only at a shutdown of the server.  The postmaster
 * starts a background worker again (bgw_restart_time after it ended) only
 * if it exited with status 1; status 0 unregisters it, any other status
 * (a crash: SIGKILL, SIGQUIT's _exit(2)) restarts the whole server, shared
 * memory and the worker with it (PostgreSQL 15 to 19 alike).  So a SIGTERM
 * ends the worker with 0 only when the postmaster sent it, as it does at a
 * shutdown and never else to a worker registered at start; one from
 * anyone else (kill, pg_terminate_backend()) ends it with 1, and so does
 * an error (promoted to FATAL in a worker) or a cancel: it comes back a
 * second later and says so in the log.
 *
 * Locking: mutex (a spinlock) protects every field of SnowidBgworkerShared
 * but itself; nothing under it can sleep, allocate, report or do I/O.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "util/bgworker.h"

/* What shared memory knows of the running worker */
typedef struct SnowidBgworkerShared
{
	slock_t		mutex;

	/* protected by mutex: */
	int			pid;			/* the running process, 0 for none */
	Latch	   *latch;			/* its latch, NULL for none */
	uint32		starts;			/* processes started since shared memory
								 * was made (a crash restart makes it anew) */
	int			ended_pid;		/* the process that ended last, 0 for none */
	int			ended_by;		/* the process whose SIGTERM ended it, -1 if
								 * unknown; 0 for an error or a cancel */
} SnowidBgworkerShared;

static SnowidBgworkerShared *snowid_bgworker_shared = NULL;

/* The name of the last worker whose registration failed, or NULL */
static const char *snowid_bgworker_failed = NULL;

/* In the worker: its SIGTERM and who sent it */
static volatile sig_atomic_t got_sigterm = false;
static volatile sig_atomic_t sigterm_sender = 0;

static int	snowid_bgworker_count(void);
static void snowid_bgworker_sigterm(int signo, siginfo_t *info,
									void *context);
static void snowid_bgworker_ended(int code, Datum arg);

/*
 * snowid_bgworker_register
 *		Registers a background worker of the snowid library that runs
 *		function_name, shown as name (its name and its type), with flags
 *		(BGWORKER_SHMEM_ACCESS and what else it needs).  It starts once
 *		recovery has ended and comes back a second after it exits with
 *		status 1 (snowid_bgworker_exit()).  A registration the postmaster
 *		refused is remembered (snowid_bgworker_missing()).
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

/*
 * snowid_bgworker_shmem_size
 *		Shared memory the worker's state needs.
 */
Size
snowid_bgworker_shmem_size(void)
{
	return MAXALIGN(sizeof(SnowidBgworkerShared));
}

/*
 * snowid_bgworker_shmem_init
 *		Creates or attaches to the worker's state; called with
 *		AddinShmemInitLock held.
 */
void
snowid_bgworker_shmem_init(void)
{
	bool		found;

	snowid_bgworker_shared = ShmemInitStruct("snowid background worker",
											 sizeof(SnowidBgworkerShared),
											 &found);
	if (!found)
	{
		memset(snowid_bgworker_shared, 0, sizeof(SnowidBgworkerShared));
		SpinLockInit(&snowid_bgworker_shared->mutex);
	}
}

/*
 * snowid_bgworker_begin
 *		What a snowid worker does first: takes SIGTERM with its sender and
 *		SIGHUP as a reload, unblocks signals, and notes in shared memory
 *		that it runs.  A worker started again after its last process ended
 *		(not at a shutdown: the server goes on) says so in the log.
 */
void
snowid_bgworker_begin(void)
{
	SnowidBgworkerShared *b = snowid_bgworker_shared;
	struct sigaction act;
	uint32		starts;
	int			ended_pid;
	int			ended_by;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = snowid_bgworker_sigterm;
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGTERM, &act, NULL) != 0)
		elog(FATAL, "could not set the SIGTERM handler of \"%s\": %m",
			 MyBgworkerEntry->bgw_name);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	if (b == NULL)
		ereport(FATAL,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via shared_preload_libraries")));

	SpinLockAcquire(&b->mutex);
	b->pid = MyProcPid;
	b->latch = MyLatch;
	starts = ++b->starts;
	ended_pid = b->ended_pid;
	ended_by = b->ended_by;
	b->ended_by = 0;
	SpinLockRelease(&b->mutex);
	before_shmem_exit(snowid_bgworker_ended, (Datum) 0);

	if (starts > 1 && ended_by > 0)
		ereport(LOG,
				(errmsg("background worker \"%s\" started again",
						MyBgworkerEntry->bgw_name),
				 errdetail("Its last process (PID %d) was terminated by process %d.",
						   ended_pid, ended_by)));
	else if (starts > 1 && ended_by < 0)
		ereport(LOG,
				(errmsg("background worker \"%s\" started again",
						MyBgworkerEntry->bgw_name),
				 errdetail("Its last process (PID %d) was terminated by a signal.",
						   ended_pid)));
	else if (starts > 1)
		ereport(LOG,
				(errmsg("background worker \"%s\" started again",
						MyBgworkerEntry->bgw_name),
				 errdetail("Its last process (PID %d) ended on an error or a cancel, which the server log shows above.",
						   ended_pid)));
}

/*
 * snowid_bgworker_sigterm
 *		SIGTERM: the worker finishes its current step, then exits
 *		(snowid_bgworker_exit()).  Notes who sent it.
 */
static void
snowid_bgworker_sigterm(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (info != NULL && info->si_code == SI_USER)
		sigterm_sender = info->si_pid;
	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * snowid_bgworker_stopping
 *		Whether the worker got a SIGTERM: it should end its current step and
 *		exit.
 */
bool
snowid_bgworker_stopping(void)
{
	return got_sigterm;
}

/*
 * snowid_bgworker_at_shutdown
 *		Whether the SIGTERM the worker got is the postmaster's, which sends
 *		it at a shutdown and never else to a worker registered at start.
 */
bool
snowid_bgworker_at_shutdown(void)
{
	return got_sigterm && sigterm_sender == PostmasterPid;
}

/*
 * snowid_bgworker_exit
 *		Ends the worker after a SIGTERM: with status 0 at a shutdown, which
 *		the postmaster does not log and after which it does not start the
 *		worker again; with status 1 otherwise, after which it starts it
 *		again in a second.
 */
void
snowid_bgworker_exit(void)
{
	SnowidBgworkerShared *b = snowid_bgworker_shared;

	if (snowid_bgworker_at_shutdown())
		proc_exit(0);

	SpinLockAcquire(&b->mutex);
	b->ended_by = sigterm_sender != 0 ? sigterm_sender : -1;
	SpinLockRelease(&b->mutex);
	if (sigterm_sender > 0)
		ereport(LOG,
				(errmsg("background worker \"%s\" was terminated by process %d",
						MyBgworkerEntry->bgw_name, (int) sigterm_sender),
				 errdetail("The server is not shutting down: the postmaster starts the worker again in a second.")));
	else
		ereport(LOG,
				(errmsg("background worker \"%s\" was terminated",
						MyBgworkerEntry->bgw_name),
				 errdetail("The server is not shutting down: the postmaster starts the worker again in a second.")));
	proc_exit(1);
}

/*
 * snowid_bgworker_ended
 *		Exit callback of the worker (any exit but a crash, which makes
 *		shared memory anew): it no longer runs.
 */
static void
snowid_bgworker_ended(int code, Datum arg)
{
	SnowidBgworkerShared *b = snowid_bgworker_shared;

	SpinLockAcquire(&b->mutex);
	if (b->pid == MyProcPid)
	{
		b->pid = 0;
		b->latch = NULL;
		b->ended_pid = MyProcPid;
	}
	SpinLockRelease(&b->mutex);
}

/*
 * snowid_bgworker_wake
 *		Wakes the running worker, if any, so that it acts at once rather
 *		than at its next turn.
 */
void
snowid_bgworker_wake(void)
{
	SnowidBgworkerShared *b = snowid_bgworker_shared;
	Latch	   *latch;

	if (b == NULL)
		return;
	SpinLockAcquire(&b->mutex);
	latch = b->latch;
	SpinLockRelease(&b->mutex);
	/* a latch of a process that ended meanwhile is woken for nothing */
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * snowid_bgworker_status
 *		The PID of the running worker (0 for none) and how often it was
 *		started again since the server (or its last crash restart) started.
 */
void
snowid_bgworker_status(int *pid, int64 *restarts)
{
	SnowidBgworkerShared *b = snowid_bgworker_shared;

	*pid = 0;
	*restarts = 0;
	if (b == NULL)
		return;
	SpinLockAcquire(&b->mutex);
	*pid = b->pid;
	*restarts = (b->starts > 1) ? b->starts - 1 : 0;
	SpinLockRelease(&b->mutex);
}
