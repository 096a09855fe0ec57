/*-------------------------------------------------------------------------
 *
 * stores.c
 *	  The registry of claim stores: each store of coord/store.h that this
 *	  build offers, one line each, with the rows of its own settings.  A
 *	  new store is a folder of src/ with a SnowidStore, and its line here.
 *
 * The one file that knows whether this build has Redis support: the
 * Makefile defines SNOWID_WITH_REDIS where it builds src/redis (with
 * hiredis), and leaves src/redis and settings_redis.c out where it does
 * not.  Such a build knows a Redis URL only by its scheme
 * (redis/schemes.h), to refuse it as needing Redis support rather than as
 * a URL of no store.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "pgcoord/store.h"
#include "stores.h"

#ifdef SNOWID_WITH_REDIS
#include "redis/store.h"
#include "settings_redis.h"
#else
/* The schemes of Redis' URLs, which this build refuses */
#define SNOWID_REDIS_SCHEME(prefix, kind, tls) prefix,
static const char *const snowid_redis_schemes[] = {
#include "redis/schemes.h"
};
#undef SNOWID_REDIS_SCHEME
#endif

/* A store this build offers, and the rows of its own settings */
typedef struct SnowidStoreEntry
{
	const SnowidStore *store;
	const SnowidSetting *settings;
	const int  *settings_count;
} SnowidStoreEntry;

static const SnowidStoreEntry snowid_stores[] = {
#ifdef SNOWID_WITH_REDIS
	{&snowid_redis_store, snowid_redis_settings, &snowid_redis_settings_count},
#endif
	{&snowid_pg_store, NULL, NULL},
};

/*
 * snowid_store_for_url
 *		The store whose URL url is, or NULL.
 */
const SnowidStore *
snowid_store_for_url(const char *url)
{
	int			i;

	for (i = 0; i < lengthof(snowid_stores); i++)
	{
		if (snowid_stores[i].store->accepts(url))
			return snowid_stores[i].store;
	}
	return NULL;
}

/*
 * snowid_store_named
 *		The store of that name ("redis"), or NULL if this build has none.
 */
const SnowidStore *
snowid_store_named(const char *name)
{
	int			i;

	for (i = 0; i < lengthof(snowid_stores); i++)
	{
		if (strcmp(snowid_stores[i].store->name, name) == 0)
			return snowid_stores[i].store;
	}
	return NULL;
}

/*
 * snowid_store_schemes
 *		The schemes of every store's URLs, for a message: "redis://, ... or
 *		postgresql://".
 */
const char *
snowid_store_schemes(void)
{
	static char schemes[256];
	int			i;

	schemes[0] = '\0';
	for (i = 0; i < lengthof(snowid_stores); i++)
	{
		if (i > 0)
			strlcat(schemes, i == lengthof(snowid_stores) - 1 ? " or " : ", ",
					sizeof(schemes));
		strlcat(schemes, snowid_stores[i].store->schemes, sizeof(schemes));
	}
	return schemes;
}

/*
 * snowid_store_names
 *		The names of the stores this build offers, for
 *		snowid.coordinator_stores: "redis, postgresql".
 */
const char *
snowid_store_names(void)
{
	static char names[64];
	int			i;

	names[0] = '\0';
	for (i = 0; i < lengthof(snowid_stores); i++)
	{
		if (i > 0)
			strlcat(names, ", ", sizeof(names));
		strlcat(names, snowid_stores[i].store->name, sizeof(names));
	}
	return names;
}

/*
 * snowid_store_count, snowid_store_settings
 *		How many stores this build offers, and the rows of the settings of
 *		the i-th (NULL, and *count 0, for none).
 */
int
snowid_store_count(void)
{
	return lengthof(snowid_stores);
}

const SnowidSetting *
snowid_store_settings(int i, int *count)
{
	Assert(i >= 0 && i < lengthof(snowid_stores));
	*count = snowid_stores[i].settings_count ?
		*snowid_stores[i].settings_count : 0;
	return snowid_stores[i].settings;
}

/*
 * snowid_store_missing
 *		Whether the value of a coordinator setting names a store this build
 *		was made without: for the setting of one store (name: "redis", for
 *		snowid.redis_url), any URL, else a URL of that store's scheme.  If
 *		so, a GUC check hook's message, detail and hint say so and how to
 *		get it.  With Redis support, no store is missing.
 */
bool
snowid_store_missing(const char *setting, const char *name, const char *url)
{
#ifndef SNOWID_WITH_REDIS
	bool		redis = false;
	int			i;

	if (name != NULL)
		redis = strcmp(name, "redis") == 0;
	for (i = 0; name == NULL && i < lengthof(snowid_redis_schemes); i++)
		redis |= strncmp(url, snowid_redis_schemes[i],
						 strlen(snowid_redis_schemes[i])) == 0;
	if (redis)
	{
		GUC_check_errmsg("this build of snowid has no Redis support");
		GUC_check_errdetail("\"%s\" names a Redis server, and this build of snowid was made without hiredis, the library it talks to Redis with.",
							setting);
		GUC_check_errhint("To keep claiming from Redis, install hiredis (libhiredis-dev) and build and install snowid again with make with_hiredis=yes, which stops where hiredis is missing (doc/install.md, \"Building without hiredis\"). Claim from a PostgreSQL coordination database or set snowid.worker_id by hand only for a whole datacenter that moves there together (doc/operations.md, \"Moving a datacenter to another store\"), or with an id that no store hands out: one server of a datacenter whose other servers claim from Redis would issue their ids.");
		return true;
	}
#endif
	return false;
}
