/*-------------------------------------------------------------------------
 *
 * quiet.h
 *	  The forgetting rule, the holder's side of a claim refused in a quiet
 *	  period (quiet.c): the wait for its end, and the report.  The store's
 *	  side is coord/store.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_QUIET_H
#define SNOWID_COORD_QUIET_H

#include "coord/store.h"

extern bool snowid_quiet_wait(const SnowidStoreResult *result,
							  int64 *waited_ms);
extern void snowid_report_quiet(int elevel, const SnowidStoreRequest *request,
								const SnowidStoreResult *result);

#endif							/* SNOWID_COORD_QUIET_H */
