/*-------------------------------------------------------------------------
 *
 * deadline.c
 *	  The deadline of a call to a coordinator (a Redis claim, a call to a
 *	  coordination database), on the monotonic clock, and the cancellable
 *	  waits within it: a nap, and a wait on a connection's socket, which
 *	  both stores' connections make.  See deadline.h.  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"

#include "util/deadline.h"

/*
 * snowid_deadline_start
 *		Starts the clock of a call that must end within timeout_ms; its
 *		waits show wait_event_info.
 */
void
snowid_deadline_start(SnowidDeadline *deadline, int timeout_ms,
					  uint32 wait_event_info)
{
	INSTR_TIME_SET_CURRENT(deadline->start);
	deadline->timeout_ms = timeout_ms;
	deadline->wait_event_info = wait_event_info;
}

/*
 * snowid_deadline_elapsed
 *		Milliseconds since the call started.
 */
double
snowid_deadline_elapsed(const SnowidDeadline *deadline)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, deadline->start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * snowid_deadline_remaining
 *		Milliseconds left before the deadline, 0 once it has passed.  The
 *		monotonic clock: a step of the wall clock neither ends nor extends a
 *		call.
 */
long
snowid_deadline_remaining(const SnowidDeadline *deadline)
{
	instr_time	now;
	double		elapsed;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, deadline->start);
	elapsed = INSTR_TIME_GET_MILLISEC(now);
	if (elapsed >= deadline->timeout_ms)
		return 0;
	/* round up, so that a wait never ends just before the deadline */
	return (long) (deadline->timeout_ms - elapsed) + 1;
}

/*
 * snowid_deadline_nap
 *		Sleeps ms, cancellably and shown as the deadline's wait event, if
 *		more than twice that is left before the deadline (time to sleep and
 *		try again); else returns false at once.
 */
bool
snowid_deadline_nap(const SnowidDeadline *deadline, long ms)
{
	CHECK_FOR_INTERRUPTS();
	if (snowid_deadline_remaining(deadline) <= 2 * ms)
		return false;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, deadline->wait_event_info);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return true;
}

/*
 * snowid_deadline_wait_socket
 *		Waits until sock is ready for events (WL_SOCKET_READABLE and/or
 *		WL_SOCKET_WRITEABLE), shown as the deadline's wait event; false once
 *		the deadline has passed first.  A cancel, terminate or shutdown
 *		raises its error here, and the postmaster's death ends the process.
 */
bool
snowid_deadline_wait_socket(const SnowidDeadline *deadline, pgsocket sock,
							int events)
{
	for (;;)
	{
		long		remaining;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		remaining = snowid_deadline_remaining(deadline);
		if (remaining <= 0)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   events | WL_LATCH_SET | WL_TIMEOUT |
							   WL_EXIT_ON_PM_DEATH,
							   sock, remaining, deadline->wait_event_info);
		if (rc & WL_LATCH_SET)
			ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (rc & events)
			return true;
	}
}
