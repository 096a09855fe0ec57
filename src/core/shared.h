/*-------------------------------------------------------------------------
 *
 * shared.h
 *	  The generator's shared state (shared.c), read and written by the
 *	  files of the generator: generator.c (shared memory and the hot path),
 *	  generator_mark.c (the high-water mark, takeovers and replay) and
 *	  generator_worker.c (the worker id, resolved and on lease).  Nothing
 *	  outside src/core includes it.
 *
 * Locking (SnowidShared groups its fields by it):
 *	- mutex (a spinlock) protects position, ms_first, high_water_ms,
 *	  renewal_failed, last_clock_ms, ids_issued, clock_steps,
 *	  takeover_pending, source_drift_ms, claiming, the worker fields
 *	  (worker_id, dropped_worker_id, worker_source, node_bits) and the
 *	  lease fields (fence_ms, lease_gen, releasing, released,
 *	  lease_expires_ms, lease_token);
 *	  nothing else is read or
 *	  written under it, and nothing under it can sleep, allocate, report or
 *	  do I/O.
 *	- the mark file's findings (mark_status, mark_mismatch, mark_layout,
 *	  mark_high_water_ms, mark_datacenter_id, mark_worker_id, copied_sysid)
 *	  and the instance (instance, instance_saved) are set while shared
 *	  memory is initialised, and mark_mismatch and its mark, and the node
 *	  a replayed mark names (mark_datacenter_id, mark_worker_id), also by
 *	  replay (under lock) while recovery lasts; backends read
 *	  them without a lock, and only once recovery has ended.
 *	- lock (an LWLock) serialises writing the high-water mark: its file and
 *	  its WAL record; replay_unsaved is protected by it.
 *	- claiming (under mutex) lets one process at a time (a backend, or the
 *	  lease renewer) resolve the worker id, which may take round trips to the coordinator
 *	  and so holds no lock; backends meanwhile sleep on worker_cv, a
 *	  condition variable, where a cancel reaches them.  releasing (under
 *	  mutex) holds every claim back the same way while a worker id on lease
 *	  is being given back, so that no claim of this server meets the
 *	  release of its last one in the coordinator.
 *	- waits, clock_errors, resolve_failures, renewals and renewal_failures
 *	  are atomics, counted outside the mutex.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_SHARED_H
#define SNOWID_CORE_SHARED_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "core/config.h"
#include "core/coordinator.h"
#include "core/mark.h"

/*
 * The high-water mark is written this far ahead of the generator, and
 * renewed when the generator comes within half of it.  One durable write
 * covers about half a step of ids; after a crash the generator restarts at
 * most this far ahead of the last id it issued.
 */
#define SNOWID_MARK_STEP_MS			1000

typedef struct SnowidShared
{
	/* set once while shared memory is initialised, then read without a lock: */
	LWLock	   *lock;			/* serialises writers of the mark */
	SnowidMarkRead mark_status; /* how reading the mark file went */
	bool		mark_mismatch;	/* the mark file (or a replayed mark) has
								 * another layout; also set by replay */
	SnowidLayout mark_layout;	/* the layout found in that mark */
	int64		mark_high_water_ms; /* and its mark, in Unix ms */
	int			mark_datacenter_id; /* the node whose ids the mark file */
	int			mark_worker_id; /* covers (worker id -1 if unknown) */
	uint64		copied_sysid;	/* the mark file asks for a takeover of a
								 * cluster with this other system
								 * identifier; 0 if not */
	uint64		instance;		/* this data directory's instance (mark.h) */
	bool		instance_saved; /* and whether the mark file holds it */

	/* protected by lock: */
	bool		replay_unsaved; /* a replayed mark is not in the file yet */

	/* protected by mutex: */
	slock_t		mutex;
	int64		position;		/* last position issued, -1 if none */
	int64		ms_first;		/* first position issued in position's ms */
	int64		high_water_ms;	/* positions must stay below this ms */
	bool		renewal_failed; /* an early renewal failed: none is tried
								 * until the mark runs out */
	int64		last_clock_ms;	/* wall clock last seen by a caller */
	uint64		ids_issued;
	uint64		clock_steps;
	bool		takeover_pending;	/* see snowid_record_takeover() */
	int			source_drift_ms;	/* snowid.max_drift_ms of the server the
									 * mark came from, 0 if unknown */
	int			worker_id;		/* -1 until resolved, or after a lease ended */
	int			dropped_worker_id;	/* the worker id of the lease last ended
									 * (given back, lost), -1 if none: the
									 * ids it issued lie below the mark, and
									 * the mark names it at a clean stop */
	SnowidWorkerSource worker_source;
	int64		node_bits;		/* -1 while worker_id is -1 */
	bool		claiming;		/* a backend is resolving the worker id */
	int64		fence_ms;		/* positions must stay below this ms until
								 * the coordinator confirms the worker id
								 * again: a lease's fence, or a claim for
								 * good's check-in fence; PG_INT64_MAX for
								 * a worker id set by hand */
	uint32		lease_gen;		/* changes whenever the worker id comes or
								 * goes */
	bool		releasing;		/* a worker id on lease is being given back:
								 * no claim until it is */
	bool		released;		/* snowid_release_worker() gave it back */
	int64		lease_expires_ms;	/* lease: when it runs out, Unix ms by
									 * this server's clock; 0 for none */
	int64		lease_deadline_ms;	/* lease: when it runs out by the
									 * monotonic clock (past it, the
									 * renewer renews nothing) */
	char		lease_token[SNOWID_LEASE_TOKEN_LEN];	/* lease: its claim's */

	/* atomics, counted outside the mutex: */
	pg_atomic_uint64 waits;
	pg_atomic_uint64 clock_errors;
	pg_atomic_uint32 resolve_failures;	/* failed worker id resolutions */
	pg_atomic_uint64 renewals;	/* lease renewals that succeeded */
	pg_atomic_uint64 renewal_failures;	/* and that did not */

	/* signalled when a worker id resolution ends (its own locking): */
	ConditionVariable worker_cv;
} SnowidShared;

extern SnowidShared *snowid_shared;

extern int64 snowid_clock_ms(void);
extern int64 snowid_clock_ms_quick(void);
extern int64 snowid_last_position(int64 ms, int64 max_ms);

#endif							/* SNOWID_CORE_SHARED_H */
