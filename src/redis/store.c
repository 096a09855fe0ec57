/*-------------------------------------------------------------------------
 *
 * store.c
 *	  Redis as a claim store: the functions of coord/store.h over
 *	  snowid's function library (snowid.lua), with the snowid.redis_*
 *	  settings.  Each turns the store's request into a Redis request, calls
 *	  claim.c or lease.c, and hands back the outcome with Redis' own
 *	  account of it, which report.c turns into messages.  No locking
 *	  applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "core/layout.h"
#include "redis/claim.h"
#include "redis/lease.h"
#include "redis/report.h"
#include "redis/scripts.h"
#include "redis/store.h"

char	   *snowid_redis_key_prefix = NULL;
int			snowid_redis_timeout_ms = 0;
int			snowid_redis_min_replicas = 0;
char	   *snowid_redis_tls_ca_file = NULL;
char	   *snowid_redis_tls_cert_file = NULL;
char	   *snowid_redis_tls_key_file = NULL;
char	   *snowid_redis_tls_key_passphrase_file = NULL;
char	   *snowid_redis_password_file = NULL;
char	   *snowid_redis_sentinel_password_file = NULL;
const SnowidRedisHostList *snowid_redis_redirect_hosts = NULL;

StaticAssertDecl(sizeof(SnowidRedisTarget) <= SNOWID_STORE_TARGET_MAX,
				 "a Redis URL must fit a store's target");

static bool snowid_redis_store_parse(const char *url, void *target,
									 const char **problem);
static void snowid_redis_store_claim(const void *target,
									 const SnowidStoreRequest *request,
									 SnowidStoreResult *result);
static void snowid_redis_store_lease_claim(const void *target,
										   const SnowidLeaseRequest *request,
										   SnowidLeaseGrant *grant,
										   SnowidStoreResult *result);
static SnowidLeaseOutcome snowid_redis_store_lease_renew(const void *target,
														 const SnowidLeaseRequest *request,
														 SnowidLeaseGrant *grant,
														 SnowidStoreResult *result);
static SnowidLeaseOutcome snowid_redis_store_lease_release(const void *target,
														   const SnowidLeaseRequest *request,
														   SnowidStoreResult *result);
static void snowid_redis_store_report(int elevel,
									  const SnowidStoreRequest *request,
									  const SnowidStoreResult *result);
static void snowid_redis_store_refused_fence(const SnowidStoreRequest *request,
											 const SnowidLeaseGrant *grant);
static void snowid_redis_request(const SnowidStoreRequest *in,
								 SnowidRedisRequest *out);
static SnowidRedisResult *snowid_redis_result(void);
static void snowid_redis_outcome(SnowidRedisResult *redis,
								 SnowidStoreResult *result);

/*
 * Redis' entries of the store interface (coord/store.h).  They look like
 * the coordination database's (pgcoord/store.c), and like one another, as
 * every implementation of one interface does: each only turns the neutral
 * request into Redis' and calls its own script (claim.c, lease.c).
 */
const SnowidStore snowid_redis_store = {
	.name = "redis",
	.title = "Redis",
	.title_start = "Redis",
	.schemes = "redis://, rediss://, unix://, redis-sentinel://, rediss-sentinel://",
	.accepts = snowid_redis_url_scheme,
	.parse = snowid_redis_store_parse,
	.claim = snowid_redis_store_claim,
	.lease_claim = snowid_redis_store_lease_claim,
	.lease_renew = snowid_redis_store_lease_renew,
	.lease_release = snowid_redis_store_lease_release,
	.report = snowid_redis_store_report,
	.report_refused_fence = snowid_redis_store_refused_fence,
	.quiet_doc = "doc/redis.md, \"Ending a quiet period\"",
};

/*
 * snowid_redis_store_parse
 *		A Redis URL into a SnowidRedisTarget.
 */
static bool
snowid_redis_store_parse(const char *url, void *target, const char **problem)
{
	return snowid_redis_parse_url(url, (SnowidRedisTarget *) target, problem);
}

/*
 * snowid_redis_store_claim
 *		The claim for good (claim.c).
 */
static void
snowid_redis_store_claim(const void *target,
						 const SnowidStoreRequest *request,
						 SnowidStoreResult *result)
{
	SnowidRedisRequest redis_request;
	SnowidRedisResult *redis = snowid_redis_result();

	snowid_redis_request(request, &redis_request);
	snowid_redis_try_claim((const SnowidRedisTarget *) target, &redis_request,
						   redis);
	snowid_redis_outcome(redis, result);
}

/*
 * snowid_redis_store_lease_claim
 *		A lease claim (lease.c).
 */
static void
snowid_redis_store_lease_claim(const void *target,
							   const SnowidLeaseRequest *request,
							   SnowidLeaseGrant *grant,
							   SnowidStoreResult *result)
{
	SnowidRedisRequest redis_request;
	SnowidRedisLeaseRequest lease = {&redis_request, request};
	SnowidRedisResult *redis = snowid_redis_result();

	snowid_redis_request(request->claim, &redis_request);
	snowid_redis_lease_claim((const SnowidRedisTarget *) target, &lease, grant,
							 redis);
	snowid_redis_outcome(redis, result);
}

/*
 * snowid_redis_store_lease_renew
 *		A renewal (lease.c).
 */
static SnowidLeaseOutcome
snowid_redis_store_lease_renew(const void *target,
							   const SnowidLeaseRequest *request,
							   SnowidLeaseGrant *grant,
							   SnowidStoreResult *result)
{
	SnowidRedisRequest redis_request;
	SnowidRedisLeaseRequest lease = {&redis_request, request};
	SnowidRedisResult *redis = snowid_redis_result();
	SnowidLeaseOutcome outcome;

	snowid_redis_request(request->claim, &redis_request);
	outcome = snowid_redis_lease_renew((const SnowidRedisTarget *) target,
									   &lease, grant, redis);
	snowid_redis_outcome(redis, result);
	return outcome;
}

/*
 * snowid_redis_store_lease_release
 *		A release, or a lease parked (lease.c).
 */
static SnowidLeaseOutcome
snowid_redis_store_lease_release(const void *target,
								 const SnowidLeaseRequest *request,
								 SnowidStoreResult *result)
{
	SnowidRedisRequest redis_request;
	SnowidRedisLeaseRequest lease = {&redis_request, request};
	SnowidRedisResult *redis = snowid_redis_result();
	SnowidLeaseOutcome outcome;

	snowid_redis_request(request->claim, &redis_request);
	outcome = snowid_redis_lease_release((const SnowidRedisTarget *) target,
										 &lease, redis);
	snowid_redis_outcome(redis, result);
	return outcome;
}

/*
 * snowid_redis_store_report
 *		Reports how a call ended, from Redis' account of it (report.c).
 */
static void
snowid_redis_store_report(int elevel, const SnowidStoreRequest *request,
						  const SnowidStoreResult *result)
{
	SnowidRedisRequest redis_request;

	Assert(result->detail != NULL);
	snowid_redis_request(request, &redis_request);
	snowid_redis_report(elevel, &redis_request,
						(const SnowidRedisResult *) result->detail);
}

/*
 * snowid_redis_store_refused_fence
 *		A renewal found a fence in Redis past the one this server asked for:
 *		no holder of this claim wrote it, so the generator does not take it,
 *		and the log says where it is and how to put it right.
 */
static void
snowid_redis_store_refused_fence(const SnowidStoreRequest *request,
								 const SnowidLeaseGrant *grant)
{
	SnowidRedisKeys keys;
	char	   *fence = pstrdup(snowid_unix_ms_text(grant->fence_ms));

	snowid_redis_keys(&keys, snowid_redis_key_prefix, request->datacenter_id);
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("snowid refused the fence redis holds for worker id %d of datacenter %d",
					grant->worker_id, request->datacenter_id),
			 errdetail("Field \"%d\" of key %s holds " INT64_FORMAT " (%s), past the fence " INT64_FORMAT " (%s) this server renewed its lease with; no holder of this lease wrote it.",
					   grant->worker_id, keys.fences, grant->refused_fence_ms,
					   snowid_unix_ms_text(grant->refused_fence_ms),
					   grant->fence_ms, fence),
			 errhint("This server goes on with its own fence.  Find out who else writes snowid's keys, and set the field back with HSET %s %d " INT64_FORMAT ".",
					 keys.fences, grant->worker_id, grant->fence_ms)));
	pfree(fence);
}

/*
 * snowid_redis_request
 *		The store's request as Redis takes it, with the snowid.redis_*
 *		settings: snowid.redis_timeout_ms, if set, in place of
 *		snowid.coordinator_timeout_ms.
 */
static void
snowid_redis_request(const SnowidStoreRequest *in, SnowidRedisRequest *out)
{
	memset(out, 0, sizeof(*out));
	out->store = in;
	out->key_prefix = snowid_redis_key_prefix;
	out->datacenter_id = in->datacenter_id;
	out->explicit_worker_id = in->explicit_worker_id;
	out->preferred_worker_id = in->preferred_worker_id;
	out->max_worker_id = in->max_worker_id;
	out->identity = in->identity;
	out->secret = in->secret;
	out->timeout_ms = snowid_redis_timeout_ms > 0 ?
		snowid_redis_timeout_ms : in->timeout_ms;
	out->min_replicas = snowid_redis_min_replicas;
	out->tls_ca_file = snowid_redis_tls_ca_file;
	out->tls_cert_file = snowid_redis_tls_cert_file;
	out->tls_key_file = snowid_redis_tls_key_file;
	out->tls_key_passphrase_file = snowid_redis_tls_key_passphrase_file;
	out->password_file = snowid_redis_password_file;
	out->sentinel_password_file = snowid_redis_sentinel_password_file;
	out->redirect_hosts = snowid_redis_redirect_hosts;
	out->client_ms = in->client_ms;
	out->usable_ms = in->usable_ms;
	out->plausible_ms = in->plausible_ms;
	out->free_margin_ms = in->free_margin_ms;
	out->quiet_ms = in->quiet_ms;
	out->reassert = in->reassert;
	out->clock_margin_ms = in->clock_margin_ms;
	out->checkin = in->checkin;
	out->seen = in->seen;
	out->confirmed_ms = in->confirmed_ms;
	out->wait_event_info = in->wait_event_info;
	out->client_sees_redis = in->client_sees_store;
}

/*
 * snowid_redis_result
 *		Room for Redis' account of a call, kept with the store's result for
 *		its report (in the caller's memory context).
 */
static SnowidRedisResult *
snowid_redis_result(void)
{
	return (SnowidRedisResult *) palloc0(sizeof(SnowidRedisResult));
}

/*
 * snowid_redis_outcome
 *		The store's result of a call that Redis' result describes.  Only a
 *		Redis that cannot be reached (no server, no sentinel, a failover
 *		under way) counts as unreachable: any other failure is a
 *		configuration to fix or an answer that forbids the id.
 */
static void
snowid_redis_outcome(SnowidRedisResult *redis, SnowidStoreResult *result)
{
	memset(result, 0, sizeof(*result));
	switch (redis->status)
	{
		case SNOWID_REDIS_OK:
			result->status = SNOWID_STORE_OK;
			break;
		case SNOWID_REDIS_UNREACHABLE:
		case SNOWID_REDIS_NO_SENTINEL:
		case SNOWID_REDIS_NOT_MASTER:
			result->status = SNOWID_STORE_UNREACHABLE;
			break;
		case SNOWID_REDIS_ALL_HELD:
			result->status = SNOWID_STORE_ALL_HELD;
			break;
		case SNOWID_REDIS_QUIET:
			result->status = SNOWID_STORE_QUIET;
			break;
		case SNOWID_REDIS_FENCED:
		case SNOWID_REDIS_CONFLICT:
		case SNOWID_REDIS_HOLDS_OTHER:
			result->status = SNOWID_STORE_REFUSED;
			break;
		default:
			result->status = SNOWID_STORE_FAILED;
			break;
	}
	result->worker_id = redis->worker_id;
	result->floor_ms = redis->floor_ms;
	result->state = redis->state;
	if (redis->status == SNOWID_REDIS_QUIET)
		result->retry_ms = redis->floor_ms;
	result->elapsed_ms = redis->elapsed_ms;
	snprintf(result->where, sizeof(result->where), "redis at %s", redis->node);
	strlcpy(result->holder, redis->holder, sizeof(result->holder));
	result->not_holder = redis->status == SNOWID_REDIS_WRONG_SECRET;
	strlcpy(result->message, redis->message, sizeof(result->message));
	result->detail = redis;
}
