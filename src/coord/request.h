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
#include "core/mark.h"

/*
 * The numbers of the protocol below, and those of core/layout.h,
 * core/mark.h and coord/store.h that the stores check, are the stores' too:
 * snowid.lua and snowid_coordinator name them and the build writes in
 * their values (PROTOCOL_HEADERS of the Makefile, test/tools/protocol).
 */

/* The margin a quiet period adds (the forgetting rule, coord/store.h) */
#define SNOWID_QUIET_MARGIN_MS		1000

/*
 * The most snowid.clock_margin may be, ms: the stores refuse a wider one
 * (snowid.lua, snowid_coordinator), and a generation later than that past
 * their clock; and its default
 */
#define SNOWID_CLOCK_MARGIN_MAX_MS	3600000
#define SNOWID_CLOCK_MARGIN_DEFAULT_MS	60000

/*
 * The most snowid.coordinator_timeout_ms and snowid.checkin_interval may be,
 * and their defaults
 */
#define SNOWID_COORDINATOR_TIMEOUT_MAX_MS	600000
#define SNOWID_CHECKIN_INTERVAL_MAX_MS	3600000
#define SNOWID_COORDINATOR_TIMEOUT_DEFAULT_MS	2000
#define SNOWID_CHECKIN_INTERVAL_DEFAULT_MS	5000

/*
 * The longest quiet period a server declares (snowid_quiet_ms() with every
 * setting at its most: a lease of a day, a coordinator timeout of ten
 * minutes, a drift budget of an hour, and the margin): the stores refuse a
 * longer one as a number no snowid server sends
 */
#define SNOWID_QUIET_DECLARED_MAX_MS \
	(SNOWID_MAX_LEASE_MS + SNOWID_COORDINATOR_TIMEOUT_MAX_MS + \
	 SNOWID_MAX_DRIFT_MS + SNOWID_QUIET_MARGIN_MS)

/* The shortest lease: a third of it must leave time for a renewal */
#define SNOWID_MIN_LEASE_MS		100

/*
 * The shortest quiet period a server declares (snowid_quiet_ms() with every
 * setting at its least: a lease of 100 ms, a coordinator timeout of 1 ms,
 * no drift budget, and the margin): the stores refuse a shorter one, which
 * would let the first call after a loss end the quiet period at once
 */
#define SNOWID_QUIET_DECLARED_MIN_MS \
	(SNOWID_MIN_LEASE_MS + 1 + SNOWID_QUIET_MARGIN_MS)

/*
 * The quiet period the stores take for a call that declares none (a call by
 * hand, a server of release 1.2): a permanent holder's with the default
 * settings (its clock margin: SNOWID_CLOCK_MARGIN_DEFAULT_MS)
 */
#define SNOWID_QUIET_UNDECLARED_MS \
	(SNOWID_CHECKIN_INTERVAL_DEFAULT_MS + \
	 SNOWID_COORDINATOR_TIMEOUT_DEFAULT_MS + SNOWID_MAX_DRIFT_DEFAULT_MS + \
	 SNOWID_QUIET_MARGIN_MS)

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
extern int64 snowid_checkin_fence(int64 from_ms);

#endif							/* SNOWID_COORD_REQUEST_H */
