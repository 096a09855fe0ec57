/*-------------------------------------------------------------------------
 *
 * wait_events.h
 *	  What a waiting session shows in pg_stat_activity (wait_events.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_WAIT_EVENTS_H
#define SNOWID_CORE_WAIT_EVENTS_H

typedef enum SnowidWait
{
	SNOWID_WAIT_CLOCK,			/* for the clock to reach the generator */
	SNOWID_WAIT_MARK_WRITE,		/* writing the high-water mark */
	SNOWID_WAIT_WORKER_CLAIM,	/* for another session's worker id claim */
	SNOWID_WAIT_COORDINATOR,	/* on the coordinator, claiming the worker
								 * id */
	SNOWID_WAIT_LEASE,			/* the lease renewer, between renewals */
	SNOWID_WAIT_COUNT
} SnowidWait;

extern uint32 snowid_wait_event(SnowidWait which);

#endif							/* SNOWID_CORE_WAIT_EVENTS_H */
