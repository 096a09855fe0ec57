/*-------------------------------------------------------------------------
 *
 * settings_redis.c
 *	  The snowid.redis_* settings, one a line, over the variables of the
 *	  Redis store (redis/store.h): the rows of the settings table that
 *	  settings.c defines after its own in a build with Redis support, with
 *	  their check hooks and the checks a start makes before them.  A build
 *	  without Redis support compiles neither this file nor src/redis (the
 *	  Makefile), and has none of these settings.  Settings are per-process
 *	  copies set by the GUC machinery; no lock is involved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "compat.h"
#include "redis/store.h"
#include "redis/url.h"
#include "settings_redis.h"

static char *snowid_redis_redirect_hosts_text = NULL;

static void snowid_check_password_files(void);

/*
 * snowid_redis_redirect_hosts_check, snowid_redis_redirect_hosts_assign
 *		GUC hooks of snowid.redis_redirect_hosts: the list parsed.
 */
static bool
snowid_redis_redirect_hosts_check(char **newval, void **extra,
								  GucSource source)
{
	SnowidRedisHostList list;
	SnowidRedisHostList *result;
	const char *problem;

	if (!snowid_redis_parse_host_list(*newval, &list, &problem))
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	result = (SnowidRedisHostList *) guc_malloc(LOG, sizeof(list));
	if (result == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	memcpy(result, &list, sizeof(list));
	*extra = result;
	return true;
}

static void
snowid_redis_redirect_hosts_assign(const char *newval, void *extra)
{
	snowid_redis_redirect_hosts = (const SnowidRedisHostList *) extra;
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
 * The snowid.redis_* settings but snowid.redis_url, one a line, in the
 * order of definition (after the glue's, so after snowid.coordinator_url
 * and snowid.redis_url, which the password files are checked against).
 */
const SnowidSetting snowid_redis_settings[] = {
	{.name = "snowid.redis_password_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_password_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .before = snowid_check_password_files, .description = "File whose first line is the Redis password, read at each connection; empty for the password of snowid.redis_url, if any."},
	{.name = "snowid.redis_sentinel_password_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_sentinel_password_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .description = "File whose first line is the Redis sentinels' password, read at each connection; empty for the sentinel_password of snowid.redis_url, if any."},
	{.name = "snowid.redis_redirect_hosts", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_redirect_hosts_text, .boot_string = "", .context = PGC_SIGHUP, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .extra_size = sizeof(SnowidRedisHostList), .string_check = snowid_redis_redirect_hosts_check, .string_assign = snowid_redis_redirect_hosts_assign, .description = "Redis servers that a sentinel or a Cluster redirection may send snowid to, beside the URL's hosts: host names, addresses and networks, comma-separated; * for any.", .long_description = "snowid logs in (with the password) only to the hosts of the URL and to these, or to any over TLS checked against snowid.redis_tls_ca_file. A name matches only the same name; an address matches an address or a network (10.0.0.0/24, fd00::/8)."},
	{.name = "snowid.redis_key_prefix", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_key_prefix, .boot_string = "snowid", .context = PGC_POSTMASTER, .preloaded_only = true, .string_check = snowid_redis_key_prefix_check, .description = "Prefix of the Redis keys that hold the worker id claims."},
	{.name = "snowid.redis_timeout_ms", .type = SNOWID_SETTING_INT, .variable = &snowid_redis_timeout_ms, .boot = 0, .min = 0, .max = 600000, .context = PGC_POSTMASTER, .flags = GUC_UNIT_MS, .preloaded_only = true, .description = "Time a call to Redis may take, in milliseconds; 0 for snowid.coordinator_timeout_ms."},
	{.name = "snowid.redis_min_replicas", .type = SNOWID_SETTING_INT, .variable = &snowid_redis_min_replicas, .boot = 0, .min = 0, .max = 100, .context = PGC_POSTMASTER, .preloaded_only = true, .description = "Replicas that must have a worker id claim (Redis WAIT) before it is used."},
	{.name = "snowid.redis_tls_ca_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_tls_ca_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .description = "CA certificates that a rediss:// server's certificate must be signed by; empty for the system's."},
	{.name = "snowid.redis_tls_cert_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_tls_cert_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .description = "Client certificate shown to a rediss:// server; empty for none."},
	{.name = "snowid.redis_tls_key_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_tls_key_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .description = "Private key of snowid.redis_tls_cert_file."},
	{.name = "snowid.redis_tls_key_passphrase_file", .type = SNOWID_SETTING_STRING, .variable = &snowid_redis_tls_key_passphrase_file, .boot_string = "", .context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY, .preloaded_only = true, .description = "File whose first line is the passphrase of an encrypted snowid.redis_tls_key_file; empty for none."},
};

const int	snowid_redis_settings_count = lengthof(snowid_redis_settings);

/*
 * snowid_password_file_configured
 *		Whether a password file setting is configured to a file name.
 */
static bool
snowid_password_file_configured(const char *name)
{
	const char *value = snowid_configured_value(name);

	return value != NULL && value[0] != '\0';
}

/*
 * snowid_check_password_files
 *		Before the password files are defined: a password file wins over a
 *		password in the URL, and a sentinels' password file needs sentinels.
 *		Neither stops the start (ALTER SYSTEM could not refuse it), but
 *		both are warned about: a password left in the URL stays readable.
 */
static void
snowid_check_password_files(void)
{
	const SnowidRedisTarget *target = snowid_store == &snowid_redis_store ?
		(const SnowidRedisTarget *) snowid_store_target : NULL;

	if (target != NULL && target->password[0] != '\0' &&
		snowid_password_file_configured("snowid.redis_password_file"))
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.redis_url holds a password, but snowid uses the one of snowid.redis_password_file"),
				 errhint("Remove the password from snowid.redis_url: in the URL, members of pg_read_all_settings can read it.")));
	if (target != NULL && target->sentinel_password[0] != '\0' &&
		snowid_password_file_configured("snowid.redis_sentinel_password_file"))
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.redis_url holds a sentinel_password, but snowid uses the one of snowid.redis_sentinel_password_file"),
				 errhint("Remove sentinel_password from snowid.redis_url: in the URL, members of pg_read_all_settings can read it.")));
	if (snowid_password_file_configured("snowid.redis_sentinel_password_file") &&
		(target == NULL || target->sentinel_count == 0))
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowid.redis_sentinel_password_file is not used: snowid.redis_url names no sentinels"),
				 errhint("Use snowid.redis_password_file for the password of the Redis server.")));
}
