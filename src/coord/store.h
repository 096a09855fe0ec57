/*-------------------------------------------------------------------------
 *
 * store.h
 *	  The claim store interface: what the coordination layer (src/coord)
 *	  asks of wherever worker ids are kept (Redis, a PostgreSQL
 *	  coordination database), and what every store shares (store.c).
 *	  The registry of stores is src/stores.c.
 *
 * A store keeps, for every worker id of a datacenter, its holder (an
 * identity, for good or on lease), a lease's expiry, floor and token, and
 * the id's fence.  Every store keeps the one fence rule (doc/internals.md,
 * "The fence rule"; a coordination database keeps it in SQL in
 * sql/snowid_coordinator/1.1/fence.sql): for every worker id, each new
 * holder's first id lies above every id any earlier holder could have
 * issued.
 *
 *	 * The fence of a worker id is a Unix time in ms below which lie all ids
 *	   any holder of it issued so far, and all a lease holder may issue
 *	   before its lease runs out.  It only rises, but when the holder of a
 *	   lease gives it back or parks it, having stopped issuing, and never
 *	   below the floor it took the id with.
 *	 * Every claim, for good or on lease, starts at or above the fence it
 *	   finds (its grant's floor), or is refused (SNOWID_CLAIM_FENCED when
 *	   the fence lies past the request's usable_ms).
 *	 * A worker id leaves its holder only with its fence raised first to
 *	   what the holder may have issued: a release, a lease claim that moves
 *	   to another id (or from ids held for good onto a lease), an expired
 *	   lease taken over, an administrator freeing an id of a server gone
 *	   for good.
 *	 * The store's clock, not the caller's, says when a lease has run out;
 *	   each call reads and writes the state of its datacenter atomically
 *	   (one Redis function, one transaction).
 *
 * Every store keeps the forgetting rule too (doc/internals.md, "A
 * coordinator that forgets"): a store may lose what it was told (its data
 * gone, a restore from an older copy, a failover to a replica or standby
 * that missed writes), and then no worker id it grants may be one a live
 * server still issues with.
 *
 *	 * The store keeps, with each datacenter's claims, a state record: the
 *	   server the claims were written under (Redis: its run id, and the
 *	   generation in each of the datacenter's hashes; a coordination
 *	   database: the install of snowid_coordinator, the system
 *	   identifier, the timeline and its postmaster's start, so that every
 *	   restart counts, as Redis' does), a generation (the store's clock when the record
 *	   was made, later than every generation before it) and a counter that
 *	   every call of a holder moves up.
 *	 * Every holder remembers the generation and counter it saw last (in
 *	   shared memory and in a file of its data directory, coord/recall.c)
 *	   and sends them with every claim, renewal and check-in (request.seen);
 *	   the store answers with the record after the call (result.state).
 *	 * The store may have forgotten when it has no record, one of another
 *	   server, or one older than a holder has seen: the holder saw a later
 *	   generation, or a higher counter of the same one (the store went back
 *	   to an older state of itself under the same server: a copy of a
 *	   database's files restored, an older RDB of a Redis whose run id its
 *	   user may not read).  It then makes a new generation, later than any
 *	   it was told of.
 *	 * It then starts a quiet period of the longest quiet_ms any request
 *	   declared (each call during it may lengthen it to its own from the
 *	   start): no worker id is granted but to the server that holds it or
 *	   re-asserts it (request.reassert: an id this server holds, or its
 *	   cache names), and every other claim is refused until its end
 *	   (SNOWID_STORE_QUIET).  It leaves a floor: its end, plus the widest
 *	   clock_margin_ms any request declared, plus its length.  Every grant
 *	   that is not a re-assertion starts at or above it, and is refused as
 *	   quiet until then if the caller cannot start there yet.  A call that
 *	   declares neither (release 1.2, a call by hand) counts as a server of
 *	   the default settings (9 s of quiet, clocks a minute apart), for
 *	   that call only.
 *	 * Every holder re-asserts within quiet_ms: a permanent holder checks
 *	   in (coord/checkin.c) every snowid.checkin_interval, a lease holder renews,
 *	   and a renewal whose lease is gone makes it again in a quiet period.
 *	   A holder whose re-assertion is refused stops issuing at once.
 *	 * Only a holder that runs re-asserts (the restart rule): a restart
 *	   prefers its cache file's id and re-asserts nothing, and after a
 *	   loss the stores take a call that sends request.confirmed_ms (a
 *	   restart of an earlier release, a check-in whose check-in fence was
 *	   reached) as a new claim: its server may have been freed while it
 *	   was stopped and its id granted to another, a grant the store forgot
 *	   (doc/internals.md).
 *	 * An administrator marks a brand-new datacenter (new_datacenter):
 *	   its first claims wait for nothing.  One who knows the store lost
 *	   nothing ends a quiet period (end_quiet), which the refusal's hint
 *	   leaves to them, by the page that explains it (quiet_doc), never as
 *	   a command: neither the store nor a server can tell a loss from a
 *	   restart that kept every claim.  new_datacenter is refused once any
 *	   server called.
 *
 * A store is one folder of src/ with one SnowidStore that names its
 * functions, registered by one line of src/stores.c.  Its functions never
 * ereport(ERROR) but for a cancel or a terminate (CHECK_FOR_INTERRUPTS()
 * while they wait), with everything they opened closed then too; they fill
 * a SnowidStoreResult, whose failures the store's report function turns
 * into messages.  Every wait is bounded by the request's timeout_ms.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COORD_STORE_H
#define SNOWID_COORD_STORE_H

/*
 * The identity of a holder, one rule for both stores (snowid_coordinator's
 * check_identity(), snowid.lua's identity_refused()), which take these two
 * from here (test/tools/protocol): 1 to SNOWID_IDENTITY_MAX bytes, no
 * control character (0x01 to 0x1f, 0x7f), and not beginning with
 * SNOWID_LEASE_HOLDER_PREFIX, which the stores' answers put before an
 * identity to name the holder of a lease.  A server's own identity
 * ("dc=… host=… port=… sysid=… instance=…", coord/request.c) keeps it.
 */
#define SNOWID_IDENTITY_MAX		512
#define SNOWID_LEASE_HOLDER_PREFIX	"lease "

/* A holder name and its NUL */
#define SNOWID_IDENTITY_LEN		(SNOWID_IDENTITY_MAX + 1)

/* A holder as answers name it: an identity, or the prefix and one, and a NUL */
#define SNOWID_HOLDER_LEN \
	(sizeof(SNOWID_LEASE_HOLDER_PREFIX) - 1 + SNOWID_IDENTITY_LEN)

/* Whether a holder an answer names is the holder of a lease */
#define SNOWID_HOLDER_ON_LEASE(holder) \
	(strncmp((holder), SNOWID_LEASE_HOLDER_PREFIX, \
			 sizeof(SNOWID_LEASE_HOLDER_PREFIX) - 1) == 0)

/* Where a store was reached, for messages: "redis at host:port" */
#define SNOWID_STORE_WHERE_LEN	320

/*
 * The worker-id protocol in brief (doc/internals.md; its model
 * src/coord/protocol_min.pml, whose R and M these are; in Redis the
 * functions snowid_4_... of snowid.lua): the longest range of the ids' own
 * time the store grants, ms (a lease no longer; for good, a check-in
 * interval, a timeout and a second), and the clock margin the store counts
 * on: every server's clock within it of the store's clock (assumption 1:
 * relative, not of true time; a call further behind is refused).  A new holder's range starts once the id's fence lies
 * the margin in the store's past; an extend may send an end up to the
 * store's clock plus the longest range and the margin (its clock may have
 * stepped back since the grant); after a possible loss the store grants
 * nothing new for the longest range and three times the margin.
 */
#define SNOWID_RANGE_MAX_MS		60000
#define SNOWID_RANGE_MARGIN_MS	60000

/*
 * The longest a quiet period may last past the plausible (the forgetting
 * rule): a reply naming a later end is refused as corrupt
 */
#define SNOWID_QUIET_MAX_MS		(24 * 3600 * 1000)

/*
 * The largest generation or counter of a state record: every integer up to
 * it is exact in the Redis library's numbers (2^53 - 1)
 */
#define SNOWID_STATE_MAX		INT64CONST(9007199254740991)

/*
 * A datacenter's state record as a holder saw it (the forgetting rule); a
 * generation of 0 for none
 */
typedef struct SnowidStoreSeen
{
	int64		generation;		/* when the record was made, the store's
								 * clock in Unix ms */
	int64		counter;		/* how many calls of holders it has seen */
} SnowidStoreSeen;

/* A sentence saying why a call failed, in the store's own words */
#define SNOWID_STORE_MESSAGE_LEN	256

/* What every call to a store asks for: as whom, for what, how long */
typedef struct SnowidStoreRequest
{
	int			datacenter_id;
	int			explicit_worker_id; /* snowid.worker_id, or -1 to take the
									 * lowest free id */
	int			preferred_worker_id;	/* with explicit_worker_id -1: the id
										 * to take if this identity holds
										 * none and it is free (this server's
										 * last claim), or -1 */
	int			max_worker_id;	/* highest worker id of the bit layout */
	const char *identity;		/* the holder name (request.c) */
	const char *secret;			/* this server's holder secret, 64
								 * lower-case hex digits (holder_secret.c):
								 * sent with every call, never shown */
	int			timeout_ms;		/* the whole call ends within it */
	int64		client_ms;		/* where this server's generator is, Unix
								 * ms: a lease's fence goes a lease past it */
	int64		usable_ms;		/* the latest fence this server can start
								 * above now: its clock plus
								 * snowid.max_drift_ms, Unix ms */
	int64		plausible_ms;	/* the latest fence any snowid server can
								 * have written by now, Unix ms: a later one
								 * is refused as corrupt */
	int64		free_margin_ms; /* the margin a hint's free() names:
								 * snowid.clock_margin, plus
								 * snowid.max_drift_ms, plus 1 */
	int64		quiet_ms;		/* how long a quiet period must last for
								 * every holder like this server to
								 * re-assert its id (the forgetting rule) */
	bool		reassert;		/* the explicit or preferred worker id is
								 * one this server holds or its cache
								 * names: the store may grant it in a
								 * quiet period */
	int64		clock_margin_ms;	/* how far apart the fleet's clocks (and
									 * the store's) may lie
									 * (snowid.clock_margin): the floor a
									 * quiet period leaves lies that far
									 * past its end, and more */
	bool		checkin;		/* a check-in (explicit, reassert): the
								 * store may answer OK from reads alone
								 * when it holds the id for this server and
								 * has not forgotten */
	SnowidStoreSeen seen;		/* the state record this server saw last */
	int64		sent_ms;		/* Unix ms by this server's clock when the
								 * call was sent: a granted call's is kept
								 * (coord/recall.c) */
	int64		sent_mono_ms;	/* the same on the monotonic clock, which
								 * bounds what is kept by the time passed */
	int64		confirmed_ms;	/* a restart's re-assertion only: sent_ms of
								 * this server's last granted call (0: it
								 * does not know), which the store weighs
								 * against its last loss (the confirmed
								 * re-assertion rule); -1: none sent */
	uint32		wait_event_info;	/* shown while waiting on the store */
	bool		client_sees_store;	/* whether the client that sees this
									 * process's messages may learn the
									 * store's hosts, keys and the
									 * identities of servers */
} SnowidStoreRequest;

/* What a lease asks of the store, next to the request */
typedef struct SnowidLeaseRequest
{
	const SnowidStoreRequest *claim;	/* where, as whom, how long to wait;
										 * the preferred worker id is the
										 * one held last, the explicit one
										 * unused */
	int64		lease_ms;		/* snowid.worker_lease */
	int64		wait_ms;		/* a claim: how far past what it can start
								 * above now its own lease's fence may lie
								 * (snowid.max_wait_ms: callers wait for
								 * the clock that long) */
	bool		park;			/* a release: keep the lease, its fence
								 * lowered (a clean stop) */
	const char *token;			/* names one claim: the claim's, and that of
								 * the claim a renewal or release is of */
	/* a renewal or a release only: */
	int			worker_id;		/* the id held */
	int64		fence_ms;		/* Unix ms: renewal, the fence to move up
								 * to; release, the fence to leave */
} SnowidLeaseRequest;

/* How a call to a store ended, as far as the coordination layer cares */
typedef enum SnowidStoreStatus
{
	SNOWID_STORE_OK,
	SNOWID_STORE_UNREACHABLE,	/* the store could not be reached or is
								 * failing over: the next call claims
								 * again, a renewal is tried again */
	SNOWID_STORE_ALL_HELD,		/* every worker id is held */
	SNOWID_STORE_QUIET,			/* the store may have forgotten claims: no
								 * id for this server until retry_ms */
	SNOWID_STORE_REFUSED,		/* the id asked for is another server's,
								 * or fenced past where this server can
								 * start */
	SNOWID_STORE_FAILED			/* anything else: a setting to fix, an
								 * answer that forbids the id */
} SnowidStoreStatus;

/* How a call to a store ended */
typedef struct SnowidStoreResult
{
	SnowidStoreStatus status;
	int			worker_id;		/* OK: the id claimed */
	int64		floor_ms;		/* OK: the id's fence when it was claimed,
								 * Unix ms: every id issued with it lies
								 * below; 0 if it had none */
	int64		retry_ms;		/* QUIET: when the quiet period ends, Unix
								 * ms by the store's clock */
	SnowidStoreSeen state;		/* OK: the state record after the call, if
								 * the store said (generation 0: it did
								 * not), each within 0..SNOWID_STATE_MAX */
	double		elapsed_ms;		/* how long the call took */
	char		where[SNOWID_STORE_WHERE_LEN];	/* the store's server last
												 * talked to, for messages:
												 * "redis at host:port" */
	char		holder[SNOWID_HOLDER_LEN];	/* a lease lost: who holds
												 * the id now, or "" */
	bool		not_holder;		/* FAILED: another holder secret is
								 * registered for this server's name, so
								 * the store takes another server as its
								 * holder */
	char		message[SNOWID_STORE_MESSAGE_LEN];	/* not OK: why, a
													 * sentence */
	void	   *detail;			/* the store's own account, for its report
								 * function */
} SnowidStoreResult;

/* How a renewal or a release ended */
typedef enum SnowidLeaseOutcome
{
	SNOWID_LEASE_OK,
	SNOWID_LEASE_LOST,			/* the id is no longer this server's */
	SNOWID_LEASE_FAILED			/* the store did not answer as it should;
								 * the result says why */
} SnowidLeaseOutcome;

/* What the store granted a lease claim or a renewal, in Unix ms */
typedef struct SnowidLeaseGrant
{
	int			worker_id;
	int64		floor_ms;		/* claim: ids must start at or above it */
	int64		fence_ms;		/* ids must stay below it */
	int64		left_ms;		/* lease left by the store's clock at the
								 * reply */
	int64		refused_fence_ms;	/* renewal: the fence the store holds,
									 * past the one asked for and so not
									 * taken; 0 if none */
} SnowidLeaseGrant;

/* A parsed snowid.coordinator_url, as its store keeps it */
#define SNOWID_STORE_TARGET_MAX		8192

typedef struct SnowidStore
{
	const char *name;			/* "redis": in messages (lower case) and
								 * snowid_status() */
	const char *title;			/* "Redis": in details and hints, within a
								 * sentence */
	const char *title_start;	/* the same at the start of a sentence */
	const char *schemes;		/* its URLs' schemes, for messages:
								 * "redis://, unix://" */

	/* Whether url is this store's (by its scheme) */
	bool		(*accepts) (const char *url);

	/*
	 * Parses url into target (SNOWID_STORE_TARGET_MAX bytes, which the
	 * caller wipes), or says why not in *problem, never quoting a password:
	 * a GUC check hook, no ereport.
	 */
	bool		(*parse) (const char *url, void *target, const char **problem);

	/* The claim for good: the explicit id, the caller's own, or a free one */
	void		(*claim) (const void *target, const SnowidStoreRequest *request,
						  SnowidStoreResult *result);

	/* A lease: taken, renewed, given back or parked */
	void		(*lease_claim) (const void *target,
								const SnowidLeaseRequest *request,
								SnowidLeaseGrant *grant,
								SnowidStoreResult *result);
	SnowidLeaseOutcome (*lease_renew) (const void *target,
									   const SnowidLeaseRequest *request,
									   SnowidLeaseGrant *grant,
									   SnowidStoreResult *result);
	SnowidLeaseOutcome (*lease_release) (const void *target,
										 const SnowidLeaseRequest *request,
										 SnowidStoreResult *result);

	/*
	 * Reports how a call ended at elevel (with ERROR, does not return): a
	 * failure with what to do, or an OK the operator should hear of (a
	 * store that may lose its claims).  Says nothing of the store's hosts,
	 * keys or identities unless request->client_sees_store, but to the
	 * server log.
	 */
	void		(*report) (int elevel, const SnowidStoreRequest *request,
						   const SnowidStoreResult *result);

	/*
	 * A renewal found a fence past the one it asked for, which no holder of
	 * this lease wrote: a WARNING that says where the fence lies in the
	 * store and how an administrator sets it back.
	 */
	void		(*report_refused_fence) (const SnowidStoreRequest *request,
										 const SnowidLeaseGrant *grant);

	/*
	 * Where the documentation says when an administrator may end a quiet
	 * period (end_quiet) and how, for a hint: a page and its section
	 */
	const char *quiet_doc;
} SnowidStore;

/*
 * The store snowid.coordinator_url (or snowid.redis_url) names, and its
 * parsed URL; NULL if none (store.c; set by the settings).
 */
extern const SnowidStore *snowid_store;
extern const void *snowid_store_target;

/* One report of how a call ended: NULL detail or hint for none */
typedef struct SnowidStoreReport
{
	int			sqlstate;
	const char *message;
	const char *detail;
	const char *hint;
} SnowidStoreReport;

/*
 * What every store shares (store.c): the checks of a store's answer (a
 * grant or refusal no store gives the request is refused as a reply of
 * unexpected shape), and the sending of its report
 */
extern bool snowid_store_claim_fits(const SnowidStoreRequest *request,
									int64 worker_id, int64 floor_ms);
extern bool snowid_store_fenced_fits(const SnowidStoreRequest *request,
									 int64 worker_id, int64 fence_ms);
extern bool snowid_store_quiet_fits(const SnowidStoreRequest *request,
									int64 until_ms);
extern bool snowid_store_lease_fits(const SnowidLeaseRequest *request,
									const SnowidLeaseGrant *grant);
extern bool snowid_store_renewal_fits(const SnowidLeaseRequest *request,
									  SnowidLeaseGrant *grant);
extern int	snowid_store_status_errcode(SnowidStoreStatus status);
extern void snowid_store_emit(int elevel, bool client_sees_store,
							  const SnowidStoreReport *full,
							  const SnowidStoreReport *brief);

#endif							/* SNOWID_COORD_STORE_H */
