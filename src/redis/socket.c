/*-------------------------------------------------------------------------
 *
 * socket.c
 *	  The deadline of a call to Redis, and waiting on a connection's
 *	  socket within it: each wait is cancellable (CHECK_FOR_INTERRUPTS()
 *	  raises its error from inside it) and shown as the deadline's wait
 *	  event.  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <hiredis/hiredis.h>

#include "miscadmin.h"
#include "storage/latch.h"

#include "redis/socket.h"

/*
 * snowid_deadline_start
 *		Starts the clock of a claim that must end within timeout_ms; its
 *		waits on the socket show wait_event_info.
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
 *		Milliseconds since the claim started.
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
 *		claim.
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
 * snowid_conn_wait
 *		Waits until the socket is ready for events (WL_SOCKET_READABLE or
 *		WL_SOCKET_WRITEABLE), a cancel or the deadline.  False with result
 *		filled at the deadline; a cancel, terminate or shutdown raises its
 *		error here.
 */
bool
snowid_conn_wait(SnowidRedisConn *conn, int events, SnowidRedisResult *result)
{
	for (;;)
	{
		long		remaining = snowid_deadline_remaining(conn->deadline);
		int			rc;

		CHECK_FOR_INTERRUPTS();
		if (remaining <= 0)
		{
			snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
							  "The claim did not complete within snowid.redis_timeout_ms (%d ms).",
							  conn->deadline->timeout_ms);
			return false;
		}
		rc = WaitLatchOrSocket(MyLatch,
							   events | WL_LATCH_SET | WL_TIMEOUT |
							   WL_EXIT_ON_PM_DEATH,
							   conn->context->fd, remaining,
							   conn->deadline->wait_event_info);
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		if (rc & events)
			return true;
	}
}
