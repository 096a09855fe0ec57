/*-------------------------------------------------------------------------
 *
 * redis_claim.h
 *	  Claiming a worker id from Redis: the URL of the Redis server, the
 *	  claim itself, and the errors it can end in.
 *
 * The work is split in three so that the caller decides what a failure
 * means (for example, fall back to a cached worker id when Redis is
 * unreachable, but never when the datacenter is full):
 *
 *	snowid_redis_parse_url()	parses snowid.redis_url; never ereports and
 *								never allocates, so it can serve as a GUC
 *								check hook and fill the hook's "extra".
 *	snowid_redis_try_claim()	talks to Redis and fills a SnowidClaimResult;
 *								never pallocs; ereports only when
 *								CHECK_FOR_INTERRUPTS() ends a wait (a cancel,
 *								a terminate, a shutdown), and every hiredis
 *								object is freed then too.
 *	snowid_redis_report()		turns a failed SnowidClaimResult into an
 *								ereport at the given level; for a successful
 *								one it only warns if Redis may evict it.
 *
 * Accepted URLs (user and password are percent-decoded; "%40" is "@"):
 *
 *	redis://[[user]:password@]host[:port][/db]
 *	redis://[[user]:password@][ipv6-address][:port][/db]
 *	rediss://... (as redis://, over TLS; needs hiredis 1.x with TLS)
 *	unix://[[user]:password@]/path/to/redis.sock[?db=N]
 *	redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/master[/db]
 *		[?sentinel_user=name&sentinel_password=secret]
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
 * target, result or error message.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_REDIS_CLAIM_H
#define SNOWID_REDIS_CLAIM_H

/* Buffer sizes, terminating NUL included */
#define SNOWID_REDIS_HOST_LEN		256 /* DNS names are at most 253 */
#define SNOWID_REDIS_PATH_LEN		108 /* sun_path of sockaddr_un on Linux */
#define SNOWID_REDIS_USER_LEN		128
#define SNOWID_REDIS_PASSWORD_LEN	512
#define SNOWID_REDIS_KEY_PREFIX_LEN 65	/* prefix is at most 64 bytes */
#define SNOWID_REDIS_IDENTITY_LEN	384
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
	bool		tls;			/* rediss:// */
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

/* Key buffer: braces, prefix, ":dc:", an int and ":owners" */
#define SNOWID_REDIS_KEY_LEN		(SNOWID_REDIS_KEY_PREFIX_LEN + 32)

/* The keys of a datacenter (above, and lease.h) */
typedef struct SnowidRedisKeys
{
	char		owners[SNOWID_REDIS_KEY_LEN];
	char		leases[SNOWID_REDIS_KEY_LEN];
	char		fences[SNOWID_REDIS_KEY_LEN];
} SnowidRedisKeys;

/* What a claim asks for */
typedef struct SnowidClaimRequest
{
	const char *key_prefix;		/* snowid.redis_key_prefix; must pass
								 * snowid_redis_check_key_prefix() */
	int			datacenter_id;
	int			explicit_worker_id; /* snowid.worker_id, or -1 to take the
									 * lowest free id */
	int			preferred_worker_id;	/* with explicit_worker_id -1: the id
										 * to take if this identity holds
										 * none and it is free (this server's
										 * last claim), or -1 */
	int			max_worker_id;	/* highest worker id of the bit layout */
	const char *identity;		/* from snowid_redis_identity() */
	int			timeout_ms;		/* the whole claim ends within it */
	int			min_replicas;	/* WAIT for this many replicas; 0: none */
	const char *tls_ca_file;	/* NULL or "": the system's CAs */
	const char *tls_cert_file;	/* NULL or "": no client certificate */
	const char *tls_key_file;
	int64		client_ms;		/* where this server's generator is, Unix
								 * ms: a lease's fence goes a lease past it */
	int64		usable_ms;		/* the latest fence this server can start
								 * above now: its clock plus
								 * snowid.max_drift_ms, Unix ms */
} SnowidClaimRequest;

/* How a claim ended; see snowid_redis_report() for the SQLSTATE of each */
typedef enum SnowidClaimStatus
{
	SNOWID_CLAIM_OK,			/* worker_id is ours */
	SNOWID_CLAIM_UNREACHABLE,	/* no connection, I/O error, timeout, or
								 * Redis busy/loading/cluster down */
	SNOWID_CLAIM_AUTH_FAILED,	/* AUTH refused, or a password is needed
								 * and none was given (NOAUTH) */
	SNOWID_CLAIM_NO_PERMISSION, /* logged in, but the ACL forbids the
								 * commands (NOPERM) */
	SNOWID_CLAIM_ALL_HELD,		/* every id 0..max_worker_id is held */
	SNOWID_CLAIM_FENCED,		/* the ids not held (or the explicit one)
								 * are fenced past usable_ms: worker_id is
								 * the one fenced least far, floor_ms its
								 * fence */
	SNOWID_CLAIM_CONFLICT,		/* explicit id is held by holder */
	SNOWID_CLAIM_HOLDS_OTHER,	/* this identity already holds worker_id,
								 * not the explicit id */
	SNOWID_CLAIM_REDIS_ERROR,	/* any other error reply (READONLY, OOM,
								 * SELECT out of range, ...) */
	SNOWID_CLAIM_PROTOCOL_ERROR,	/* a reply of unexpected shape */
	SNOWID_CLAIM_TLS_SETUP,		/* CA, certificate or key file unusable */
	SNOWID_CLAIM_TLS_UNTRUSTED, /* server certificate not signed by a CA
								 * we trust */
	SNOWID_CLAIM_TLS_HOSTNAME,	/* certificate is for another host name */
	SNOWID_CLAIM_TLS_EXPIRED,	/* certificate expired or not yet valid */
	SNOWID_CLAIM_TLS_CLIENT_CERT,	/* server wants a client certificate,
									 * or refused ours */
	SNOWID_CLAIM_TLS_FAILED,	/* any other TLS handshake failure */
	SNOWID_CLAIM_NO_SENTINEL,	/* no sentinel could be reached */
	SNOWID_CLAIM_NO_MASTER,		/* the sentinels know no master by that
								 * name */
	SNOWID_CLAIM_NOT_MASTER,	/* the named master says it is a replica */
	SNOWID_CLAIM_FEW_REPLICAS	/* WAIT: fewer replicas than
								 * snowid.redis_min_replicas have the claim */
} SnowidClaimStatus;

typedef struct SnowidClaimResult
{
	SnowidClaimStatus status;
	int			worker_id;		/* OK: the claimed id; CONFLICT: the explicit
								 * id; HOLDS_OTHER: the id already held; else
								 * -1 */
	bool		connected;		/* UNREACHABLE: a connection was made, and
								 * lost, timed out or answered "not now" */
	bool		evictable;		/* OK: Redis reported an allkeys-* eviction
								 * policy, which may drop the claim */
	int			replicas;		/* FEW_REPLICAS: how many acknowledged */
	int64		floor_ms;		/* OK: the fence worker_id had, Unix ms:
								 * every id issued with it so far lies
								 * below, so this server's must start at
								 * or above it; FENCED: the fence */
	double		elapsed_ms;		/* how long the claim took */
	char		master_name[SNOWID_REDIS_MASTER_NAME_LEN];	/* of the URL's
															 * sentinels */
	char		node[SNOWID_REDIS_DESCRIBE_LEN];	/* server last talked to:
													 * host:port,
													 * [ipv6]:port or
													 * unix:/path */
	char		holder[SNOWID_REDIS_IDENTITY_LEN];	/* CONFLICT: identity
													 * holding the explicit id */
	char		message[SNOWID_REDIS_MESSAGE_LEN];	/* a sentence for the
													 * detail, in hiredis' or
													 * Redis' own words; OK
													 * with evictable: the
													 * policy */
} SnowidClaimResult;

/*
 * Lua the claim and lease scripts share.  wid(field) is the worker id a
 * hash field names, if it lies in 0..max (the script defines max first).
 * After SNOWID_REDIS_SCRIPT_FENCES (which needs wid): ms(n) prints a time in
 * ms as an integer, load_fences(flat, prefix) reads the fences from the
 * fields "<prefix><worker id>" of an HGETALL reply, fenced(id) is an id's
 * fence or 0, and least_fenced(ok) is the id with the lowest fence of those
 * ok(id) accepts, or nil.
 */
#define SNOWID_REDIS_SCRIPT_WID \
"local function wid(field)\n" \
"  local n = tonumber(field)\n" \
"  if n and n >= 0 and n <= max and n % 1 == 0 then return n end\n" \
"end\n"

#define SNOWID_REDIS_SCRIPT_FENCES \
"local function ms(n) return string.format('%.0f', n) end\n" \
"local fence = {}\n" \
"local function load_fences(flat, prefix)\n" \
"  for i = 1, #flat, 2 do\n" \
"    local f = string.match(flat[i], '^' .. prefix .. '(%d+)$')\n" \
"    local id, v = f and wid(f), tonumber(flat[i + 1])\n" \
"    if id and v and v > (fence[id] or 0) then fence[id] = v end\n" \
"  end\n" \
"end\n" \
"local function fenced(id) return fence[id] or 0 end\n" \
"local function least_fenced(ok)\n" \
"  local best\n" \
"  for id, v in pairs(fence) do\n" \
"    if ok(id) and (best == nil or v < fence[best] or\n" \
"                   (v == fence[best] and id < best)) then best = id end\n" \
"  end\n" \
"  return best\n" \
"end\n"

extern bool snowid_redis_parse_url(const char *url, SnowidRedisTarget *target,
								   const char **problem);
extern bool snowid_redis_check_key_prefix(const char *prefix,
										  const char **problem);
extern bool snowid_redis_identity(char *buf, size_t len, int datacenter_id,
								  const char *host, int port, uint64 sysid);
extern void snowid_redis_keys(SnowidRedisKeys *keys, const char *key_prefix,
							  int datacenter_id);
extern bool snowid_redis_read_fenced(const char *err,
									 const SnowidClaimRequest *request,
									 SnowidClaimResult *result);

extern void snowid_redis_try_claim(const SnowidRedisTarget *target,
								   const SnowidClaimRequest *request,
								   SnowidClaimResult *result);
extern void snowid_redis_report(int elevel, const SnowidClaimRequest *request,
								const SnowidClaimResult *result);

/* for redis_conn.c and redis_tls.c: a failure in our own words */
extern void snowid_redis_fail(SnowidClaimResult *result,
							  SnowidClaimStatus status, const char *fmt,...)
			pg_attribute_printf(3, 4);
extern void snowid_redis_describe_node(const SnowidRedisNode *node,
									   char *buf, size_t len);

/* For the lease scripts of redis_lease.c: one command, its reply */
struct redisReply;
extern struct redisReply *snowid_redis_run(const SnowidRedisTarget *target,
										   const SnowidClaimRequest *request,
										   int argc, const char **argv,
										   SnowidClaimResult *result);
extern void snowid_redis_error_reply(const SnowidRedisTarget *target,
									 const char *err,
									 SnowidClaimResult *result);

#endif							/* SNOWID_REDIS_CLAIM_H */
