/*-------------------------------------------------------------------------
 *
 * request.h
 *	  The coordination layer's settings and what every call to the claim
 *	  store asks for (request.c): as whom, for what, within how long.  The
 *	  glue defines the settings as GUCs over these variables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_REQUEST_H
#define SNOWID_COORD_REQUEST_H

#include "coord/store.h"

extern int	snowid_worker_id;
extern int	snowid_coordinator_timeout_ms;
extern int	snowid_worker_lease_ms;
extern bool snowid_release_on_shutdown;

extern void snowid_worker_identity(char *identity, size_t len);
extern bool snowid_client_sees_store(void);
extern void snowid_coord_request(SnowidStoreRequest *request, char *identity,
								 size_t len);

#endif							/* SNOWID_COORD_REQUEST_H */
