/*-------------------------------------------------------------------------
 *
 * wait_events.c
 *	  The wait events snowid reports while a session waits, so that
 *	  pg_stat_activity says what for: the clock, the high-water mark file,
 *	  another session's worker id claim, the coordinator, or (the lease renewer) the
 *	  next renewal.  From PostgreSQL 17 on
 *	  they are named (wait_event_type "Extension", wait_event "SnowidClock"
 *	  and so on); before, each shows as wait_event "Extension".
 *
 * The ids are registered by name on first use in each backend and kept in
 * a backend-local cache; registering takes PostgreSQL's own locks, so it
 * must never happen under the generator's spinlock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "core/wait_events.h"

static const char *const snowid_wait_names[SNOWID_WAIT_COUNT] = {
	[SNOWID_WAIT_CLOCK] = "SnowidClock",
	[SNOWID_WAIT_MARK_WRITE] = "SnowidMarkWrite",
	[SNOWID_WAIT_WORKER_CLAIM] = "SnowidWorkerClaim",
	[SNOWID_WAIT_COORDINATOR] = "SnowidCoordinator",
	[SNOWID_WAIT_LEASE] = "SnowidLease",
};

/*
 * snowid_wait_event
 *		The wait event to report for a kind of wait.
 */
uint32
snowid_wait_event(SnowidWait which)
{
	static uint32 events[SNOWID_WAIT_COUNT];

	Assert(which >= 0 && which < SNOWID_WAIT_COUNT);
	if (events[which] == 0)
		events[which] = WaitEventExtensionNew(snowid_wait_names[which]);
	return events[which];
}
