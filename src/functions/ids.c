/*-------------------------------------------------------------------------
 *
 * ids.c
 *	  The SQL-callable functions of the generator: snowid_next(),
 *	  snowid_next_batch(), snowid_decode(), snowid_from_time(),
 *	  snowid_status() and snowid_release_worker().
 *
 * They hold no lock themselves: the generator's state and its locking live
 * in core/generator.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "coord/lease.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "coord/worker.h"
#include "core/generator.h"
#include "util/bgworker.h"

/* Most ids snowid_next_batch() hands out in one call */
#define SNOWID_BATCH_MAX		100000

PG_FUNCTION_INFO_V1(snowid_next);
PG_FUNCTION_INFO_V1(snowid_next_batch);
PG_FUNCTION_INFO_V1(snowid_decode);
PG_FUNCTION_INFO_V1(snowid_from_time);
PG_FUNCTION_INFO_V1(snowid_status);
PG_FUNCTION_INFO_V1(snowid_status_1_1);
PG_FUNCTION_INFO_V1(snowid_status_1_2);
PG_FUNCTION_INFO_V1(snowid_status_1_3);
PG_FUNCTION_INFO_V1(snowid_release_worker);

/*
 * The OUT columns of snowid_status() in each version of the SQL script.  An
 * installation keeps the columns of its script version until ALTER
 * EXTENSION UPDATE, while the library is already the newest; so each
 * version's script names its own C function (as pg_stat_statements does),
 * and both fill the same leading columns.
 */
typedef enum SnowidStatusVersion
{
	SNOWID_STATUS_V1_0,
	SNOWID_STATUS_V1_1,
	SNOWID_STATUS_V1_2,
	SNOWID_STATUS_V1_3
} SnowidStatusVersion;

#define SNOWID_STATUS_COLS_V1_0		10
#define SNOWID_STATUS_COLS_V1_1		15
#define SNOWID_STATUS_COLS_V1_2		20
#define SNOWID_STATUS_COLS_V1_3		29
#define SNOWID_STATUS_COLS			29	/* the most of any version */

/* JavaScript's Number holds integers exactly up to 2^53 - 1 */
#define SNOWID_JS_SAFE_BITS			53
StaticAssertDecl(SNOWID_MAX_NODE_SEQ_BITS < SNOWID_JS_SAFE_BITS,
				 "the ids of millisecond 0 must lie below 2^53");

/*
 * snowid_next
 *		The next id of this server's generator.
 */
Datum
snowid_next(PG_FUNCTION_ARGS)
{
	int64		node_bits;
	int			got;
	int64		position;

	snowid_prepare_backend("snowid_next()");
	position = snowid_take(1, &got, &node_bits);

	PG_RETURN_INT64(snowid_compose(&snowid_layout, position, node_bits));
}

/*
 * snowid_next_batch
 *		n ids in ascending order.  They are all taken on the first call, in
 *		as few passes through the generator as the drift budget allows
 *		(usually one), and then returned one per call.
 */
Datum
snowid_next_batch(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	int64	   *ids;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(0);
		int64		node_bits;
		MemoryContext oldcontext;
		int			taken = 0;

		if (n < 1 || n > SNOWID_BATCH_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch size %d is out of range", n),
					 errdetail("snowid_next_batch() hands out from 1 to %d ids in one call.",
							   SNOWID_BATCH_MAX)));

		snowid_prepare_backend("snowid_next_batch()");
		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		ids = palloc(sizeof(int64) * n);
		MemoryContextSwitchTo(oldcontext);

		while (taken < n)
		{
			int			got;
			int64		position = snowid_take(n - taken, &got, &node_bits);

			for (int i = 0; i < got; i++)
				ids[taken++] = snowid_compose(&snowid_layout, position + i,
											  node_bits);
		}
		funcctx->max_calls = n;
		funcctx->user_fctx = ids;
	}

	funcctx = SRF_PERCALL_SETUP();
	ids = (int64 *) funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		/* SRF_RETURN_NEXT advances call_cntr before using its argument */
		Datum		result = Int64GetDatum(ids[funcctx->call_cntr]);

		SRF_RETURN_NEXT(funcctx, result);
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * snowid_decode
 *		Takes an id apart: time, datacenter id, worker id, sequence.  Needs
 *		no shared memory.
 */
Datum
snowid_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	TupleDesc	tupdesc;
	SnowidParts parts;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	snowid_decompose_checked(&snowid_layout, id, &parts);
	values[0] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(parts.ms +
																   snowid_layout.epoch_ms));
	values[1] = Int32GetDatum(parts.datacenter_id);
	values[2] = Int32GetDatum(parts.worker_id);
	values[3] = Int32GetDatum(parts.sequence);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * snowid_from_time
 *		The smallest id any server could issue at ts: its millisecond with
 *		datacenter, worker and sequence zero.
 */
Datum
snowid_from_time(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	int64		unix_ms;
	int64		ms;
	int64		max_ms = snowid_max_ms(&snowid_layout);

	if (!snowid_timestamptz_to_unix_ms(ts, &unix_ms) ||
		unix_ms < snowid_layout.epoch_ms ||
		unix_ms - snowid_layout.epoch_ms > max_ms)
	{
		/* timestamptz_to_str() returns a static buffer: copy each result */
		char	   *given = pstrdup(timestamptz_to_str(ts));
		char	   *first = pstrdup(snowid_unix_ms_text((snowid_layout.epoch_ms)));
		char	   *last = pstrdup(snowid_unix_ms_text((snowid_layout.epoch_ms + max_ms)));

		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowid: \"%s\"", given),
				 errdetail("Ids can hold times from %s to %s.",
						   first, last)));
	}

	ms = unix_ms - snowid_layout.epoch_ms;
	PG_RETURN_INT64(snowid_compose(&snowid_layout,
								   ms << snowid_layout.sequence_bits, 0));
}

/*
 * snowid_js_safe_until
 *		Until when the layout in force keeps ids below 2^53, so that a
 *		JavaScript Number holds them exactly: the first time whose ids can
 *		reach 2^53.  Infinity when no id the layout can hold reaches it;
 *		NULL (*isnull) when the ids issued at clock_ms already do.
 */
static Datum
snowid_js_safe_until(int64 clock_ms, bool *isnull)
{
	int			node_seq_bits = snowid_layout.datacenter_bits +
		snowid_layout.worker_bits + snowid_layout.sequence_bits;

	/* the ids of a millisecond below this one all lie below 2^53 */
	int64		safe_end_ms = INT64CONST(1) <<
		(SNOWID_JS_SAFE_BITS - node_seq_bits);

	*isnull = false;
	if (safe_end_ms > snowid_max_ms(&snowid_layout))
	{
		TimestampTz result;

		TIMESTAMP_NOEND(result);
		return TimestampTzGetDatum(result);
	}
	if (clock_ms >= safe_end_ms)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(safe_end_ms +
															 snowid_layout.epoch_ms));
}

/*
 * snowid_status_time
 *		A time of the Unix clock (ms) as a timestamptz column, NULL for none
 *		(zero or less).
 */
static void
snowid_status_time(int64 unix_ms, Datum *value, bool *isnull)
{
	*value = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(unix_ms));
	*isnull = (unix_ms <= 0);
}

/*
 * snowid_status_coordinator
 *		The nine columns of version 1.3 on the coordinator: its forgetting
 *		(coord/recall.h), the background worker that checks in or renews
 *		the worker id (util/bgworker.h) and when the coordinator last
 *		confirmed it; NULL where there is nothing to show.
 */
static void
snowid_status_coordinator(Datum *values, bool *nulls)
{
	SnowidRecallStatus rs;
	int			worker_pid;
	int64		worker_restarts;

	snowid_recall_status(&rs);
	snowid_bgworker_status(&worker_pid, &worker_restarts);
	values[0] = Int64GetDatum(rs.seen.generation);
	values[1] = Int64GetDatum(rs.seen.counter);
	nulls[0] = nulls[1] = (rs.seen.generation <= 0);
	snowid_status_time(rs.answered_ms, &values[2], &nulls[2]);
	snowid_status_time(rs.forgot_ms, &values[3], &nulls[3]);
	values[4] = Int64GetDatum(rs.reassertions);
	snowid_status_time(rs.quiet_until_ms, &values[5], &nulls[5]);
	values[6] = Int32GetDatum(worker_pid);
	nulls[6] = (worker_pid == 0);
	values[7] = Int64GetDatum(worker_restarts);
	snowid_status_time(rs.confirmed_ms, &values[8], &nulls[8]);
}

/*
 * snowid_status_internal
 *		One row describing this server's generator, with the columns of the
 *		given version of snowid_status().
 */
static Datum
snowid_status_internal(FunctionCallInfo fcinfo, SnowidStatusVersion version)
{
	TupleDesc	tupdesc;
	SnowidStatus st;
	Datum		values[SNOWID_STATUS_COLS];
	bool		nulls[SNOWID_STATUS_COLS];
	int64		epoch_ms = snowid_layout.epoch_ms;
	int			ncols;

	snowid_require_shmem();

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	switch (version)
	{
		case SNOWID_STATUS_V1_0:
			ncols = SNOWID_STATUS_COLS_V1_0;
			break;
		case SNOWID_STATUS_V1_1:
			ncols = SNOWID_STATUS_COLS_V1_1;
			break;
		case SNOWID_STATUS_V1_2:
			ncols = SNOWID_STATUS_COLS_V1_2;
			break;
		default:
			ncols = SNOWID_STATUS_COLS_V1_3;
			break;
	}
	if (tupdesc->natts != ncols)
		elog(ERROR, "incorrect number of output arguments");

	snowid_get_status(&st);
	memset(nulls, 0, sizeof(nulls));

	values[0] = Int32GetDatum(st.datacenter_id);
	values[1] = Int32GetDatum(st.worker_id);
	nulls[1] = (st.worker_id < 0);
	values[2] = CStringGetTextDatum(snowid_worker_source_name(st.worker_source));
	values[3] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.last_ms + epoch_ms));
	nulls[3] = (st.last_ms < 0);
	/* how far the last id lies ahead of the clock; 0 before the first */
	values[4] = Int64GetDatum((st.last_ms < 0) ? 0 :
							  Max(st.last_ms - st.clock_ms, 0));
	values[5] = Int64GetDatum((int64) st.ids_issued);
	values[6] = Int64GetDatum((int64) st.waits);
	values[7] = Int64GetDatum((int64) st.clock_steps);
	values[8] = Int64GetDatum((int64) st.clock_errors);
	values[9] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.high_water_ms + epoch_ms));

	if (version >= SNOWID_STATUS_V1_1)
	{
		/* the first millisecond ids cannot hold */
		int64		end_ms = snowid_max_ms(&snowid_layout) + 1;
		int64		left_ms = Max(end_ms - st.clock_ms, 0);
		Interval   *left = (Interval *) palloc0(sizeof(Interval));

		left->day = (int32) (left_ms / SNOWID_MS_PER_DAY);
		left->time = (left_ms % SNOWID_MS_PER_DAY) * 1000;

		values[10] = CStringGetTextDatum(snowid_layout_string(&snowid_layout));
		values[11] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(epoch_ms));
		values[12] = Int64GetDatum((SNOWID_FIELD_MAX(snowid_layout.sequence_bits) + 1) * 1000);
		values[13] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(end_ms + epoch_ms));
		values[14] = IntervalPGetDatum(left);
	}

	if (version >= SNOWID_STATUS_V1_2)
	{
		values[15] = snowid_js_safe_until(st.clock_ms, &nulls[15]);
		values[16] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.lease_expires_ms));
		nulls[16] = (st.lease_expires_ms <= 0);
		values[17] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.fence_ms + epoch_ms));
		nulls[17] = (st.fence_ms < 0);
		values[18] = Int64GetDatum((int64) st.renewals);
		values[19] = Int64GetDatum((int64) st.renewal_failures);
	}

	if (version >= SNOWID_STATUS_V1_3)
		snowid_status_coordinator(&values[20], &nulls[20]);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * snowid_status
 *		snowid_status() of version 1.0 of the SQL script.
 *
 * It and the three below only look alike: each version of the SQL script
 * binds its own C name, which an installation of that version keeps calling
 * after the library is updated; snowid_status_internal() does the work.
 */
Datum
snowid_status(PG_FUNCTION_ARGS)
{
	return snowid_status_internal(fcinfo, SNOWID_STATUS_V1_0);
}

/*
 * snowid_status_1_1
 *		snowid_status() of version 1.1: adds the layout, the epoch, the
 *		ceiling of ids per second and how long the timestamp field lasts.
 */
Datum
snowid_status_1_1(PG_FUNCTION_ARGS)
{
	return snowid_status_internal(fcinfo, SNOWID_STATUS_V1_1);
}

/*
 * snowid_status_1_2
 *		snowid_status() of version 1.2: adds until when ids stay below 2^53.
 */
Datum
snowid_status_1_2(PG_FUNCTION_ARGS)
{
	return snowid_status_internal(fcinfo, SNOWID_STATUS_V1_2);
}

/*
 * snowid_status_1_3
 *		snowid_status() of version 1.3: adds what this server knows of its
 *		coordinator's forgetting, and of the worker that checks in or renews
 *		its worker id.
 */
Datum
snowid_status_1_3(PG_FUNCTION_ARGS)
{
	return snowid_status_internal(fcinfo, SNOWID_STATUS_V1_3);
}

/*
 * snowid_release_worker
 *		Gives this server's worker id on lease back to the coordinator at
 *		once, for a server being retired; it issues no ids until it
 *		restarts.  Returns the worker id given back.
 */
Datum
snowid_release_worker(PG_FUNCTION_ARGS)
{
	int			worker_id;

	snowid_require_shmem();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function snowid_release_worker"),
				 errdetail("Only a superuser may give this server's worker id back.")));
	if (snowid_worker_lease_ms <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid.worker_lease is not set"),
				 errdetail("Without a lease the worker id is configured or claimed for good, and stays this server's."),
				 errhint("Stop the server for good first, then free its id in the coordinator by hand.")));

	worker_id = snowid_lease_give_back(false, false);
	if (worker_id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid holds no worker id to release"),
				 errdetail("This server has not taken a worker id yet, lost it, or released it already.")));
	PG_RETURN_INT32(worker_id);
}
