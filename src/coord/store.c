/*-------------------------------------------------------------------------
 *
 * store.c
 *	  What every claim store shares (coord/store.h): the store in use,
 *	  the checks of what a store answered, so that a worker id, floor or
 *	  fence it has no reason to give is never taken on its word, and a
 *	  report of how a call ended sent where it may go.  Nothing here talks
 *	  to a store; no locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "coord/store.h"

/* Set by the settings (snowid.coordinator_url, snowid.redis_url) */
const SnowidStore *snowid_store = NULL;
const void *snowid_store_target = NULL;

static void snowid_store_send(int elevel, const SnowidStoreReport *report);

/*
 * snowid_store_claim_fits
 *		Whether a claim's grant is one the request can get: a worker id of
 *		the layout (the configured one, if set), and a floor (the fence the
 *		claim found) at or below where this server can start now.
 */
bool
snowid_store_claim_fits(const SnowidStoreRequest *request, int64 worker_id,
						int64 floor_ms)
{
	return worker_id >= 0 && worker_id <= request->max_worker_id &&
		(request->explicit_worker_id < 0 ||
		 worker_id == request->explicit_worker_id) &&
		floor_ms >= 0 && floor_ms <= request->usable_ms;
}

/*
 * snowid_store_fenced_fits
 *		Whether a claim refused as fenced names a worker id of the layout
 *		and a fence past where this server can start now (else the id would
 *		have been granted).  The caller still tells a fence past the
 *		plausible (request->plausible_ms) apart: no snowid server wrote it.
 */
bool
snowid_store_fenced_fits(const SnowidStoreRequest *request, int64 worker_id,
						 int64 fence_ms)
{
	return worker_id >= 0 && worker_id <= request->max_worker_id &&
		fence_ms > request->usable_ms;
}

/*
 * snowid_store_quiet_fits
 *		Whether a claim refused in a quiet period (the forgetting rule)
 *		names an end no further off than any quiet period lasts.
 */
bool
snowid_store_quiet_fits(const SnowidStoreRequest *request, int64 until_ms)
{
	return until_ms > 0 &&
		until_ms <= request->plausible_ms + SNOWID_QUIET_MAX_MS;
}

/*
 * snowid_store_lease_fits
 *		Whether a lease claim's grant is one the request can get: a worker
 *		id of the layout, the lease asked for, a fence past the floor, the
 *		floor within what the caller can wait for, and the fence no further
 *		than a lease past the floor or the caller's generator.
 */
bool
snowid_store_lease_fits(const SnowidLeaseRequest *request,
						const SnowidLeaseGrant *grant)
{
	const SnowidStoreRequest *claim = request->claim;

	return grant->worker_id >= 0 && grant->worker_id <= claim->max_worker_id &&
		grant->floor_ms >= 0 && grant->fence_ms > grant->floor_ms &&
		grant->left_ms == request->lease_ms &&
		/* as differences: a store's numbers may be near any int64's */
		grant->floor_ms - request->wait_ms <= claim->usable_ms &&
		grant->fence_ms - request->lease_ms <= Max(claim->client_ms,
												   grant->floor_ms);
}

/*
 * snowid_store_renewal_fits
 *		Whether a renewal's grant is one the request can get: the id
 *		renewed, the lease asked for, and a fence past the floor and at
 *		least the one asked for.  A fence past the one asked for, which no
 *		holder of this claim wrote, is not taken: grant->refused_fence_ms
 *		keeps it for the caller to report, and the grant keeps the fence
 *		asked for, which the store holds at least.
 */
bool
snowid_store_renewal_fits(const SnowidLeaseRequest *request,
						  SnowidLeaseGrant *grant)
{
	if (grant->worker_id != request->worker_id || grant->floor_ms < 0 ||
		grant->fence_ms <= grant->floor_ms ||
		grant->fence_ms < request->fence_ms ||
		grant->left_ms != request->lease_ms)
		return false;
	grant->refused_fence_ms = 0;
	if (grant->fence_ms > request->fence_ms)
	{
		grant->refused_fence_ms = grant->fence_ms;
		grant->fence_ms = request->fence_ms;
	}
	return true;
}

/*
 * snowid_store_status_errcode
 *		The SQLSTATE of a call that ended with status, for the WARNING of a
 *		background worker's check-in or renewal (a claim reports the
 *		store's own, through its report function): as the stores report
 *		them, 08006 not reached, 53400 all held, 55006 quiet or another
 *		server's, 08000 anything else.
 */
int
snowid_store_status_errcode(SnowidStoreStatus status)
{
	switch (status)
	{
		case SNOWID_STORE_UNREACHABLE:
			return ERRCODE_CONNECTION_FAILURE;
		case SNOWID_STORE_ALL_HELD:
			return ERRCODE_INSUFFICIENT_RESOURCES;
		case SNOWID_STORE_QUIET:
		case SNOWID_STORE_REFUSED:
			return ERRCODE_OBJECT_IN_USE;
		default:
			return ERRCODE_CONNECTION_EXCEPTION;
	}
}

/*
 * snowid_store_emit
 *		Sends a report at elevel (with ERROR, does not return).  What a
 *		report says of a store (its hosts and ports, its keys, the
 *		identities of servers, its replies) reaches a client only if
 *		client_sees_store: a role that may read the store's URL.  For any
 *		other client full goes to the server log only, and an error reaches
 *		the client as brief: its SQLSTATE and a message that names no host,
 *		port, key or identity, with a detail that sends it to the server
 *		log.  A role without privileges that happens to run the first claim
 *		after a start learns the outcome, not the topology.
 */
void
snowid_store_emit(int elevel, bool client_sees_store,
				  const SnowidStoreReport *full,
				  const SnowidStoreReport *brief)
{
	if (client_sees_store)
	{
		snowid_store_send(elevel, full);
		return;
	}
	snowid_store_send(LOG_SERVER_ONLY, full);
	if (elevel >= ERROR)
		snowid_store_send(elevel, brief);
}

/*
 * snowid_store_send
 *		Sends one report at elevel.
 */
static void
snowid_store_send(int elevel, const SnowidStoreReport *report)
{
	ereport(elevel,
			(errcode(report->sqlstate),
			 errmsg_internal("%s", report->message),
			 report->detail ? errdetail_internal("%s", report->detail) : 0,
			 report->hint ? errhint("%s", report->hint) : 0));
}
