/*-------------------------------------------------------------------------
 *
 * checkin.c
 *	  The forgetting rule, the holder's side (coord/store.h): the background
 *	  worker that re-asserts a permanent claim every snowid.checkin_interval, so
 *	  that a store that forgot it (its data lost, restored from an older
 *	  copy, failed over to a replica that missed the claim) has it back
 *	  before its quiet period ends; and the check-in fence, which stops the
 *	  holder when its check-ins stop.
 *
 * A check-in is the claim of the worker id the generator holds, as the
 * explicit id and re-asserted: nothing is written when the store has it
 * already.  If the store gave the id to another server meanwhile (it is
 * held by another, or fenced past this server's clock), or takes another
 * server as the holder of this server's name (another holder secret is
 * registered for it: the store forgot this server, and another member of
 * the fleet claimed under its name first), the id is dropped at once: no
 * id is issued with it from then on, the cache file no longer names it,
 * and the next caller claims another, as after a lost lease (refused for
 * the secret, only once an administrator reset the secret of its name:
 * the store cannot tell this server from the member that took the name,
 * having forgotten both, doc/security.md).  A store that
 * cannot be reached is asked again a second later; ids are issued
 * meanwhile, as snowid_next() never waits on the store.
 *
 * The check-in fence: the generator issues no id at or past a quiet period
 * (snowid_quiet_ms(), what this server declares) beyond where it stood
 * when a check-in was last sent (snowid_checkin_fence()).  Each check-in
 * raises it before it is sent, as long as it has not been reached: the
 * check-ins then follow one another within a check-in interval and a
 * timeout, as the quiet period a store keeps after a loss assumes, and
 * every id lies below the floor of any grant the store could make after a
 * loss this server did not re-assert into (doc/internals.md, "A check-in
 * that stops").  A check-in that stopped (its worker ended and is not back
 * yet, or is held still) raises nothing, and the server stops issuing.
 * Once the fence was reached, only a check-in the store granted raises it,
 * and that check-in sends when this server's last granted call was, as a
 * restart of an earlier release does (the restart rule, coord/store.h): a holder
 * that went quiet across a loss is then a new claimant.  A caller at the
 * fence wakes the worker (a clock stepped forward reaches it early) and
 * waits for it, within snowid.max_wait_ms (core/generator.c).
 *
 * Leases need none of this: the lease renewer (lease.c) renews every third
 * of a lease, and its fence is the lease's.  A store that forgot a lease
 * does not renew it: its holder claims again, held to the quiet period as
 * any new claim.
 *
 * No lock of its own: the generator's state is read and changed only
 * through core/generator_worker.h, under its mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "coord/checkin.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "coord/worker.h"
#include "core/config.h"
#include "core/generator.h"
#include "core/generator_worker.h"
#include "core/layout.h"
#include "core/clock.h"
#include "core/wait_events.h"
#include "util/bgworker.h"

/* A failed check-in is tried again after this long */
#define SNOWID_CHECKIN_RETRY_MS		1000

PGDLLEXPORT void snowid_checkin_main(Datum arg);

static bool snowid_checkin(const SnowidLeaseState *state);
static char *snowid_checkin_refusal(const SnowidStoreResult *result);

/*
 * snowid_checkin_register
 *		Registers the check-in worker; called from _PG_init while
 *		preloading, with a coordinator and no lease.  It starts once
 *		recovery has ended and comes back a second after it exits.
 */
void
snowid_checkin_register(void)
{
	snowid_bgworker_register("snowid_checkin_main", "snowid check-in",
							 BGWORKER_SHMEM_ACCESS);
}

/*
 * snowid_checkin_main
 *		Checks in the generator's worker id every snowid.checkin_interval (a
 *		second after a failure), and at once when woken at the fence after
 *		a check-in that succeeded.  Claims nothing itself: a server that has
 *		issued no id since it started holds none yet.  It ends for good only
 *		at a shutdown; an error ends it (FATAL in a worker) and the
 *		postmaster starts it again a second later.
 */
void
snowid_checkin_main(Datum arg)
{
	MemoryContext tick_context;
	int64		due_ms = 0;
	bool		last_ok = true;

	snowid_bgworker_begin();
	snowid_require_shmem();

	tick_context = AllocSetContextCreate(TopMemoryContext, "snowid check-in",
										 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		SnowidLeaseState state;
		int64		now_ms;
		bool		holds;

		MemoryContextReset(tick_context);
		MemoryContextSwitchTo(tick_context);

		if (snowid_bgworker_stopping())
			snowid_bgworker_exit();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		snowid_lease_state(&state);
		now_ms = snowid_monotonic_ms();
		holds = state.worker_id >= 0 && !state.claiming &&
			!state.releasing && !state.released && snowid_store != NULL;

		/* due, or woken by a caller at the fence after a success */
		if (holds && (now_ms >= due_ms ||
					  (last_ok && state.next_ms >= state.fence_ms)))
		{
			last_ok = snowid_checkin(&state);
			due_ms = now_ms + (last_ok ? snowid_checkin_interval_ms :
							   SNOWID_CHECKIN_RETRY_MS);
		}
		else if (!holds)
			due_ms = now_ms + snowid_checkin_interval_ms;

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) Max(due_ms - snowid_monotonic_ms(), 1),
						 snowid_wait_event(SNOWID_WAIT_LEASE));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * snowid_checkin
 *		Re-asserts the worker id of state once, and raises its check-in
 *		fence.  True if the store has it for this server (or refused it, and
 *		it was dropped); false if the store did not answer as it should
 *		(logged at the first of a row).
 */
static bool
snowid_checkin(const SnowidLeaseState *state)
{
	static bool failing = false;
	char		identity[SNOWID_IDENTITY_LEN];
	SnowidStoreRequest request;
	SnowidStoreResult result;
	int			worker_id;
	int64		final_ms;
	int64		fence_ms = snowid_checkin_fence(state->next_ms);
	bool		unbroken;
	bool		lapsed;

	snowid_coord_request(&request, identity, sizeof(identity));
	request.explicit_worker_id = state->worker_id;
	request.reassert = true;
	request.checkin = true;
	/* refused if a fence lies past the ids this server issued: another
	 * server issued with the id there meanwhile */
	request.usable_ms = request.client_ms;

	/*
	 * The fence goes up as the check-in leaves, unless it was reached: then
	 * only once the store granted it, and the store learns when this
	 * server's last granted call was, as from a restart.
	 */
	unbroken = snowid_claim_extend(state->gen, fence_ms, true);
	if (!unbroken)
		request.confirmed_ms = snowid_recall_confirmed();

	snowid_store->claim(snowid_store_target, &request, &result);
	snowid_recall_note(&request, &result);
	/* no longer this server's, whoever claimed under its name */
	if (result.status == SNOWID_STORE_FAILED && result.not_holder)
		result.status = SNOWID_STORE_REFUSED;

	switch (result.status)
	{
		case SNOWID_STORE_OK:
			if (!unbroken)
				(void) snowid_claim_extend(state->gen, fence_ms, false);
			if (failing)
				ereport(LOG,
						(errmsg("snowid checked in worker id %d of datacenter %d with %s again",
								state->worker_id, request.datacenter_id,
								result.where)));
			failing = false;
			return true;

		case SNOWID_STORE_REFUSED:
			failing = false;
			/* the cache no longer names it, so no restart re-asserts it */
			snowid_worker_forget_cached(state->worker_id);
			if (snowid_lease_drop(state->gen, SNOWID_DROP_LOST, &worker_id,
								  &final_ms))
				ereport(WARNING,
						(errcode(ERRCODE_OBJECT_IN_USE),
						 errmsg("snowid stopped issuing ids with worker id %d of datacenter %d",
								worker_id, request.datacenter_id),
						 errdetail("%s", snowid_checkin_refusal(&result)),
						 result.not_holder ?
						 errhint("Once sure that no other server claims under this server's holder name \"%s\", an administrator resets the secret of that name (doc/security.md, \"Holder secrets\"); this server then claims again at its next id.  Its ids so far lie below %s.",
								 identity,
								 snowid_unix_ms_text(final_ms + snowid_layout.epoch_ms)) :
						 errhint("This server claims another worker id at its next id, once the store grants one; its ids so far lie below %s.",
								 snowid_unix_ms_text(final_ms + snowid_layout.epoch_ms))));
			return true;

		default:
			/* a holder that went quiet across a loss is a new claimant */
			lapsed = result.status == SNOWID_STORE_QUIET && !unbroken;
			if (!failing)
				ereport(WARNING,
						(errcode(snowid_store_status_errcode(result.status)),
						 errmsg("snowid could not check in worker id %d of datacenter %d with %s",
								state->worker_id, request.datacenter_id,
								result.where),
						 lapsed ?
						 errdetail("%s may have forgotten claims and grants none until its quiet period ends, and this server's last check-in lies past its check-in fence, so its claim counts as a new one.",
								   snowid_store->title_start) :
						 errdetail("%s", result.message[0] != '\0' ?
								   result.message : "The store did not answer."),
						 lapsed ?
						 errhint("This server issues no ids until the quiet period ends and its claim is granted again; it checks in again every second.") :
						 errhint("This server goes on issuing ids as long as it keeps checking in; it checks in again every second until the store answers.")));
			failing = true;
			return false;
	}
}

/*
 * snowid_checkin_refusal
 *		Why the store refused a check-in, a sentence for the DETAIL
 *		(palloc'd).
 */
static char *
snowid_checkin_refusal(const SnowidStoreResult *result)
{
	if (result->not_holder)
		return psprintf("%s refused this server's holder secret: another secret is registered for this server's name, so another server claimed under it after the store forgot the claim, and the id may be that server's now.",
						snowid_store->title_start);
	return psprintf("%s refused this server's claim on it (%s): it forgot the claim and gave the id to another server meanwhile.",
					snowid_store->title_start,
					result->message[0] != '\0' ? result->message :
					"held by another server");
}
