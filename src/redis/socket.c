/*-------------------------------------------------------------------------
 *
 * socket.c
 *	  Waiting on a Redis connection's socket within the call's deadline
 *	  (util/deadline.h): each wait is cancellable (CHECK_FOR_INTERRUPTS()
 *	  raises its error from inside it) and shown as the deadline's wait
 *	  event.  No locking applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <hiredis/hiredis.h>

#include "redis/socket.h"

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
	if (snowid_deadline_wait_socket(conn->deadline, conn->context->fd, events))
		return true;
	snowid_redis_fail(result, SNOWID_REDIS_UNREACHABLE,
					  "The claim did not complete within snowid.redis_timeout_ms (%d ms).",
					  conn->deadline->timeout_ms);
	return false;
}
