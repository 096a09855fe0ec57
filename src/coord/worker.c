/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  Which worker id this server's ids carry and where it came from: the
 *	  snowid.worker_id setting, or a claim in the claim store that
 *	  snowid.coordinator_url names (coord/store.h), whose last one is cached
 *	  in the data directory as the id a restart asks for first.
 *
 * Without a coordinator, a worker id set in snowid.worker_id is known when
 * shared memory is initialised.  With one, the worker id is resolved on
 * first use: the first backend that needs one claims it from the store, and
 * a configured snowid.worker_id is registered there instead of taken.  The
 * caller (the generator) lets one backend at a time call
 * snowid_worker_resolve() (others wait for it on a condition variable) and
 * keeps the result in shared memory, so the store is asked once per server
 * start however many sessions ask at once, and a failed claim is tried
 * again by the next caller.  That also serialises
 * readers and writers of the cache file.  No lock is taken here.
 *
 * With snowid.worker_lease, the id is taken on lease instead (lease.c): no
 * configured id, no cache file, and it may change while the server runs.
 * A cache file left by claims for good is removed before the first lease
 * claim, which takes this server's id for good over as its lease.
 *
 * The cache file is one line of text:
 *
 *		snowid_worker 2 datacenter_id=3 worker_id=7 worker_bits=5 store=redis identity=...
 *
 * where the store is the kind of coordinator the claim was made in, and
 * the identity what the server claims under (datacenter, host name, port,
 * system identifier and instance).  A claim in one kind of store is never
 * used for another: a server moved to a new coordinator that is down has
 * no id that coordinator ever confirmed.  Version 1, without the store, was
 * written by releases that knew Redis only.  It is rewritten, atomically,
 * whenever a claim gives something else.  It is used only by the server it
 * names, so a data directory copied to another host or port (a clone, a
 * standby from a base backup) never reuses the worker id of the server it
 * was copied from: a claim asks the store for the cached id again (so that
 * a store that lost its claims gives each server back its own id rather
 * than the lowest free one, which another server may still use).
 *
 * The confirmation rule: a server issues ids with a worker id from the
 * store only once the store granted it since this server started.  When
 * the store cannot be reached at a start, the cached id is not used: an
 * administrator may have freed it while this server was stopped and another
 * server claimed it, which the file cannot tell.  A holder that runs keeps
 * issuing while the store is down (checkin.c): its claim was confirmed.
 *
 * The cache file never outlives the claim it names: it is removed when the
 * store refuses the claim, when a check-in finds the id given away
 * (checkin.c), and when the server moves onto a lease, which takes its id
 * for good over.  A claim at start only prefers the cached id: it
 * re-asserts nothing (the restart rule, coord/store.h), as an
 * administrator may have freed it while this server was stopped.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "coord/lease.h"
#include "coord/quiet.h"
#include "coord/recall.h"
#include "coord/request.h"
#include "coord/worker.h"
#include "core/generator.h"
#include "core/generator_worker.h"
#include "core/mark.h"
#include "util/bgworker.h"

/* The cache file, in the data directory: the last claim */
#define SNOWID_WORKER_FILE		"snowid_worker"

#define SNOWID_WORKER_VERSION	2
#define SNOWID_WORKER_FORMAT \
	"snowid_worker %d datacenter_id=%d worker_id=%d worker_bits=%d store=%15[a-z] identity="
#define SNOWID_WORKER_FORMAT_1 \
	"snowid_worker 1 datacenter_id=%d worker_id=%d worker_bits=%d identity="

/* What the cache file holds */
typedef struct SnowidWorkerCache
{
	int			datacenter_id;
	int			worker_id;
	int			worker_bits;
	char		store[16];		/* the store's name: "redis" */
	char		identity[SNOWID_IDENTITY_LEN];
} SnowidWorkerCache;

static void snowid_worker_startup(int *worker_id,
								  SnowidWorkerSource *source);
static void snowid_worker_resolve(SnowidWorkerClaim *claim);
static void snowid_worker_claim(SnowidWorkerClaim *claim);
static void snowid_require_bgworker(void);
static void snowid_worker_claimed(const SnowidStoreRequest *request,
								  const SnowidStoreResult *result,
								  const SnowidWorkerCache *cached);
static void snowid_worker_unconfirmed(const SnowidStoreRequest *request,
									  const SnowidStoreResult *result,
									  int worker_id);
static bool snowid_cache_is_ours(const SnowidWorkerCache *cache,
								 const SnowidStoreRequest *request);
static void snowid_store_report(int elevel, const SnowidStoreRequest *request,
								const SnowidStoreResult *result);
static void snowid_claim_context(void *arg);
static bool snowid_cache_read(SnowidWorkerCache *cache, int elevel);
static void snowid_cache_write(const SnowidWorkerCache *cache);
static void snowid_cache_remove(void);

/* What the generator asks of this layer (core/coordinator.h) */
static const SnowidCoordinator snowid_store_coordinator = {
	.startup = snowid_worker_startup,
	.resolve = snowid_worker_resolve,
};

/*
 * snowid_coord_install
 *		Makes this layer the generator's source of worker ids; called from
 *		_PG_init, before shared memory is initialised.
 */
void
snowid_coord_install(void)
{
	snowid_set_coordinator(&snowid_store_coordinator);
}

/*
 * snowid_worker_startup
 *		The worker id known at shared memory initialisation, if any.  Runs in
 *		the postmaster: no network or error reports here.  With a
 *		coordinator, even a configured worker id stays unknown until first
 *		use registers it.
 */
static void
snowid_worker_startup(int *worker_id, SnowidWorkerSource *source)
{
	if (snowid_worker_id >= 0 && snowid_store == NULL)
	{
		*worker_id = snowid_worker_id;
		*source = SNOWID_WORKER_CONFIG;
	}
	else
	{
		*worker_id = -1;
		*source = SNOWID_WORKER_NONE;
	}
}

/*
 * snowid_worker_resolve
 *		Finds the worker id on first use (or, on lease, after the last one
 *		ended), or reports why there is none.  The caller lets one process
 *		at a time in.
 */
static void
snowid_worker_resolve(SnowidWorkerClaim *claim)
{
	memset(claim, 0, sizeof(*claim));
	claim->fence_ms = PG_INT64_MAX;
	if (snowid_store != NULL)
		snowid_require_bgworker();
	if (snowid_worker_lease_ms > 0)
	{
		/* the lease takes this server's id for good over: cached no more */
		snowid_cache_remove();
		snowid_lease_claim(claim);
		return;
	}
	if (snowid_store != NULL)
	{
		snowid_worker_claim(claim);
		return;
	}

	snowid_worker_startup(&claim->worker_id, &claim->source);
	if (claim->worker_id >= 0)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowid has no worker id"),
			 errdetail("Neither snowid.worker_id nor snowid.coordinator_url is set."),
			 errhint("Set snowid.worker_id in postgresql.conf to a number from 0 to %lld that no other server of datacenter %d uses, or set snowid.coordinator_url to claim one from a coordinator, and restart the server.",
					 (long long) SNOWID_FIELD_MAX(snowid_layout.worker_bits),
					 snowid_datacenter_id)));
}

/*
 * snowid_require_bgworker
 *		Refuses every worker id of the store when the postmaster did not
 *		register the worker that checks a claim in or renews a lease (too
 *		few max_worker_processes): without it, a claim for good would go on
 *		issuing after the store gave its id away, and a lease would lapse.
 */
static void
snowid_require_bgworker(void)
{
	const char *missing = snowid_bgworker_missing();

	if (missing == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("snowid cannot take a worker id from its coordinator without the background worker \"%s\"",
					missing),
			 errdetail("The postmaster did not register the worker at start: max_worker_processes (%d) is used up by other background workers.",
					   max_worker_processes),
			 errhint("Raise max_worker_processes in postgresql.conf and restart the server.")));
}

/*
 * snowid_worker_claim
 *		Claims a worker id from the store, or registers the configured one, and
 *		caches it.  A claim without a configured id asks for the cached id
 *		of this very server first, as a preference, not a re-assertion.  A
 *		worker id that was on lease comes with its fence as the floor of
 *		this server's ids, and its ids lie below the check-in fence until
 *		the first check-in.  Every failure is an error, a store that cannot
 *		be reached too (the confirmation rule): no id is issued with a
 *		worker id the store has not granted this server since it started.
 *		A refusal removes the cache file.
 */
static void
snowid_worker_claim(SnowidWorkerClaim *claim)
{
	char		identity[SNOWID_IDENTITY_LEN];
	SnowidStoreRequest request;
	SnowidStoreResult result;
	SnowidWorkerCache cached;
	bool		have_cache;
	int64		waited_ms = 0;
	ErrorContextCallback errcallback;

	snowid_coord_request(&request, identity, sizeof(identity));
	request.explicit_worker_id = snowid_worker_id;

	/*
	 * The store retires this server's other ids (one beyond the layout)
	 * just past usable_ms.  Its ids so far lie below where its generator
	 * is, which after a restart with the clock behind its mark lies past
	 * its clock plus drift budget; and its next ids start there anyway, so
	 * a fence up to there is one it can start above.
	 */
	request.usable_ms = Max(request.usable_ms, request.client_ms);

	have_cache = snowid_cache_read(&cached, DEBUG1);
	request.preferred_worker_id =
		(request.explicit_worker_id < 0 && have_cache &&
		 snowid_cache_is_ours(&cached, &request)) ? cached.worker_id : -1;

	/*
	 * A restart re-asserts nothing (the restart rule, coord/store.h): only a
	 * holder that runs does, with its check-in.  While this server was
	 * stopped, an administrator may have freed its id and another server
	 * claimed it, a grant the store may have forgotten since; so the cached
	 * id is only preferred, and after a loss this claim waits for the quiet
	 * period and its floor as a new server's does.  Without a loss, the
	 * store grants the id it holds for this server at once.
	 */
	request.reassert = false;

	/* every report from here on says which server was claiming */
	errcallback.callback = snowid_claim_context;
	errcallback.arg = &request;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	/* a store in a quiet period (the forgetting rule) is waited for */
	do
	{
		snowid_coord_request_times(&request);
		snowid_store->claim(snowid_store_target, &request, &result);
		snowid_recall_note(&request, &result);
	} while (result.status == SNOWID_STORE_QUIET &&
			 snowid_quiet_wait(&result, &waited_ms));

	if (result.status == SNOWID_STORE_OK)
	{
		claim->worker_id = result.worker_id;
		claim->source = request.explicit_worker_id >= 0 ?
			SNOWID_WORKER_CONFIG : SNOWID_WORKER_CLAIM;
		claim->floor_ms = Max(result.floor_ms - snowid_layout.epoch_ms, 0);
		/* the floor on disk before the cache names the id */
		snowid_reserve_floor(claim->floor_ms);
		snowid_worker_claimed(&request, &result, have_cache ? &cached : NULL);
	}
	else if (result.status == SNOWID_STORE_UNREACHABLE && have_cache &&
			 snowid_cache_is_ours(&cached, &request) &&
			 (request.explicit_worker_id < 0 ||
			  cached.worker_id == request.explicit_worker_id))
		snowid_worker_unconfirmed(&request, &result, cached.worker_id);
	else if (result.status == SNOWID_STORE_QUIET)
		snowid_report_quiet(ERROR, &request, &result);
	else
	{
		/* the store refused it: no restart asks for the cached id again */
		if (have_cache && (result.status == SNOWID_STORE_REFUSED ||
						   result.status == SNOWID_STORE_ALL_HELD))
			snowid_cache_remove();
		snowid_store_report(ERROR, &request, &result);
		elog(ERROR, "snowid worker id claim ended in status %d",
			 (int) result.status);
	}

	/* until the next check-in, as far as one sent now would reach */
	claim->fence_ms = snowid_checkin_fence(request.client_ms -
										   snowid_layout.epoch_ms);
	error_context_stack = errcallback.previous;
}

/*
 * snowid_worker_claimed
 *		After a successful claim: warns if the store may lose it, brings the
 *		cache file up to date (cached is what it held, or NULL) and logs the
 *		claim.
 */
static void
snowid_worker_claimed(const SnowidStoreRequest *request,
					  const SnowidStoreResult *result,
					  const SnowidWorkerCache *cached)
{
	SnowidWorkerCache cache;

	/* warns only if the store may lose the claim */
	snowid_store_report(WARNING, request, result);

	memset(&cache, 0, sizeof(cache));
	cache.datacenter_id = request->datacenter_id;
	cache.worker_id = result->worker_id;
	cache.worker_bits = snowid_layout.worker_bits;
	strlcpy(cache.store, snowid_store->name, sizeof(cache.store));
	strlcpy(cache.identity, request->identity, sizeof(cache.identity));
	if (cached == NULL || memcmp(cached, &cache, sizeof(cache)) != 0)
		snowid_cache_write(&cache);

	if (request->explicit_worker_id >= 0)
		ereport(LOG_SERVER_ONLY,
				(errmsg("snowid registered worker id %d of datacenter %d in %s",
						result->worker_id, request->datacenter_id,
						result->where),
				 errdetail("The claim took %.1f ms.", result->elapsed_ms)));
	else
		ereport(LOG_SERVER_ONLY,
				(errmsg("snowid claimed worker id %d of datacenter %d in %s",
						result->worker_id, request->datacenter_id,
						result->where),
				 errdetail("The claim took %.1f ms.", result->elapsed_ms)));
	if (result->floor_ms > 0)
		ereport(LOG_SERVER_ONLY,
				(errmsg("snowid starts the ids of worker id %d above its fence in %s",
						result->worker_id, snowid_store->name),
				 errdetail("The worker id was on lease before: every id issued with it lies below %s.",
						   snowid_unix_ms_text(result->floor_ms))));
}

/*
 * snowid_worker_unconfirmed
 *		When the store cannot be reached and the cache file names this
 *		server's last claim: refuses to issue with it.  Only the store can
 *		tell whether an administrator freed that id while this server was
 *		stopped and another server claimed it since, so the store's reason
 *		is a WARNING and the refusal an error; the next call claims again.
 */
static void
snowid_worker_unconfirmed(const SnowidStoreRequest *request,
						  const SnowidStoreResult *result, int worker_id)
{
	snowid_store_report(WARNING, request, result);
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("snowid cannot confirm worker id %d of datacenter %d in %s",
					worker_id, request->datacenter_id, snowid_store->name),
			 errdetail("This server claimed that worker id at an earlier start; while it was stopped, an administrator may have freed it and another server claimed it, which only %s can tell.",
					   snowid_store->title),
			 errhint("This server issues no ids until %s answers; the next call claims again.",
					 snowid_store->title)));
}

/*
 * snowid_cache_is_ours
 *		Whether a cache file names this server's claim in the current kind
 *		of store, under the current datacenter and layout: under its holder
 *		name, or under the name
 *		without the instance that releases 1.2 and earlier claimed under
 *		(snowid.lua's claim takes such an id over).
 */
static bool
snowid_cache_is_ours(const SnowidWorkerCache *cache,
					 const SnowidStoreRequest *request)
{
	const char *instance = strstr(request->identity, " instance=");
	bool		same = strcmp(cache->identity, request->identity) == 0 ||
		(instance != NULL &&
		 strlen(cache->identity) == (size_t) (instance - request->identity) &&
		 strncmp(cache->identity, request->identity,
				 instance - request->identity) == 0);

	return same &&
		strcmp(cache->store, snowid_store->name) == 0 &&
		cache->datacenter_id == request->datacenter_id &&
		cache->worker_bits == snowid_layout.worker_bits &&
		cache->worker_id >= 0 && cache->worker_id <= request->max_worker_id;
}

/*
 * snowid_claim_context
 *		Error context of a claim: the identity the server claims under, if
 *		the client may see it.
 */
static void
snowid_claim_context(void *arg)
{
	const SnowidStoreRequest *request = (const SnowidStoreRequest *) arg;

	if (!request->client_sees_store)
		errcontext("claiming a snowid worker id from %s", snowid_store->name);
	else if (request->explicit_worker_id >= 0)
		errcontext("registering snowid.worker_id %d in %s as \"%s\"",
				   request->explicit_worker_id, snowid_store->name,
				   request->identity);
	else
		errcontext("claiming a snowid worker id from %s as \"%s\"",
				   snowid_store->name, request->identity);
}

/*
 * snowid_cache_read
 *		Reads the cache file.  False if there is none, or (reported at
 *		elevel) if it cannot be read.
 */
static bool
snowid_cache_read(SnowidWorkerCache *cache, int elevel)
{
	FILE	   *file;
	char		line[SNOWID_IDENTITY_LEN + 128];
	int			version;
	int			start = -1;
	size_t		len;
	bool		ok;

	memset(cache, 0, sizeof(*cache));
	file = AllocateFile(SNOWID_WORKER_FILE, "r");
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m",
							SNOWID_WORKER_FILE)));
		return false;
	}

	ok = fgets(line, sizeof(line), file) != NULL;
	FreeFile(file);
	if (ok && sscanf(line, SNOWID_WORKER_FORMAT_1 "%n",
					 &cache->datacenter_id, &cache->worker_id,
					 &cache->worker_bits, &start) == 3 && start > 0)
		strlcpy(cache->store, "redis", sizeof(cache->store));
	else
		ok = ok && sscanf(line, SNOWID_WORKER_FORMAT "%n", &version,
						  &cache->datacenter_id, &cache->worker_id,
						  &cache->worker_bits, cache->store, &start) == 5 &&
			start > 0 && version == SNOWID_WORKER_VERSION;

	if (ok)
	{
		len = strlen(line + start);
		ok = len > 1 && line[start + len - 1] == '\n' &&
			len - 1 < sizeof(cache->identity);
		if (ok)
			memcpy(cache->identity, line + start, len - 1);
	}
	if (!ok)
	{
		ereport(elevel,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid worker id cache file \"%s\" is corrupt",
						SNOWID_WORKER_FILE)));
		memset(cache, 0, sizeof(*cache));
	}
	return ok;
}

/*
 * snowid_cache_write
 *		Durably replaces the cache file.  A failure costs only the
 *		preference at the next start, so it is a WARNING; a cache that could
 *		not be replaced is removed rather than left naming an older claim.
 */
static void
snowid_cache_write(const SnowidWorkerCache *cache)
{
	char		line[SNOWID_IDENTITY_LEN + 128];

	snprintf(line, sizeof(line),
			 "snowid_worker %d datacenter_id=%d worker_id=%d worker_bits=%d store=%s identity=%s\n",
			 SNOWID_WORKER_VERSION, cache->datacenter_id, cache->worker_id,
			 cache->worker_bits, cache->store, cache->identity);
	if (!snowid_write_line_file(SNOWID_WORKER_FILE, line, WARNING))
		snowid_cache_remove();
}

/*
 * snowid_cache_remove
 *		Durably removes the cache file, if there is one.  A failure is a
 *		WARNING: the file then still names the claim, which a later claim
 *		re-asserts.
 */
static void
snowid_cache_remove(void)
{
	if (access(SNOWID_WORKER_FILE, F_OK) != 0)
	{
		if (errno != ENOENT)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not access file \"%s\": %m",
							SNOWID_WORKER_FILE)));
		return;
	}
	(void) durable_unlink(SNOWID_WORKER_FILE, WARNING);
}

/*
 * snowid_worker_forget_cached
 *		Removes the cache file if it names worker_id: the store gave that id
 *		to another server, so this server's next start must not re-assert
 *		it (checkin.c).
 */
void
snowid_worker_forget_cached(int worker_id)
{
	SnowidWorkerCache cache;

	if (snowid_cache_read(&cache, LOG) && cache.worker_id == worker_id)
		snowid_cache_remove();
}

/*
 * snowid_worker_source_name
 *		The name snowid_status() shows for a worker id's source: a claim
 *		for good is named by its store.
 */
const char *
snowid_worker_source_name(SnowidWorkerSource source)
{
	switch (source)
	{
		case SNOWID_WORKER_CONFIG:
			return "config";
		case SNOWID_WORKER_CLAIM:
			/* the store's name: "redis" as in releases before 1.3 */
			return snowid_store != NULL ? snowid_store->name : "claim";
		case SNOWID_WORKER_LEASE:
			return "lease";
		case SNOWID_WORKER_NONE:
			break;
	}
	return "none";
}

/*
 * snowid_store_report
 *		Reports how a call to the store ended, in the store's words.
 */
static void
snowid_store_report(int elevel, const SnowidStoreRequest *request,
					const SnowidStoreResult *result)
{
	snowid_store->report(elevel, request, result);
}
