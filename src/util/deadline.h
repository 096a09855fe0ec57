/*-------------------------------------------------------------------------
 *
 * deadline.h
 *	  The deadline of a call to a coordinator (deadline.c): started once,
 *	  it bounds every wait of the call, on the monotonic clock.  A nap or a
 *	  wait on a socket within it is cancellable: CHECK_FOR_INTERRUPTS()
 *	  raises a cancel's error from inside it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_UTIL_DEADLINE_H
#define SNOWID_UTIL_DEADLINE_H

#include "portability/instr_time.h"

typedef struct SnowidDeadline
{
	instr_time	start;
	int			timeout_ms;
	uint32		wait_event_info;	/* shown while waiting */
} SnowidDeadline;

extern void snowid_deadline_start(SnowidDeadline *deadline, int timeout_ms,
								  uint32 wait_event_info);
extern long snowid_deadline_remaining(const SnowidDeadline *deadline);
extern double snowid_deadline_elapsed(const SnowidDeadline *deadline);
extern bool snowid_deadline_nap(const SnowidDeadline *deadline, long ms);
extern bool snowid_deadline_wait_socket(const SnowidDeadline *deadline,
										pgsocket sock, int events);

#endif							/* SNOWID_UTIL_DEADLINE_H */
