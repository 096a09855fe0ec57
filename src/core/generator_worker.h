/*-------------------------------------------------------------------------
 *
 * generator_worker.h
 *	  The generator's worker id (generator_worker.c): resolving it through
 *	  the coordinator, making a claimed floor durable, and what the lease
 *	  renewer and the check-in (src/coord) do with it: read it, extend its
 *	  fence, drop it, count renewals, claim one in the background.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_GENERATOR_WORKER_H
#define SNOWID_CORE_GENERATOR_WORKER_H

#include "core/coordinator.h"

/* The generator as the lease renewer sees it */
typedef struct SnowidLeaseState
{
	int			worker_id;		/* -1 for none */
	uint32		gen;			/* changes when the worker id comes or goes */
	int64		next_ms;		/* first ms the generator may issue next, or
								 * the clock if later, since the epoch */
	int64		high_water_ms;
	bool		claiming;		/* a claim is under way */
	bool		releasing;		/* a give-back is under way */
	bool		released;		/* given back until a restart */
	int64		deadline_ms;	/* the lease runs out then, by the
								 * monotonic clock */
	int64		fence_ms;		/* no id at or past this ms until the
								 * coordinator confirms the id again */
	char		token[SNOWID_LEASE_TOKEN_LEN];	/* of the lease's claim */
} SnowidLeaseState;

/* What snowid_lease_drop() does with the worker id */
typedef enum SnowidLeaseDrop
{
	SNOWID_DROP_LOST,			/* another server has it: claim another */
	SNOWID_DROP_GIVE_BACK,		/* given back at shutdown: no claim until
								 * snowid_lease_given_back() */
	SNOWID_DROP_RELEASE			/* given back for good, until a restart */
} SnowidLeaseDrop;

extern void snowid_lease_state(SnowidLeaseState *state);
extern bool snowid_lease_extend(uint32 gen, int64 fence_ms,
								int64 expires_ms, int64 deadline_ms);
extern bool snowid_lease_drop(uint32 gen, SnowidLeaseDrop how,
							  int *worker_id, int64 *final_ms);
extern void snowid_lease_given_back(void);
extern bool snowid_claim_extend(uint32 gen, int64 fence_ms, bool unbroken);
extern void snowid_lease_count(bool ok);
extern struct ErrorData *snowid_background_claim(void);

/* For the coordinator: a claimed floor made durable before it is relied on */
extern void snowid_reserve_floor(int64 floor_ms);

/* For generator.c: the worker id, at start and on first use */
extern void snowid_startup_worker(int *worker_id, SnowidWorkerSource *source);
extern int64 snowid_resolve_worker(void);

#endif							/* SNOWID_CORE_GENERATOR_WORKER_H */
