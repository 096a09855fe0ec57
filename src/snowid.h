/*-------------------------------------------------------------------------
 *
 * snowid.h
 *	  Declarations shared by the files of the snowid extension: the bit
 *	  layout of an id, the settings, and the entry points of each file.
 *
 * An id is a positive int64:
 *
 *		0 | timestamp (ms since the epoch) | datacenter | worker | sequence
 *
 * The generator works on a "position": (ms << sequence_bits) | sequence,
 * one number that increases by one for every id it issues.  Turning a
 * position into an id only inserts the datacenter and worker fields.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_H
#define SNOWID_H

#include "datatype/timestamp.h"

#include "compat.h"

/* Twitter's epoch, 2010-11-04 01:42:54.657 UTC, in Unix milliseconds */
#define SNOWID_DEFAULT_EPOCH_MS		INT64CONST(1288834974657)
#define SNOWID_DEFAULT_EPOCH		"2010-11-04 01:42:54.657+00"

#define SNOWID_ID_BITS				63	/* all but the sign bit */
#define SNOWID_MIN_TIMESTAMP_BITS	39	/* about 17 years */

/* At most 24 bits for datacenter, worker and sequence together */
#define SNOWID_MAX_NODE_SEQ_BITS	(SNOWID_ID_BITS - SNOWID_MIN_TIMESTAMP_BITS)

/* The default layout: 41/5/5/12 */
#define SNOWID_DEFAULT_DATACENTER_BITS	5
#define SNOWID_DEFAULT_WORKER_BITS		5
#define SNOWID_DEFAULT_SEQUENCE_BITS	12

/*
 * 10000-01-01 00:00:00 UTC in Unix milliseconds.  Ids hold times before it
 * whatever the layout, so that decoded times fit a timestamptz, time left
 * fits an interval, and serials always have a four-digit year.
 */
#define SNOWID_END_UNIX_MS			INT64CONST(253402300800000)

#define SNOWID_MS_PER_DAY			INT64CONST(86400000)

/* Where the worker id of this server came from */
typedef enum SnowidWorkerSource
{
	SNOWID_WORKER_NONE = 0,
	SNOWID_WORKER_CONFIG,
	SNOWID_WORKER_REDIS,
	SNOWID_WORKER_CACHE,
	SNOWID_WORKER_LEASE			/* on lease from Redis (snowid.worker_lease) */
} SnowidWorkerSource;

/* A lease's token: 16 hex digits and the terminating NUL (lease.h) */
#define SNOWID_LEASE_TOKEN_LEN		17

/* A resolved worker id, as worker.c hands it to the generator */
typedef struct SnowidWorkerClaim
{
	int			worker_id;
	SnowidWorkerSource source;
	int64		floor_ms;		/* ms since the epoch: every id issued with
								 * it before lies below; 0 if none was */
	/* on lease only (source SNOWID_WORKER_LEASE): */
	int64		fence_ms;		/* ids may be issued below this ms */
	int64		lease_expires_ms;	/* Unix ms, by this server's clock */
	char		token[SNOWID_LEASE_TOKEN_LEN];	/* of the claim */
} SnowidWorkerClaim;

/* The bit layout of ids, fixed at server start */
typedef struct SnowidLayout
{
	int64		epoch_ms;		/* Unix ms of timestamp zero */
	int			timestamp_bits;
	int			datacenter_bits;
	int			worker_bits;
	int			sequence_bits;
} SnowidLayout;

/* A decoded id */
typedef struct SnowidParts
{
	int64		ms;				/* since the epoch */
	int			datacenter_id;
	int			worker_id;
	int			sequence;
} SnowidParts;

/* Largest value of a field of the given width (0 to 63 bits) */
#define SNOWID_FIELD_MAX(bits)		((int64) ((UINT64CONST(1) << (bits)) - 1))

/* settings.c: the settings */
extern void snowid_define_settings(bool preloading);
extern int	snowid_datacenter_id;
extern int	snowid_worker_id;
extern int	snowid_max_drift_ms;
extern int	snowid_max_wait_ms;
extern SnowidLayout snowid_layout;
extern char *snowid_redis_key_prefix;
extern int	snowid_redis_timeout_ms;
extern int	snowid_redis_min_replicas;
extern char *snowid_redis_tls_ca_file;
extern char *snowid_redis_tls_cert_file;
extern char *snowid_redis_tls_key_file;
extern int	snowid_worker_lease_ms;
extern bool snowid_release_on_shutdown;

/* snowid.redis_url parsed (see redis_claim.h); NULL when it is not set */
extern const struct SnowidRedisTarget *snowid_redis_target;

/* layout.c: pure functions of the layout, usable without shared memory */
extern int64 snowid_compose(const SnowidLayout *layout, int64 position,
							int64 node_bits);
extern int64 snowid_node_bits(const SnowidLayout *layout, int datacenter_id,
							  int worker_id);
extern void snowid_decompose(const SnowidLayout *layout, int64 id,
							 SnowidParts *parts);
extern void snowid_decompose_checked(const SnowidLayout *layout, int64 id,
									 SnowidParts *parts);
extern int64 snowid_max_ms(const SnowidLayout *layout);
extern TimestampTz snowid_unix_ms_to_timestamptz(int64 unix_ms);
extern bool snowid_timestamptz_to_unix_ms(TimestampTz ts, int64 *unix_ms);
extern bool snowid_parse_epoch(const char *value, int64 *unix_ms,
							   const char **problem);
extern char *snowid_layout_string(const SnowidLayout *layout);

/* generator.c: the shared generator */
extern Size snowid_shmem_size(void);
extern void snowid_shmem_init(void);
extern void snowid_shmem_detach(void);
extern void snowid_require_shmem(void);
extern int64 snowid_take(int want, int *got, int64 *node_bits);
extern void snowid_prepare_backend(void);
extern int64 snowid_generator_ms(void);
extern int64 snowid_usable_ms(void);

/* A copy of the generator's state for snowid_status() */
typedef struct SnowidStatus
{
	int			datacenter_id;
	int			worker_id;		/* -1 until known */
	SnowidWorkerSource worker_source;
	int64		last_ms;		/* ms of the last id issued, -1 if none */
	int64		clock_ms;		/* the wall clock when the copy was made */
	int64		high_water_ms;	/* persisted mark, ms since the epoch */
	uint64		ids_issued;
	uint64		waits;
	uint64		clock_steps;
	uint64		clock_errors;
	int64		fence_ms;		/* lease fence, ms since the epoch; -1 */
	int64		lease_expires_ms;	/* Unix ms by this server's clock; 0 */
	uint64		renewals;
	uint64		renewal_failures;
} SnowidStatus;

extern void snowid_get_status(SnowidStatus *status);

/* generator.c: what the lease renewer (lease.c) does with the generator */
typedef struct SnowidLeaseState
{
	int			worker_id;		/* -1 for none */
	uint32		gen;			/* changes when the worker id comes or goes */
	int64		next_ms;		/* first ms the generator may issue next, or
								 * the clock if later, since the epoch */
	int64		high_water_ms;
	bool		claiming;		/* a claim is under way */
	bool		releasing;		/* a give-back is under way */
	bool		released;		/* given back until a restart */
	char		token[SNOWID_LEASE_TOKEN_LEN];	/* of the lease's claim */
} SnowidLeaseState;

/* What snowid_lease_drop() does with the worker id */
typedef enum SnowidLeaseDrop
{
	SNOWID_DROP_LOST,			/* another server has it: claim another */
	SNOWID_DROP_GIVE_BACK,		/* given back at shutdown: no claim until
								 * snowid_lease_given_back() */
	SNOWID_DROP_RELEASE			/* given back for good, until a restart */
} SnowidLeaseDrop;

extern void snowid_lease_state(SnowidLeaseState *state);
extern bool snowid_lease_extend(uint32 gen, int64 fence_ms,
								int64 expires_ms);
extern bool snowid_lease_drop(uint32 gen, SnowidLeaseDrop how,
							  int *worker_id, int64 *final_ms);
extern void snowid_lease_given_back(void);
extern void snowid_lease_count(bool ok);
extern struct ErrorData *snowid_background_claim(void);

/* lease.c: the lease renewer and giving the id back */
extern void snowid_lease_register(void);
extern void snowid_lease_claim(SnowidWorkerClaim *claim);
extern int	snowid_lease_give_back(bool at_shutdown);

/* wait_events.c: what a waiting session shows in pg_stat_activity */
typedef enum SnowidWait
{
	SNOWID_WAIT_CLOCK,			/* for the clock to reach the generator */
	SNOWID_WAIT_MARK_WRITE,		/* writing the high-water mark */
	SNOWID_WAIT_WORKER_CLAIM,	/* for another session's worker id claim */
	SNOWID_WAIT_REDIS,			/* on Redis, claiming the worker id */
	SNOWID_WAIT_LEASE,			/* the lease renewer, between renewals */
	SNOWID_WAIT_COUNT
} SnowidWait;

extern uint32 snowid_wait_event(SnowidWait which);

/* worker.c: which worker id this server uses */
extern void snowid_worker_startup(int *worker_id, SnowidWorkerSource *source);
extern void snowid_worker_resolve(SnowidWorkerClaim *claim);
extern void snowid_worker_identity(char *identity, size_t len);
extern const char *snowid_worker_source_name(SnowidWorkerSource source);

/* hwm.c: the persisted high-water mark */
typedef struct SnowidMark
{
	SnowidLayout layout;		/* layout and epoch the mark was written with */
	int64		high_water_ms;	/* Unix ms: every id issued lies below it */
	int			max_drift_ms;	/* snowid.max_drift_ms of the server whose
								 * ids the mark covers; 0 if unknown */
	bool		takeover;		/* started as a copy of another server and
								 * has not yet skipped past its ids */
} SnowidMark;

typedef enum SnowidMarkRead
{
	SNOWID_MARK_OK,
	SNOWID_MARK_MISSING,
	SNOWID_MARK_UNREADABLE,		/* the file is there but cannot be read */
	SNOWID_MARK_CORRUPT
} SnowidMarkRead;

extern SnowidMarkRead snowid_mark_read(SnowidMark *mark);
extern bool snowid_mark_valid(const SnowidMark *mark);
extern bool snowid_mark_write(const SnowidMark *mark, int elevel);
extern bool snowid_mark_layout_matches(const SnowidMark *mark,
									   const SnowidLayout *layout);
extern bool snowid_write_line_file(const char *path, const char *line,
								   int elevel);

#define SNOWID_MARK_FILE		"snowid_state"
#define SNOWID_WORKER_FILE		"snowid_worker" /* worker.c: the last claim */

/* The largest snowid.max_drift_ms (settings.c), one hour */
#define SNOWID_MAX_DRIFT_MS		3600000

/*
 * wal.c: the high-water mark in WAL, through a resource manager of its own.
 * Its id is one PostgreSQL leaves to extensions (128 to 255), chosen off
 * the list at https://wiki.postgresql.org/wiki/CustomWALResourceManagers.
 */
#define SNOWID_RMGR_ID			219
#define SNOWID_RMGR_NAME		"snowid"

extern void snowid_wal_register(void);
extern void snowid_wal_log_mark(const SnowidMark *mark);

/* generator.c: a mark replayed from WAL */
extern void snowid_replay_mark(const SnowidMark *mark);

#endif							/* SNOWID_H */
