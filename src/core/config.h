/*-------------------------------------------------------------------------
 *
 * config.h
 *	  The settings the core runs with (config.c), fixed at server start:
 *	  the layout of ids, the datacenter id, and how far the generator may
 *	  run ahead of the clock or wait for it.  The glue defines them as
 *	  GUCs over these variables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_CONFIG_H
#define SNOWID_CORE_CONFIG_H

#include "core/layout.h"

extern SnowidLayout snowid_layout;
extern int	snowid_datacenter_id;
extern int	snowid_max_drift_ms;
extern int	snowid_max_wait_ms;

#endif							/* SNOWID_CORE_CONFIG_H */
