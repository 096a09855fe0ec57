/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Worker ids on lease (snowid.worker_lease): taking one from the claim
 *	  store, the background worker that renews it every third of a lease
 *	  and moves its fence ahead, and giving it back.
 *
 * Next to its holder, the store keeps a fence per worker id (coord/store.h):
 * a time in the ids' own clock below which lie all ids that any holder of
 * the id has issued or may issue.  The generator never issues an id at or
 * past the fence it last had confirmed by the store, and a server that takes
 * the id over starts at or above the fence it finds.  So reuse never repeats
 * an id, whatever the servers' clocks say: a lease runs out by the store's
 * clock, and a holder cut off from the store stops at its fence, which the
 * next holder starts above.  A renewal succeeds only while this server still
 * holds the id; a server that finds it taken stops using it at once and
 * claims another (the generator switches at a millisecond boundary).
 *
 * A holder acts on its lease only within its own deadline: a lease past the
 * sending of the call that granted or last renewed it, by the monotonic
 * clock (the store's lease ran from later).  Past it (the server was
 * stopped, or cut off, for longer than a lease) the lease is over whatever
 * the store may say: the id is dropped without a renewal, and the next call
 * is a new claim, held to every rule of a new grant.  A renewal sent just
 * before the deadline that reaches the store after its lease ran out is
 * refused there.
 *
 * The store sees one call per server per third of a lease, from the lease
 * worker; generating ids never waits for the store.  A claim runs in whichever
 * process needs the id first (the lease renewer at start and after a loss,
 * or a backend), one at a time through the generator's "claiming" flag.
 *
 * No lock of its own: the generator's state is read and changed only
 * through core/generator_worker.h, under its mutex; the rest is the
 * worker's own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "coord/lease.h"
#include "coord/quiet.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "core/clock.h"
#include "core/generator.h"
#include "core/generator_worker.h"
#include "core/wait_events.h"
#include "util/bgworker.h"

/* A failed renewal or claim is tried again after at most this long */
#define SNOWID_LEASE_RETRY_MS	1000

PGDLLEXPORT void snowid_lease_main(Datum arg);

static void snowid_lease_request(SnowidLeaseRequest *request,
								 SnowidStoreRequest *claim,
								 char *identity, size_t len,
								 const char *token);
static void snowid_lease_new_token(char *token);
static void snowid_lease_give_back_ended(int code, Datum arg);
static bool snowid_lease_renew(const SnowidLeaseState *state);
static void snowid_lease_claim_failed(ErrorData *edata, int *last_code);

/*
 * snowid_lease_register
 *		Registers the lease renewer; called from _PG_init while preloading,
 *		with a lease configured.  It starts once recovery has ended (a
 *		standby issues no ids) and comes back a second after it ends for
 *		any reason but a shutdown.  It connects to no database, only so
 *		that it shows in pg_stat_activity, with its wait events.
 */
void
snowid_lease_register(void)
{
	snowid_bgworker_register("snowid_lease_main", "snowid lease renewer",
							 BGWORKER_SHMEM_ACCESS |
							 BGWORKER_BACKEND_DATABASE_CONNECTION);
}

/*
 * snowid_lease_claim
 *		Takes a worker id on lease from the store, or reports why there is
 *		none.
 *		Called by the generator (through snowid_worker_resolve(), the
 *		coordinator's resolve) in one
 *		process at a time.
 */
void
snowid_lease_claim(SnowidWorkerClaim *claim)
{
	char		identity[SNOWID_IDENTITY_LEN];
	SnowidLeaseRequest request;
	SnowidStoreRequest claim_request;
	SnowidLeaseGrant grant;
	SnowidStoreResult result;
	int64		epoch_ms = snowid_layout.epoch_ms;
	int64		waited_ms = 0;
	int64		sent_ms;
	char	   *fence;

	snowid_lease_new_token(claim->token);
	snowid_lease_request(&request, &claim_request, identity,
						 sizeof(identity), claim->token);
	/* a store in a quiet period (the forgetting rule) is waited for */
	for (;;)
	{
		sent_ms = snowid_monotonic_ms();
		snowid_store->lease_claim(snowid_store_target, &request, &grant,
								  &result);
		snowid_recall_note(&claim_request, &result);
		if (result.status != SNOWID_STORE_QUIET ||
			!snowid_quiet_wait(&result, &waited_ms))
			break;
		snowid_lease_request(&request, &claim_request, identity,
							 sizeof(identity), claim->token);
	}
	if (result.status == SNOWID_STORE_QUIET)
		snowid_report_quiet(ERROR, &claim_request, &result);
	if (result.status != SNOWID_STORE_OK)
	{
		snowid_store->report(ERROR, &claim_request, &result);
		elog(ERROR, "snowid lease claim ended in status %d",
			 (int) result.status);
	}

	claim->worker_id = grant.worker_id;
	claim->source = SNOWID_WORKER_LEASE;
	claim->floor_ms = Max(grant.floor_ms - epoch_ms, 0);
	claim->fence_ms = grant.fence_ms - epoch_ms;
	claim->lease_expires_ms = snowid_unix_ms() + grant.left_ms;
	claim->lease_deadline_ms = sent_ms + grant.left_ms;

	fence = pstrdup(snowid_unix_ms_text(grant.fence_ms));
	if (grant.floor_ms > 0)
		ereport(LOG_SERVER_ONLY,
				(errmsg("snowid took worker id %d of datacenter %d on lease from %s",
						grant.worker_id, claim_request.datacenter_id,
						result.where),
				 errdetail("Ids issued with it before lie below %s; this server's ids lie below %s until the lease is renewed.",
						   snowid_unix_ms_text(grant.floor_ms), fence)));
	else
		ereport(LOG_SERVER_ONLY,
				(errmsg("snowid took worker id %d of datacenter %d on lease from %s",
						grant.worker_id, claim_request.datacenter_id,
						result.where),
				 errdetail("No ids were issued with it before; this server's ids lie below %s until the lease is renewed.",
						   fence)));
}

/*
 * snowid_lease_new_token
 *		A token that names one claim: 64 random bits in hex.
 */
static void
snowid_lease_new_token(char *token)
{
	uint64		bits;

	if (!pg_strong_random(&bits, sizeof(bits)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random lease token")));
	snprintf(token, SNOWID_LEASE_TOKEN_LEN, "%016llx",
			 (unsigned long long) bits);
}

/*
 * snowid_lease_give_back
 *		Stops issuing ids with this server's worker id and gives it back to
 *		the store, fenced just past the last id issued; with park, keeps the
 *		lease instead, its fence lowered the same way, so that this server
 *		takes it back at once when it starts again within the lease (a
 *		clean stop without snowid.release_on_shutdown).  At shutdown the
 *		next start claims again; otherwise (snowid_release_worker()) the
 *		server issues no ids until it restarts.  Returns the worker id given
 *		back, or -1 if there was none.  If the store cannot be reached the lease
 *		runs out by itself, with the fence of the last renewal.
 */
int
snowid_lease_give_back(bool at_shutdown, bool park)
{
	char		identity[SNOWID_IDENTITY_LEN];
	SnowidLeaseRequest request;
	SnowidStoreRequest claim;
	SnowidLeaseState state;
	SnowidStoreResult result;
	SnowidLeaseOutcome outcome;
	int			worker_id;
	int64		final_ms;

	snowid_lease_state(&state);
	snowid_lease_request(&request, &claim, identity, sizeof(identity),
						 state.token);
	if (state.worker_id < 0 ||
		!snowid_lease_drop(state.gen,
						   at_shutdown ? SNOWID_DROP_GIVE_BACK : SNOWID_DROP_RELEASE,
						   &worker_id, &final_ms))
		return -1;

	/* no claim of this server starts until the release has ended */
	PG_ENSURE_ERROR_CLEANUP(snowid_lease_give_back_ended, (Datum) 0);
	{
		request.worker_id = worker_id;
		request.fence_ms = final_ms + snowid_layout.epoch_ms;
		request.park = park;
		outcome = snowid_store->lease_release(snowid_store_target, &request,
											  &result);
	}
	PG_END_ENSURE_ERROR_CLEANUP(snowid_lease_give_back_ended, (Datum) 0);
	snowid_lease_given_back();

	if (outcome == SNOWID_LEASE_OK && park)
		ereport(LOG,
				(errmsg("snowid parked its lease on worker id %d of datacenter %d in %s",
						worker_id, claim.datacenter_id, result.where),
				 errdetail("The fence is lowered to just past the last id issued; this server takes the worker id back if it starts again before the lease runs out.")));
	else if (outcome == SNOWID_LEASE_OK)
		ereport(LOG,
				(errmsg("snowid gave back worker id %d of datacenter %d to %s",
						worker_id, claim.datacenter_id, result.where)));
	else if (outcome == SNOWID_LEASE_LOST)
		ereport(WARNING,
				(errmsg("snowid worker id %d of datacenter %d was no longer this server's lease",
						worker_id, claim.datacenter_id),
				 errdetail("Another server took it over after the lease ran out; this server had stopped using it.")));
	else
		ereport(WARNING,
				(errmsg("snowid could not give back worker id %d of datacenter %d to %s",
						worker_id, claim.datacenter_id, result.where),
				 errdetail("%s", result.message),
				 errhint("This server no longer uses it; another server can take it once its lease runs out.")));
	return worker_id;
}

/*
 * snowid_lease_give_back_ended
 *		Error (or exit) cleanup of a give-back: claims may start again.
 */
static void
snowid_lease_give_back_ended(int code, Datum arg)
{
	snowid_lease_given_back();
}

/*
 * snowid_lease_main
 *		The lease renewer: claims a worker id when the generator has none,
 *		renews the lease every third of it (sooner after a failure), and at
 *		a shutdown gives the id back if snowid.release_on_shutdown says so
 *		(else parks the lease).  Ended by anyone else (a kill,
 *		pg_terminate_backend(), a cancel, an error), it keeps the lease:
 *		the generator goes on issuing below its fence, and the renewer that
 *		the postmaster starts again a second later renews it at once.
 */
void
snowid_lease_main(Datum arg)
{
	int64		interval_ms = Max(snowid_worker_lease_ms / 3, 1);
	int64		retry_ms = Min(interval_ms, SNOWID_LEASE_RETRY_MS);
	int64		due_ms = 0;
	uint32		last_gen;
	int			last_claim_error = 0;
	MemoryContext tick_context;
	SnowidLeaseState start;

	snowid_bgworker_begin();
	snowid_require_shmem();
	/* in pg_stat_activity (as "snowid lease renewer"), in no database */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/* a lease of a renewer that ended is renewed at once */
	snowid_lease_state(&start);
	last_gen = start.gen;

	tick_context = AllocSetContextCreate(TopMemoryContext, "snowid lease",
										 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		SnowidLeaseState state;
		int64		now_ms;
		int64		sleep_ms = interval_ms;

		MemoryContextReset(tick_context);
		MemoryContextSwitchTo(tick_context);

		/*
		 * A reload first: a stop that follows a reload closely finds both
		 * signals here, and gives the id back as the reloaded
		 * snowid.release_on_shutdown says.
		 */
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (snowid_bgworker_stopping())
		{
			/* at a shutdown: give the id back, or park it for a restart */
			if (snowid_bgworker_at_shutdown())
				(void) snowid_lease_give_back(true,
											  !snowid_release_on_shutdown);
			snowid_bgworker_exit();
		}

		snowid_lease_state(&state);
		now_ms = snowid_monotonic_ms();
		if (state.released || state.releasing || state.claiming)
			sleep_ms = retry_ms;
		else if (state.worker_id < 0)
		{
			ErrorData  *edata = snowid_background_claim();

			if (edata != NULL)
			{
				/* a full datacenter is asked again a third of a lease on */
				sleep_ms = (edata->sqlerrcode ==
							ERRCODE_CONFIGURATION_LIMIT_EXCEEDED) ?
					interval_ms : retry_ms;
				snowid_lease_claim_failed(edata, &last_claim_error);
			}
			else
			{
				last_claim_error = 0;
				continue;		/* pick up the new generation */
			}
		}
		else if (state.gen != last_gen)
		{
			/* a new worker id: its first renewal is a third of a lease on */
			last_gen = state.gen;
			due_ms = now_ms + interval_ms;
		}
		else if (now_ms >= due_ms)
		{
			if (snowid_lease_renew(&state))
				due_ms = now_ms + interval_ms;
			else
				due_ms = now_ms + retry_ms;
			continue;			/* a lost id is claimed again at once */
		}
		if (state.worker_id >= 0 && !state.released)
			sleep_ms = Max(Min(sleep_ms, due_ms - now_ms), 1);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) sleep_ms,
						 snowid_wait_event(SNOWID_WAIT_LEASE));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * snowid_lease_renew
 *		Renews the lease once and moves the fence to a lease past where the
 *		generator is.  True if it was renewed; false after a failure (logged
 *		at the first of a row) or if the id was lost (then dropped, so that
 *		the caller claims another).  A lease past its deadline by this
 *		server's monotonic clock is not renewed: it is over, and the id is
 *		dropped as lost.
 */
static bool
snowid_lease_renew(const SnowidLeaseState *state)
{
	static bool failing = false;
	char		identity[SNOWID_IDENTITY_LEN];
	SnowidLeaseRequest request;
	SnowidStoreRequest claim;
	SnowidLeaseGrant grant;
	SnowidStoreResult result;
	SnowidLeaseOutcome outcome;
	int64		epoch_ms = snowid_layout.epoch_ms;
	int			worker_id;
	int64		final_ms;
	int64		sent_ms;

	snowid_lease_request(&request, &claim, identity, sizeof(identity),
						 state->token);
	sent_ms = snowid_monotonic_ms();
	if (sent_ms >= state->deadline_ms)
	{
		failing = false;
		if (snowid_lease_drop(state->gen, SNOWID_DROP_LOST, &worker_id,
							  &final_ms))
			ereport(WARNING,
					(errmsg("snowid lost worker id %d of datacenter %d: its lease ran out before it was renewed",
							worker_id, claim.datacenter_id),
					 errdetail("By this server's own clock the lease ended: the server was stopped, or could not renew it, for longer than the lease.  It stops using the id and claims a worker id anew, as a new server would.")));
		return false;
	}
	request.worker_id = state->worker_id;
	request.fence_ms = state->next_ms + request.lease_ms + epoch_ms;
	outcome = snowid_store->lease_renew(snowid_store_target, &request, &grant,
										&result);
	if (outcome == SNOWID_LEASE_OK)
		snowid_recall_note(&claim, &result);
	switch (outcome)
	{
		case SNOWID_LEASE_OK:
			snowid_lease_count(true);
			(void) snowid_lease_extend(state->gen, grant.fence_ms - epoch_ms,
									   snowid_unix_ms() + grant.left_ms,
									   sent_ms + grant.left_ms);
			if (grant.refused_fence_ms != 0)
				snowid_store->report_refused_fence(&claim, &grant);
			if (failing)
				ereport(LOG,
						(errmsg("snowid renewed the lease on worker id %d again",
								state->worker_id)));
			failing = false;
			return true;

		case SNOWID_LEASE_LOST:
			failing = false;
			if (snowid_lease_drop(state->gen, SNOWID_DROP_LOST, &worker_id,
								  &final_ms))
				ereport(WARNING,
						(errmsg("snowid lost worker id %d of datacenter %d",
								worker_id, claim.datacenter_id),
						 errdetail("It is held by \"%s\" in %s: this server was cut off from it, or stopped, past its lease.  It stops using the id and claims another.",
								   result.holder[0] != '\0' ? result.holder : "nobody",
								   snowid_store->title)));
			return false;

		case SNOWID_LEASE_FAILED:
			snowid_lease_count(false);
			if (!failing)
			{
				SnowidStatus status;

				snowid_get_status(&status);
				ereport(WARNING,
						(errcode(snowid_store_status_errcode(result.status)),
						 errmsg("snowid could not renew the lease on worker id %d in %s",
								state->worker_id, result.where),
						 errdetail("%s", result.message),
						 errhint("Until a renewal succeeds, this server issues ids only before %s.",
								 snowid_unix_ms_text(status.fence_ms + epoch_ms))));
			}
			failing = true;
			return false;
	}
	return false;
}

/*
 * snowid_lease_claim_failed
 *		Logs why the lease renewer could not claim a worker id: as a WARNING
 *		when the reason changed, else only at DEBUG1, so that a full
 *		datacenter does not fill the log.
 */
static void
snowid_lease_claim_failed(ErrorData *edata, int *last_code)
{
	int			elevel = (edata->sqlerrcode == *last_code) ? DEBUG1 : WARNING;

	*last_code = edata->sqlerrcode;
	ereport(elevel,
			(errcode(edata->sqlerrcode),
			 errmsg("snowid could not take a worker id on lease: %s",
					edata->message),
			 edata->detail ? errdetail("%s", edata->detail) : 0,
			 edata->hint ? errhint("%s", edata->hint) : 0));
	FreeErrorData(edata);
}

/*
 * snowid_lease_request
 *		What this server asks the store, with its identity in the given buffer:
 *		claim says where and as whom, as for a permanent claim; token names
 *		the claim made, renewed or given back.
 */
static void
snowid_lease_request(SnowidLeaseRequest *request, SnowidStoreRequest *claim,
					 char *identity, size_t len, const char *token)
{
	snowid_coord_request(claim, identity, len);
	claim->preferred_worker_id = snowid_last_worker_id();
	if (claim->preferred_worker_id > claim->max_worker_id)
		claim->preferred_worker_id = -1;
	memset(request, 0, sizeof(*request));
	request->claim = claim;
	request->lease_ms = snowid_worker_lease_ms;
	request->wait_ms = snowid_max_wait_ms;
	request->token = token;
}
