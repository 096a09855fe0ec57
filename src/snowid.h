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
	SNOWID_WORKER_CACHE
} SnowidWorkerSource;

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
extern int64 snowid_take(int want, int *got);
extern int64 snowid_local_node_bits(void);

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
} SnowidStatus;

extern void snowid_get_status(SnowidStatus *status);

/* wait_events.c: what a waiting session shows in pg_stat_activity */
typedef enum SnowidWait
{
	SNOWID_WAIT_CLOCK,			/* for the clock to reach the generator */
	SNOWID_WAIT_MARK_WRITE,		/* writing the high-water mark */
	SNOWID_WAIT_WORKER_CLAIM,	/* for another session's worker id claim */
	SNOWID_WAIT_REDIS,			/* on Redis, claiming the worker id */
	SNOWID_WAIT_COUNT
} SnowidWait;

extern uint32 snowid_wait_event(SnowidWait which);

/* worker.c: which worker id this server uses */
extern void snowid_worker_startup(int *worker_id, SnowidWorkerSource *source);
extern void snowid_worker_resolve(int *worker_id, SnowidWorkerSource *source);
extern const char *snowid_worker_source_name(SnowidWorkerSource source);

/* hwm.c: the persisted high-water mark */
typedef struct SnowidMark
{
	SnowidLayout layout;		/* layout and epoch the mark was written with */
	int64		high_water_ms;	/* Unix ms: every id issued lies below it */
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
extern bool snowid_mark_write(const SnowidMark *mark, int elevel);
extern bool snowid_mark_layout_matches(const SnowidMark *mark,
									   const SnowidLayout *layout);
extern bool snowid_write_line_file(const char *path, const char *line,
								   int elevel);

#define SNOWID_MARK_FILE		"snowid_state"
#define SNOWID_WORKER_FILE		"snowid_worker" /* worker.c: the last claim */

#endif							/* SNOWID_H */
