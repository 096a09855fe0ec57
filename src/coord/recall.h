/*-------------------------------------------------------------------------
 *
 * recall.h
 *	  The forgetting rule, what this server remembers of its store
 *	  (recall.c): the state record it saw last, which every call sends, and
 *	  what snowid_status() shows of the store's forgetting.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_RECALL_H
#define SNOWID_COORD_RECALL_H

#include "coord/store.h"

/* What this server knows of its store's forgetting, for snowid_status() */
typedef struct SnowidRecallStatus
{
	SnowidStoreSeen seen;		/* the state record seen last; generation 0
								 * for none */
	int64		answered_ms;	/* Unix ms: the store last answered a call of
								 * this server (claim, check-in, renewal); 0
								 * for never since the start */
	int64		forgot_ms;		/* Unix ms: this server last found that the
								 * store had made a new state record (it may
								 * have forgotten) and re-asserted its id
								 * into it; 0 for never since the start */
	int64		reassertions;	/* how often, since the start */
	int64		quiet_until_ms; /* Unix ms: the end of the last quiet period
								 * that refused a claim of this server; 0
								 * for none */
	int64		confirmed_ms;	/* Unix ms by this server's clock: when it
								 * sent its last call the store granted
								 * (claim, check-in, renewal), kept across
								 * restarts; 0 for unknown */
} SnowidRecallStatus;

extern void snowid_recall_shmem_request(void);
extern void snowid_recall_shmem_init(void);
extern void snowid_recall_seen(SnowidStoreSeen *seen);
extern void snowid_recall_note(const SnowidStoreRequest *request,
							   const SnowidStoreResult *result);
extern int64 snowid_recall_confirmed(void);
extern void snowid_recall_status(SnowidRecallStatus *status);

#endif							/* SNOWID_COORD_RECALL_H */
