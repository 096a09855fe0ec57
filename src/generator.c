/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  The one id generator of a server, in shared memory, and the rules by
 *	  which it hands out positions: never backwards, at most
 *	  snowid.max_drift_ms ahead of the wall clock, and never past the
 *	  persisted high-water mark.  On a standby, and in crash recovery, the
 *	  generator follows the marks replayed from WAL (wal.c).
 *
 * Locking (SnowidShared groups its fields by it):
 *	- mutex (a spinlock) protects position, ms_first, high_water_ms,
 *	  renewal_failed, last_clock_ms, ids_issued, clock_steps,
 *	  takeover_pending, source_drift_ms, claiming, the worker fields
 *	  (worker_id, worker_source, node_bits) and the lease fields (fence_ms,
 *	  lease_gen, releasing, released, lease_expires_ms, lease_token);
 *	  nothing else is read or
 *	  written under it, and nothing under it can sleep, allocate, report or
 *	  do I/O.
 *	- the mark file's findings (mark_status, mark_mismatch, mark_layout,
 *	  mark_high_water_ms) are set while shared memory is initialised, and
 *	  mark_mismatch and its mark also by replay (under lock) while recovery
 *	  lasts; backends read them without a lock, and only once recovery has
 *	  ended.
 *	- lock (an LWLock) serialises writing the high-water mark: its file and
 *	  its WAL record; replay_unsaved is protected by it.
 *	- claiming (under mutex) lets one process at a time (a backend, or the
 *	  lease renewer) resolve the worker id, which may take Redis round trips
 *	  and so holds no lock; backends meanwhile sleep on worker_cv, a
 *	  condition variable, where a cancel reaches them.  releasing (under
 *	  mutex) holds every claim back the same way while a worker id on lease
 *	  is being given back, so that no claim of this server meets the
 *	  release of its last one in Redis.
 *	- waits, clock_errors, resolve_failures, renewals and renewal_failures
 *	  are atomics, counted outside the mutex.
 *
 * With snowid.worker_lease the worker id is on lease (lease.c): the fence is
 * one more bound next to the high-water mark, taken under the same mutex, so
 * the hot path never waits for Redis.  The worker id may change while the
 * server runs; a backend reads node_bits together with its positions, and a
 * new worker id starts at the next millisecond, so ids keep increasing
 * across the switch.
 *
 * A position is (ms << sequence_bits) | sequence.  The next position is the
 * last one plus one; if that lies in a millisecond the wall clock has
 * already left, it jumps to the current millisecond and keeps its sequence
 * bits.  Keeping them means ids taken one per millisecond still count up
 * through all low bits (so id % N spreads evenly), while a busy millisecond
 * still starts at sequence 0 after its predecessor ran out; and when the
 * kept bits would leave the new millisecond fewer ids than the last one
 * used, it starts at 0 too, so that a steady caller is not starved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "snowid.h"

/*
 * The high-water mark is written this far ahead of the generator, and
 * renewed when the generator comes within half of it.  One durable write
 * covers about half a step of ids; after a crash the generator restarts at
 * most this far ahead of the last id it issued.
 */
#define SNOWID_MARK_STEP_MS			1000

/*
 * A wall clock that goes back by more than this counts as a clock step.  The
 * clock is read before the mutex is taken, so a caller descheduled in between
 * looks like a small step; NTP only steps the clock for offsets over 128 ms.
 */
#define SNOWID_STEP_MIN_MS		100

/* Longest single sleep while waiting for the clock, in microseconds */
#define SNOWID_SLEEP_MAX_US		10000

typedef struct SnowidShared
{
	/* set once while shared memory is initialised, then read without a lock: */
	LWLock	   *lock;			/* serialises writers of the mark */
	SnowidMarkRead mark_status; /* how reading the mark file went */
	bool		mark_mismatch;	/* the mark file (or a replayed mark) has
								 * another layout; also set by replay */
	SnowidLayout mark_layout;	/* the layout found in that mark */
	int64		mark_high_water_ms; /* and its mark, in Unix ms */

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
	SnowidWorkerSource worker_source;
	int64		node_bits;		/* -1 while worker_id is -1 */
	bool		claiming;		/* a backend is resolving the worker id */
	int64		fence_ms;		/* lease: positions must stay below this ms;
								 * PG_INT64_MAX without a lease */
	uint32		lease_gen;		/* changes whenever the worker id comes or
								 * goes */
	bool		releasing;		/* a worker id on lease is being given back:
								 * no claim until it is */
	bool		released;		/* snowid_release_worker() gave it back */
	int64		lease_expires_ms;	/* lease: when it runs out, Unix ms by
									 * this server's clock; 0 for none */
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

static SnowidShared *snowid_shared = NULL;

/* This backend has checked that it may generate */
static bool prepared = false;

static int64 snowid_load_mark(SnowidShared *s);
static void snowid_record_takeover(SnowidShared *s, int64 mark_ms);
static pg_noinline void snowid_prepare(void);
static void snowid_check_can_generate(const SnowidShared *s);
static void snowid_save_replayed_mark(SnowidShared *s);
static void snowid_skip_after_takeover(SnowidShared *s);
static inline int snowid_takeover_drift_ms(const SnowidShared *s);
static void snowid_foreign_mark(const SnowidShared *s, SnowidMark *mark);
static int64 snowid_resolve_worker(void);
static void snowid_resolve_failed(int code, Datum arg);
static void snowid_install_worker(SnowidShared *s,
								  const SnowidWorkerClaim *claim);
static void snowid_lease_ran_out(int worker_id, int64 fence_ms);
static void snowid_advance_mark(int64 needed_ms, bool wait);
static void snowid_wait_clock(int64 target_ms, int64 now_ms,
							  int64 *deadline_ms);
static void snowid_sleep_us(int64 us);

/*
 * snowid_clock_ms
 *		The wall clock in milliseconds since the layout's epoch.
 */
static inline int64
snowid_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
		snowid_layout.epoch_ms;
}

/*
 * snowid_monotonic_ms
 *		Milliseconds on a clock that never steps, to measure waits with: a
 *		wall clock stepped back during a wait would stretch it.
 */
static inline int64
snowid_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * snowid_last_position
 *		The last position of millisecond ms, or -1 for a negative ms.  Never
 *		beyond max_ms, the layout's last millisecond, and never the largest int64, so
 *		that the position after it can always be computed.
 */
static inline int64
snowid_last_position(int64 ms, int64 max_ms)
{
	int			seq_bits = snowid_layout.sequence_bits;

	if (ms < 0)
		return -1;
	ms = Min(ms, max_ms);
	return Min((ms << seq_bits) | SNOWID_FIELD_MAX(seq_bits),
			   PG_INT64_MAX - 1);
}

/*
 * snowid_shmem_size
 *		Shared memory the generator needs.
 */
Size
snowid_shmem_size(void)
{
	return MAXALIGN(sizeof(SnowidShared));
}

/*
 * snowid_shmem_init
 *		Attaches to the generator, creating it if this is the first process
 *		to get here since shared memory was (re)initialised.  A new generator
 *		starts at the persisted high-water mark, so that whatever the clock
 *		says, it can never issue an id issued before the last start or crash.
 *		Called with AddinShmemInitLock held.
 */
void
snowid_shmem_init(void)
{
	bool		found;
	SnowidShared *s;
	int64		mark_ms;

	s = ShmemInitStruct("snowid", sizeof(SnowidShared), &found);
	snowid_shared = s;
	if (found)
		return;

	memset(s, 0, sizeof(SnowidShared));
	SpinLockInit(&s->mutex);
	s->lock = &(GetNamedLWLockTranche("snowid"))->lock;
	pg_atomic_init_u64(&s->waits, 0);
	pg_atomic_init_u64(&s->clock_errors, 0);
	pg_atomic_init_u32(&s->resolve_failures, 0);
	pg_atomic_init_u64(&s->renewals, 0);
	pg_atomic_init_u64(&s->renewal_failures, 0);
	ConditionVariableInit(&s->worker_cv);

	mark_ms = snowid_load_mark(s);

	/* the first position issued will be the first of mark_ms */
	s->position = snowid_last_position(mark_ms - 1,
									   snowid_max_ms(&snowid_layout));
	s->high_water_ms = mark_ms;
	s->last_clock_ms = 0;

	snowid_record_takeover(s, mark_ms);

	s->fence_ms = PG_INT64_MAX;
	s->worker_id = -1;
	s->node_bits = -1;
	snowid_worker_startup(&s->worker_id, &s->worker_source);
	if (s->worker_id >= 0)
		s->node_bits = snowid_node_bits(&snowid_layout, snowid_datacenter_id,
										s->worker_id);
}

/*
 * snowid_load_mark
 *		Reads the mark file into a new generator: how reading went, a layout
 *		that does not match ours, a pending takeover and the drift budget of
 *		the server the mark came from.  Returns the first
 *		millisecond (since our epoch) the generator may issue, 0 without a
 *		usable mark.
 */
static int64
snowid_load_mark(SnowidShared *s)
{
	SnowidMark	mark;

	s->mark_status = snowid_mark_read(&mark);
	if (s->mark_status != SNOWID_MARK_OK)
		return 0;
	if (!snowid_mark_layout_matches(&mark, &snowid_layout))
	{
		s->mark_mismatch = true;
		s->mark_layout = mark.layout;
		s->mark_high_water_ms = mark.high_water_ms;
		return 0;
	}
	s->takeover_pending = mark.takeover;
	s->source_drift_ms = mark.max_drift_ms;
	return Max(mark.high_water_ms - snowid_layout.epoch_ms, 0);
}

/*
 * snowid_record_takeover
 *		A server that starts in archive recovery, or from a base backup (its
 *		backup_label, also left by pg_rewind), will, once promoted or
 *		recovered, issue ids with the worker id of the server it was copied
 *		from.  Replayed
 *		WAL brings it that server's marks (snowid_replay_mark()); but that
 *		server may have issued ids under marks this one never received, up
 *		to its snowid.max_drift_ms ahead of its clock, so the first id after
 *		the end of recovery must skip ahead of them too
 *		(snowid_skip_after_takeover()).  The signal files are gone after a
 *		promotion, and a crash may come before the first id, so the pending
 *		skip is recorded in the mark file; the next mark written after the
 *		skip clears it.
 */
static void
snowid_record_takeover(SnowidShared *s, int64 mark_ms)
{
	SnowidMark	mark;

	if (access(STANDBY_SIGNAL_FILE, F_OK) != 0 &&
		access(RECOVERY_SIGNAL_FILE, F_OK) != 0 &&
		access(BACKUP_LABEL_FILE, F_OK) != 0)
		return;
	if (s->takeover_pending || s->mark_mismatch ||
		(s->mark_status != SNOWID_MARK_OK &&
		 s->mark_status != SNOWID_MARK_MISSING))
		return;

	mark.layout = snowid_layout;
	mark.high_water_ms = mark_ms + snowid_layout.epoch_ms;
	mark.max_drift_ms = s->source_drift_ms;
	mark.takeover = true;
	s->takeover_pending = true;
	if (!snowid_mark_write(&mark, WARNING))
		ereport(WARNING,
				(errmsg("snowid could not record that this server is a copy of another"),
				 errdetail("If the server crashes after a promotion and before its first id, it may repeat ids of the server it was copied from.")));
}

/*
 * snowid_shmem_detach
 *		At a clean postmaster exit, lowers the mark to just past the last id
 *		issued, so that a quick restart need not wait out the step.  If the
 *		server started in archive recovery and has issued nothing since (a
 *		standby, or a promoted server not used yet), the mark instead takes
 *		the skip snowid_prepare() would have made, as the next start may not
 *		know there was a recovery.  A replayed mark whose write failed is
 *		written now.  Every backend is gone by now, so the state is read
 *		without the mutex (a backend killed while holding it could never
 *		release it).
 */
void
snowid_shmem_detach(void)
{
	SnowidShared *s = snowid_shared;
	SnowidMark	mark;
	int64		new_ms;

	if (s == NULL ||
		(s->mark_status != SNOWID_MARK_OK &&
		 s->mark_status != SNOWID_MARK_MISSING))
		return;
	if (s->mark_mismatch)
	{
		if (s->replay_unsaved)
		{
			snowid_foreign_mark(s, &mark);
			(void) snowid_mark_write(&mark, LOG);
		}
		return;
	}
	if (s->takeover_pending)
		new_ms = Max(s->high_water_ms,
					 snowid_clock_ms() + snowid_takeover_drift_ms(s) + 1);
	else if (s->position < 0)
		return;
	else
		new_ms = (s->position >> snowid_layout.sequence_bits) + 1;
	if (new_ms == s->high_water_ms && !s->replay_unsaved)
		return;

	mark.layout = snowid_layout;
	mark.high_water_ms = new_ms + snowid_layout.epoch_ms;
	mark.max_drift_ms = s->takeover_pending ?
		s->source_drift_ms : snowid_max_drift_ms;
	mark.takeover = s->takeover_pending;
	(void) snowid_mark_write(&mark, LOG);
}

/*
 * snowid_require_shmem
 *		Reports that snowid is not preloaded, unless this process is attached
 *		to the generator.
 */
void
snowid_require_shmem(void)
{
	if (snowid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via shared_preload_libraries"),
				 errhint("Add snowid to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * snowid_prepare_backend
 *		Checks, once per backend, that it may generate at all.
 */
void
snowid_prepare_backend(void)
{
	if (unlikely(!prepared))
		snowid_prepare();
}

/*
 * snowid_layout_settings
 *		A layout as the settings that make it, for messages; palloc'd.
 */
static char *
snowid_layout_settings(const SnowidLayout *l)
{
	return psprintf("snowid.datacenter_bits = %d, snowid.worker_bits = %d, snowid.sequence_bits = %d and snowid.epoch = '%s'",
					l->datacenter_bits, l->worker_bits, l->sequence_bits,
					timestamptz_to_str(snowid_unix_ms_to_timestamptz(l->epoch_ms)));
}

/*
 * snowid_old_ids_bound
 *		A number above every id issued under the layout and mark found in
 *		the mark file: the smallest id of the mark's millisecond.
 */
static int64
snowid_old_ids_bound(const SnowidShared *s)
{
	const SnowidLayout *l = &s->mark_layout;
	int64		ms = s->mark_high_water_ms - l->epoch_ms;

	if (ms <= 0)
		return 0;
	if (ms > SNOWID_FIELD_MAX(l->timestamp_bits))
		return PG_INT64_MAX;
	return ms << (SNOWID_ID_BITS - l->timestamp_bits);
}

/*
 * snowid_resolve_worker
 *		Makes sure the generator has its worker id, resolving it in this
 *		backend if no other is at it, and returns the node bits.  Resolving
 *		may take Redis round trips, so it runs under no lock: one backend at
 *		a time sets "claiming", the others sleep on worker_cv, where a cancel
 *		still reaches them; and nobody claims while the last worker id is
 *		being given back ("releasing").  If the claim they waited for fails, they fail at
 *		once instead of each waiting out the Redis timeouts again; the next
 *		call retries.
 */
static int64
snowid_resolve_worker(void)
{
	SnowidShared *s = snowid_shared;
	uint32		failures = pg_atomic_read_u32(&s->resolve_failures);
	SnowidWorkerClaim claim;
	int			worker_id = -1;
	int64		node_bits = 0;
	bool		released;
	bool		mine = false;

	for (;;)
	{
		if (pg_atomic_read_u32(&s->resolve_failures) != failures)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid has no worker id"),
					 errdetail("Another session failed to get one while this session waited for it; its error is in the server log."),
					 errhint("Call again to retry.")));
		}

		SpinLockAcquire(&s->mutex);
		worker_id = s->worker_id;
		node_bits = s->node_bits;
		released = s->released;
		if (worker_id < 0 && !s->claiming && !s->releasing && !released)
			s->claiming = mine = true;
		SpinLockRelease(&s->mutex);

		if (released)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid has released its worker id"),
					 errdetail("snowid_release_worker() gave the worker id back to Redis; this server issues no ids until it claims one again."),
					 errhint("Restart the server to claim a worker id again.")));
		}
		if (worker_id >= 0 || mine)
			break;
		ConditionVariableSleep(&s->worker_cv,
							   snowid_wait_event(SNOWID_WAIT_WORKER_CLAIM));
	}
	ConditionVariableCancelSleep();
	if (!mine)
		return node_bits;

	/* reports an error if no worker id can be had */
	PG_ENSURE_ERROR_CLEANUP(snowid_resolve_failed, (Datum) 0);
	{
		snowid_worker_resolve(&claim);
	}
	PG_END_ENSURE_ERROR_CLEANUP(snowid_resolve_failed, (Datum) 0);

	snowid_install_worker(s, &claim);
	ConditionVariableBroadcast(&s->worker_cv);
	return snowid_node_bits(&snowid_layout, snowid_datacenter_id,
							claim.worker_id);
}

/*
 * snowid_install_worker
 *		Puts a resolved worker id into the generator and ends the claim.  A
 *		worker id from Redis comes with a floor, above every id issued with
 *		it before, and on lease with a fence; its first id lies at or above
 *		the floor and in a later millisecond than any id issued before with
 *		another worker id, so that this server's ids keep increasing across
 *		the switch.
 */
static void
snowid_install_worker(SnowidShared *s, const SnowidWorkerClaim *claim)
{
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int64		node_bits = snowid_node_bits(&snowid_layout,
											 snowid_datacenter_id,
											 claim->worker_id);
	int64		floor_position = snowid_last_position(claim->floor_ms - 1,
													  max_ms);

	SpinLockAcquire(&s->mutex);
	if (claim->floor_ms > 0 || claim->source == SNOWID_WORKER_LEASE)
	{
		int64		position = Max(s->position, floor_position);

		s->position = snowid_last_position(position >> snowid_layout.sequence_bits,
										   max_ms);
	}
	if (claim->source == SNOWID_WORKER_LEASE)
	{
		s->fence_ms = claim->fence_ms;
		s->lease_expires_ms = claim->lease_expires_ms;
		memcpy(s->lease_token, claim->token, sizeof(s->lease_token));
	}
	s->worker_id = claim->worker_id;
	s->worker_source = claim->source;
	s->node_bits = node_bits;
	s->lease_gen++;
	s->claiming = false;
	SpinLockRelease(&s->mutex);
}

/*
 * snowid_resolve_failed
 *		Error (or exit) cleanup of snowid_resolve_worker(): lets the next
 *		caller try, and wakes the waiters so that they give up.
 */
static void
snowid_resolve_failed(int code, Datum arg)
{
	SnowidShared *s = snowid_shared;

	pg_atomic_fetch_add_u32(&s->resolve_failures, 1);
	SpinLockAcquire(&s->mutex);
	s->claiming = false;
	SpinLockRelease(&s->mutex);
	ConditionVariableBroadcast(&s->worker_cv);
}

/*
 * snowid_prepare
 *		Checks, once per backend, everything that must hold before it takes
 *		an id, and reports what is wrong otherwise.
 */
static void
snowid_prepare(void)
{
	SnowidShared *s = snowid_shared;
	int			worker_id;
	bool		takeover;

	snowid_require_shmem();
	snowid_check_can_generate(s);
	snowid_save_replayed_mark(s);

	SpinLockAcquire(&s->mutex);
	worker_id = s->worker_id;
	takeover = s->takeover_pending;
	SpinLockRelease(&s->mutex);

	if (worker_id < 0)
		(void) snowid_resolve_worker();
	if (unlikely(takeover))
		snowid_skip_after_takeover(s);

	prepared = true;
}

/*
 * snowid_check_can_generate
 *		Reports why this server may not issue ids at all: it is a standby,
 *		its mark file is unreadable or corrupt, or its layout changed.
 */
static void
snowid_check_can_generate(const SnowidShared *s)
{
	/*
	 * A streaming standby runs with its primary's settings: it would hand
	 * out the primary's ids.
	 */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowids during recovery"),
				 errdetail("A standby shares its primary's worker id, so its ids could repeat the primary's."),
				 errhint("Take ids from the primary, or promote this server first.")));

	if (s->mark_status == SNOWID_MARK_UNREADABLE)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not read snowid high-water mark file \"%s\"",
						SNOWID_MARK_FILE),
				 errdetail("The server log of the last start says why."),
				 errhint("Make sure the server can read the file in its data directory, then restart the server.")));
	if (s->mark_status == SNOWID_MARK_CORRUPT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid high-water mark file \"%s\" is corrupt",
						SNOWID_MARK_FILE),
				 errdetail("Without it snowid cannot tell which ids were issued before the last restart."),
				 errhint("Stop the server, make sure the clock is correct, move the file aside and start the server again.")));

	/*
	 * The same bits mean something else in another layout or epoch, so an
	 * id of the new layout can equal one issued before.  Switching needs a
	 * decision only the operator can make.
	 */
	if (s->mark_mismatch)
	{
		char	   *old_settings = snowid_layout_settings(&s->mark_layout);
		char	   *new_settings = snowid_layout_settings(&snowid_layout);

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid layout or epoch changed since ids were last issued"),
				 errdetail("Ids were issued with %s; the server now runs with %s.  An id of one layout can equal an id of the other, so new ids could collide with old ones.",
						   old_settings, new_settings),
				 errhint("To go on issuing ids, put the old settings back and restart.  To switch layouts deliberately, stop every server that issues ids into the same tables, make sure the new ids will be larger than all old ones (this server's old ids lie below %lld; compare snowid_from_time(now()) under the new settings), then remove \"%s\" from the data directory of each and start them with the new settings.",
						 (long long) snowid_old_ids_bound(s),
						 SNOWID_MARK_FILE)));
	}
}

/*
 * snowid_save_replayed_mark
 *		Before the first id after recovery: writes a replayed mark that could
 *		not be written during replay, and refuses ids until it is written.
 *		Ids below a mark that is only in shared memory would lie above the
 *		mark file after a crash, where replay may not bring the mark back.
 */
static void
snowid_save_replayed_mark(SnowidShared *s)
{
	SnowidMark	mark;
	bool		unsaved;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->replay_unsaved)
	{
		SpinLockAcquire(&s->mutex);
		mark.layout = snowid_layout;
		mark.high_water_ms = s->high_water_ms + snowid_layout.epoch_ms;
		mark.max_drift_ms = s->source_drift_ms;
		mark.takeover = s->takeover_pending;
		SpinLockRelease(&s->mutex);
		s->replay_unsaved = !snowid_mark_write(&mark, WARNING);
	}
	unsaved = s->replay_unsaved;
	LWLockRelease(s->lock);

	if (unsaved)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not save the snowid high-water mark replayed from WAL"),
				 errdetail("The mark file \"%s\" must cover the marks replayed before this server issues an id; a crash could otherwise bring back an older mark.",
						   SNOWID_MARK_FILE),
				 errhint("The warning before this error says why the file could not be written.  Fix that, then call again.")));
}

/*
 * snowid_skip_after_takeover
 *		Recovery has ended on a server that started in archive recovery: skip
 *		past any id the server it was copied from may have issued.  Those
 *		its replayed marks cover lie below the generator's position already;
 *		the others, with a clock that agrees with ours, lie at most its
 *		snowid.max_drift_ms ahead (see snowid_record_takeover()), that
 *		millisecond included: the first id comes a millisecond after it.  The first
 *		backend to get here skips, and logs where it went.
 */
static void
snowid_skip_after_takeover(SnowidShared *s)
{
	int64		now = Max(snowid_clock_ms(), 0);
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int			drift_ms;
	int64		position;
	bool		skipped = false;

	SpinLockAcquire(&s->mutex);
	drift_ms = snowid_takeover_drift_ms(s);
	if (s->takeover_pending)
	{
		s->position = Max(s->position,
						  snowid_last_position(now + drift_ms, max_ms));
		s->takeover_pending = false;
		skipped = true;
	}
	position = s->position;
	SpinLockRelease(&s->mutex);

	if (skipped)
		ereport(LOG,
				(errmsg("snowid continues %lld ms ahead of the clock after recovery",
						(long long) Max((position >> snowid_layout.sequence_bits) + 1 - now, 0)),
				 errdetail("The next id lies above the last high-water mark replayed and past %d ms, the largest of this server's snowid.max_drift_ms and those the server it took over from wrote its marks with, ahead of the clock.",
						   drift_ms)));
}

/*
 * snowid_takeover_drift_ms
 *		How far ahead of the clock the server this one took over from may
 *		have issued ids: its snowid.max_drift_ms as the mark said, or ours if
 *		larger.  Caller holds the mutex, or is alone.
 */
static inline int
snowid_takeover_drift_ms(const SnowidShared *s)
{
	return Max(snowid_max_drift_ms, s->source_drift_ms);
}

/*
 * snowid_foreign_mark
 *		The mark file's line for a replayed mark of another layout or epoch.
 *		Caller holds lock, or is alone.
 */
static void
snowid_foreign_mark(const SnowidShared *s, SnowidMark *mark)
{
	mark->layout = s->mark_layout;
	mark->high_water_ms = s->mark_high_water_ms;
	mark->max_drift_ms = s->source_drift_ms;
	mark->takeover = s->takeover_pending;
}

/*
 * snowid_replay_mark
 *		Replays a mark record (wal.c), in the startup process.  The
 *		generator moves up to the mark and remembers the largest drift budget
 *		a writer had, for a takeover (ids issued under a larger budget may
 *		lie further ahead than the last mark's budget says); both go into the mark file before replay goes
 *		on, so that the file always covers every record before the last
 *		restartpoint, which is where a restart resumes replay (PostgreSQL
 *		calls no extension at a restartpoint, so the file cannot wait for
 *		one).  A mark of
 *		another layout or epoch makes the server refuse ids once promoted,
 *		as such a mark file does; the first one seen stays.  Reports no
 *		error: a failed write is retried with the next record, at a clean
 *		shutdown, and before the first id once recovery has ended
 *		(snowid_save_replayed_mark()).
 */
void
snowid_replay_mark(const SnowidMark *mark)
{
	SnowidShared *s = snowid_shared;
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int64		mark_ms = mark->high_water_ms - snowid_layout.epoch_ms;
	bool		foreign = !snowid_mark_layout_matches(mark, &snowid_layout);
	bool		changed = false;
	bool		drift_changed;
	SnowidMark	file;

	Assert(s != NULL);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);

	if (!s->mark_mismatch && foreign)
	{
		s->mark_mismatch = true;
		s->mark_layout = mark->layout;
		s->mark_high_water_ms = mark->high_water_ms;
		changed = true;
	}
	else if (s->mark_mismatch && foreign &&
			 snowid_mark_layout_matches(mark, &s->mark_layout) &&
			 mark->high_water_ms > s->mark_high_water_ms)
	{
		s->mark_high_water_ms = mark->high_water_ms;
		changed = true;
	}

	SpinLockAcquire(&s->mutex);
	if (!s->mark_mismatch && mark_ms > s->high_water_ms)
	{
		s->high_water_ms = mark_ms;
		s->position = Max(s->position,
						  snowid_last_position(mark_ms - 1, max_ms));
		changed = true;
	}
	drift_changed = (mark->max_drift_ms > s->source_drift_ms);
	s->source_drift_ms = Max(s->source_drift_ms, mark->max_drift_ms);
	file.layout = snowid_layout;
	file.high_water_ms = s->high_water_ms + snowid_layout.epoch_ms;
	file.max_drift_ms = s->source_drift_ms;
	file.takeover = s->takeover_pending;
	SpinLockRelease(&s->mutex);

	if (s->mark_mismatch)
		snowid_foreign_mark(s, &file);
	if ((changed || drift_changed || s->replay_unsaved) &&
		(s->mark_status == SNOWID_MARK_OK ||
		 s->mark_status == SNOWID_MARK_MISSING))
		s->replay_unsaved = !snowid_mark_write(&file, WARNING);
	LWLockRelease(s->lock);

	if (drift_changed && mark->max_drift_ms > snowid_max_drift_ms)
		ereport(LOG,
				(errmsg("snowid replayed a high-water mark written with snowid.max_drift_ms = %d, more than this server's %d",
						mark->max_drift_ms, snowid_max_drift_ms),
				 errdetail("Once promoted, this server starts its ids that far ahead of its clock, and callers wait until the clock is within its own snowid.max_drift_ms."),
				 errhint("Give this server the snowid.max_drift_ms of its primary.")));
}

/*
 * snowid_take
 *		Takes up to 'want' consecutive positions in one pass through the
 *		mutex and returns the first; *got says how many.  Fewer than wanted
 *		come back only when the rest would run past the drift budget, the
 *		high-water mark, the lease's fence or the end of the timestamp
 *		field.  *node_bits gets the datacenter and worker fields to compose
 *		them with, read in the same pass.  Waits (outside the mutex) when
 *		not even one position may be issued yet.
 */
int64
snowid_take(int want, int *got, int64 *node_bits)
{
	SnowidShared *s = snowid_shared;
	int			seq_bits = snowid_layout.sequence_bits;
	int64		seq_mask = SNOWID_FIELD_MAX(seq_bits);
	static int64 max_ms = -1;	/* the layout is fixed at server start */
	int64		deadline_ms = -1;	/* of waiting, on the monotonic clock */

	Assert(want > 0 && prepared);
	if (unlikely(max_ms < 0))
		max_ms = snowid_max_ms(&snowid_layout);

	for (;;)
	{
		int64		now = snowid_clock_ms();
		int64		drift_ms;
		int64		start;
		int64		last;
		int64		n;
		int64		high_water_ms;
		int64		fence_ms;
		int			worker_id;
		bool		renew_early;

		if (unlikely(now < 0 || now > max_ms))
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("the clock is outside the range of snowid timestamps"),
					 errdetail("The clock reads %lld ms after snowid.epoch; the timestamp field holds 0 to %lld.",
							   (long long) now, (long long) max_ms),
					 errhint("Check the system clock and snowid.epoch.")));

		/* the last millisecond the drift budget and the layout allow now */
		drift_ms = Min(now + snowid_max_drift_ms, max_ms);

		SpinLockAcquire(&s->mutex);
		start = s->position + 1;
		if ((start >> seq_bits) < now)
		{
			/*
			 * Keep the low bits, unless the rest of the new millisecond would
			 * then hold fewer ids than the last one issued: a caller that
			 * just failed to use up a millisecond gets a whole one.
			 */
			if (seq_mask + 1 - (start & seq_mask) < start - s->ms_first)
				start = now << seq_bits;
			else
				start = (now << seq_bits) | (start & seq_mask);
		}
		if (now + SNOWID_STEP_MIN_MS < s->last_clock_ms)
			s->clock_steps++;
		s->last_clock_ms = now;
		high_water_ms = s->high_water_ms;
		renew_early = !s->renewal_failed;
		fence_ms = s->fence_ms;
		worker_id = s->worker_id;
		*node_bits = s->node_bits;
		last = snowid_last_position(Min(drift_ms,
										Min(high_water_ms, fence_ms) - 1),
									max_ms);
		n = (start > last || *node_bits < 0) ? 0 :
			Min(last - start, (int64) want - 1) + 1;
		if (likely(n > 0))
		{
			if (((start + n - 1) >> seq_bits) != (s->position >> seq_bits))
				s->ms_first = Max(start,
								  ((start + n - 1) >> seq_bits) << seq_bits);
			s->position = start + n - 1;
			s->ids_issued += n;
		}
		SpinLockRelease(&s->mutex);

		if (likely(n > 0))
		{
			/* renew the mark early, so that callers rarely wait for it */
			if (unlikely(((start + n - 1) >> seq_bits) + SNOWID_MARK_STEP_MS / 2
						 >= high_water_ms) && renew_early)
				snowid_advance_mark((start + n - 1) >> seq_bits, false);
			*got = (int) n;
			return start;
		}

		if (*node_bits < 0)
			(void) snowid_resolve_worker(); /* the lease ended: claim again */
		else if (start > snowid_last_position(max_ms, max_ms))
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("snowid timestamp field is exhausted"),
					 errdetail("The generator reached the last millisecond the layout can hold.")));
		else if ((start >> seq_bits) >= fence_ms)
			snowid_lease_ran_out(worker_id, fence_ms);
		else if ((start >> seq_bits) >= high_water_ms &&
				 (start >> seq_bits) <= drift_ms)
			snowid_advance_mark(start >> seq_bits, true);
		else
			snowid_wait_clock((start >> seq_bits) - snowid_max_drift_ms, now,
							  &deadline_ms);
	}
}

/*
 * snowid_lease_ran_out
 *		Reports that the generator reached the fence of its lease: renewals
 *		failed for about a lease, and past the fence another server may hold
 *		the worker id.
 */
static void
snowid_lease_ran_out(int worker_id, int64 fence_ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("the lease on snowid worker id %d ran out", worker_id),
			 errdetail("Redis could not be reached to renew it (the server log says why), and without a renewal this server may issue no id from %s on, where another server may take the worker id over.",
					   timestamptz_to_str(snowid_unix_ms_to_timestamptz(fence_ms + snowid_layout.epoch_ms))),
			 errhint("Check that Redis is up.  Ids are issued again after the next successful renewal.")));
}

/*
 * snowid_advance_mark
 *		Moves the persisted high-water mark a step past needed_ms, in the
 *		mark file and in WAL, where standbys and restores find it.  With
 *		wait, blocks for the lock and reports a failed write as an error (no
 *		id can be issued without the mark); without, it is a best-effort
 *		early renewal that gives way to anyone already renewing.  A failed
 *		early renewal warns, and none is tried again until a write succeeds:
 *		a read-only or full disk would otherwise warn on every call for half
 *		a lease.  The mark running out then tries again, and fails with an
 *		error until the write succeeds.
 */
static void
snowid_advance_mark(int64 needed_ms, bool wait)
{
	SnowidShared *s = snowid_shared;
	SnowidMark	mark;
	int64		high_water_ms;
	int64		new_ms;
	bool		takeover;
	bool		renewal_failed;
	bool		written;

	if (wait)
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(s->lock, LW_EXCLUSIVE))
		return;

	SpinLockAcquire(&s->mutex);
	high_water_ms = s->high_water_ms;
	takeover = s->takeover_pending;
	renewal_failed = s->renewal_failed;
	SpinLockRelease(&s->mutex);

	/* someone renewed it meanwhile, or an early renewal failed before */
	if (high_water_ms > needed_ms + SNOWID_MARK_STEP_MS / 2 ||
		(!wait && renewal_failed))
	{
		LWLockRelease(s->lock);
		return;
	}

	new_ms = Max(needed_ms, snowid_clock_ms()) + SNOWID_MARK_STEP_MS;
	mark.layout = snowid_layout;
	mark.high_water_ms = new_ms + snowid_layout.epoch_ms;
	mark.max_drift_ms = snowid_max_drift_ms;
	mark.takeover = takeover;	/* cleared once the skip is made */
	pgstat_report_wait_start(snowid_wait_event(SNOWID_WAIT_MARK_WRITE));
	written = snowid_mark_write(&mark, wait ? ERROR : WARNING);
	pgstat_report_wait_end();
	if (written)
	{
		/*
		 * File first, then WAL: a base backup copies the file after its
		 * starting checkpoint, so it holds every mark logged before that
		 * checkpoint.  The record is flushed before any id uses the mark.
		 */
		snowid_wal_log_mark(&mark);
	}
	SpinLockAcquire(&s->mutex);
	if (written)
		s->high_water_ms = Max(s->high_water_ms, new_ms);
	s->renewal_failed = !written;
	SpinLockRelease(&s->mutex);
	LWLockRelease(s->lock);
}

/*
 * snowid_wait_clock
 *		Sleeps until the wall clock reaches target_ms, or fails once the
 *		caller has waited snowid.max_wait_ms in all (*deadline_ms, set on the
 *		first wait of a call, keeps the total).  The wait is measured on the
 *		monotonic clock, so that a wall clock stepping back during it does
 *		not make it longer.
 */
static void
snowid_wait_clock(int64 target_ms, int64 now_ms, int64 *deadline_ms)
{
	SnowidShared *s = snowid_shared;
	int64		monotonic_ms = snowid_monotonic_ms();
	int64		sleep_us;
	struct timespec ts;

	if (*deadline_ms < 0)
	{
		pg_atomic_fetch_add_u64(&s->waits, 1);
		*deadline_ms = monotonic_ms + snowid_max_wait_ms;
	}
	else if (monotonic_ms >= *deadline_ms)
	{
		pg_atomic_fetch_add_u64(&s->clock_errors, 1);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the system clock is %lld ms behind the snowid generator",
						(long long) (target_ms + snowid_max_drift_ms - now_ms)),
				 errdetail("The generator never issues an id older than one it issued before; it may run up to snowid.max_drift_ms (%d ms) ahead of the clock and waited snowid.max_wait_ms (%d ms) for it to catch up.",
						   snowid_max_drift_ms, snowid_max_wait_ms),
				 errhint("Correct the system clock (check NTP), or raise snowid.max_drift_ms or snowid.max_wait_ms and reload.")));
	}

	/* sleep until the next millisecond boundary, in short naps */
	clock_gettime(CLOCK_REALTIME, &ts);
	sleep_us = (target_ms + snowid_layout.epoch_ms) * 1000 -
		((int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	sleep_us = Max(Min(sleep_us, SNOWID_SLEEP_MAX_US), 1);
	pgstat_report_wait_start(snowid_wait_event(SNOWID_WAIT_CLOCK));
	snowid_sleep_us(sleep_us);
	pgstat_report_wait_end();
	CHECK_FOR_INTERRUPTS();
}

/*
 * snowid_sleep_us
 *		Sleeps for about us microseconds.  Linux lets a sleep run on by the
 *		thread's timer slack, 50 us by default: a twentieth of the millisecond
 *		a caller waits for every millisecond with snowid.max_drift_ms = 0.
 *		The first sleep of a backend cuts the slack to a microsecond, for the
 *		rest of its life (its other timers lose nothing by that).
 */
static void
snowid_sleep_us(int64 us)
{
	struct timespec nap;
#ifdef PR_SET_TIMERSLACK
	static bool slack_set = false;

	if (unlikely(!slack_set))
	{
		(void) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
		slack_set = true;
	}
#endif

	nap.tv_sec = us / 1000000;
	nap.tv_nsec = (us % 1000000) * 1000;
	(void) nanosleep(&nap, NULL);
}

/*
 * snowid_get_status
 *		A consistent copy of the generator's state.
 */
void
snowid_get_status(SnowidStatus *status)
{
	SnowidShared *s = snowid_shared;
	int64		position;

	Assert(s != NULL);
	SpinLockAcquire(&s->mutex);
	position = s->position;
	status->high_water_ms = s->high_water_ms;
	status->ids_issued = s->ids_issued;
	status->clock_steps = s->clock_steps;
	status->worker_id = s->worker_id;
	status->worker_source = s->worker_source;
	status->fence_ms = (s->worker_source == SNOWID_WORKER_LEASE) ?
		s->fence_ms : -1;
	status->lease_expires_ms = s->lease_expires_ms;
	SpinLockRelease(&s->mutex);

	status->clock_ms = snowid_clock_ms();
	status->datacenter_id = snowid_datacenter_id;
	status->last_ms = (status->ids_issued > 0) ?
		(position >> snowid_layout.sequence_bits) : -1;
	status->waits = pg_atomic_read_u64(&s->waits);
	status->clock_errors = pg_atomic_read_u64(&s->clock_errors);
	status->renewals = pg_atomic_read_u64(&s->renewals);
	status->renewal_failures = pg_atomic_read_u64(&s->renewal_failures);
}

/*
 * snowid_lease_state
 *		What the lease renewer needs to know of the generator: the worker id
 *		and its generation, where the generator is (the millisecond after
 *		the last id, or the clock if later: this process's or the latest a
 *		caller saw, since the epoch), and whether a claim is under way or
 *		the id was given back.
 */
void
snowid_lease_state(SnowidLeaseState *state)
{
	SnowidShared *s = snowid_shared;
	int64		clock_ms = snowid_clock_ms();

	SpinLockAcquire(&s->mutex);
	state->worker_id = s->worker_id;
	state->gen = s->lease_gen;
	state->next_ms = Max((s->position >> snowid_layout.sequence_bits) + 1,
						 s->last_clock_ms);
	state->high_water_ms = s->high_water_ms;
	state->claiming = s->claiming;
	state->releasing = s->releasing;
	state->released = s->released;
	memcpy(state->token, s->lease_token, sizeof(state->token));
	SpinLockRelease(&s->mutex);

	state->next_ms = Max(state->next_ms, clock_ms);
}

/*
 * snowid_lease_extend
 *		After a renewal: raises the fence of the lease of generation gen, if
 *		the generator still has it, and notes when the lease runs out.
 */
bool
snowid_lease_extend(uint32 gen, int64 fence_ms, int64 expires_ms)
{
	SnowidShared *s = snowid_shared;
	bool		current;

	SpinLockAcquire(&s->mutex);
	current = (s->lease_gen == gen && s->worker_id >= 0);
	if (current)
	{
		s->fence_ms = Max(s->fence_ms, fence_ms);
		s->lease_expires_ms = expires_ms;
	}
	SpinLockRelease(&s->mutex);
	return current;
}

/*
 * snowid_lease_drop
 *		Stops issuing ids with the worker id of generation gen: its lease
 *		was lost, or it is being given back (until snowid_lease_given_back()
 *		no claim starts, so that none meets the release in Redis; and with
 *		SNOWID_DROP_RELEASE none starts until a restart).  False if the
 *		generator no longer has it.  Otherwise sets *worker_id and
 *		*final_ms, the millisecond after the last id issued (since the
 *		epoch), which no id of this server with it will reach.
 */
bool
snowid_lease_drop(uint32 gen, SnowidLeaseDrop how, int *worker_id,
				  int64 *final_ms)
{
	SnowidShared *s = snowid_shared;
	bool		current;

	SpinLockAcquire(&s->mutex);
	current = (s->lease_gen == gen && s->worker_id >= 0);
	if (current)
	{
		*worker_id = s->worker_id;
		*final_ms = (s->position >> snowid_layout.sequence_bits) + 1;
		s->worker_id = -1;
		s->worker_source = SNOWID_WORKER_NONE;
		s->node_bits = -1;
		s->lease_expires_ms = 0;
		s->lease_gen++;
		s->releasing = (how != SNOWID_DROP_LOST);
		s->released = (how == SNOWID_DROP_RELEASE);
	}
	SpinLockRelease(&s->mutex);
	return current;
}

/*
 * snowid_lease_given_back
 *		The give-back that snowid_lease_drop() began has ended, in Redis or
 *		not: claims may start again (unless the id was released for good).
 */
void
snowid_lease_given_back(void)
{
	SnowidShared *s = snowid_shared;

	SpinLockAcquire(&s->mutex);
	s->releasing = false;
	SpinLockRelease(&s->mutex);
	ConditionVariableBroadcast(&s->worker_cv);
}

/*
 * snowid_lease_count
 *		Counts a renewal that succeeded or failed, for snowid_status().
 */
void
snowid_lease_count(bool ok)
{
	SnowidShared *s = snowid_shared;

	pg_atomic_fetch_add_u64(ok ? &s->renewals : &s->renewal_failures, 1);
}

/*
 * snowid_background_claim
 *		Claims a worker id for the generator in the lease renewer, unless it
 *		has one, a backend is claiming, or it was given back.  Returns NULL,
 *		or the error that ended the claim (in the caller's memory context);
 *		backends waiting for the claim fail as when their own claim fails.
 */
ErrorData *
snowid_background_claim(void)
{
	SnowidShared *s = snowid_shared;
	MemoryContext context = CurrentMemoryContext;
	ErrorData  *volatile edata = NULL;
	bool		idle;

	SpinLockAcquire(&s->mutex);
	idle = (s->worker_id < 0 && !s->claiming && !s->releasing &&
			!s->released);
	SpinLockRelease(&s->mutex);
	if (!idle)
		return NULL;

	PG_TRY();
	{
		(void) snowid_resolve_worker();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	return edata;
}

/*
 * snowid_generator_ms
 *		Where the generator is, in ms since the epoch: its high-water mark
 *		or the clock (this process's or the latest a caller saw), whichever
 *		is later, or past where a pending takeover skip will put it.  A new
 *		lease's fence goes a lease past it.
 */
int64
snowid_generator_ms(void)
{
	SnowidShared *s = snowid_shared;
	int64		clock_ms = snowid_clock_ms();
	int64		high_water_ms;
	int64		last_clock_ms;
	int64		skip_ms = 0;

	SpinLockAcquire(&s->mutex);
	high_water_ms = s->high_water_ms;
	last_clock_ms = s->last_clock_ms;
	if (s->takeover_pending)
		skip_ms = clock_ms + snowid_takeover_drift_ms(s) + 1;
	SpinLockRelease(&s->mutex);
	return Max(Max(Max(high_water_ms, last_clock_ms), clock_ms), skip_ms);
}

/*
 * snowid_usable_ms
 *		The latest millisecond (since the epoch) this server may issue ids
 *		at now: its clock plus snowid.max_drift_ms.  A worker id fenced past
 *		it would make callers wait, so a claim does not take it.
 */
int64
snowid_usable_ms(void)
{
	return Max(snowid_clock_ms(), 0) + snowid_max_drift_ms;
}
