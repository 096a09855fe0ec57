/*-------------------------------------------------------------------------
 *
 * snowid.c
 *	  Module glue: the snowid.* settings, the shared memory hooks and the
 *	  SQL-callable functions.
 *
 * The functions here hold no lock themselves: the generator's state and
 * its locking live in generator.c.  Settings are per-process copies set by
 * the GUC machinery.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "snowid.h"

PG_MODULE_MAGIC;

/* Most ids snowid_next_batch() hands out in one call */
#define SNOWID_BATCH_MAX		100000

int			snowid_datacenter_id = 0;
int			snowid_worker_id = -1;
int			snowid_max_drift_ms = 1000;
int			snowid_max_wait_ms = 2000;
static char *snowid_epoch = NULL;

SnowidLayout snowid_layout = {
	.epoch_ms = SNOWID_DEFAULT_EPOCH_MS,
	.timestamp_bits = 41,
	.datacenter_bits = 5,
	.worker_bits = 5,
	.sequence_bits = 12
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);
static void snowid_shmem_request(void);
static void snowid_shmem_startup(void);
static void snowid_shmem_exit(int code, Datum arg);

PG_FUNCTION_INFO_V1(snowid_next);
PG_FUNCTION_INFO_V1(snowid_next_batch);
PG_FUNCTION_INFO_V1(snowid_decode);
PG_FUNCTION_INFO_V1(snowid_from_time);
PG_FUNCTION_INFO_V1(snowid_status);

/*
 * snowid_check_startup_int
 *		Refuses a bad value of a server-start integer setting.  The GUC
 *		machinery only warns about a bad value it finds for a custom setting
 *		and then uses the default, which for an id field would silently give
 *		another server's ids; so the value is checked before the setting is
 *		defined, and an error here stops the postmaster.
 */
static void
snowid_check_startup_int(const char *name, int min, int max)
{
	const char *value = GetConfigOption(name, true, false);
	int			result;

	if (value == NULL)
		return;
	if (!parse_int(value, &result, 0, NULL) || result < min || result > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						name, value),
				 errdetail("\"%s\" must be an integer from %d to %d.",
						   name, min, max)));
}

/*
 * snowid_epoch_check
 *		GUC check hook for snowid.epoch; passes the Unix milliseconds on.
 */
static bool
snowid_epoch_check(char **newval, void **extra, GucSource source)
{
	int64		unix_ms;
	int64	   *result;

	if (!snowid_parse_epoch(*newval, &unix_ms))
	{
		GUC_check_errdetail("snowid.epoch must be a timestamp with time zone such as '%s', or Unix milliseconds.",
							SNOWID_DEFAULT_EPOCH);
		return false;
	}
	result = (int64 *) malloc(sizeof(int64));
	if (result == NULL)
		return false;
	*result = unix_ms;
	*extra = result;
	return true;
}

/*
 * snowid_epoch_assign
 *		GUC assign hook for snowid.epoch.
 */
static void
snowid_epoch_assign(const char *newval, void *extra)
{
	snowid_layout.epoch_ms = *((int64 *) extra);
}

/*
 * snowid_check_startup_epoch
 *		Refuses a bad snowid.epoch before it is defined, for the same reason
 *		as snowid_check_startup_int().
 */
static void
snowid_check_startup_epoch(void)
{
	const char *value = GetConfigOption("snowid.epoch", true, false);
	int64		unix_ms;

	if (value != NULL && !snowid_parse_epoch(value, &unix_ms))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.epoch\": \"%s\"",
						value),
				 errdetail("snowid.epoch must be a timestamp with time zone such as '%s', or Unix milliseconds.",
						   SNOWID_DEFAULT_EPOCH)));
}

/*
 * snowid_define_startup_settings
 *		The settings fixed at server start.
 */
static void
snowid_define_startup_settings(void)
{
	int			max_dc = (int) SNOWID_FIELD_MAX(snowid_layout.datacenter_bits);
	int			max_worker = (int) SNOWID_FIELD_MAX(snowid_layout.worker_bits);

	snowid_check_startup_int("snowid.datacenter_id", 0, max_dc);
	snowid_check_startup_int("snowid.worker_id", -1, max_worker);
	snowid_check_startup_epoch();

	DefineCustomIntVariable("snowid.datacenter_id",
							"Datacenter id carried by every id this server issues.",
							NULL,
							&snowid_datacenter_id,
							0, 0, max_dc,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.worker_id",
							"Worker id carried by every id this server issues; -1 means not set.",
							NULL,
							&snowid_worker_id,
							-1, -1, max_worker,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("snowid.epoch",
							   "Time that the timestamp field of ids counts from.",
							   NULL,
							   &snowid_epoch,
							   SNOWID_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   snowid_epoch_check, snowid_epoch_assign, NULL);
}

/*
 * snowid_read_startup_settings
 *		Without preloading, the GUC machinery refuses to define server-start
 *		settings, but their configured values remain visible as placeholders:
 *		checks and reads those that the functions working without shared
 *		memory need.
 */
static void
snowid_read_startup_settings(void)
{
	const char *epoch;

	snowid_check_startup_epoch();
	epoch = GetConfigOption("snowid.epoch", true, false);
	if (epoch != NULL)
		(void) snowid_parse_epoch(epoch, &snowid_layout.epoch_ms);
}

/*
 * _PG_init
 *		Defines the settings and, when preloaded, asks for shared memory.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("snowid.max_drift_ms",
							"How far the generator may run ahead of the wall clock, in milliseconds.",
							NULL,
							&snowid_max_drift_ms,
							1000, 0, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.max_wait_ms",
							"How long a caller waits for a lagging wall clock before failing, in milliseconds.",
							NULL,
							&snowid_max_wait_ms,
							2000, 0, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * Server-start settings can only be defined while preloading.  Loaded
	 * later, the library still reads their configured values, so that
	 * snowid_decode() follows the configured epoch and layout.
	 */
	if (!process_shared_preload_libraries_in_progress)
	{
		snowid_read_startup_settings();
		return;
	}

	snowid_define_startup_settings();
	MarkGUCPrefixReserved("snowid");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowid_shmem_startup;
}

/*
 * snowid_shmem_request
 *		Reserves the generator's shared memory and its LWLock.
 */
static void
snowid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(snowid_shmem_size());
	RequestNamedLWLockTranche("snowid", 1);
}

/*
 * snowid_shmem_startup
 *		Creates or attaches to the generator.  In the postmaster (at start and
 *		after a crash reinitialises shared memory) this also reads the
 *		high-water mark and arranges for it to be tightened at a clean exit.
 */
static void
snowid_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowid_shmem_init();
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(snowid_shmem_exit, (Datum) 0);
}

/*
 * snowid_shmem_exit
 *		At a clean postmaster exit, records where the generator stopped.
 */
static void
snowid_shmem_exit(int code, Datum arg)
{
	if (code == 0)
		snowid_shmem_detach();
}

/*
 * snowid_next
 *		The next id of this server's generator.
 */
Datum
snowid_next(PG_FUNCTION_ARGS)
{
	int64		node_bits = snowid_local_node_bits();
	int			got;
	int64		position = snowid_take(1, &got);

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

		node_bits = snowid_local_node_bits();
		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		ids = palloc(sizeof(int64) * n);
		MemoryContextSwitchTo(oldcontext);

		while (taken < n)
		{
			int			got;
			int64		position = snowid_take(n - taken, &got);

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

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid %lld", (long long) id),
				 errdetail("A snowid is never negative: its sign bit is always 0.")));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	snowid_decompose(&snowid_layout, id, &parts);
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
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowid: \"%s\"",
						timestamptz_to_str(ts)),
				 errdetail("Ids can hold times from %s to %s.",
						   pstrdup(timestamptz_to_str(snowid_unix_ms_to_timestamptz(snowid_layout.epoch_ms))),
						   pstrdup(timestamptz_to_str(snowid_unix_ms_to_timestamptz(snowid_layout.epoch_ms + max_ms))))));

	ms = unix_ms - snowid_layout.epoch_ms;
	PG_RETURN_INT64(snowid_compose(&snowid_layout,
								   ms << snowid_layout.sequence_bits, 0));
}

/*
 * snowid_status
 *		One row describing this server's generator.
 */
Datum
snowid_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	SnowidStatus st;
	Datum		values[10];
	bool		nulls[10];
	int64		epoch_ms = snowid_layout.epoch_ms;

	if (!snowid_shmem_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via shared_preload_libraries"),
				 errhint("Add snowid to shared_preload_libraries in postgresql.conf and restart the server.")));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	snowid_get_status(&st);
	memset(nulls, 0, sizeof(nulls));

	values[0] = Int32GetDatum(st.datacenter_id);
	values[1] = Int32GetDatum(st.worker_id);
	nulls[1] = (st.worker_id < 0);
	values[2] = CStringGetTextDatum(snowid_worker_source_name(st.worker_source));
	values[3] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.last_ms + epoch_ms));
	nulls[3] = (st.last_ms < 0);
	values[4] = Int64GetDatum(Max(st.last_ms - st.clock_ms, 0));
	values[5] = Int64GetDatum((int64) st.ids_issued);
	values[6] = Int64GetDatum((int64) st.waits);
	values[7] = Int64GetDatum((int64) st.clock_steps);
	values[8] = Int64GetDatum((int64) st.clock_errors);
	values[9] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(st.high_water_ms + epoch_ms));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
