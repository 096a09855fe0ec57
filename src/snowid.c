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

#include "redis_claim.h"
#include "snowid.h"

PG_MODULE_MAGIC;

/* Most ids snowid_next_batch() hands out in one call */
#define SNOWID_BATCH_MAX		100000

/* The detail of every report of a malformed snowid.epoch */
#define SNOWID_EPOCH_DETAIL \
	"snowid.epoch must be a fixed time: a timestamp such as '" \
	SNOWID_DEFAULT_EPOCH "' (read as UTC unless it names a time zone), " \
	"or Unix milliseconds."

int			snowid_datacenter_id = 0;
int			snowid_worker_id = -1;
int			snowid_max_drift_ms = 1000;
int			snowid_max_wait_ms = 2000;
static char *snowid_epoch = NULL;
static char *snowid_redis_url = NULL;
char	   *snowid_redis_key_prefix = NULL;
int			snowid_redis_timeout_ms = 2000;
const SnowidRedisTarget *snowid_redis_target = NULL;

/* The bit widths are set by the snowid.*_bits settings at server start */
SnowidLayout snowid_layout = {
	.epoch_ms = SNOWID_DEFAULT_EPOCH_MS,
	.timestamp_bits = SNOWID_ID_BITS - SNOWID_DEFAULT_DATACENTER_BITS -
	SNOWID_DEFAULT_WORKER_BITS - SNOWID_DEFAULT_SEQUENCE_BITS,
	.datacenter_bits = SNOWID_DEFAULT_DATACENTER_BITS,
	.worker_bits = SNOWID_DEFAULT_WORKER_BITS,
	.sequence_bits = SNOWID_DEFAULT_SEQUENCE_BITS
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
PG_FUNCTION_INFO_V1(snowid_status_1_1);

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
	SNOWID_STATUS_V1_1
} SnowidStatusVersion;

#define SNOWID_STATUS_COLS_V1_0		10
#define SNOWID_STATUS_COLS_V1_1		15
#define SNOWID_STATUS_COLS			15	/* the most of any version */

/*
 * snowid_check_startup_int
 *		Refuses a bad value of a server-start integer setting, and returns
 *		the value, or unset if there is none.  The GUC machinery only warns
 *		about a bad value it finds for a custom setting and then uses the
 *		default, which for an id field would silently give another server's
 *		ids; so the value is checked before the setting is defined, and an
 *		error here stops the postmaster.
 */
static int
snowid_check_startup_int(const char *name, int min, int max, int unset)
{
	const char *value = GetConfigOption(name, true, false);
	int			result;

	if (value == NULL)
		return unset;
	if (!parse_int(value, &result, 0, NULL) || result < min || result > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						name, value),
				 errdetail("\"%s\" must be an integer from %d to %d.",
						   name, min, max)));
	return result;
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
		GUC_check_errdetail(SNOWID_EPOCH_DETAIL);
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
 *		as snowid_check_startup_int(), and returns it in Unix milliseconds
 *		(the default if it is not set).  Ids hold no time from the year 10000
 *		on, so an epoch there is refused too.
 */
static int64
snowid_check_startup_epoch(void)
{
	const char *value = GetConfigOption("snowid.epoch", true, false);
	int64		unix_ms = SNOWID_DEFAULT_EPOCH_MS;

	if (value == NULL)
		return unix_ms;
	if (!snowid_parse_epoch(value, &unix_ms))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.epoch\": \"%s\"",
						value),
				 errdetail(SNOWID_EPOCH_DETAIL)));
	if (unix_ms >= SNOWID_END_UNIX_MS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.epoch\": \"%s\"",
						value),
				 errdetail("snowid.epoch must lie before the year 10000.")));
	return unix_ms;
}

/*
 * snowid_check_layout_bits
 *		Reads and checks the configured widths of the datacenter, worker and
 *		sequence fields into *layout, before the settings are defined (or
 *		where they cannot be); the timestamp gets the rest of the 63 bits,
 *		and must keep at least 39.
 */
static void
snowid_check_layout_bits(SnowidLayout *layout)
{
	int			node_seq_bits;

	layout->datacenter_bits =
		snowid_check_startup_int("snowid.datacenter_bits", 0,
								 SNOWID_MAX_NODE_SEQ_BITS,
								 SNOWID_DEFAULT_DATACENTER_BITS);
	layout->worker_bits =
		snowid_check_startup_int("snowid.worker_bits", 0,
								 SNOWID_MAX_NODE_SEQ_BITS,
								 SNOWID_DEFAULT_WORKER_BITS);
	layout->sequence_bits =
		snowid_check_startup_int("snowid.sequence_bits", 0,
								 SNOWID_MAX_NODE_SEQ_BITS,
								 SNOWID_DEFAULT_SEQUENCE_BITS);

	node_seq_bits = layout->datacenter_bits + layout->worker_bits +
		layout->sequence_bits;
	if (node_seq_bits > SNOWID_MAX_NODE_SEQ_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.datacenter_bits + snowid.worker_bits + snowid.sequence_bits is %d, more than %d",
						node_seq_bits, SNOWID_MAX_NODE_SEQ_BITS),
				 errdetail("That leaves the timestamp field %d of the 63 bits of an id; it needs at least %d (about 17 years).",
						   SNOWID_ID_BITS - node_seq_bits,
						   SNOWID_MIN_TIMESTAMP_BITS),
				 errhint("Lower snowid.datacenter_bits, snowid.worker_bits or snowid.sequence_bits.")));
	layout->timestamp_bits = SNOWID_ID_BITS - node_seq_bits;
}

/*
 * snowid_define_layout_settings
 *		The widths of the datacenter, worker and sequence fields, checked
 *		first by snowid_check_layout_bits(); defining them sets the same
 *		values again.
 */
static void
snowid_define_layout_settings(void)
{
	SnowidLayout *l = &snowid_layout;

	snowid_check_layout_bits(l);

	DefineCustomIntVariable("snowid.datacenter_bits",
							"Width in bits of the datacenter field of ids.",
							NULL,
							&l->datacenter_bits,
							SNOWID_DEFAULT_DATACENTER_BITS,
							0, SNOWID_MAX_NODE_SEQ_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.worker_bits",
							"Width in bits of the worker field of ids.",
							NULL,
							&l->worker_bits,
							SNOWID_DEFAULT_WORKER_BITS,
							0, SNOWID_MAX_NODE_SEQ_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.sequence_bits",
							"Width in bits of the sequence field of ids, which counts the ids of one millisecond.",
							NULL,
							&l->sequence_bits,
							SNOWID_DEFAULT_SEQUENCE_BITS,
							0, SNOWID_MAX_NODE_SEQ_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	Assert(l->timestamp_bits == SNOWID_ID_BITS - l->datacenter_bits -
		   l->worker_bits - l->sequence_bits);
}

/*
 * snowid_check_layout_fit
 *		Refuses a datacenter id or worker id the layout cannot hold.  Runs
 *		once all server-start settings are defined.
 */
static void
snowid_check_layout_fit(void)
{
	int64		max_dc = SNOWID_FIELD_MAX(snowid_layout.datacenter_bits);
	int64		max_worker = SNOWID_FIELD_MAX(snowid_layout.worker_bits);

	if (snowid_datacenter_id > max_dc)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.datacenter_id\": \"%d\"",
						snowid_datacenter_id),
				 errdetail("With snowid.datacenter_bits = %d, datacenter ids run from 0 to %lld.",
						   snowid_layout.datacenter_bits, (long long) max_dc),
				 errhint("Choose a smaller snowid.datacenter_id, or widen snowid.datacenter_bits on every server at once: it changes the layout of all ids.")));

	if (snowid_worker_id > max_worker)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.worker_id\": \"%d\"",
						snowid_worker_id),
				 errdetail("With snowid.worker_bits = %d, worker ids run from 0 to %lld.",
						   snowid_layout.worker_bits, (long long) max_worker),
				 errhint("Choose a smaller snowid.worker_id, or widen snowid.worker_bits on every server at once: it changes the layout of all ids.")));
}

/*
 * snowid_redis_url_check
 *		GUC check hook for snowid.redis_url: parses it and passes the target
 *		on.  The value holds the password, so no message may show it: with
 *		GUC_check_errmsg set, PostgreSQL's own message (which would) is not
 *		used.
 */
static bool
snowid_redis_url_check(char **newval, void **extra, GucSource source)
{
	SnowidRedisTarget target;
	SnowidRedisTarget *result;
	const char *problem;

	*extra = NULL;
	if (*newval == NULL || (*newval)[0] == '\0')
		return true;

	if (!snowid_redis_parse_url(*newval, &target, &problem))
	{
		GUC_check_errmsg("invalid value for parameter \"snowid.redis_url\"");
		GUC_check_errdetail("%s", problem);
		return false;
	}
	result = (SnowidRedisTarget *) malloc(sizeof(SnowidRedisTarget));
	if (result != NULL)
		memcpy(result, &target, sizeof(SnowidRedisTarget));
	explicit_bzero(&target, sizeof(target));
	if (result == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	*extra = result;
	return true;
}

/*
 * snowid_redis_url_assign
 *		GUC assign hook for snowid.redis_url.
 */
static void
snowid_redis_url_assign(const char *newval, void *extra)
{
	snowid_redis_target = (const SnowidRedisTarget *) extra;
}

/*
 * snowid_redis_key_prefix_check
 *		GUC check hook for snowid.redis_key_prefix.
 */
static bool
snowid_redis_key_prefix_check(char **newval, void **extra, GucSource source)
{
	const char *problem;

	if (!snowid_redis_check_key_prefix(*newval, &problem))
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	return true;
}

/*
 * snowid_check_startup_redis
 *		Refuses bad Redis settings before they are defined, for the same
 *		reason as snowid_check_startup_int(): an ignored snowid.redis_url
 *		would silently leave the server without its claim.  The URL itself
 *		is never shown.
 */
static void
snowid_check_startup_redis(void)
{
	const char *url = GetConfigOption("snowid.redis_url", true, false);
	const char *prefix = GetConfigOption("snowid.redis_key_prefix", true,
										 false);
	const char *timeout = GetConfigOption("snowid.redis_timeout_ms", true,
										  false);
	SnowidRedisTarget target;
	const char *problem;
	int			timeout_ms;

	if (url != NULL && url[0] != '\0')
	{
		bool		ok = snowid_redis_parse_url(url, &target, &problem);

		explicit_bzero(&target, sizeof(target));
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"snowid.redis_url\""),
					 errdetail("%s", problem),
					 errhint("The value is not shown because it may contain a password.")));
	}

	if (prefix != NULL && !snowid_redis_check_key_prefix(prefix, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.redis_key_prefix\": \"%s\"",
						prefix),
				 errdetail("%s", problem)));

	if (timeout != NULL &&
		(!parse_int(timeout, &timeout_ms, GUC_UNIT_MS, NULL) ||
		 timeout_ms < 1 || timeout_ms > 600000))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.redis_timeout_ms\": \"%s\"",
						timeout),
				 errdetail("\"snowid.redis_timeout_ms\" must be from 1 to 600000 milliseconds.")));
}

/*
 * snowid_define_redis_settings
 *		Where to claim the worker id from; fixed at server start, like the
 *		claim itself.
 */
static void
snowid_define_redis_settings(void)
{
	snowid_check_startup_redis();

	DefineCustomStringVariable("snowid.redis_url",
							   "Redis server this server claims its worker id from, or registers snowid.worker_id in; empty for none.",
							   "redis://[[user]:password@]host[:port][/db] or unix://[[user]:password@]/path/to/redis.sock[?db=N].",
							   &snowid_redis_url,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   snowid_redis_url_check, snowid_redis_url_assign,
							   NULL);

	DefineCustomStringVariable("snowid.redis_key_prefix",
							   "Prefix of the Redis keys that hold the worker id claims.",
							   NULL,
							   &snowid_redis_key_prefix,
							   "snowid",
							   PGC_POSTMASTER, 0,
							   snowid_redis_key_prefix_check, NULL, NULL);

	DefineCustomIntVariable("snowid.redis_timeout_ms",
							"Timeout for connecting to Redis and for each Redis command, in milliseconds.",
							NULL,
							&snowid_redis_timeout_ms,
							2000, 1, 600000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/*
 * snowid_define_startup_settings
 *		The settings fixed at server start.  The layout comes first: the
 *		datacenter and worker ids are checked against it.
 */
static void
snowid_define_startup_settings(void)
{
	/* the widest field the layout rules allow */
	int			max_id = (int) SNOWID_FIELD_MAX(SNOWID_MAX_NODE_SEQ_BITS);

	snowid_define_layout_settings();

	(void) snowid_check_startup_int("snowid.datacenter_id", 0, max_id, 0);
	(void) snowid_check_startup_int("snowid.worker_id", -1, max_id, -1);
	(void) snowid_check_startup_epoch();

	DefineCustomIntVariable("snowid.datacenter_id",
							"Datacenter id carried by every id this server issues.",
							NULL,
							&snowid_datacenter_id,
							0, 0, max_id,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.worker_id",
							"Worker id carried by every id this server issues; -1 means not set.",
							NULL,
							&snowid_worker_id,
							-1, -1, max_id,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("snowid.epoch",
							   "Time that the timestamp field of ids counts from.",
							   NULL,
							   &snowid_epoch,
							   SNOWID_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   snowid_epoch_check, snowid_epoch_assign, NULL);

	snowid_check_layout_fit();
	snowid_define_redis_settings();
}

/*
 * snowid_read_startup_settings
 *		Without preloading, the GUC machinery refuses to define server-start
 *		settings, but their configured values remain visible as placeholders:
 *		checks and reads those that the functions working without shared
 *		memory need (the epoch and the layout), by the same rules as at
 *		server start.
 */
static void
snowid_read_startup_settings(void)
{
	SnowidLayout layout;

	layout.epoch_ms = snowid_check_startup_epoch();
	snowid_check_layout_bits(&layout);
	snowid_layout = layout;
}

/*
 * _PG_init
 *		Defines the settings and, when preloaded, asks for shared memory.
 */
void
_PG_init(void)
{
	/*
	 * Server-start settings can only be defined while preloading.  Loaded
	 * later, the library still reads their configured values, so that
	 * snowid_decode() follows the configured epoch and layout.  That comes
	 * first: if it fails, loading fails and is tried again on the next call,
	 * which must not find settings this call defined already.
	 */
	if (!process_shared_preload_libraries_in_progress)
		snowid_read_startup_settings();

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

	if (!process_shared_preload_libraries_in_progress)
		return;

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
		char	   *first = pstrdup(timestamptz_to_str(snowid_unix_ms_to_timestamptz(snowid_layout.epoch_ms)));
		char	   *last = pstrdup(timestamptz_to_str(snowid_unix_ms_to_timestamptz(snowid_layout.epoch_ms + max_ms)));

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

	if (!snowid_shmem_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via shared_preload_libraries"),
				 errhint("Add snowid to shared_preload_libraries in postgresql.conf and restart the server.")));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	ncols = (version == SNOWID_STATUS_V1_0) ?
		SNOWID_STATUS_COLS_V1_0 : SNOWID_STATUS_COLS_V1_1;
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
	values[4] = Int64GetDatum(Max(st.last_ms - st.clock_ms, 0));
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

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * snowid_status
 *		snowid_status() of version 1.0 of the SQL script.
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
