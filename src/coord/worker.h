/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  Which worker id this server uses (worker.c): configured, claimed for
 *	  good from the claim store, cached from the last claim, or on lease
 *	  (lease.c).
 *	  The generator asks through core/coordinator.h; this layer installs
 *	  itself there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_WORKER_H
#define SNOWID_COORD_WORKER_H

#include "core/coordinator.h"

extern void snowid_coord_install(void);
extern const char *snowid_worker_source_name(SnowidWorkerSource source);
extern void snowid_worker_forget_cached(int worker_id);

#endif							/* SNOWID_COORD_WORKER_H */
