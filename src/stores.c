/*-------------------------------------------------------------------------
 *
 * stores.c
 *	  The registry of claim stores: each store of coord/store.h that this
 *	  build offers, one line each.  A new store is a folder of src/ with a
 *	  SnowidStore, and its line here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgcoord/store.h"
#include "redis/store.h"
#include "stores.h"

static const SnowidStore *const snowid_stores[] = {
	&snowid_redis_store,
	&snowid_pg_store,
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
		if (snowid_stores[i]->accepts(url))
			return snowid_stores[i];
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
		strlcat(schemes, snowid_stores[i]->schemes, sizeof(schemes));
	}
	return schemes;
}
