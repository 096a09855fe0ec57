/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The wall clock and the monotonic clock, in milliseconds.  No state,
 *	  no locking.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "core/clock.h"

/*
 * snowid_unix_ms
 *		This server's wall clock in Unix ms.
 */
int64
snowid_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * snowid_monotonic_ms
 *		Milliseconds on a clock that never steps, to measure waits with: a
 *		wall clock stepped back during a wait would stretch it.
 */
int64
snowid_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
