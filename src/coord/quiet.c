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

static char *snowid_quiet_hint(void);

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
 *		The hint of a claim refused in a quiet period: what is always safe
 *		first (the claim succeeds by itself at the time the message names),
 *		then the administrator's end of the quiet period as a decision of
 *		theirs, by the page that says when it applies, never as a command
 *		to copy: the store cannot tell a restart that kept its claims from
 *		one that lost some, nor can this server (the refusal names only a
 *		time, and the record a store makes after a loss is later than any
 *		a holder saw), and ending the quiet period after a loss grants an
 *		id a running server may still issue with.  Marking the datacenter
 *		brand new is no remedy here: the refused claim wrote its state
 *		record, after which the store refuses that mark.
 */
static char *
snowid_quiet_hint(void)
{
	return psprintf("Call again after that time: the claim then succeeds by itself, and servers already issuing ids go on meanwhile.  Ending the quiet period sooner is an administrator's decision, only for a store known to have lost nothing, such as a brand-new datacenter or a planned restart that kept every write; it is never safe after a loss or a restore from an older copy (%s).",
					snowid_store->quiet_doc);
}

/*
 * snowid_report_quiet
 *		Reports at elevel (ERROR: does not return) a claim the store refused
 *		in a quiet period: it may have forgotten claims, and grants no new
 *		worker id until every holder has had time to re-assert its own.
 *		The time is the store's, whatever it is: one further off than any
 *		quiet period lasts is said to be so.  The hint says to wait, and
 *		where the administrator's end of the quiet period is explained; the
 *		message names no store's host or key, so every client reads it
 *		whole.
 */
void
snowid_report_quiet(int elevel, const SnowidStoreRequest *request,
					const SnowidStoreResult *result)
{
	ereport(elevel,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("snowid cannot claim a worker id of datacenter %d until %s",
					request->datacenter_id,
					snowid_unix_ms_text(result->retry_ms)),
			 errdetail("%s may have forgotten claims: it restarted or failed over, which it cannot tell from a loss of its data, a restore from an older copy or a failover to a copy that missed writes, or this datacenter is new to it and no administrator marked it so.  It grants no worker id until every server that held one has had time to re-assert it, and then none below the ids such a server may have issued.%s",
					   snowid_store->title_start,
					   snowid_store_quiet_fits(request, result->retry_ms) ? "" :
					   "  That time lies further off than any quiet period of a snowid server lasts: a caller declared an impossible one to a store of an earlier release, or the store's clock is wrong."),
			 errhint("%s", snowid_quiet_hint())));
}
