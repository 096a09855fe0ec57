/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The snowid.* settings: their definitions, and the checks that make a
 *	  bad value stop the server instead of falling back to a default.
 *
 * The GUC machinery only warns about a bad value it finds for a custom
 * setting and then uses the default; for an id field that would silently
 * give another server's ids.  So every setting is checked before it is
 * defined, and rules across settings (the layout, the ids fitting their
 * fields) are checked at startup.  After that the check hooks refuse what
 * the next start would refuse (in ALTER SYSTEM, or at a reload, which then
 * keeps the old value); they never raise an error, which at a reload would
 * stop the postmaster.  Settings are per-process copies set by the GUC
 * machinery; no lock is involved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "coord/request.h"
#include "core/generator.h"
#include "redis/url.h"
#include "settings.h"

/* Range of snowid.max_drift_ms and snowid.max_wait_ms, in milliseconds */
#define SNOWID_MAX_DRIFT_WAIT_MS	3600000

static char *snowid_epoch = NULL;
static char *snowid_redis_url = NULL;

/*
 * snowid_configured_value
 *		The value a setting has in the server's configuration (postgresql.conf,
 *		ALTER SYSTEM, the command line), read from its placeholder before the
 *		setting is defined; NULL if it is not configured.  That is the
 *		placeholder's reset value, not its current one: loaded after server
 *		start, the library is loaded by a session, which may have SET the
 *		placeholder to anything (SET leaves the reset value alone).  A value
 *		given to the session itself (a connection option, ALTER ROLE or ALTER
 *		DATABASE) does replace the reset value, and hides the configured one:
 *		that is refused, as it is for a server-start setting when preloaded.
 */
static const char *
snowid_configured_value(const char *name)
{
	struct config_generic *placeholder = find_option(name, false, true,
													 ERROR);

	/* a placeholder only a session SET created has no reset value */
	if (placeholder == NULL || placeholder->reset_source == PGC_S_DEFAULT)
		return NULL;
	if (placeholder->reset_source > PGC_S_ARGV)
		ereport(ERROR,
				(errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
				 errmsg("parameter \"%s\" cannot be changed without restarting the server",
						name),
				 errdetail("This session was given a value of its own (by a connection option, ALTER ROLE or ALTER DATABASE); snowid uses only the value the server was started with."),
				 errhint("Remove \"%s\" from the connection options and from the ALTER ROLE and ALTER DATABASE settings.",
						 name)));
	return GetConfigOptionResetString(name);
}

/*
 * snowid_check_startup_int
 *		Refuses a bad configured value of an integer setting, and returns the
 *		value, or unset if there is none.  The GUC machinery only warns about
 *		a bad value it finds for a custom setting and then uses the default,
 *		which for an id field would silently give another server's ids; so
 *		the value is checked before the setting is defined, and an error here
 *		stops the postmaster.  flags may give GUC_UNIT_MS.
 */
static int
snowid_check_startup_int(const char *name, int min, int max, int unset,
						 int flags)
{
	const char *value = snowid_configured_value(name);
	int			result;

	if (value == NULL)
		return unset;
	if (!parse_int(value, &result, flags, NULL) || result < min ||
		result > max)
	{
		if (flags & GUC_UNIT_MS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s\": \"%s\"",
							name, value),
					 errdetail("\"%s\" must be from %d to %d milliseconds.",
							   name, min, max)));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						name, value),
				 errdetail("\"%s\" must be an integer from %d to %d.",
						   name, min, max)));
	}
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
	const char *problem;

	if (!snowid_parse_epoch(*newval, &unix_ms, &problem))
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	result = (int64 *) guc_malloc(LOG, sizeof(int64));
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
 *		(the default if it is not set).
 */
static int64
snowid_check_startup_epoch(void)
{
	const char *value = snowid_configured_value("snowid.epoch");
	int64		unix_ms = SNOWID_DEFAULT_EPOCH_MS;
	const char *problem;

	if (value == NULL)
		return unix_ms;
	if (!snowid_parse_epoch(value, &unix_ms, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.epoch\": \"%s\"",
						value),
				 errdetail("%s", problem)));
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
								 SNOWID_DEFAULT_DATACENTER_BITS, 0);
	layout->worker_bits =
		snowid_check_startup_int("snowid.worker_bits", 0,
								 SNOWID_MAX_NODE_SEQ_BITS,
								 SNOWID_DEFAULT_WORKER_BITS, 0);
	layout->sequence_bits =
		snowid_check_startup_int("snowid.sequence_bits", 0,
								 SNOWID_MAX_NODE_SEQ_BITS,
								 SNOWID_DEFAULT_SEQUENCE_BITS, 0);

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
	SnowidLayout checked = snowid_layout;

	/*
	 * Check into a copy: the variables must hold their boot values when they
	 * are defined (assert-enabled servers check that since 16).
	 */
	snowid_check_layout_bits(&checked);

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

	Assert(l->datacenter_bits == checked.datacenter_bits &&
		   l->worker_bits == checked.worker_bits &&
		   l->sequence_bits == checked.sequence_bits);
	l->timestamp_bits = checked.timestamp_bits;
}

/* Why a datacenter or worker id does not fit the layout, and what to do */
#define SNOWID_ID_FIT_DETAIL \
	"With snowid.%s_bits = %d, %s ids run from 0 to %lld."
#define SNOWID_ID_FIT_HINT \
	"Choose a smaller snowid.%s_id, or widen snowid.%s_bits on every " \
	"server at once (a restart each): it changes the layout of all ids."

/*
 * snowid_check_startup_fit
 *		Refuses a configured datacenter id or worker id ("what") the layout
 *		cannot hold, before the setting is defined.
 */
static void
snowid_check_startup_fit(const char *what, int id, int bits)
{
	int64		max = SNOWID_FIELD_MAX(bits);

	if (id > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.%s_id\": \"%d\"",
						what, id),
				 errdetail(SNOWID_ID_FIT_DETAIL, what, bits, what,
						   (long long) max),
				 errhint(SNOWID_ID_FIT_HINT, what, what)));
}

/*
 * snowid_id_fits
 *		The check of snowid_check_startup_fit() for a GUC check hook, which
 *		must not raise an error: so that ALTER SYSTEM refuses what the next
 *		start would.  The layout in force is the one to fit.
 */
static bool
snowid_id_fits(const char *what, int id, int bits)
{
	int64		max = SNOWID_FIELD_MAX(bits);

	if (id <= max)
		return true;
	GUC_check_errdetail(SNOWID_ID_FIT_DETAIL, what, bits, what,
						(long long) max);
	GUC_check_errhint(SNOWID_ID_FIT_HINT, what, what);
	return false;
}

/*
 * snowid_datacenter_id_check
 *		GUC check hook for snowid.datacenter_id.
 */
static bool
snowid_datacenter_id_check(int *newval, void **extra, GucSource source)
{
	return snowid_id_fits("datacenter", *newval,
						  snowid_layout.datacenter_bits);
}

/*
 * snowid_worker_id_check
 *		GUC check hook for snowid.worker_id.
 */
static bool
snowid_worker_id_check(int *newval, void **extra, GucSource source)
{
	return snowid_id_fits("worker", *newval, snowid_layout.worker_bits);
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
	result = (SnowidRedisTarget *) guc_malloc(LOG, sizeof(SnowidRedisTarget));
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
	const char *url = snowid_configured_value("snowid.redis_url");
	const char *prefix = snowid_configured_value("snowid.redis_key_prefix");
	const char *timeout = snowid_configured_value("snowid.redis_timeout_ms");
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

	(void) snowid_check_startup_int("snowid.redis_min_replicas", 0, 100, 0, 0);

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
							   "redis://[[user]:password@]host[:port][/db], rediss://... (TLS), unix://[[user]:password@]/path/to/redis.sock[?db=N] or redis-sentinel://[[user]:password@]host[:port][,...]/master[/db].",
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
							"Time the whole worker id claim may take, in milliseconds.",
							NULL,
							&snowid_redis_timeout_ms,
							2000, 1, 600000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.redis_min_replicas",
							"Replicas that must have a worker id claim (Redis WAIT) before it is used.",
							NULL,
							&snowid_redis_min_replicas,
							0, 0, 100,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("snowid.redis_tls_ca_file",
							   "CA certificates that a rediss:// server's certificate must be signed by; empty for the system's.",
							   NULL,
							   &snowid_redis_tls_ca_file,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("snowid.redis_tls_cert_file",
							   "Client certificate shown to a rediss:// server; empty for none.",
							   NULL,
							   &snowid_redis_tls_cert_file,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("snowid.redis_tls_key_file",
							   "Private key of snowid.redis_tls_cert_file.",
							   NULL,
							   &snowid_redis_tls_key_file,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
}

/*
 * snowid_define_lease_settings
 *		Worker ids on lease: the lease, checked first, and whether a clean
 *		shutdown gives the id back.  A lease needs Redis and is taken, not
 *		configured.
 */
static void
snowid_define_lease_settings(void)
{
	const char *value = GetConfigOption("snowid.worker_lease", true, false);
	int			lease_ms = 0;

	if (value != NULL &&
		(!parse_int(value, &lease_ms, GUC_UNIT_MS, NULL) ||
		 lease_ms < 0 || lease_ms > 86400000 ||
		 (lease_ms > 0 && lease_ms < 100)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"snowid.worker_lease\": \"%s\"",
						value),
				 errdetail("\"snowid.worker_lease\" must be 0 (no lease) or from 100 milliseconds to 1 day.")));
	if (lease_ms > 0 && snowid_redis_target == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.worker_lease needs snowid.redis_url"),
				 errdetail("A worker id on lease is taken from Redis, and its lease renewed there."),
				 errhint("Set snowid.redis_url, or set snowid.worker_lease to 0.")));
	if (lease_ms > 0 && snowid_worker_id >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.worker_lease cannot be combined with snowid.worker_id"),
				 errdetail("On lease, a server takes whichever worker id is free."),
				 errhint("Set snowid.worker_id to -1, or set snowid.worker_lease to 0 for a permanent claim.")));

	DefineCustomIntVariable("snowid.worker_lease",
							"How long a worker id taken from Redis is leased for, renewed every third of it; 0 claims it for good.",
							NULL,
							&snowid_worker_lease_ms,
							0, 0, 86400000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("snowid.release_on_shutdown",
							 "Whether a clean shutdown gives a worker id on lease back to Redis at once.",
							 NULL,
							 &snowid_release_on_shutdown,
							 false,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
}

/*
 * snowid_define_startup_settings
 *		The settings fixed at server start.  The layout comes first: the
 *		datacenter and worker ids are checked against it, before they are
 *		defined and by their check hooks after.
 */
static void
snowid_define_startup_settings(void)
{
	/* the widest field the layout rules allow */
	int			max_id = (int) SNOWID_FIELD_MAX(SNOWID_MAX_NODE_SEQ_BITS);

	snowid_define_layout_settings();

	snowid_check_startup_fit("datacenter",
							 snowid_check_startup_int("snowid.datacenter_id",
													  0, max_id, 0, 0),
							 snowid_layout.datacenter_bits);
	snowid_check_startup_fit("worker",
							 snowid_check_startup_int("snowid.worker_id",
													  -1, max_id, -1, 0),
							 snowid_layout.worker_bits);
	(void) snowid_check_startup_epoch();

	DefineCustomIntVariable("snowid.datacenter_id",
							"Datacenter id carried by every id this server issues.",
							NULL,
							&snowid_datacenter_id,
							0, 0, max_id,
							PGC_POSTMASTER, 0,
							snowid_datacenter_id_check, NULL, NULL);

	DefineCustomIntVariable("snowid.worker_id",
							"Worker id carried by every id this server issues; -1 means not set.",
							NULL,
							&snowid_worker_id,
							-1, -1, max_id,
							PGC_POSTMASTER, 0,
							snowid_worker_id_check, NULL, NULL);

	DefineCustomStringVariable("snowid.epoch",
							   "Time that the timestamp field of ids counts from.",
							   NULL,
							   &snowid_epoch,
							   SNOWID_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   snowid_epoch_check, snowid_epoch_assign, NULL);

	snowid_define_redis_settings();
	snowid_define_lease_settings();
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
 * snowid_define_settings
 *		Defines the settings, all of them while preloading.  Server-start
 *		settings can only be defined then; loaded later, the library still
 *		reads their configured values, so that snowid_decode() follows the
 *		configured epoch and layout.  That comes first: if it fails, loading
 *		fails and is tried again on the next call, which must not find
 *		settings this call defined already.  While preloading, a bad value of
 *		a reloadable setting stops the server as well.
 */
void
snowid_define_settings(bool preloading)
{
	if (!preloading)
		snowid_read_startup_settings();
	else
	{
		/* only the generator uses them, and it runs only when preloaded */
		(void) snowid_check_startup_int("snowid.max_drift_ms", 0,
										SNOWID_MAX_DRIFT_WAIT_MS, 0,
										GUC_UNIT_MS);
		(void) snowid_check_startup_int("snowid.max_wait_ms", 0,
										SNOWID_MAX_DRIFT_WAIT_MS, 0,
										GUC_UNIT_MS);
	}

	DefineCustomIntVariable("snowid.max_drift_ms",
							"How far the generator may run ahead of the wall clock, in milliseconds.",
							NULL,
							&snowid_max_drift_ms,
							1000, 0, SNOWID_MAX_DRIFT_WAIT_MS,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowid.max_wait_ms",
							"How long a caller waits for a lagging wall clock before failing, in milliseconds.",
							NULL,
							&snowid_max_wait_ms,
							2000, 0, SNOWID_MAX_DRIFT_WAIT_MS,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);

	if (!preloading)
		return;

	snowid_define_startup_settings();
	MarkGUCPrefixReserved("snowid");
}
