/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The snowid.* settings, written once in one table (snowid_settings):
 *	  name, type, default, range, context, check hook, and whether the
 *	  value is a secret.  Both the DefineCustom*Variable() calls and the
 *	  checks a server start makes come from it.
 *
 * The GUC machinery only warns about a bad value it finds for a custom
 * setting and then uses the default; for an id field that would silently
 * give another server's ids.  So every setting is checked before it is
 * defined, by the same range and the same check hook that ALTER SYSTEM and
 * a reload then apply (setting_table.c): what ALTER SYSTEM accepts,
 * the next start accepts.
 * A check hook never raises an error, which at a reload would stop the
 * postmaster.  Rules across settings are checked against the settings in
 * force (an id must fit the layout, the field widths must leave the
 * timestamp its 39 bits); the two rules of a lease (it needs a
 * coordinator and no snowid.worker_id) only at start, where both
 * snowid.coordinator_url and snowid.redis_url set are warned about.  The
 * settings of a store (snowid.redis_*: settings_redis.c) are rows of the
 * same kind, which the registry of stores (stores.c) lists for the stores
 * this build has, defined after these; a URL of a store this build lacks
 * is refused as such.  Settings are per-process copies set by the GUC
 * machinery; no lock is involved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "coord/request.h"
#include "core/generator.h"
#include "core/mark.h"
#include "functions/public.h"
#include "setting_table.h"
#include "settings.h"
#include "stores.h"

/* Why a datacenter or worker id does not fit the layout, and what to do */
#define SNOWID_ID_FIT_DETAIL \
	"With snowid.%s_bits = %d, %s ids run from 0 to %lld."
#define SNOWID_ID_FIT_HINT \
	"Choose a smaller snowid.%s_id, or widen snowid.%s_bits on every " \
	"server at once (a restart each): it changes the layout of all ids."

static char *snowid_epoch = NULL;
static char *snowid_coordinator_url = NULL;
static char *snowid_redis_url = NULL;
static char *snowid_coordinator_stores = NULL;

/* A coordinator URL parsed: its store, and the store's own target */
typedef struct SnowidUrlExtra
{
	const SnowidStore *store;
	union
	{
		char		bytes[SNOWID_STORE_TARGET_MAX];
		int64		align;
	}			target;
} SnowidUrlExtra;

/* What snowid.coordinator_url and snowid.redis_url hold, parsed */
static const SnowidUrlExtra *snowid_coordinator_url_extra = NULL;
static const SnowidUrlExtra *snowid_redis_url_extra = NULL;

/* The layout this start uses, checked before its settings are defined */
static SnowidLayout snowid_layout_in_force;

static void snowid_check_layout(void);
static void snowid_layout_complete(void);
static void snowid_check_lease_needs(void);
static void snowid_check_one_coordinator(void);
static void snowid_define_rows(const SnowidSetting *rows, int count,
							   bool preloading);

#define SNOWID_LEASE_RANGE_DETAIL \
	"\"snowid.worker_lease\" must be 0 (no lease) or from 100 milliseconds to 1 day."

/*
 * snowid_bits_fit
 *		Whether a field width leaves the timestamp its 39 bits next to the
 *		other two widths of the layout in force (others bits); if not, says
 *		why for the check hook.  Until the layout in force is known (while
 *		it is read at start, where the sum is checked as a whole), and for
 *		the default a definition checks before it takes the configured
 *		value, true.
 */
static bool
snowid_bits_fit(int bits, int others, GucSource source)
{
	if (source == PGC_S_DEFAULT)
		return true;
	if (snowid_layout_in_force.timestamp_bits == 0 ||
		bits + others <= SNOWID_MAX_NODE_SEQ_BITS)
		return true;
	GUC_check_errdetail("With the other two field widths in force, that leaves the timestamp field %d of the 63 bits of an id; it needs at least %d (about 17 years).",
						SNOWID_ID_BITS - bits - others,
						SNOWID_MIN_TIMESTAMP_BITS);
	return false;
}

/* GUC check hooks of the three widths */
static bool
snowid_datacenter_bits_check(int *newval, void **extra, GucSource source)
{
	return snowid_bits_fit(*newval, snowid_layout_in_force.worker_bits +
						   snowid_layout_in_force.sequence_bits, source);
}

static bool
snowid_worker_bits_check(int *newval, void **extra, GucSource source)
{
	return snowid_bits_fit(*newval, snowid_layout_in_force.datacenter_bits +
						   snowid_layout_in_force.sequence_bits, source);
}

static bool
snowid_sequence_bits_check(int *newval, void **extra, GucSource source)
{
	return snowid_bits_fit(*newval, snowid_layout_in_force.datacenter_bits +
						   snowid_layout_in_force.worker_bits, source);
}

/*
 * snowid_id_fits
 *		Whether a datacenter or worker id ("what") fits the field width of
 *		the layout in force; if not, says why for the check hook.
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
 * snowid_worker_lease_check
 *		GUC check hook for snowid.worker_lease: 0, or at least 100 ms.
 */
static bool
snowid_worker_lease_check(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || *newval >= SNOWID_MIN_LEASE_MS)
		return true;
	GUC_check_errdetail(SNOWID_LEASE_RANGE_DETAIL);
	return false;
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
 * snowid_url_check
 *		What a coordinator URL's check hook does: finds the store whose URL
 *		it is (store_name NULL: any store's) and has it parsed into the
 *		extra.  The value holds a password (a Redis URL may), so no message
 *		may show it: with GUC_check_errmsg set, PostgreSQL's own message
 *		(which would) is not used.
 */
static bool
snowid_url_check(const char *name, const char *store_name, char **newval,
				 void **extra)
{
	const SnowidStore *store;
	SnowidUrlExtra *result;
	const char *problem;
	bool		ok;

	*extra = NULL;
	if (*newval == NULL || (*newval)[0] == '\0')
		return true;

	store = store_name != NULL ? snowid_store_named(store_name) :
		snowid_store_for_url(*newval);
	if (store == NULL && snowid_store_missing(name, store_name, *newval))
		return false;
	if (store == NULL)
	{
		GUC_check_errmsg("invalid value for parameter \"%s\"", name);
		GUC_check_errdetail("The URL must start with %s.",
							snowid_store_schemes());
		return false;
	}

	result = (SnowidUrlExtra *) guc_malloc(LOG, sizeof(SnowidUrlExtra));
	if (result == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	memset(result, 0, sizeof(SnowidUrlExtra));
	result->store = store;
	ok = store->parse(*newval, result->target.bytes, &problem);
	if (!ok)
	{
		explicit_bzero(result, sizeof(SnowidUrlExtra));
		guc_free(result);
		GUC_check_errmsg("invalid value for parameter \"%s\"", name);
		GUC_check_errdetail("%s", problem);
		return false;
	}
	*extra = result;
	return true;
}

/*
 * snowid_use_store
 *		The store in use: snowid.coordinator_url's if it is set, else
 *		snowid.redis_url's.
 */
static void
snowid_use_store(void)
{
	const SnowidUrlExtra *in_use = snowid_coordinator_url_extra != NULL ?
		snowid_coordinator_url_extra : snowid_redis_url_extra;

	snowid_store = in_use != NULL ? in_use->store : NULL;
	snowid_store_target = in_use != NULL ? in_use->target.bytes : NULL;
}

/*
 * snowid_coordinator_url_check, snowid_coordinator_url_assign
 *		GUC hooks of snowid.coordinator_url: the URL of any store.
 */
static bool
snowid_coordinator_url_check(char **newval, void **extra, GucSource source)
{
	return snowid_url_check("snowid.coordinator_url", NULL, newval, extra);
}

static void
snowid_coordinator_url_assign(const char *newval, void *extra)
{
	snowid_coordinator_url_extra = (const SnowidUrlExtra *) extra;
	snowid_use_store();
}

/*
 * snowid_redis_url_check, snowid_redis_url_assign
 *		GUC hooks of snowid.redis_url, Redis' URL as releases before 1.3
 *		took it.
 */
static bool
snowid_redis_url_check(char **newval, void **extra, GucSource source)
{
	return snowid_url_check("snowid.redis_url", "redis", newval, extra);
}

static void
snowid_redis_url_assign(const char *newval, void *extra)
{
	snowid_redis_url_extra = (const SnowidUrlExtra *) extra;
	snowid_use_store();
}

/*
 * Every snowid.* setting but a store's own (stores.c), one a line, in the
 * order of definition: the reloadable ones, then those fixed at server
 * start, the layout first, since the ids are checked against it.
 */
static const SnowidSetting snowid_settings[] = {
	{.name = "snowid.max_drift_ms", .type = SNOWID_SETTING_INT, .variable = &snowid_max_drift_ms, .boot = SNOWID_MAX_DRIFT_DEFAULT_MS, .min = 0, .max = SNOWID_MAX_DRIFT_MS, .context = PGC_SIGHUP, .flags = GUC_UNIT_MS, .description = "How far the generator may run ahead of the wall clock, in milliseconds."},
	{.name = "snowid.max_wait_ms", .type = SNOWID_SETTING_INT, .variable = &snowid_max_wait_ms, .boot = 2000, .min = 0, .max = SNOWID_MAX_WAIT_MS, .context = PGC_SIGHUP, .flags = GUC_UNIT_MS, .description = "How long a caller waits for a lagging wall clock, or for the check-in of its worker id, before failing, in milliseconds."},
	{.name = "snowid.public_key_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_public_key_file, .boot_string = "", .context = PGC_SIGHUP, .string_assign = snowid_public_key_file_assign, .description = "File of the keys that public ids are made and read with (read again on reload); empty for none.", .long_description = "One key a line: a key id of 1 to 8 letters and digits, a space, and 32 hexadecimal digits. The first key makes public ids, every key reads them. Only the server's user may read the file."},

	{.name = "snowid.datacenter_bits", .type = SNOWID_SETTING_INT, .variable = &snowid_layout.datacenter_bits, .boot = SNOWID_DEFAULT_DATACENTER_BITS, .min = 0, .max = SNOWID_MAX_NODE_SEQ_BITS, .context = PGC_POSTMASTER, .preloaded_only = true, .int_check = snowid_datacenter_bits_check, .before = snowid_check_layout, .description = "Width in bits of the datacenter field of ids."},
	{.name = "snowid.worker_bits", .type = SNOWID_SETTING_INT, .variable = &snowid_layout.worker_bits, .boot = SNOWID_DEFAULT_WORKER_BITS, .min = 0, .max = SNOWID_MAX_NODE_SEQ_BITS, .context = PGC_POSTMASTER, .preloaded_only = true, .int_check = snowid_worker_bits_check, .description = "Width in bits of the worker field of ids."},
	{.name = "snowid.sequence_bits", .type = SNOWID_SETTING_INT, .variable = &snowid_layout.sequence_bits, .boot = SNOWID_DEFAULT_SEQUENCE_BITS, .min = 0, .max = SNOWID_MAX_NODE_SEQ_BITS, .context = PGC_POSTMASTER, .preloaded_only = true, .int_check = snowid_sequence_bits_check, .description = "Width in bits of the sequence field of ids, which counts the ids of one millisecond."},
	{.name = "snowid.datacenter_id", .type = SNOWID_SETTING_INT, .variable = &snowid_datacenter_id, .boot = 0, .min = 0, .max = SNOWID_MAX_ID, .context = PGC_POSTMASTER, .preloaded_only = true, .int_check = snowid_datacenter_id_check, .before = snowid_layout_complete, .description = "Datacenter id carried by every id this server issues."},
	{.name = "snowid.worker_id", .type = SNOWID_SETTING_INT, .variable = &snowid_worker_id, .boot = -1, .min = -1, .max = SNOWID_MAX_ID, .context = PGC_POSTMASTER, .preloaded_only = true, .int_check = snowid_worker_id_check, .description = "Worker id carried by every id this server issues; -1 means not set."},
	{.name = "snowid.epoch", .type = SNOWID_SETTING_STRING, .variable = &snowid_epoch, .boot_string = SNOWID_DEFAULT_EPOCH, .context = PGC_POSTMASTER, .preloaded_only = true, .string_check = snowid_epoch_check, .string_assign = snowid_epoch_assign, .description = "Time that the timestamp field of ids counts from."},
	{.name = "snowid.coordinator_url", .type = SNOWID_SETTING_STRING, .variable = &snowid_coordinator_url, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .secret = true, .extra_size = sizeof(SnowidUrlExtra), .preloaded_only = true, .string_check = snowid_coordinator_url_check, .string_assign = snowid_coordinator_url_assign, .description = "Coordinator this server claims its worker id from, or registers snowid.worker_id in: a Redis URL or a PostgreSQL connection URI; empty for none.", .long_description = "redis://..., rediss://..., unix://..., redis-sentinel://... or rediss-sentinel://... as snowid.redis_url takes them, or postgresql://[user@]host[:port]/database[?param=value...] (libpq's connection URI; the password from a password file, never here)."},
	{.name = "snowid.coordinator_timeout_ms", .type = SNOWID_SETTING_INT, .variable = &snowid_coordinator_timeout_ms, .boot = SNOWID_COORDINATOR_TIMEOUT_DEFAULT_MS, .min = 1, .max = SNOWID_COORDINATOR_TIMEOUT_MAX_MS, .context = PGC_POSTMASTER, .flags = GUC_UNIT_MS, .preloaded_only = true, .description = "Time a call to the coordinator (a claim, a renewal, a release) may take, in milliseconds."},
	{.name = "snowid.clock_margin", .type = SNOWID_SETTING_INT, .variable = &snowid_clock_margin_ms, .boot = SNOWID_CLOCK_MARGIN_DEFAULT_MS, .min = 0, .max = SNOWID_CLOCK_MARGIN_MAX_MS, .context = PGC_POSTMASTER, .flags = GUC_UNIT_MS, .preloaded_only = true, .description = "How far apart the clocks of the servers of a datacenter, and the coordinator's, may lie, in milliseconds; a worker id granted after the coordinator forgot its claims starts that far past its quiet period, and more."},
	{.name = "snowid.checkin_interval", .type = SNOWID_SETTING_INT, .variable = &snowid_checkin_interval_ms, .boot = SNOWID_CHECKIN_INTERVAL_DEFAULT_MS, .min = 1000, .max = SNOWID_CHECKIN_INTERVAL_MAX_MS, .context = PGC_POSTMASTER, .flags = GUC_UNIT_MS, .preloaded_only = true, .description = "How often a server that claimed its worker id for good checks it in with the coordinator, in milliseconds; a quiet period after the coordinator forgot its claims lasts at least this long."},
	{.name = "snowid.redis_url", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_url, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .secret = true, .extra_size = sizeof(SnowidUrlExtra), .preloaded_only = true, .before = snowid_check_one_coordinator, .string_check = snowid_redis_url_check, .string_assign = snowid_redis_url_assign, .description = "Redis server this server claims its worker id from, or registers snowid.worker_id in (the older name of snowid.coordinator_url, for Redis); empty for none.", .long_description = "redis://[[user]:password@]host[:port][/db], rediss://... (TLS), unix://[[user]:password@]/path/to/redis.sock[?db=N], redis-sentinel://[[user]:password@]host[:port][,...]/master[/db] or rediss-sentinel://... (TLS). A password here is readable by members of pg_read_all_settings: use snowid.redis_password_file."},
	{.name = "snowid.worker_lease", .type = SNOWID_SETTING_INT, .variable = &snowid_worker_lease_ms, .boot = 0, .min = 0, .max = SNOWID_MAX_LEASE_MS, .context = PGC_POSTMASTER, .flags = GUC_UNIT_MS, .preloaded_only = true, .int_check = snowid_worker_lease_check, .range_detail = SNOWID_LEASE_RANGE_DETAIL, .before = snowid_check_lease_needs, .description = "How long a worker id taken from the coordinator is leased for, renewed every third of it; 0 claims it for good."},
	{.name = "snowid.release_on_shutdown", .type = SNOWID_SETTING_BOOL, .variable = &snowid_release_on_shutdown, .boot = false, .context = PGC_SIGHUP, .preloaded_only = true, .description = "Whether a clean shutdown gives a worker id on lease back to the coordinator at once."},
	{.name = "snowid.coordinator_stores", .type = SNOWID_SETTING_STRING, .variable = &snowid_coordinator_stores, .boot_string_of = snowid_store_names, .context = PGC_INTERNAL, .flags = GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE, .description = "Coordinators this build of snowid can claim worker ids from, as snowid.coordinator_url names them (read only).", .long_description = "redis and postgresql, or postgresql alone in a build without Redis support (made without hiredis)."},
};

/*
 * snowid_setting
 *		The table's entry of a setting.
 */
static const SnowidSetting *
snowid_setting(const char *name)
{
	int			i;

	for (i = 0; i < lengthof(snowid_settings); i++)
	{
		if (strcmp(snowid_settings[i].name, name) == 0)
			return &snowid_settings[i];
	}
	elog(ERROR, "snowid has no setting \"%s\"", name);
	return NULL;				/* keep the compiler quiet */
}

/*
 * snowid_start_int
 *		A configured int of the table, checked as at start, or its default.
 */
static int
snowid_start_int(const char *name)
{
	const SnowidSetting *setting = snowid_setting(name);
	int			number = setting->boot;
	void	   *extra;

	(void) snowid_setting_check_start(setting, &number, &extra);
	return number;
}

/*
 * snowid_start_epoch
 *		The configured snowid.epoch, checked as at start, in Unix ms (the
 *		default if it is not set).
 */
static int64
snowid_start_epoch(void)
{
	int			unused;
	void	   *extra;
	int64		unix_ms = SNOWID_DEFAULT_EPOCH_MS;

	if (snowid_setting_check_start(snowid_setting("snowid.epoch"), &unused,
						   &extra) != NULL && extra != NULL)
	{
		unix_ms = *(int64 *) extra;
		guc_free(extra);
	}
	return unix_ms;
}

/*
 * snowid_layout_bits
 *		Reads and checks the configured widths of the datacenter, worker and
 *		sequence fields into *layout; the timestamp gets the rest of the 63
 *		bits, and must keep at least 39.
 */
static void
snowid_layout_bits(SnowidLayout *layout)
{
	int			node_seq_bits;

	layout->datacenter_bits = snowid_start_int("snowid.datacenter_bits");
	layout->worker_bits = snowid_start_int("snowid.worker_bits");
	layout->sequence_bits = snowid_start_int("snowid.sequence_bits");

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
 * snowid_check_layout
 *		Before the widths are defined: the layout this start will use, so
 *		that each width's check hook sees the other two.  The variables keep
 *		their boot values until defined (assert-enabled servers check that
 *		since 16).
 */
static void
snowid_check_layout(void)
{
	SnowidLayout layout = snowid_layout;

	snowid_layout_bits(&layout);
	snowid_layout_in_force = layout;
}

/*
 * snowid_layout_complete
 *		After the widths are defined: the timestamp gets the rest.
 */
static void
snowid_layout_complete(void)
{
	Assert(snowid_layout.datacenter_bits ==
		   snowid_layout_in_force.datacenter_bits &&
		   snowid_layout.worker_bits == snowid_layout_in_force.worker_bits &&
		   snowid_layout.sequence_bits ==
		   snowid_layout_in_force.sequence_bits);
	snowid_layout.timestamp_bits = snowid_layout_in_force.timestamp_bits;
}

/*
 * snowid_check_lease_needs
 *		Before snowid.worker_lease is defined: a lease needs a coordinator
 *		and is taken, not configured.
 */
static void
snowid_check_lease_needs(void)
{
	int			lease_ms = snowid_start_int("snowid.worker_lease");

	if (lease_ms > 0 && snowid_store == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.worker_lease needs snowid.coordinator_url"),
				 errdetail("A worker id on lease is taken from a coordinator, and its lease renewed there."),
				 errhint("Set snowid.coordinator_url, or set snowid.worker_lease to 0.")));
	if (lease_ms > 0 && snowid_worker_id >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.worker_lease cannot be combined with snowid.worker_id"),
				 errdetail("On lease, a server takes whichever worker id is free."),
				 errhint("Set snowid.worker_id to -1, or set snowid.worker_lease to 0 for a permanent claim.")));
}

/*
 * snowid_check_one_coordinator
 *		Before snowid.redis_url is defined: it and snowid.coordinator_url
 *		both name the coordinator, and the newer one wins, with a WARNING
 *		(ALTER SYSTEM could not refuse the pair, so a start does not).
 */
static void
snowid_check_one_coordinator(void)
{
	const char *redis_url = snowid_configured_value("snowid.redis_url");

	if (snowid_coordinator_url_extra != NULL &&
		redis_url != NULL && redis_url[0] != '\0')
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.redis_url is not used: snowid.coordinator_url is set"),
				 errdetail("Both name the coordinator this server claims its worker id from; snowid.coordinator_url wins."),
				 errhint("Remove snowid.redis_url.")));
}

/*
 * snowid_define_rows
 *		Defines settings given as rows: each checked as at start, then
 *		defined; while preloading all of them, else only those not
 *		preloaded_only.
 */
static void
snowid_define_rows(const SnowidSetting *rows, int count, bool preloading)
{
	int			i;

	for (i = 0; i < count; i++)
	{
		const SnowidSetting *setting = &rows[i];
		int			number;
		void	   *extra;

		if (setting->preloaded_only && !preloading)
			continue;
		if (preloading)
		{
			if (setting->before)
				setting->before();
			(void) snowid_setting_check_start(setting, &number, &extra);
			if (extra != NULL)
			{
				if (setting->secret)
					explicit_bzero(extra, setting->extra_size);
				guc_free(extra);
			}
		}
		snowid_setting_define(setting);
	}
}

/*
 * snowid_define_settings
 *		Defines the settings of the table, then those of each store this
 *		build has (stores.c); while preloading all of them, else only the
 *		reloadable ones.  Server-start settings can only be defined while
 *		preloading; loaded later, the library still reads the configured
 *		epoch and layout, so that snowid_decode() follows them.  That comes
 *		first: if it fails, loading fails and is tried again on the next
 *		call, which must not find settings this call defined already.
 */
void
snowid_define_settings(bool preloading)
{
	int			i;

	if (!preloading)
	{
		SnowidLayout layout;

		layout.epoch_ms = snowid_start_epoch();
		snowid_layout_bits(&layout);
		snowid_layout = layout;
	}

	snowid_define_rows(snowid_settings, lengthof(snowid_settings), preloading);
	for (i = 0; i < snowid_store_count(); i++)
	{
		int			count;
		const SnowidSetting *rows = snowid_store_settings(i, &count);

		snowid_define_rows(rows, count, preloading);
	}

	if (preloading)
		MarkGUCPrefixReserved("snowid");
}
