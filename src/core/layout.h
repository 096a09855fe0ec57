/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The bit layout of an id and its arithmetic (layout.c): pure
 *	  functions, usable without shared memory.
 *
 * An id is a positive int64:
 *
 *		0 | timestamp (ms since the epoch) | datacenter | worker | sequence
 *
 * The generator works on a "position": (ms << sequence_bits) | sequence,
 * one number that increases by one for every id it issues.  Turning a
 * position into an id only inserts the datacenter and worker fields.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CORE_LAYOUT_H
#define SNOWID_CORE_LAYOUT_H

#include "datatype/timestamp.h"

#include "compat.h"

/* Twitter's epoch, 2010-11-04 01:42:54.657 UTC, in Unix milliseconds */
#define SNOWID_DEFAULT_EPOCH_MS		INT64CONST(1288834974657)
#define SNOWID_DEFAULT_EPOCH		"2010-11-04 01:42:54.657+00"

#define SNOWID_ID_BITS				63	/* all but the sign bit */
#define SNOWID_MIN_TIMESTAMP_BITS	39	/* about 17 years */

/* At most 24 bits for datacenter, worker and sequence together */
#define SNOWID_MAX_NODE_SEQ_BITS	(SNOWID_ID_BITS - SNOWID_MIN_TIMESTAMP_BITS)

/* The widest datacenter or worker id any layout allows (24 bits) */
#define SNOWID_MAX_ID				((1 << SNOWID_MAX_NODE_SEQ_BITS) - 1)

/* The default layout: 41/5/5/12 */
#define SNOWID_DEFAULT_DATACENTER_BITS	5
#define SNOWID_DEFAULT_WORKER_BITS		5
#define SNOWID_DEFAULT_SEQUENCE_BITS	12

/*
 * 10000-01-01 00:00:00 UTC in Unix milliseconds.  Ids hold times before it
 * whatever the layout, so that decoded times fit a timestamptz, time left
 * fits an interval, and serials always have a four-digit year.
 */
#define SNOWID_END_UNIX_MS			INT64CONST(253402300800000)

#define SNOWID_MS_PER_DAY			INT64CONST(86400000)

/* The bit layout of ids, fixed at server start */
typedef struct SnowidLayout
{
	int64		epoch_ms;		/* Unix ms of timestamp zero */
	int			timestamp_bits;
	int			datacenter_bits;
	int			worker_bits;
	int			sequence_bits;
} SnowidLayout;

/* A decoded id */
typedef struct SnowidParts
{
	int64		ms;				/* since the epoch */
	int			datacenter_id;
	int			worker_id;
	int			sequence;
} SnowidParts;

/* Largest value of a field of the given width (0 to 63 bits) */
#define SNOWID_FIELD_MAX(bits)		((int64) ((UINT64CONST(1) << (bits)) - 1))

/* settings.c: the settings */
extern int64 snowid_compose(const SnowidLayout *layout, int64 position,
							int64 node_bits);
extern int64 snowid_node_bits(const SnowidLayout *layout, int datacenter_id,
							  int worker_id);
extern void snowid_decompose(const SnowidLayout *layout, int64 id,
							 SnowidParts *parts);
extern void snowid_decompose_checked(const SnowidLayout *layout, int64 id,
									 SnowidParts *parts);
extern int64 snowid_max_ms(const SnowidLayout *layout);
extern TimestampTz snowid_unix_ms_to_timestamptz(int64 unix_ms);
extern const char *snowid_unix_ms_text(int64 unix_ms);
extern bool snowid_timestamptz_to_unix_ms(TimestampTz ts, int64 *unix_ms);
extern bool snowid_parse_epoch(const char *value, int64 *unix_ms,
							   const char **problem);
extern char *snowid_layout_string(const SnowidLayout *layout);

#endif							/* SNOWID_CORE_LAYOUT_H */
