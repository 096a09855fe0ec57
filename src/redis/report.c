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

#include "utils/timestamp.h"

#include "redis/report.h"

static void snowid_redis_report_fenced(int elevel,
									   const SnowidRedisRequest *request,
									   const SnowidRedisResult *result);
static void snowid_redis_report_more(int elevel,
									 const SnowidRedisRequest *request,
									 const SnowidRedisResult *result);

/*
 * Report how a claim ended at elevel.  A successful claim reports nothing,
 * except a WARNING when Redis may evict it; a failed one reports at elevel,
 * so with ERROR this does not return.
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
 */
void
snowid_redis_report(int elevel, const SnowidRedisRequest *request,
					const SnowidRedisResult *result)
{
	SnowidRedisKeys keys;
	const char *key = keys.owners;

	snowid_redis_keys(&keys, request->key_prefix, request->datacenter_id);

	switch (result->status)
	{
		case SNOWID_REDIS_OK:
			if (result->evictable)
				ereport(WARNING,
						(errmsg("redis server at %s may evict snowid's worker id claims",
								result->node),
						 errdetail("Its maxmemory-policy is %s An evicted claim lets another server take the same worker id.",
								   result->message),
						 errhint("Set maxmemory-policy to noeviction or to a volatile-* policy.")));
			break;

		case SNOWID_REDIS_UNREACHABLE:
			if (result->connected)
				ereport(elevel,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("redis server at %s did not complete the worker id claim",
								result->node),
						 errdetail("%s", result->message),
						 errhint("Check that Redis is up and answers within snowid.redis_timeout_ms (%d ms).",
								 request->timeout_ms)));
			else
				ereport(elevel,
						(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
						 errmsg("could not connect to redis server at %s",
								result->node),
						 errdetail("%s", result->message),
						 errhint("Check that Redis is running and that snowid.redis_url names it.")));
			break;

		case SNOWID_REDIS_AUTH_FAILED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PASSWORD),
					 errmsg("authentication to redis server at %s failed",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check the user name in snowid.redis_url and the password in snowid.redis_password_file (or in the URL).")));
			break;

		case SNOWID_REDIS_NO_PERMISSION:
			ereport(elevel,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("redis user may not claim a worker id at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Allow the Redis user the commands EVAL, HGETALL, HSET and HDEL on the key %s (on lease also HGET and TIME, and the keys %s and %s), and ASKING on a Redis Cluster.",
							 keys.owners, keys.leases, keys.fences)));
			break;

		case SNOWID_REDIS_ALL_HELD:
			ereport(elevel,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("all %d worker ids of datacenter %d are held",
							request->max_worker_id + 1,
							request->datacenter_id),
					 errdetail("Redis at %s has every worker id from 0 to %d registered to a server.",
							   result->node, request->max_worker_id),
					 errhint("List the holders with HGETALL %s and free the id of a decommissioned server with HDEL %s <worker id>.",
							 key, key)));
			break;

		case SNOWID_REDIS_FENCED:
			snowid_redis_report_fenced(elevel, request, result);
			break;

		case SNOWID_REDIS_CONFLICT:
			ereport(elevel,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("worker id %d of datacenter %d is held by another server",
							result->worker_id, request->datacenter_id),
					 errdetail("This server is \"%s\"; Redis has worker id %d registered to \"%s\".",
							   request->identity, result->worker_id,
							   result->holder),
					 errhint("Set snowid.worker_id to a free id or, if that server is decommissioned, free its id with HDEL %s %d.",
							 key, result->worker_id)));
			break;

		case SNOWID_REDIS_HOLDS_OTHER:
			ereport(elevel,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("this server holds worker id %d of datacenter %d in redis, not the configured worker id %d",
							result->worker_id, request->datacenter_id,
							request->explicit_worker_id),
					 errdetail("Redis has worker id %d registered to \"%s\".",
							   result->worker_id, request->identity),
					 errhint("Free the old id with HDEL %s %d, or set snowid.worker_id to %d.",
							 key, result->worker_id, result->worker_id)));
			break;

		case SNOWID_REDIS_ERROR:
			ereport(elevel,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("redis server at %s refused the worker id claim",
							result->node),
					 errdetail("%s", result->message),
					 strstr(result->message, "READONLY") != NULL ?
					 errhint("Point snowid.redis_url at the primary: the claim writes.") : 0));
			break;

		case SNOWID_REDIS_PROTOCOL_ERROR:
			ereport(elevel,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("unexpected reply from redis server at %s",
							result->node),
					 errdetail("%s", result->message)));
			break;

		default:
			snowid_redis_report_more(elevel, request, result);
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
snowid_redis_report_fenced(int elevel, const SnowidRedisRequest *request,
						   const SnowidRedisResult *result)
{
	TimestampTz at = (result->floor_ms -
					  (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
					  SECS_PER_DAY * 1000) * 1000;
	const char *fence = timestamptz_to_str(at);
	long long	ahead = (long long) (result->floor_ms - request->usable_ms);

	if (request->explicit_worker_id >= 0)
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("worker id %d of datacenter %d cannot be taken until %s",
						result->worker_id, request->datacenter_id, fence),
				 errdetail("It was on lease, and the ids its last holder issued reach up to then: %lld ms past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms).",
						   ahead),
				 errhint("Wait until then and call again, or set snowid.worker_id to another free id.")));
	else
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("no worker id of datacenter %d can be taken until %s",
						request->datacenter_id, fence),
				 errdetail("Every worker id not held by a server was on lease, and the ids of its last holder reach past the latest time this server's ids may start at now (its clock plus snowid.max_drift_ms); worker id %d is free first, %lld ms past it.",
						   result->worker_id, ahead),
				 errhint("Wait until then and try again, or free the worker id of a decommissioned server.")));
}

/*
 * The reports of TLS, Sentinel and replication failures; see
 * snowid_redis_report().
 */
static void
snowid_redis_report_more(int elevel, const SnowidRedisRequest *request,
						 const SnowidRedisResult *result)
{
	switch (result->status)
	{
		case SNOWID_REDIS_FEW_REPLICAS:
			ereport(elevel,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("only %d of the %d redis replicas required acknowledged the worker id claim at %s",
							result->replicas, request->min_replicas,
							result->node),
					 errdetail("The claimed worker id is not used: a failover now could lose the claim and give the id to another server. %s",
							   result->message),
					 errhint("Check that the replicas are up and connected, or lower snowid.redis_min_replicas.")));
			break;

		case SNOWID_REDIS_TLS_SETUP:
			ereport(elevel,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("could not set up TLS for redis server at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check snowid.redis_tls_ca_file, snowid.redis_tls_cert_file and snowid.redis_tls_key_file: the files must exist, be readable by the server's user and hold PEM data.")));
			break;

		case SNOWID_REDIS_SECRET_FILE:
			ereport(elevel,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("could not use the file named by %s",
							result->secret_setting),
					 errdetail("%s", result->message),
					 errhint("%s", result->secret_hint)));
			break;

		case SNOWID_REDIS_TLS_UNTRUSTED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate that is not trusted",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Set snowid.redis_tls_ca_file to the CA certificate (or bundle) that signed the server's certificate; without it the system's CAs are used.")));
			break;

		case SNOWID_REDIS_TLS_HOSTNAME:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate for another host name",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Name the server in snowid.redis_url as its certificate does (a subject alternative name), or have a certificate issued for the name you use.")));
			break;

		case SNOWID_REDIS_TLS_EXPIRED:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s presented a certificate outside its validity period",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Renew the Redis server's certificate, and check that this server's clock is right.")));
			break;

		case SNOWID_REDIS_TLS_CLIENT_CERT:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("redis server at %s refused this server's TLS client certificate",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Set snowid.redis_tls_cert_file and snowid.redis_tls_key_file to a certificate signed by a CA the Redis server trusts (its tls-ca-cert-file).")));
			break;

		case SNOWID_REDIS_TLS_FAILED:
			ereport(elevel,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not establish TLS with redis server at %s",
							result->node),
					 errdetail("%s", result->message),
					 errhint("Check that the port in snowid.redis_url is Redis' TLS port (tls-port).")));
			break;

		case SNOWID_REDIS_NO_SENTINEL:
			ereport(elevel,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not reach any redis sentinel to find master \"%s\"",
							result->master_name),
					 errdetail("The last one tried, at %s: %s", result->node,
							   result->message),
					 errhint("Check that the sentinels named in snowid.redis_url are running and reachable, and that snowid.redis_sentinel_password_file (or sentinel_password in the URL) is set if they require a password.")));
			break;

		case SNOWID_REDIS_NO_MASTER:
			ereport(elevel,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("redis sentinels know no master named \"%s\"",
							result->master_name),
					 errdetail("%s", result->message),
					 errhint("The name after the sentinels in snowid.redis_url must be one the sentinels monitor (sentinel monitor <name> ...).")));
			break;

		case SNOWID_REDIS_NOT_MASTER:
			ereport(elevel,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("redis server at %s, named master by the sentinels, is not a master",
							result->node),
					 errdetail("%s", result->message),
					 errhint("A failover is probably under way; call again in a few seconds.")));
			break;

		default:
			elog(ERROR, "unexpected snowid claim status %d",
				 (int) result->status);
	}
}

