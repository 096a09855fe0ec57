/*-------------------------------------------------------------------------
 *
 * schemes.h
 *	  The schemes of Redis' URLs, one SNOWID_REDIS_SCHEME(prefix, kind,
 *	  tls) a line, for the file that includes this one to define the macro
 *	  as it needs: url.c parses URLs by them (kind is its SnowidUrlKind
 *	  without SNOWID_URL_, tls whether the scheme means TLS), and
 *	  src/stores.c knows a Redis URL by them in a build without Redis
 *	  support, which refuses it as such.  Only a list, with no code behind
 *	  it, so that such a build needs nothing else of src/redis.
 *
 * No include guard: as PostgreSQL's rmgrlist.h, it is included wherever
 * the list is wanted.
 *
 *-------------------------------------------------------------------------
 */

/* there is deliberately not an #ifndef SNOWID_REDIS_SCHEMES_H here */

SNOWID_REDIS_SCHEME("redis://", TCP, false)
SNOWID_REDIS_SCHEME("rediss://", TCP, true)
SNOWID_REDIS_SCHEME("unix://", UNIX, false)
SNOWID_REDIS_SCHEME("redis-sentinel://", SENTINEL, false)
SNOWID_REDIS_SCHEME("rediss-sentinel://", SENTINEL, true)
