/*-------------------------------------------------------------------------
 *
 * coordinator.h
 *	  What the generator asks of whoever gives it a worker id: the small
 *	  interface through which the coordination layer (src/coord) serves
 *	  the core, which knows nothing of where a worker id comes from.  The
 *	  coordination layer fills a SnowidCoordinator and installs it with
 *	  snowid_set_coordinator() (generator.c) from _PG_init.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_COORDINATOR_H
#define SNOWID_CORE_COORDINATOR_H

/* Where the worker id of this server came from */
typedef enum SnowidWorkerSource
{
	SNOWID_WORKER_NONE = 0,
	SNOWID_WORKER_CONFIG,
	SNOWID_WORKER_CLAIM,		/* claimed for good from the coordinator */
	SNOWID_WORKER_LEASE			/* on lease from the coordinator
								 * (snowid.worker_lease) */
} SnowidWorkerSource;

/* A lease's token: 16 hex digits and the terminating NUL (lease.h) */
#define SNOWID_LEASE_TOKEN_LEN		17

/* A resolved worker id, as the coordinator hands it to the generator */
typedef struct SnowidWorkerClaim
{
	int			worker_id;
	SnowidWorkerSource source;
	int64		floor_ms;		/* ms since the epoch: every id issued with
								 * it before lies below; 0 if none was */
	int64		fence_ms;		/* ms since the epoch: ids may be issued
								 * below it until the coordinator confirms
								 * the id again (a lease's fence, a claim
								 * for good's check-in fence);
								 * PG_INT64_MAX for none */
	/* on lease only (source SNOWID_WORKER_LEASE): */
	int64		lease_expires_ms;	/* Unix ms, by this server's clock */
	int64		lease_deadline_ms;	/* when the lease runs out by this
									 * server's monotonic clock: a lease
									 * past the sending of the call that
									 * granted it (the store's lease ran
									 * from later) */
	char		token[SNOWID_LEASE_TOKEN_LEN];	/* of the claim */
} SnowidWorkerClaim;

typedef struct SnowidCoordinator
{
	/*
	 * While shared memory is initialised (in the postmaster, no I/O): the
	 * worker id known without asking anyone, or -1 and SNOWID_WORKER_NONE
	 * to resolve it on first use.
	 */
	void		(*startup) (int *worker_id, SnowidWorkerSource *source);

	/*
	 * On first use, in one process at a time: a worker id (and its floor
	 * and fence), or an ereport(ERROR) saying why there is none.
	 */
	void		(*resolve) (SnowidWorkerClaim *claim);
} SnowidCoordinator;

extern void snowid_set_coordinator(const SnowidCoordinator *coordinator);

#endif							/* SNOWID_CORE_COORDINATOR_H */
