/*-------------------------------------------------------------------------
 *
 * generator.h
 *	  The one id generator of a server, in shared memory (generator.c),
 *	  and what a status call reads of it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_GENERATOR_H
#define SNOWID_CORE_GENERATOR_H

#include "core/config.h"
#include "core/coordinator.h"

extern void snowid_generator_preload(void);
extern Size snowid_shmem_size(void);
extern void snowid_shmem_init(void);
extern void snowid_shmem_detach(void);
extern void snowid_require_shmem(void);
extern int64 snowid_take(int want, int *got, int64 *node_bits);
extern void snowid_prepare_backend(const char *function);
extern int64 snowid_generator_ms(void);
extern int64 snowid_usable_ms(void);
extern uint64 snowid_instance(void);
extern int	snowid_last_worker_id(void);

/* A copy of the generator's state for snowid_status() */
typedef struct SnowidStatus
{
	int			datacenter_id;
	int			worker_id;		/* -1 until known */
	SnowidWorkerSource worker_source;
	int64		last_ms;		/* ms of the last id issued, -1 if none */
	int64		clock_ms;		/* the wall clock when the copy was made */
	int64		high_water_ms;	/* persisted mark, ms since the epoch */
	uint64		ids_issued;
	uint64		waits;
	uint64		clock_steps;
	uint64		clock_errors;
	int64		fence_ms;		/* lease fence, ms since the epoch; -1 */
	int64		lease_expires_ms;	/* Unix ms by this server's clock; 0 */
	uint64		renewals;
	uint64		renewal_failures;
} SnowidStatus;

extern void snowid_get_status(SnowidStatus *status);

#endif							/* SNOWID_CORE_GENERATOR_H */
