/*-------------------------------------------------------------------------
 *
 * stores.h
 *	  The claim stores this build knows (stores.c), found by the scheme of
 *	  snowid.coordinator_url or by name, with the settings of each; and
 *	  the refusal of a URL of a store this build was made without.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_STORES_H
#define SNOWID_STORES_H

#include "coord/store.h"
#include "setting_table.h"

extern const SnowidStore *snowid_store_for_url(const char *url);
extern const SnowidStore *snowid_store_named(const char *name);
extern const char *snowid_store_schemes(void);
extern const char *snowid_store_names(void);
extern int	snowid_store_count(void);
extern const SnowidSetting *snowid_store_settings(int i, int *count);
extern bool snowid_store_missing(const char *setting, const char *name,
								 const char *url);

#endif							/* SNOWID_STORES_H */
