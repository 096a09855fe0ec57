/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Worker ids on lease (snowid.worker_lease), the coordination side
 *	  (lease.c): taking one, the snowid lease renewer (a background worker
 *	  that renews it and moves its fence ahead), and giving it back.  The
 *	  store's side is coord/store.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_LEASE_H
#define SNOWID_COORD_LEASE_H

#include "core/coordinator.h"

extern void snowid_lease_register(void);
extern void snowid_lease_claim(SnowidWorkerClaim *claim);
extern int	snowid_lease_give_back(bool at_shutdown, bool park);

#endif							/* SNOWID_COORD_LEASE_H */
