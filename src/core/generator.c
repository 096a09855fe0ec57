/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  The one id generator of a server, in shared memory, and the rules by
 *	  which it hands out positions: never backwards, at most
 *	  snowid.max_drift_ms ahead of the wall clock, and never past the
 *	  persisted high-water mark.  On a standby, and in crash recovery, the
 *	  generator follows the marks replayed from WAL (wal.c).
 *
 *
 * Locking: see shared.h, where SnowidShared groups its fields
 * by the lock that protects them.
 *
 *
 * A worker id from the coordinator comes with a fence, one more bound next
 * to the high-water mark, taken under the same mutex, so that the hot path
 * never waits for the coordinator: on lease (coord/lease.c), the lease's
 * fence, which the lease renewer raises at each renewal; claimed for good,
 * a quiet period past where the generator stood at its last check-in
 * (coord/checkin.c), so that a server whose check-in stopped (its worker
 * ended, or held still) stops issuing before the coordinator, had it
 * forgotten the claim, could give the id to another server.  Reaching a
 * lease's fence is an error at once (the renewer tried for about a lease);
 * reaching a check-in fence wakes the check-in and waits for it, within
 * snowid.max_wait_ms.  The worker id may change while the server runs; a
 * backend reads node_bits together with its positions, and a new worker id
 * starts at the next millisecond, so ids keep increasing across the
 * switch.
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

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "core/clock.h"
#include "core/generator.h"
#include "core/generator_mark.h"
#include "core/generator_worker.h"
#include "core/shared.h"
#include "core/wal.h"
#include "core/wait_events.h"
#include "util/bgworker.h"

/*
 * A wall clock that goes back by more than this counts as a clock step, once
 * a reading taken after the mutex confirms it (snowid_confirm_clock_step):
 * the reading a caller brings is taken before the mutex, and a caller
 * descheduled in between would look like a step.  NTP only steps the clock
 * for offsets over 128 ms.
 */
#define SNOWID_STEP_MIN_MS		100

/* Longest single sleep while waiting for the clock, in microseconds */
#define SNOWID_SLEEP_MAX_US		10000

/* This backend has checked that it may generate */
static bool prepared = false;

static pg_noinline void snowid_prepare(void);
static void snowid_check_can_generate(const SnowidShared *s);
static pg_noinline void snowid_confirm_clock_step(int64 last_clock_ms,
													 uint64 steps);
static void snowid_lease_ran_out(int worker_id, int64 fence_ms);
static void snowid_wait_checkin(int worker_id, int64 fence_ms,
								int64 *deadline_ms);
static void snowid_wait_clock(int64 target_ms, int64 now_ms,
							  int64 *deadline_ms);
static void snowid_sleep_us(int64 us);

/*
 * snowid_generator_preload
 *		What the generator needs while preloading: the WAL resource manager
 *		of the high-water mark, whose replay moves the generator.
 */
void
snowid_generator_preload(void)
{
	snowid_wal_register(snowid_replay_mark);
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
	s->mark_worker_id = -1;

	mark_ms = snowid_load_mark(s);

	/* the first position issued will be the first of mark_ms */
	s->position = snowid_last_position(mark_ms - 1,
									   snowid_max_ms(&snowid_layout));
	s->high_water_ms = mark_ms;
	s->last_clock_ms = 0;

	s->fence_ms = PG_INT64_MAX;
	s->worker_id = -1;
	s->dropped_worker_id = -1;
	s->node_bits = -1;
	snowid_startup_worker(&s->worker_id, &s->worker_source);
	if (s->worker_id >= 0)
		s->node_bits = snowid_node_bits(&snowid_layout, snowid_datacenter_id,
										s->worker_id);

	/* after the worker id, which the mark it writes names */
	snowid_record_takeover(s, mark_ms);
	snowid_record_instance(s, s->worker_id < 0);
}

/*
 * snowid_shmem_detach
 *		At a clean postmaster exit, lowers the mark to just past the last id
 *		issued, so that a quick restart need not wait out the step.  The
 *		mark names the worker id those ids carry, also one on lease given
 *		back at this stop, which the next start's claim then prefers.  If the
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
	/* a lease given back at this stop: its ids are the ones covered */
	snowid_mark_owner(s, mark.takeover,
					  s->worker_id >= 0 ? s->worker_id : s->dropped_worker_id,
					  &mark);
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
 *		Checks, once per backend, that it may generate at all, and on every
 *		call of function (its SQL name, for the message) that the
 *		transaction may write: taking an id writes the mark into WAL, so a
 *		read-only transaction is refused with 25006, as nextval() is.  A
 *		standby fails the first check, with its own message.
 */
void
snowid_prepare_backend(const char *function)
{
	if (unlikely(!prepared))
		snowid_prepare();
	if (unlikely(XactReadOnly))
		PreventCommandIfReadOnly(function);
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
	{
		snowid_check_copy(s);
		snowid_skip_after_takeover(s);
	}

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
 * snowid_take
 *		Takes up to 'want' consecutive positions in one pass through the
 *		mutex and returns the first; *got says how many.  Fewer than wanted
 *		come back only when the rest would run past the drift budget, the
 *		high-water mark, the lease's fence or the end of the timestamp
 *		field.  *node_bits gets the datacenter and worker fields to compose
 *		them with, read in the same pass.  Waits (outside the mutex) when
 *		not even one position may be issued yet: for the clock, or for the
 *		check-in of a claim for good at its fence.
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
		int64		now = snowid_clock_ms_quick();
		int64		drift_ms;
		int64		start;
		int64		last;
		int64		n;
		int64		high_water_ms;
		int64		fence_ms;
		int			worker_id;
		SnowidWorkerSource source;
		bool		renew_early;
		bool		clock_back;
		int64		last_clock_ms;
		uint64		steps;

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
		clock_back = now + SNOWID_STEP_MIN_MS < s->last_clock_ms;
		if (likely(!clock_back))
			s->last_clock_ms = now;
		last_clock_ms = s->last_clock_ms;
		steps = s->clock_steps;
		high_water_ms = s->high_water_ms;
		renew_early = !s->renewal_failed;
		fence_ms = s->fence_ms;
		worker_id = s->worker_id;
		source = s->worker_source;
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

		if (unlikely(clock_back))
			snowid_confirm_clock_step(last_clock_ms, steps);

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
		else if ((start >> seq_bits) >= fence_ms &&
				 source == SNOWID_WORKER_LEASE)
			snowid_lease_ran_out(worker_id, fence_ms);
		else if ((start >> seq_bits) >= fence_ms)
			snowid_wait_checkin(worker_id, fence_ms, &deadline_ms);
		else if ((start >> seq_bits) >= high_water_ms &&
				 (start >> seq_bits) <= drift_ms)
			snowid_advance_mark(start >> seq_bits, true);
		else
			snowid_wait_clock((start >> seq_bits) - snowid_max_drift_ms, now,
							  &deadline_ms);
	}
}

/*
 * snowid_confirm_clock_step
 *		Counts a clock step if a reading taken now, after the mutex, is still
 *		behind last_clock_ms, the latest reading seen under it, and no other
 *		caller has counted one since (steps is the count then): a wall clock
 *		that never went back reads at least that by now, while the reading
 *		the caller brought may be old.  The new reading becomes the latest,
 *		so that the step counts once.
 */
static pg_noinline void
snowid_confirm_clock_step(int64 last_clock_ms, uint64 steps)
{
	SnowidShared *s = snowid_shared;
	int64		now = snowid_clock_ms();

	if (now + SNOWID_STEP_MIN_MS >= last_clock_ms)
		return;
	SpinLockAcquire(&s->mutex);
	if (s->clock_steps == steps)
	{
		s->clock_steps++;
		s->last_clock_ms = now;
	}
	SpinLockRelease(&s->mutex);
}

/*
 * snowid_lease_ran_out
 *		Reports that the generator reached the fence of its lease: renewals
 *		failed, or did not happen, for about a lease, and past the fence
 *		another server may hold the worker id.
 */
static void
snowid_lease_ran_out(int worker_id, int64 fence_ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("the lease on snowid worker id %d ran out", worker_id),
			 errdetail("The coordinator could not be reached to renew it (the server log says why), and without a renewal this server may issue no id from %s on, where another server may take the worker id over.",
					   timestamptz_to_str(snowid_unix_ms_to_timestamptz(fence_ms + snowid_layout.epoch_ms))),
			 errhint("Check that the coordinator is up and that the background worker \"snowid lease renewer\" runs (snowid_status().coordinator_worker_pid).  Ids are issued again after the next successful renewal.")));
}

/*
 * snowid_wait_checkin
 *		Waits a moment for the check-in of a claim for good that reached its
 *		fence, or fails once the caller has waited snowid.max_wait_ms in all
 *		(*deadline_ms, as in snowid_wait_clock()).  Each wait wakes the
 *		check-in, which a clock stepped forward may have left behind (it
 *		checks in early only at the fence, and only after a check-in that
 *		succeeded); one that does not run, or is held still, cannot raise
 *		the fence: past it the coordinator, had it forgotten the claim, may
 *		have given the id to another server.
 */
static void
snowid_wait_checkin(int worker_id, int64 fence_ms, int64 *deadline_ms)
{
	int64		monotonic_ms = snowid_monotonic_ms();

	if (*deadline_ms < 0)
		*deadline_ms = monotonic_ms + snowid_max_wait_ms;
	else if (monotonic_ms >= *deadline_ms)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid worker id %d is not checked in with the coordinator",
						worker_id),
				 errdetail("This server issues no id from %s on until a check-in confirms its claim: the coordinator, had it forgotten the claim, could give the id to another server by then.",
						   timestamptz_to_str(snowid_unix_ms_to_timestamptz(fence_ms + snowid_layout.epoch_ms))),
				 errhint("Check that the background worker \"snowid check-in\" runs (ps, snowid_status().coordinator_worker_pid) and the server log for why it stopped; a stopped check-in is started again within a second, and ids are issued again at its next check-in.")));

	snowid_bgworker_wake();
	pgstat_report_wait_start(snowid_wait_event(SNOWID_WAIT_WORKER_CLAIM));
	snowid_sleep_us(SNOWID_SLEEP_MAX_US);
	pgstat_report_wait_end();
	CHECK_FOR_INTERRUPTS();
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
 * snowid_instance
 *		This data directory's instance id (mark.h), which a copy of it does
 *		not keep, written into the mark file first if it is not there yet;
 *		0 if it cannot be, so that no claim is made under a name the next
 *		start would not share.
 */
uint64
snowid_instance(void)
{
	snowid_require_shmem();
	return snowid_save_instance(snowid_shared) ? snowid_shared->instance : 0;
}

/*
 * snowid_last_worker_id
 *		The worker id of this datacenter that the mark file named at start
 *		(the id this server issued under last, or during a takeover the one
 *		of the server copied), or -1: a claim prefers it among free ids.
 */
int
snowid_last_worker_id(void)
{
	snowid_require_shmem();
	return snowid_shared->mark_datacenter_id == snowid_datacenter_id ?
		snowid_shared->mark_worker_id : -1;
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
