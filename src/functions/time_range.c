/*-------------------------------------------------------------------------
 *
 * time_range.c
 *	  Time ranges as ranges of ids: how many ids wide a span of time is
 *	  (snowid_span), and the time of an id as a scalar (snowid_time), for
 *	  range queries, partition bounds and tools such as pg_partman that
 *	  partition by an integer.
 *
 * With the layout's node and sequence fields n bits wide, every
 * millisecond owns 2^n consecutive ids, starting at snowid_from_time() of
 * that millisecond.  So a span of whole milliseconds is a fixed number of
 * ids, and snowid_from_time(t) + k * snowid_span(d) equals
 * snowid_from_time(t + k * d) for any t and d the layout holds.
 *
 * Nothing here holds a lock or needs shared memory: it is arithmetic on
 * the layout fixed at server start.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "core/config.h"
#include "core/layout.h"

/* microseconds in a millisecond (PostgreSQL 15 has no USECS_PER_MSEC) */
#define SNOWID_US_PER_MS		INT64CONST(1000)

PG_FUNCTION_INFO_V1(snowid_span);
PG_FUNCTION_INFO_V1(snowid_time);

/*
 * snowid_interval_text
 *		An interval as the session prints it, for messages.
 */
static char *
snowid_interval_text(Interval *span)
{
	return DatumGetCString(DirectFunctionCall1(interval_out,
											   IntervalPGetDatum(span)));
}

/*
 * snowid_span
 *		How many ids wide a span of time is under the layout: its
 *		milliseconds times the ids each millisecond owns.  A day counts as
 *		24 hours.  Months have no fixed length, and ids count no fraction
 *		of a millisecond, so those are refused, as are negative spans and
 *		spans longer than the layout's whole time range.
 */
Datum
snowid_span(PG_FUNCTION_ARGS)
{
	Interval   *span = PG_GETARG_INTERVAL_P(0);
	int			node_seq_bits = snowid_layout.datacenter_bits +
		snowid_layout.worker_bits + snowid_layout.sequence_bits;
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int64		ms;

	if (span->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval \"%s\" has no fixed length in milliseconds",
						snowid_interval_text(span)),
				 errdetail("Months and years are not a fixed number of milliseconds, so they are not a fixed number of ids."),
				 errhint("Give the span in days or smaller units, or bound each month with snowid_from_time() of its first day.")));
	if (span->time % SNOWID_US_PER_MS != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval \"%s\" is not a whole number of milliseconds",
						snowid_interval_text(span)),
				 errdetail("Ids count time in whole milliseconds.")));

	/* at most 2^31 days and 2^63 us: no overflow */
	ms = (int64) span->day * SNOWID_MS_PER_DAY + span->time / SNOWID_US_PER_MS;
	if (ms < 0 || ms > max_ms)
	{
		Interval   *longest = (Interval *) palloc0(sizeof(Interval));

		longest->day = (int32) (max_ms / SNOWID_MS_PER_DAY);
		longest->time = (max_ms % SNOWID_MS_PER_DAY) * SNOWID_US_PER_MS;
		ereport(ERROR,
				(errcode(ERRCODE_INTERVAL_FIELD_OVERFLOW),
				 errmsg("interval \"%s\" out of range for snowid",
						snowid_interval_text(span)),
				 errdetail("A span of ids lasts from 0 to %s (a day counted as 24 hours) under the layout %s.",
						   snowid_interval_text(longest),
						   snowid_layout_string(&snowid_layout))));
	}

	PG_RETURN_INT64(ms << node_seq_bits);
}

/*
 * snowid_time
 *		The time an id was made: the ts column of snowid_decode(), without
 *		building a record.
 */
Datum
snowid_time(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	SnowidParts parts;

	snowid_decompose_checked(&snowid_layout, id, &parts);
	PG_RETURN_TIMESTAMPTZ(snowid_unix_ms_to_timestamptz(parts.ms +
														snowid_layout.epoch_ms));
}
