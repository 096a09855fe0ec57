/*-------------------------------------------------------------------------
 *
 * checkin.h
 *	  The forgetting rule, the holder's side (checkin.c): the snowid
 *	  check-in worker that re-asserts a permanent claim, and the report of
 *	  a claim refused in a quiet period.  The store's side is coord/store.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_CHECKIN_H
#define SNOWID_COORD_CHECKIN_H

#include "coord/store.h"

extern void snowid_checkin_register(void);
extern bool snowid_quiet_wait(const SnowidStoreResult *result,
							  int64 *waited_ms);
extern void snowid_report_quiet(int elevel, const SnowidStoreRequest *request,
								const SnowidStoreResult *result);

#endif							/* SNOWID_COORD_CHECKIN_H */
