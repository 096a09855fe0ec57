/*-------------------------------------------------------------------------
 *
 * recall.c
 *	  The forgetting rule, what this server remembers of its store
 *	  (coord/store.h): the generation and counter of its datacenter's state
 *	  record that the store answered last, which every claim, renewal and
 *	  check-in sends, so that a store gone back to an older state of itself
 *	  (under the same server: a copy of a coordination database's files
 *	  restored, an older RDB loaded into a Redis whose run id its user may
 *	  not read) finds out and waits, as after any other loss.  And what
 *	  snowid_status() shows of it: when the store last answered, when this
 *	  server last found it had forgotten and re-asserted its id, and until
 *	  when a quiet period refused a claim.
 *
 * What was seen is kept in shared memory and in a file of the data
 * directory, one line:
 *
 *		snowid_store_state 1 store=redis datacenter_id=3 generation=... counter=... confirmed_ms=...
 *
 * written (atomically and durably) whenever the store answers a later
 * state, or a granted call was sent SNOWID_CONFIRMED_STEP_MS or more after
 * the one the file names, and read at the first call after a start.  A file
 * of another store or datacenter is ignored: nothing was seen of this one.
 * confirmed_ms is when this server sent its last call the store granted,
 * by its own clock: a check-in whose check-in fence was reached sends it
 * (checkin.c), and after a loss the store takes such a call as a new claim
 * (the restart rule, coord/store.h); stores of an earlier build weighed it
 * against the loss, as restarts of earlier builds sent it.  A
 * file written before it, without it, counts as 0: unknown, as far back
 * as can be.  The file lags the last granted call by less than the step,
 * which only makes a restart's word older than it is, never newer.
 *
 * A wall clock stepped forward must not make that word newer either: a
 * call granted during a step past the clock margin, the clock put right
 * and the server stopped, would otherwise name a time that real time
 * reaches only later, and a restart then would pass for a server that was
 * live at the store's loss.  So the time kept is the call's monotonic send
 * time plus the least offset of the wall clock from the monotonic one seen
 * in this run (at the start, and at every granted call): a step forward
 * after the start never counts, nor after a crash restart (the postmaster
 * keeps the least offset it saw when it made shared memory), a step back
 * lowers the time kept, and the file goes down as well as up.  A file naming a time past this server's
 * clock (written by a release that kept the largest send time, or before
 * a step back while it was stopped) is sent as 0.  What is not covered: a
 * server started with its clock further ahead than its margin issues ahead
 * of the fleet anyway (doc/internals.md).
 *
 * Locking: lock (an LWLock) protects every field of SnowidRecallShared and
 * the file; it is held across the file's read and write, never across a
 * call to the store.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "coord/recall.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/mark.h"

#define SNOWID_RECALL_FILE		"snowid_store_state"
#define SNOWID_RECALL_FORMAT \
	"snowid_store_state 1 store=%15[a-z] datacenter_id=%d generation=%lld counter=%lld confirmed_ms=%lld\n"

/*
 * How far a granted call must lie past the one the file names for the file
 * to be written for it alone: a check-in answered from reads alone leaves
 * the state record as it was, and writing the file at each would be I/O
 * for a second's worth of precision the rule does not need
 */
#define SNOWID_CONFIRMED_STEP_MS	1000
#define SNOWID_RECALL_TRANCHE	"snowid store state"

typedef struct SnowidRecallShared
{
	/* set once while shared memory is initialised: */
	LWLock	   *lock;

	/* protected by lock: */
	bool		loaded;			/* the file was read since the start */
	int64		saved_confirmed_ms; /* the confirmed_ms the file names */
	int64		least_offset_ms;	/* the least wall clock less monotonic
									 * clock seen in this run */
	int64		confirmed_mono_ms;	/* monotonic send time of the call
									 * confirmed_ms is of; 0: none in this
									 * run */
	SnowidRecallStatus status;
} SnowidRecallShared;

static SnowidRecallShared *snowid_recall = NULL;

/*
 * The least offset of the wall clock from the monotonic one the postmaster
 * saw when it made shared memory: kept in its own memory, which a crash
 * restart keeps while it makes shared memory anew, so that a clock stepped
 * forward after the start does not count after a crash either
 */
static int64 snowid_start_offset_ms = PG_INT64_MAX;

static void snowid_recall_load(void);
static void snowid_recall_save(void);
static bool snowid_seen_later(const SnowidStoreSeen *a,
							  const SnowidStoreSeen *b);

/*
 * snowid_recall_shmem_request
 *		Asks for this file's shared memory and LWLock; called from the shmem
 *		request hook.
 */
void
snowid_recall_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(SnowidRecallShared)));
	RequestNamedLWLockTranche(SNOWID_RECALL_TRANCHE, 1);
}

/*
 * snowid_recall_shmem_init
 *		Creates or attaches to the shared state; called with
 *		AddinShmemInitLock held.
 */
void
snowid_recall_shmem_init(void)
{
	bool		found;

	snowid_recall = ShmemInitStruct("snowid store state",
									sizeof(SnowidRecallShared), &found);
	if (!found)
	{
		memset(snowid_recall, 0, sizeof(*snowid_recall));
		snowid_recall->lock = &(GetNamedLWLockTranche(SNOWID_RECALL_TRANCHE))->lock;
		snowid_start_offset_ms = Min(snowid_start_offset_ms,
									 snowid_unix_ms() - snowid_monotonic_ms());
		snowid_recall->least_offset_ms = snowid_start_offset_ms;
	}
}

/*
 * snowid_recall_seen
 *		The state record this server saw last, to send with a call; nothing
 *		(generation 0) before the first answer, or without shared memory.
 */
void
snowid_recall_seen(SnowidStoreSeen *seen)
{
	memset(seen, 0, sizeof(*seen));
	if (snowid_recall == NULL)
		return;
	LWLockAcquire(snowid_recall->lock, LW_EXCLUSIVE);
	if (!snowid_recall->loaded)
		snowid_recall_load();
	*seen = snowid_recall->status.seen;
	LWLockRelease(snowid_recall->lock);
}

/*
 * snowid_recall_confirmed
 *		When this server sent its last call the store granted, Unix ms by
 *		its clock (0: unknown), to send with a restart's re-assertion; 0 as
 *		well if that lies past its clock now, as counted by the least offset
 *		of this run (no call was sent then).
 */
int64
snowid_recall_confirmed(void)
{
	int64		confirmed_ms;

	if (snowid_recall == NULL)
		return 0;
	LWLockAcquire(snowid_recall->lock, LW_EXCLUSIVE);
	if (!snowid_recall->loaded)
		snowid_recall_load();
	confirmed_ms = snowid_recall->status.confirmed_ms;
	if (confirmed_ms > snowid_monotonic_ms() + snowid_recall->least_offset_ms)
		confirmed_ms = 0;
	LWLockRelease(snowid_recall->lock);
	return confirmed_ms;
}

/*
 * snowid_recall_note
 *		Remembers how a call of this server (request) ended: the store's
 *		state record after an answered call (kept, and written to the file,
 *		if later than the one seen; a new generation means the store had
 *		forgotten, and this call re-asserted into it) and when it was sent,
 *		or the end of a quiet period that refused a claim.
 */
void
snowid_recall_note(const SnowidStoreRequest *request,
				   const SnowidStoreResult *result)
{
	SnowidRecallStatus *st;
	int64		now_ms = snowid_unix_ms();
	bool		save = false;

	if (snowid_recall == NULL ||
		(result->status != SNOWID_STORE_OK &&
		 result->status != SNOWID_STORE_QUIET))
		return;

	LWLockAcquire(snowid_recall->lock, LW_EXCLUSIVE);
	if (!snowid_recall->loaded)
		snowid_recall_load();
	st = &snowid_recall->status;
	if (result->status == SNOWID_STORE_QUIET)
		st->quiet_until_ms = result->retry_ms;
	else
	{
		st->answered_ms = now_ms;
		if (result->state.generation > 0 &&
			snowid_seen_later(&result->state, &st->seen))
		{
			if (st->seen.generation != 0 &&
				result->state.generation != st->seen.generation)
			{
				st->forgot_ms = now_ms;
				st->reassertions++;
			}
			st->seen = result->state;
			save = true;
		}
		if (request->sent_mono_ms > snowid_recall->confirmed_mono_ms)
		{
			int64		saved = snowid_recall->saved_confirmed_ms;

			snowid_recall->least_offset_ms =
				Min(snowid_recall->least_offset_ms,
					request->sent_ms - request->sent_mono_ms);
			snowid_recall->confirmed_mono_ms = request->sent_mono_ms;
			st->confirmed_ms = request->sent_mono_ms +
				snowid_recall->least_offset_ms;
			if (st->confirmed_ms < saved ||
				st->confirmed_ms >= saved + SNOWID_CONFIRMED_STEP_MS)
				save = true;
		}
		if (save)
			snowid_recall_save();
	}
	LWLockRelease(snowid_recall->lock);
}

/*
 * snowid_recall_status
 *		What snowid_status() shows of the store's forgetting.
 */
void
snowid_recall_status(SnowidRecallStatus *status)
{
	memset(status, 0, sizeof(*status));
	if (snowid_recall == NULL)
		return;
	LWLockAcquire(snowid_recall->lock, LW_SHARED);
	*status = snowid_recall->status;
	LWLockRelease(snowid_recall->lock);
}

/*
 * snowid_seen_later
 *		Whether a is a later state record than b: a later generation, or a
 *		higher counter of the same one.
 */
static bool
snowid_seen_later(const SnowidStoreSeen *a, const SnowidStoreSeen *b)
{
	return a->generation > b->generation ||
		(a->generation == b->generation && a->counter > b->counter);
}

/*
 * snowid_recall_load
 *		Reads the file into shared memory, with the lock held exclusively.
 *		A missing file, one of another store or datacenter, or one that
 *		cannot be read leaves nothing seen (a corrupt one with a WARNING).
 */
static void
snowid_recall_load(void)
{
	FILE	   *file;
	char		line[256];
	char		store[16];
	int			datacenter_id;
	long long	generation;
	long long	counter;
	long long	confirmed = 0;
	int			fields;
	bool		ok;

	snowid_recall->loaded = true;
	file = AllocateFile(SNOWID_RECALL_FILE, "r");
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m",
							SNOWID_RECALL_FILE)));
		return;
	}
	/* a file of before confirmed_ms has four fields */
	ok = fgets(line, sizeof(line), file) != NULL &&
		((fields = sscanf(line, SNOWID_RECALL_FORMAT, store, &datacenter_id,
						  &generation, &counter, &confirmed)) == 4 ||
		 fields == 5) &&
		generation > 0 && generation <= SNOWID_STATE_MAX &&
		counter >= 0 && counter <= SNOWID_STATE_MAX &&
		confirmed >= 0 && confirmed <= SNOWID_STATE_MAX;
	FreeFile(file);
	if (!ok)
	{
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowid store state file \"%s\" is corrupt",
						SNOWID_RECALL_FILE),
				 errdetail("This server remembers nothing of the state of its coordinator until it answers again.")));
		return;
	}
	if (snowid_store != NULL && strcmp(store, snowid_store->name) == 0 &&
		datacenter_id == snowid_datacenter_id)
	{
		snowid_recall->status.seen.generation = generation;
		snowid_recall->status.seen.counter = counter;
		snowid_recall->status.confirmed_ms = confirmed;
		snowid_recall->saved_confirmed_ms = confirmed;
	}
}

/*
 * snowid_recall_save
 *		Durably replaces the file with what was seen and when the last
 *		granted call was sent, with the lock held exclusively.  A failure is
 *		logged: the server then remembers less after its next start, no
 *		more.
 */
static void
snowid_recall_save(void)
{
	const SnowidRecallStatus *st = &snowid_recall->status;
	char		line[256];

	if (snowid_store == NULL)
		return;
	snprintf(line, sizeof(line),
			 "snowid_store_state 1 store=%s datacenter_id=%d generation=" INT64_FORMAT " counter=" INT64_FORMAT " confirmed_ms=" INT64_FORMAT "\n",
			 snowid_store->name, snowid_datacenter_id, st->seen.generation,
			 st->seen.counter, st->confirmed_ms);
	(void) snowid_write_line_file(SNOWID_RECALL_FILE, line, LOG);
	snowid_recall->saved_confirmed_ms = st->confirmed_ms;
}
