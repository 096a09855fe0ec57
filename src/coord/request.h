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

/* The margin a quiet period adds (the forgetting rule, coord/store.h) */
#define SNOWID_QUIET_MARGIN_MS		1000

/*
 * The most snowid.clock_margin may be, ms: the stores refuse a wider one
 * (snowid.lua, snowid_coordinator)
 */
#define SNOWID_CLOCK_MARGIN_MAX_MS	3600000

extern int	snowid_worker_id;
extern int	snowid_checkin_interval_ms;
extern int	snowid_clock_margin_ms;
extern int	snowid_coordinator_timeout_ms;
extern int	snowid_worker_lease_ms;
extern bool snowid_release_on_shutdown;

extern void snowid_worker_identity(char *identity, size_t len);
extern bool snowid_client_sees_store(void);
extern void snowid_coord_request(SnowidStoreRequest *request, char *identity,
								 size_t len);
extern void snowid_coord_request_times(SnowidStoreRequest *request);
extern int64 snowid_quiet_ms(void);

#endif							/* SNOWID_COORD_REQUEST_H */
