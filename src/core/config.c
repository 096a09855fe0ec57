/*-------------------------------------------------------------------------
 *
 * config.c
 *	  The core's settings, with their defaults.  Written while the
 *	  settings are defined and checked at server start, read without a
 *	  lock afterwards.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "core/config.h"
#include "core/mark.h"

/* The bit widths are set by the snowid.*_bits settings at server start */
SnowidLayout snowid_layout = {
	.epoch_ms = SNOWID_DEFAULT_EPOCH_MS,
	.timestamp_bits = SNOWID_ID_BITS - SNOWID_DEFAULT_DATACENTER_BITS -
	SNOWID_DEFAULT_WORKER_BITS - SNOWID_DEFAULT_SEQUENCE_BITS,
	.datacenter_bits = SNOWID_DEFAULT_DATACENTER_BITS,
	.worker_bits = SNOWID_DEFAULT_WORKER_BITS,
	.sequence_bits = SNOWID_DEFAULT_SEQUENCE_BITS
};
int			snowid_datacenter_id = 0;
int			snowid_max_drift_ms = SNOWID_MAX_DRIFT_DEFAULT_MS;
int			snowid_max_wait_ms = 2000;
