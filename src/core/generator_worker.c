/*-------------------------------------------------------------------------
 *
 * generator_worker.c
 *	  The generator's worker id: resolved on first use through the
 *	  coordinator the coordination layer installed (one process at a time,
 *	  others waiting on worker_cv), and what the lease renewer and the
 *	  check-in do with it: read it, extend its fence, drop it, count
 *	  renewals.
 *
 * Locking: see shared.h.  claiming and releasing (under mutex)
 * let one process at a time resolve or give back the worker id, which may
 * take round trips to the coordinator and so holds no lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "core/generator_mark.h"
#include "core/generator_worker.h"
#include "core/shared.h"
#include "core/wait_events.h"

/* Where the worker id comes from (the coordination layer installs it) */
static const SnowidCoordinator *snowid_coordinator = NULL;

static void snowid_resolve_failed(int code, Datum arg);
static void snowid_install_worker(SnowidShared *s,
								  const SnowidWorkerClaim *claim);

/*
 * snowid_set_coordinator
 *		Installs where the worker id comes from; called from _PG_init.
 */
void
snowid_set_coordinator(const SnowidCoordinator *coordinator)
{
	snowid_coordinator = coordinator;
}

/*
 * snowid_startup_worker
 *		The worker id known while shared memory is initialised, or -1.
 */
void
snowid_startup_worker(int *worker_id, SnowidWorkerSource *source)
{
	*worker_id = -1;
	*source = SNOWID_WORKER_NONE;
	if (snowid_coordinator != NULL)
		snowid_coordinator->startup(worker_id, source);
}

/*
 * snowid_resolve_worker
 *		Makes sure the generator has its worker id, resolving it in this
 *		backend if no other is at it, and returns the node bits.  Resolving
 *		may take round trips to the coordinator, so it runs under no lock: one backend at
 *		a time sets "claiming", the others sleep on worker_cv, where a cancel
 *		still reaches them; and nobody claims while the last worker id is
 *		being given back ("releasing").  If the claim they waited for fails, they fail at
 *		once instead of each waiting out the coordinator's timeouts again; the next
 *		call retries.
 */
int64
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
					 errdetail("snowid_release_worker() gave the worker id back to the coordinator; this server issues no ids until it claims one again."),
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
		if (snowid_coordinator == NULL)
			elog(ERROR, "snowid has no coordinator installed");
		snowid_coordinator->resolve(&claim);
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
 *		worker id from the coordinator comes with a floor, above every id
 *		issued with it before, and a fence, below which its ids lie until
 *		the coordinator confirms it again; its first id lies at or above
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
	s->fence_ms = claim->fence_ms;
	if (claim->source == SNOWID_WORKER_LEASE)
	{
		s->lease_expires_ms = claim->lease_expires_ms;
		s->lease_deadline_ms = claim->lease_deadline_ms;
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
 * snowid_reserve_floor
 *		A worker id claimed with a floor (ms since the epoch: every id its
 *		earlier holders issued lies below) is about to be relied on:
 *		persists a mark past the floor first, in the mark file and in WAL,
 *		so that this server's later starts begin above the floor too,
 *		whatever the coordinator remembers of it.  Reports an error if the
 *		mark cannot be written; the caller then caches nothing.
 */
void
snowid_reserve_floor(int64 floor_ms)
{
	if (floor_ms > 0)
		snowid_advance_mark(floor_ms, true);
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
	state->deadline_ms = s->lease_deadline_ms;
	state->fence_ms = s->fence_ms;
	memcpy(state->token, s->lease_token, sizeof(state->token));
	SpinLockRelease(&s->mutex);

	state->next_ms = Max(state->next_ms, clock_ms);
}

/*
 * snowid_claim_extend
 *		Before or after a check-in of the claim for good of generation gen:
 *		raises its fence to fence_ms, if the generator still has it.  With
 *		unbroken, only if the generator has not reached the fence yet (its
 *		next millisecond, or the clock if later: what snowid_lease_state()
 *		calls next_ms), so that a fence run out is raised only by a check-in
 *		the coordinator granted.  True if it was raised.
 */
bool
snowid_claim_extend(uint32 gen, int64 fence_ms, bool unbroken)
{
	SnowidShared *s = snowid_shared;
	int64		clock_ms = snowid_clock_ms();
	bool		raised;

	SpinLockAcquire(&s->mutex);
	raised = (s->lease_gen == gen && s->worker_id >= 0 &&
			  s->worker_source != SNOWID_WORKER_LEASE);
	if (raised && unbroken)
		raised = Max(Max((s->position >> snowid_layout.sequence_bits) + 1,
						 s->last_clock_ms), clock_ms) < s->fence_ms;
	if (raised)
		s->fence_ms = Max(s->fence_ms, fence_ms);
	SpinLockRelease(&s->mutex);
	return raised;
}

/*
 * snowid_lease_extend
 *		After a renewal: raises the fence of the lease of generation gen, if
 *		the generator still has it, and notes when the lease runs out (Unix
 *		ms, and by the monotonic clock).
 */
bool
snowid_lease_extend(uint32 gen, int64 fence_ms, int64 expires_ms,
					int64 deadline_ms)
{
	SnowidShared *s = snowid_shared;
	bool		current;

	SpinLockAcquire(&s->mutex);
	current = (s->lease_gen == gen && s->worker_id >= 0);
	if (current)
	{
		s->fence_ms = Max(s->fence_ms, fence_ms);
		s->lease_expires_ms = expires_ms;
		s->lease_deadline_ms = deadline_ms;
	}
	SpinLockRelease(&s->mutex);
	return current;
}

/*
 * snowid_lease_drop
 *		Stops issuing ids with the worker id of generation gen: its lease
 *		was lost, or it is being given back (until snowid_lease_given_back()
 *		no claim starts, so that none meets the release in the coordinator; and with
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
		s->dropped_worker_id = s->worker_id;
		s->worker_id = -1;
		s->worker_source = SNOWID_WORKER_NONE;
		s->node_bits = -1;
		s->lease_expires_ms = 0;
		s->lease_deadline_ms = 0;
		s->lease_gen++;
		s->releasing = (how != SNOWID_DROP_LOST);
		s->released = (how == SNOWID_DROP_RELEASE);
	}
	SpinLockRelease(&s->mutex);
	return current;
}

/*
 * snowid_lease_given_back
 *		The give-back that snowid_lease_drop() began has ended, in the coordinator or
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
