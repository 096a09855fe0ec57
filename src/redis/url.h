/*-------------------------------------------------------------------------
 *
 * url.h
 *	  Where the Redis server is: snowid.redis_url parsed into a
 *	  SnowidRedisTarget, the key prefix and the names of a datacenter's
 *	  keys.  Nothing here talks to Redis.
 *
 *	snowid_redis_parse_url()	parses snowid.redis_url; never ereports and
 *								never allocates, so it can serve as a GUC
 *								check hook and fill the hook's "extra".
 *
 * Accepted URLs (user and password are percent-decoded; "%40" is "@"):
 *
 *	redis://[[user]:password@]host[:port][/db]
 *	redis://[[user]:password@][ipv6-address][:port][/db]
 *	rediss://... (as redis://, over TLS; needs hiredis 1.x with TLS)
 *	unix://[[user]:password@]/path/to/redis.sock[?db=N]
 *	redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/master[/db]
 *		[?sentinel_user=name&sentinel_password=secret]
 *	rediss-sentinel://... (as redis-sentinel://, over TLS to the sentinels
 *		and to the master they name; needs hiredis 1.x with TLS)
 *
 * Port defaults to 6379 (26379 for a sentinel) and db to 0.  As with
 * redis-cli, "redis://secret@host" (user info without a colon) means a
 * password, not a user name.  A user name needs Redis 6 or later (AUTH user
 * password); without one, plain AUTH is sent.  In a redis-sentinel:// URL
 * the user and password are the master's; the sentinels get their own,
 * sentinel_user and sentinel_password, or none.
 *
 * Keys: the worker ids of one datacenter live in one hash,
 *
 *	{<prefix>:dc:<datacenter>}:owners	field worker id, value identity
 *
 * so "who holds what" is HGETALL of that key and freeing an id is one HDEL.
 * Next to it, the lease keys of lease.h.  A lease given back leaves its
 * fence in the owners hash too, as the field "fence:<worker id>": a
 * permanent claim takes such an id only if it can start above that fence
 * (every id its holders issued lies below it), and reads no other key, so
 * that it runs on a Redis Cluster slot that is being migrated.
 * The braces are a Redis Cluster hash tag; every key this module may ever add
 * for a datacenter carries the same tag so that the claim script, which
 * touches them together, runs on a cluster.
 *
 * The passwords never leave SnowidRedisTarget.password and
 * .sentinel_password: they are not part of any problem text, rendered
 * target, result or error message.  A password in the URL is readable by
 * whoever can read the setting; the password files of secret.h keep it out
 * of every setting, and a session fills it in its own copy of the target.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_URL_H
#define SNOWID_REDIS_URL_H

/*
 * hiredis versions.  snowid builds with hiredis 0.14 (Debian 12) and 1.x
 * (Debian 13, Ubuntu 24.04).  The transport uses only the calls both have
 * (redisConnectNonBlock, redisConnectUnixNonBlock, redisAppendCommandArgv,
 * redisBufferWrite, redisBufferRead, redisGetReplyFromReader); the one
 * difference is TLS, which only hiredis 1.x built with hiredis_ssl offers.
 * The Makefile defines SNOWID_HAVE_HIREDIS_SSL when pkg-config finds
 * hiredis_ssl; everything that needs it is in tls.c.
 */
#ifdef SNOWID_HAVE_HIREDIS_SSL
#define SNOWID_REDIS_TLS_SUPPORTED	true
#else
#define SNOWID_REDIS_TLS_SUPPORTED	false
#endif

/* Buffer sizes, terminating NUL included */
#define SNOWID_REDIS_HOST_LEN		256 /* DNS names are at most 253 */
#define SNOWID_REDIS_PATH_LEN		108 /* sun_path of sockaddr_un on Linux */
#define SNOWID_REDIS_USER_LEN		128
#define SNOWID_REDIS_PASSWORD_LEN	512
#define SNOWID_REDIS_KEY_PREFIX_LEN 65	/* prefix is at most 64 bytes */
#define SNOWID_REDIS_DESCRIBE_LEN	(SNOWID_REDIS_HOST_LEN + 16)
#define SNOWID_REDIS_MESSAGE_LEN	256
#define SNOWID_REDIS_MASTER_NAME_LEN 128
#define SNOWID_REDIS_MAX_SENTINELS	8

#define SNOWID_REDIS_DEFAULT_PORT	6379
#define SNOWID_REDIS_SENTINEL_PORT	26379

/* Where one connection goes: a server, a sentinel, a redirection's target */
typedef struct SnowidRedisNode
{
	char		host[SNOWID_REDIS_HOST_LEN];	/* TCP: name or address, IPv6
												 * without brackets; "" for a
												 * unix socket */
	int			port;			/* TCP port; 0 for a unix socket */
	char		socket_path[SNOWID_REDIS_PATH_LEN]; /* unix socket; "" for TCP */
} SnowidRedisNode;

/*
 * Where the Redis server is and how to log in.  Fixed-size so that a GUC
 * check hook can hand it over as "extra" with one guc_malloc.
 */
typedef struct SnowidRedisTarget
{
	SnowidRedisNode node;		/* the server; unused with sentinels */
	bool		tls;			/* rediss:// or rediss-sentinel://: TLS to
								 * every server and sentinel */
	char		user[SNOWID_REDIS_USER_LEN];	/* ACL user; "" for none */
	char		password[SNOWID_REDIS_PASSWORD_LEN];	/* "" for none; secret */
	int			db;				/* SELECTed when not 0 */
	int			sentinel_count; /* redis-sentinel://: how many; else 0 */
	SnowidRedisNode sentinels[SNOWID_REDIS_MAX_SENTINELS];
	char		master_name[SNOWID_REDIS_MASTER_NAME_LEN];	/* of sentinels */
	char		sentinel_user[SNOWID_REDIS_USER_LEN];	/* "" for none */
	char		sentinel_password[SNOWID_REDIS_PASSWORD_LEN];	/* "" for none;
																 * secret */
} SnowidRedisTarget;

/*
 * The servers snowid may follow a sentinel's answer or a Redis Cluster
 * redirection to (snowid.redis_redirect_hosts), beside the URL's own hosts:
 * host names, addresses and networks.  Fixed-size, for a GUC check hook.
 */
#define SNOWID_REDIS_MAX_REDIRECT_HOSTS	32

typedef struct SnowidRedisHostRule
{
	char		name[SNOWID_REDIS_HOST_LEN];	/* a host name, in lower case;
												 * "" for an address */
	int			family;			/* AF_INET or AF_INET6 for an address */
	unsigned char addr[16];
	int			bits;			/* the network's prefix length */
	int			port;			/* the one port followed there; 0 for any */
} SnowidRedisHostRule;

typedef struct SnowidRedisHostList
{
	bool		any;			/* "*": every server */
	int			count;
	SnowidRedisHostRule rules[SNOWID_REDIS_MAX_REDIRECT_HOSTS];
} SnowidRedisHostList;

/* Key buffer: braces, prefix, ":dc:", an int and ":owners" */
#define SNOWID_REDIS_KEY_LEN		(SNOWID_REDIS_KEY_PREFIX_LEN + 32)

/* The keys of a datacenter (above, and lease.h) */
typedef struct SnowidRedisKeys
{
	char		owners[SNOWID_REDIS_KEY_LEN];
	char		leases[SNOWID_REDIS_KEY_LEN];
	char		fences[SNOWID_REDIS_KEY_LEN];
} SnowidRedisKeys;

extern bool snowid_redis_url_scheme(const char *url);
extern bool snowid_redis_parse_url(const char *url, SnowidRedisTarget *target,
								   const char **problem);
extern bool snowid_redis_check_key_prefix(const char *prefix,
										  const char **problem);
extern bool snowid_redis_parse_host_list(const char *list,
										 SnowidRedisHostList *out,
										 const char **problem);
extern bool snowid_redis_host_listed(const SnowidRedisHostList *list,
									 const char *host, int port);
extern void snowid_redis_keys(SnowidRedisKeys *keys, const char *key_prefix,
							  int datacenter_id);
extern bool snowid_parse_number(const char *src, size_t n, int64 min,
								int64 max, int *out);
extern void snowid_redis_describe_node(const SnowidRedisNode *node,
									   char *buf, size_t len);

#endif							/* SNOWID_REDIS_URL_H */
