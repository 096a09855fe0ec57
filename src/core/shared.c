/*-------------------------------------------------------------------------
 *
 * shared.c
 *	  The generator's shared state (its struct is in shared.h, grouped by
 *	  the lock that protects each field) and the arithmetic its files
 *	  share.  Nothing here takes a lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "core/clock.h"
#include "core/shared.h"

SnowidShared *snowid_shared = NULL;

/*
 * snowid_clock_ms
 *		The wall clock in milliseconds since the layout's epoch.
 */
int64
snowid_clock_ms(void)
{
	return snowid_unix_ms() - snowid_layout.epoch_ms;
}

/*
 * snowid_clock_ms_quick
 *		The same, read as the TSC allows (snowid_unix_ms_quick()): the clock
 *		of every id.
 */
int64
snowid_clock_ms_quick(void)
{
	return snowid_unix_ms_quick() - snowid_layout.epoch_ms;
}

/*
 * snowid_last_position
 *		The last position of millisecond ms, or -1 for a negative ms.  Never
 *		beyond max_ms, the layout's last millisecond, and never the largest int64, so
 *		that the position after it can always be computed.
 */
int64
snowid_last_position(int64 ms, int64 max_ms)
{
	int			seq_bits = snowid_layout.sequence_bits;

	if (ms < 0)
		return -1;
	ms = Min(ms, max_ms);
	return Min((ms << seq_bits) | SNOWID_FIELD_MAX(seq_bits),
			   PG_INT64_MAX - 1);
}
