/*-------------------------------------------------------------------------
 *
 * report.c
 *	  Turning a SnowidRedisResult into an ereport: the message, detail,
 *	  hint and SQLSTATE of every way a call to Redis can end.  No locking
 *	  applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "coord/store.h"
#include "redis/report.h"
#include "redis/scripts.h"

static void snowid_redis_describe(const SnowidRedisRequest *request,
								  const SnowidRedisResult *result, bool full,
								  SnowidStoreReport *r);
static void snowid_redis_describe_fenced(const SnowidRedisRequest *request,
										 const SnowidRedisKeys *keys,
										 const SnowidRedisResult *result,
										 SnowidStoreReport *r);
static void snowid_redis_describe_more(const SnowidRedisRequest *request,
									   const SnowidRedisResult *result,
									   bool full, const char *at,
									   SnowidStoreReport *r);

/*
 * Report how a claim ended at elevel.  A successful claim reports nothing,
 * except a WARNING when Redis may evict it; a failed one reports at elevel,
 * so with ERROR this does not return.
 *
 * What a report says of Redis reaches a client only if
 * request->client_sees_redis (coord/store.c); any other gets the
 * SQLSTATE and a message that sends it to the server log.
 *
 * SQLSTATEs, chosen so that a client can tell "try again later" (class 08)
 * from "fix the configuration":
 *	unreachable		08001 before a connection, 08006 after (as postgres_fdw)
 *	auth failed		28P01, as for a wrong PostgreSQL password
 *	no permission	42501: logged in, but the ACL forbids the commands
 *	all held		53400: the datacenter's id space is a configured limit
 *	conflict		55006: the configured id is in use by another server
 *	holds other		55000: this server's registration does not match its
 *					configuration; nothing is in use by anyone else
 *	implausible		XX001: a fence no snowid server can have written
 *	redis error		58000: an error outside PostgreSQL (READONLY, OOM, ...)
 *	protocol error	08P01
 *	TLS set-up		F0000: a TLS file setting names an unusable file
 *	secret file		F0000: a file holding a password, the TLS key or its
 *					passphrase is unusable, or others may read it
 *	TLS refused		28000: the server's certificate is not trusted, names
 *					another host or has expired, or the server refused our
 *					client certificate: the peer is not proven to be ours
 *	TLS failed		08001: any other handshake failure
 *	no sentinel		08001, as unreachable
 *	no master		42704: the sentinels know no master by that name
 *	not master		08006: a failover is under way; try again
 *	few replicas	53000: the claim may not survive a failover yet
 *	no library		42883: snowid's function library is not loaded, and
 *					the user may not run it as a script instead
 */
void
snowid_redis_report(int elevel, const SnowidRedisRequest *request,
					const SnowidRedisResult *result)
{
	SnowidStoreReport full;
	SnowidStoreReport brief;

	if (result->status == SNOWID_REDIS_OK)
	{
		if (!result->evictable)
			return;
		elevel = WARNING;
	}
	snowid_redis_describe(request, result, true, &full);
	snowid_redis_describe(request, result, false, &brief);
	brief.detail = "The server log says which Redis server and why.";
	brief.hint = NULL;
	snowid_store_emit(elevel, request->client_sees_redis, &full, &brief);
}

/*
 * The command that frees worker id (or "<worker id>" for -1) of the
 * request's datacenter: the library's function that fences it first, at
 * Redis' clock plus the request's margin (snowid.clock_margin, plus
 * snowid.max_drift_ms, plus 1: the margin the documentation explains).
 */
static char *
snowid_redis_free_command(const SnowidRedisRequest *request,
						  const SnowidRedisKeys *keys, int worker_id)
{
	return psprintf("redis-cli FCALL %s 3 %s %s %s admin \"%s %lld\"",
					snowid_script_name(SNOWID_SCRIPT_FREE), keys->owners,
					keys->leases, keys->fences,
					worker_id >= 0 ? psprintf("%d", worker_id) : "<worker id>",
					(long long) request->free_margin_ms);
}

/*
 * snowid_redis_describe
 *		The report of result: with full, all of it; else its SQLSTATE and a
 *		message that names no host, port, key or identity (the caller sets
 *		the detail and the hint).
 */
static void
snowid_redis_describe(const SnowidRedisRequest *request,
					  const SnowidRedisResult *result, bool full,
					  SnowidStoreReport *r)
{
	SnowidRedisKeys keys;
	const char *key = keys.owners;
	const char *at = full ? psprintf(" at %s", result->node) : "";

	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);
	r->detail = pstrdup(result->message);
	r->hint = NULL;

	switch (result->status)
	{
		case SNOWID_REDIS_OK:
			r->sqlstate = ERRCODE_WARNING;
			r->message = psprintf("redis server%s may evict snowid's worker id claims", at);
			r->detail = psprintf("Its maxmemory-policy is %s An evicted claim lets another server take the same worker id.",
								 result->message);
			r->hint = "Set maxmemory-policy to noeviction or to a volatile-* policy.";
			break;

		case SNOWID_REDIS_UNREACHABLE:
			if (result->connected)
			{
				r->sqlstate = ERRCODE_CONNECTION_FAILURE;
				r->message = psprintf("redis server%s did not complete the worker id claim", at);
				r->hint = psprintf("Check that Redis is up and answers within snowid.redis_timeout_ms (%d ms).",
								   request->timeout_ms);
			}
			else
			{
				r->sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
				r->message = psprintf("could not connect to redis server%s", at);
				r->hint = "Check that Redis is running and that snowid.redis_url names it.";
			}
			break;

		case SNOWID_REDIS_AUTH_FAILED:
			r->sqlstate = ERRCODE_INVALID_PASSWORD;
			r->message = psprintf("authentication to redis server%s failed", at);
			r->hint = "Check the user name in snowid.redis_url and the password in snowid.redis_password_file (or in the URL).";
			break;

		case SNOWID_REDIS_NO_PERMISSION:
			r->sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			r->message = psprintf("redis user may not claim a worker id%s", at);
			r->hint = psprintf("Allow the Redis user the commands FCALL (EVALSHA and EVAL on Redis 6), HGETALL, HGET, HSET, HDEL and TIME on the keys %s, %s and %s, and ASKING on a Redis Cluster.",
							   keys.owners, keys.leases, keys.fences);
			break;

		case SNOWID_REDIS_ALL_HELD:
			r->sqlstate = ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
			r->message = psprintf("all %d worker ids of datacenter %d are held",
								  request->max_worker_id + 1,
								  request->datacenter_id);
			r->detail = psprintf("Redis at %s has every worker id from 0 to %d registered to a server.",
								 result->node, request->max_worker_id);
			r->hint = psprintf("List the holders with HGETALL %s; once a server is stopped for good, free its id with %s.",
							   key, snowid_redis_free_command(request, &keys, -1));
			break;

		case SNOWID_REDIS_FENCED:
			snowid_redis_describe_fenced(request, &keys, result, r);
			break;

		case SNOWID_REDIS_IMPLAUSIBLE:
			r->sqlstate = ERRCODE_DATA_CORRUPTED;
			r->message = psprintf("redis holds an impossible fence for worker id %d of datacenter %d",
								  result->worker_id, request->datacenter_id);
			r->detail = psprintf("%s A fence says until when, in Unix ms, the id's last holder may have issued ids; snowid takes no worker id on the word of one that far ahead.",
								 result->message);
			r->hint = psprintf("Find out who else writes snowid's keys, then set both fields with HSET to just past the last id any server issued with worker id %d, or to the present time in Unix ms if none issued later.",
							   result->worker_id);
			break;

		case SNOWID_REDIS_CONFLICT:
			r->sqlstate = ERRCODE_OBJECT_IN_USE;
			r->message = psprintf("worker id %d of datacenter %d is held by another server",
								  result->worker_id, request->datacenter_id);
			r->detail = psprintf("This server is \"%s\"; Redis has worker id %d registered to \"%s\".",
								 request->identity, result->worker_id,
								 result->holder);
			if (SNOWID_HOLDER_ON_LEASE(result->holder))
				r->hint = "Set snowid.worker_id to a free id, or wait until that lease runs out (at most snowid.worker_lease after its holder stopped).";
			else
				r->hint = psprintf("Set snowid.worker_id to a free id or, once that server is stopped for good, free its id with %s.",
								   snowid_redis_free_command(request, &keys, result->worker_id));
			break;

		case SNOWID_REDIS_WRONG_SECRET:
			r->sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			r->message = psprintf("redis server%s refused this server's holder secret", at);
			r->detail = psprintf("Another secret is registered in Redis for this server's holder name \"%s\": another server claims under its name, or this server lost its file snowid_holder_secret.",
								 request->identity);
			r->hint = psprintf("Once sure that this server is the one of that name, an administrator runs FCALL %s 3 %s %s %s \"<holder name>\" (doc/security.md).",
							   snowid_script_name(SNOWID_SCRIPT_RESET_SECRET),
							   keys.owners, keys.leases, keys.fences);
			break;

		case SNOWID_REDIS_HOLDS_OTHER:
			r->sqlstate = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
			r->message = psprintf("this server holds worker id %d of datacenter %d in redis, not the configured worker id %d",
								  result->worker_id, request->datacenter_id,
								  request->explicit_worker_id);
			r->detail = psprintf("Redis has worker id %d registered to \"%s\".",
								 result->worker_id, request->identity);
			r->hint = psprintf("Set snowid.worker_id to %d, or free the old id with %s.",
							   result->worker_id,
							   snowid_redis_free_command(request, &keys, result->worker_id));
			break;

		case SNOWID_REDIS_ERROR:
			r->sqlstate = ERRCODE_SYSTEM_ERROR;
			r->message = psprintf("redis server%s refused the worker id claim", at);
			if (strstr(result->message, "READONLY") != NULL)
				r->hint = "Point snowid.redis_url at the primary: the claim writes.";
			break;

		case SNOWID_REDIS_PROTOCOL_ERROR:
			r->sqlstate = ERRCODE_PROTOCOL_VIOLATION;
			r->message = psprintf("unexpected reply from redis server%s", at);
			break;

		default:
			snowid_redis_describe_more(request, result, full, at, r);
			break;
	}
}

/*
 * The report of a claim refused for a fence: the worker id (or every one
 * not held) was on lease to a server whose ids may run past where this one
 * can start, so taking it now could repeat them.  It can be taken once this
 * server's clock is within snowid.max_drift_ms of the fence.
 */
static void
snowid_redis_describe_fenced(const SnowidRedisRequest *request,
							 const SnowidRedisKeys *keys,
							 const SnowidRedisResult *result, SnowidStoreReport *r)
{
	/* a fence no server's ids need (a fleet member's): an administrator's */
	char	   *lower = psprintf("redis-cli FCALL %s 3 %s %s %s admin \"%d %lld\"",
								 snowid_script_name(SNOWID_SCRIPT_LOWER_FENCE),
								 keys->owners, keys->leases, keys->fences,
								 result->worker_id,
								 (long long) request->free_margin_ms);

	TimestampTz at = (result->floor_ms -
					  (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
					  SECS_PER_DAY * 1000) * 1000;
	const char *fence = timestamptz_to_str(at);
	long long	ahead = (long long) (result->floor_ms - request->usable_ms);

	r->sqlstate = ERRCODE_OBJECT_IN_USE;
	if (request->explicit_worker_id >= 0)
	{
		r->message = psprintf("worker id %d of datacenter %d cannot be taken until %s",
							  result->worker_id, request->datacenter_id, fence);
		r->detail = psprintf("It was on lease, and the ids its last holder issued reach up to then: %lld ms past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms).",
							 ahead);
		r->hint = psprintf("Wait until then and call again, or set snowid.worker_id to another free id.  If no server issued ids with worker id %d past Redis' clock (a fence a fleet member set), an administrator lowers it with %s (doc/troubleshooting.md).",
						   result->worker_id, lower);
	}
	else
	{
		r->message = psprintf("no worker id of datacenter %d can be taken until %s",
							  request->datacenter_id, fence);
		r->detail = psprintf("Every worker id not held by a server was on lease, and the ids of its last holder reach past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms); worker id %d is free first, %lld ms past it.",
							 result->worker_id, ahead);
		r->hint = psprintf("Wait until then and try again, or free the worker id of a decommissioned server.  If no server issued ids with worker id %d past Redis' clock (a fence a fleet member set), an administrator lowers it with %s (doc/troubleshooting.md).",
						   result->worker_id, lower);
	}
}

/*
 * The reports of TLS, Sentinel and replication failures; see
 * snowid_redis_describe().  at is " at <node>" in a full report, else "".
 */
static void
snowid_redis_describe_more(const SnowidRedisRequest *request,
						   const SnowidRedisResult *result, bool full,
						   const char *at, SnowidStoreReport *r)
{
	char		path[MAXPGPATH];

	switch (result->status)
	{
		case SNOWID_REDIS_REDIRECT_REFUSED:
			r->sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			r->message = psprintf("snowid did not follow redis to a server it may not trust%s",
								  full ? psprintf(" (%s)", result->node) : "");
			r->hint = "List the Redis servers that sentinels and Cluster redirections may name in snowid.redis_redirect_hosts (host names, addresses, or networks such as 10.0.0.0/24, each with :port for that port alone; * for any), or use rediss:// with snowid.redis_tls_ca_file.";
			break;

		case SNOWID_REDIS_NO_LIBRARY:
			snowid_script_library_path(path, sizeof(path));
			r->sqlstate = ERRCODE_UNDEFINED_FUNCTION;
			r->message = psprintf("snowid's function library is not loaded in redis%s", at);
			r->hint = psprintf("Load it once, as a Redis administrator: redis-cli -x FUNCTION LOAD REPLACE < %s (on every primary of a Redis Cluster).",
							   path);
			break;

		case SNOWID_REDIS_FEW_REPLICAS:
			r->sqlstate = ERRCODE_INSUFFICIENT_RESOURCES;
			r->message = psprintf("only %d of the %d redis replicas required acknowledged the worker id claim%s",
								  result->replicas, request->min_replicas, at);
			r->detail = psprintf("The claimed worker id is not used: a failover now could lose the claim and give the id to another server. %s",
								 result->message);
			r->hint = "Check that the replicas are up and connected, or lower snowid.redis_min_replicas.";
			break;

		case SNOWID_REDIS_TLS_SETUP:
			r->sqlstate = ERRCODE_CONFIG_FILE_ERROR;
			r->message = psprintf("could not set up TLS for redis server%s", at);
			r->hint = "Check snowid.redis_tls_ca_file, snowid.redis_tls_cert_file and snowid.redis_tls_key_file: the files must exist, be readable by the server's user and hold PEM data.";
			break;

		case SNOWID_REDIS_SECRET_FILE:
			r->sqlstate = ERRCODE_CONFIG_FILE_ERROR;
			r->message = psprintf("could not use the file named by %s",
								  result->secret_setting);
			r->hint = pstrdup(result->secret_hint);
			break;

		case SNOWID_REDIS_TLS_UNTRUSTED:
			r->sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			r->message = psprintf("redis server%s presented a certificate that is not trusted", at);
			r->hint = "Set snowid.redis_tls_ca_file to the CA certificate (or bundle) that signed the server's certificate; without it the system's CAs are used.";
			break;

		case SNOWID_REDIS_TLS_HOSTNAME:
			r->sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			r->message = psprintf("redis server%s presented a certificate for another host name", at);
			r->hint = "Name the server in snowid.redis_url as its certificate does (a subject alternative name), or have a certificate issued for the name you use.";
			break;

		case SNOWID_REDIS_TLS_EXPIRED:
			r->sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			r->message = psprintf("redis server%s presented a certificate outside its validity period", at);
			r->hint = "Renew the Redis server's certificate, and check that this server's clock is right.";
			break;

		case SNOWID_REDIS_TLS_CLIENT_CERT:
			r->sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			r->message = psprintf("redis server%s refused this server's TLS client certificate", at);
			r->hint = "Set snowid.redis_tls_cert_file and snowid.redis_tls_key_file to a certificate signed by a CA the Redis server trusts (its tls-ca-cert-file).";
			break;

		case SNOWID_REDIS_TLS_FAILED:
			r->sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
			r->message = psprintf("could not establish TLS with redis server%s", at);
			r->hint = "Check that the port in snowid.redis_url is Redis' TLS port (tls-port).";
			break;

		case SNOWID_REDIS_NO_SENTINEL:
			r->sqlstate = ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION;
			r->message = full ?
				psprintf("could not reach any redis sentinel to find master \"%s\"",
						 result->master_name) :
				"could not reach any redis sentinel";
			r->detail = psprintf("The last one tried, at %s: %s", result->node,
								 result->message);
			r->hint = "Check that the sentinels named in snowid.redis_url are running and reachable, and that snowid.redis_sentinel_password_file (or sentinel_password in the URL) is set if they require a password.";
			break;

		case SNOWID_REDIS_NO_MASTER:
			r->sqlstate = ERRCODE_UNDEFINED_OBJECT;
			r->message = full ?
				psprintf("redis sentinels know no master named \"%s\"",
						 result->master_name) :
				"redis sentinels know no such master";
			r->hint = "The name after the sentinels in snowid.redis_url must be one the sentinels monitor (sentinel monitor <name> ...).";
			break;

		case SNOWID_REDIS_NOT_MASTER:
			r->sqlstate = ERRCODE_CONNECTION_FAILURE;
			r->message = psprintf("redis server%s, named master by the sentinels, is not a master", at);
			r->hint = "A failover is probably under way; call again in a few seconds.";
			break;

		default:
			elog(ERROR, "unexpected snowid claim status %d",
				 (int) result->status);
	}
}
