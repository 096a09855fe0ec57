/*-------------------------------------------------------------------------
 *
 * stores.h
 *	  The claim stores this build knows (stores.c), found by the scheme of
 *	  snowid.coordinator_url.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_STORES_H
#define SNOWID_STORES_H

#include "coord/store.h"

extern const SnowidStore *snowid_store_for_url(const char *url);
extern const char *snowid_store_schemes(void);

#endif							/* SNOWID_STORES_H */
