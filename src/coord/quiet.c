/*-------------------------------------------------------------------------
 *
 * quiet.c
 *	  The forgetting rule, the holder's side of a claim refused in a quiet
 *	  period (coord/store.h), the same for every store: the wait for the
 *	  quiet period to end, and the report of the refusal.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"

#include "coord/quiet.h"
#include "core/clock.h"
#include "core/layout.h"
#include "core/wait_events.h"

/*
 * The longest a claim waits for a store's quiet period to end, in all;
 * past it the claim fails with the time it can succeed
 */
#define SNOWID_QUIET_WAIT_MS		60000

/*
 * The shortest wait: a store whose clock runs ahead is asked again a few
 * times before the caller gives up
 */
#define SNOWID_QUIET_WAIT_MIN_MS	250

static char *snowid_quiet_hint(const char *end_quiet);

/*
 * snowid_quiet_wait
 *		After a claim refused in a quiet period: waits until the store's
 *		quiet period should have ended (by this server's clock, which may
 *		differ from the store's by a little: the caller asks again), if
 *		that is no further than SNOWID_QUIET_WAIT_MS from the first refusal,
 *		*waited_ms counting the waits so far.  True if it waited, and the
 *		caller claims again; false if the caller is to report the refusal.
 *		Wakes for a cancel or a shutdown (the latch, CHECK_FOR_INTERRUPTS).
 */
bool
snowid_quiet_wait(const SnowidStoreResult *result, int64 *waited_ms)
{
	int64		wait_ms = result->retry_ms - snowid_unix_ms();

	/* at least a little, so that a store whose clock runs ahead is asked
	 * again a few times before the caller gives up */
	wait_ms = Max(wait_ms, SNOWID_QUIET_WAIT_MIN_MS);
	if (*waited_ms + wait_ms > SNOWID_QUIET_WAIT_MS)
		return false;

	ereport(LOG_SERVER_ONLY,
			(errmsg("snowid waits until %s to claim a worker id from %s",
					snowid_unix_ms_text(result->retry_ms), result->where),
			 errdetail("%s may have forgotten claims: it grants none until every server that held a worker id has had time to re-assert it, and then none below the ids such a server may have issued.",
					   snowid_store->title_start)));
	*waited_ms += wait_ms;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) wait_ms,
					 snowid_wait_event(SNOWID_WAIT_COORDINATOR));
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return true;
}

/*
 * snowid_quiet_hint
 *		The hint of a claim refused in a quiet period: when it can succeed,
 *		and, where the store lost nothing, the administrator's end of the
 *		quiet period, end_quiet (a sentence: the command, or where it is
 *		named).  Marking the datacenter brand new is no remedy here: the
 *		refused claim wrote its state record, after which the store refuses
 *		that mark.
 */
static char *
snowid_quiet_hint(const char *end_quiet)
{
	return psprintf("Call again after that time.  Servers already issuing ids go on.  Where the store lost nothing (the datacenter is brand new, its claims were made by servers of release 1.2 or earlier, or the store restarted or failed over keeping every write), an administrator ends the wait at once: %s  Never after the store lost claims or went back to an older copy: a server may still hold a worker id it has not re-asserted.",
					end_quiet);
}

/*
 * snowid_report_quiet
 *		Reports at elevel (ERROR: does not return) a claim the store refused
 *		in a quiet period: it may have forgotten claims, and grants no new
 *		worker id until every holder has had time to re-assert its own.
 *		The time is the store's, whatever it is: one further off than any
 *		quiet period lasts is said to be so.  The hint names the
 *		administrator's end of the quiet period, and when it is safe; its
 *		command names the store's keys, which only a client that sees the
 *		store reads (snowid_store_emit()).
 */
void
snowid_report_quiet(int elevel, const SnowidStoreRequest *request,
					const SnowidStoreResult *result)
{
	SnowidStoreReport full;
	SnowidStoreReport brief;
	const char *why;

	why = psprintf("%s may have forgotten claims (its data lost, restored from an older copy, or failed over to a copy that missed writes), or this datacenter is new to it and no administrator marked it so; it grants no worker id until every server that held one has had time to re-assert it, and then none below the ids such a server may have issued.%s",
				   snowid_store->title_start,
				   snowid_store_quiet_fits(request, result->retry_ms) ? "" :
				   "  That time lies further off than any quiet period of a snowid server lasts: a caller declared an impossible one to a store of an earlier release, or the store's clock is wrong.");
	full.sqlstate = brief.sqlstate = ERRCODE_OBJECT_IN_USE;
	full.message = brief.message =
		psprintf("snowid cannot claim a worker id of datacenter %d until %s",
				 request->datacenter_id,
				 snowid_unix_ms_text(result->retry_ms));
	full.detail = brief.detail = why;
	full.hint = snowid_quiet_hint(snowid_store->end_quiet_command(request));
	brief.hint = snowid_quiet_hint("the server log names the command.");
	snowid_store_emit(elevel, request->client_sees_store, &full, &brief);
}
