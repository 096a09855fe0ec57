/*-------------------------------------------------------------------------
 *
 * generator_mark.c
 *	  The generator and its high-water mark: reading it at start, a data
 *	  directory copied from another server (a takeover), marks replayed
 *	  from WAL, and advancing the mark a mark step ahead of the generator.
 *
 * Locking: see shared.h.  The mark is written under lock (an
 * LWLock), never under mutex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "core/generator_mark.h"
#include "core/wait_events.h"
#include "core/wal.h"

static void snowid_write_instance(SnowidShared *s);
static inline int snowid_replayed_mark(const SnowidShared *s, SnowidMark *mark);
static void snowid_warn_unsaved_copy(void);

/*
 * snowid_load_mark
 *		Reads the mark file into a new generator: how reading went, a layout
 *		that does not match ours (unless the mark covers no id, as the one a
 *		server that claims writes at its first start), a pending takeover
 *		(of a cluster with another system identifier, see
 *		snowid_check_copy()), the drift budget of the server the mark came
 *		from and the instance.  Returns the first
 *		millisecond (since our epoch) the generator may issue, 0 without a
 *		usable mark.
 */
int64
snowid_load_mark(SnowidShared *s)
{
	SnowidMark	mark;

	s->mark_status = snowid_mark_read(&mark);
	if (s->mark_status != SNOWID_MARK_OK)
		return 0;
	if (!snowid_mark_layout_matches(&mark, &snowid_layout))
	{
		/* a mark that covers no id (only the instance) binds no layout */
		if (mark.high_water_ms > mark.layout.epoch_ms || mark.takeover)
		{
			s->mark_mismatch = true;
			s->mark_layout = mark.layout;
			s->mark_high_water_ms = mark.high_water_ms;
			return 0;
		}
		mark.high_water_ms = snowid_layout.epoch_ms;
	}
	s->takeover_pending = mark.takeover;
	s->source_drift_ms = mark.max_drift_ms;
	s->mark_datacenter_id = mark.datacenter_id;
	s->mark_worker_id = mark.worker_id;
	if (mark.takeover && mark.system_identifier != 0 &&
		mark.system_identifier != GetSystemIdentifier())
		s->copied_sysid = mark.system_identifier;
	/* a data directory that became another cluster is another instance */
	if (mark.system_identifier == 0 ||
		mark.system_identifier == GetSystemIdentifier())
	{
		s->instance = mark.instance;
		s->instance_saved = (mark.instance != 0);
	}
	return Max(mark.high_water_ms - snowid_layout.epoch_ms, 0);
}

/*
 * snowid_record_takeover
 *		A server that starts in archive recovery, or from a base backup (its
 *		backup_label, also left by pg_rewind), will, once promoted or
 *		recovered, issue ids with the worker id of the server it was copied
 *		from.  Replayed
 *		WAL brings it that server's marks (snowid_replay_mark()); but that
 *		server may have issued ids under marks this one never received, up
 *		to its snowid.max_drift_ms ahead of its clock, so the first id after
 *		the end of recovery must skip ahead of them too
 *		(snowid_skip_after_takeover()).  The signal files are gone after a
 *		promotion, and a crash may come before the first id, so the pending
 *		skip is recorded in the mark file; the next mark written after the
 *		skip clears it.
 *
 *		Every such start is a life of its own, with a new instance, even
 *		with a takeover pending already: a standby restarting, and a copy of
 *		a standby (a base backup taken from it, which brings its mark file
 *		along) that must not claim as that standby once both are promoted.
 *		Nothing is claimed in recovery, so no claim is made under the
 *		instance a standby leaves behind.
 */
void
snowid_record_takeover(SnowidShared *s, int64 mark_ms)
{
	SnowidMark	mark;

	if (access(STANDBY_SIGNAL_FILE, F_OK) != 0 &&
		access(RECOVERY_SIGNAL_FILE, F_OK) != 0 &&
		access(BACKUP_LABEL_FILE, F_OK) != 0)
		return;
	if (s->takeover_pending)
	{
		s->instance = snowid_new_instance();
		s->instance_saved = false;
		snowid_write_instance(s);
		if (!s->instance_saved)
			snowid_warn_unsaved_copy();
		return;
	}
	if (s->mark_mismatch ||
		(s->mark_status != SNOWID_MARK_OK &&
		 s->mark_status != SNOWID_MARK_MISSING))
		return;

	mark.layout = snowid_layout;
	mark.high_water_ms = mark_ms + snowid_layout.epoch_ms;
	mark.max_drift_ms = s->source_drift_ms;
	mark.takeover = true;
	s->instance = snowid_new_instance();
	snowid_mark_owner(s, true, s->worker_id, &mark);
	s->takeover_pending = true;
	s->instance_saved = snowid_mark_write(&mark, WARNING);
	if (!s->instance_saved)
		snowid_warn_unsaved_copy();
}

/*
 * snowid_warn_unsaved_copy
 *		The mark file of a start from a copy could not be written.
 */
static void
snowid_warn_unsaved_copy(void)
{
	ereport(WARNING,
			(errmsg("snowid could not record that this server is a copy of another"),
			 errdetail("If the server crashes after a promotion and before its first id, it may repeat ids of the server it was copied from.  It claims no worker id until the mark is written.")));
}

/*
 * snowid_new_instance
 *		A new random instance id, never 0 (which means unknown).
 */
uint64
snowid_new_instance(void)
{
	uint64		instance = 0;

	while (instance == 0)
	{
		if (!pg_strong_random(&instance, sizeof(instance)))
			ereport(FATAL,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random snowid instance id")));
	}
	return instance;
}

/*
 * snowid_write_instance
 *		Writes the mark file as it stands, naming the instance; the caller
 *		holds lock, or is the postmaster initialising shared memory.  A mark
 *		file that cannot be read, or has another layout, is left as it is:
 *		no id is issued then anyway.
 */
static void
snowid_write_instance(SnowidShared *s)
{
	SnowidMark	mark;

	if (s->instance_saved || s->mark_mismatch ||
		(s->mark_status != SNOWID_MARK_OK &&
		 s->mark_status != SNOWID_MARK_MISSING))
		return;
	SpinLockAcquire(&s->mutex);
	mark.high_water_ms = s->high_water_ms + snowid_layout.epoch_ms;
	mark.takeover = s->takeover_pending;
	mark.max_drift_ms = s->takeover_pending ? s->source_drift_ms :
		snowid_max_drift_ms;
	SpinLockRelease(&s->mutex);
	mark.layout = snowid_layout;
	snowid_mark_owner(s, mark.takeover,
					  s->mark_datacenter_id == snowid_datacenter_id ?
					  s->mark_worker_id : -1, &mark);
	s->instance_saved = snowid_mark_write(&mark, WARNING);
}

/*
 * snowid_record_instance
 *		While shared memory is initialised, after snowid_record_takeover():
 *		a data directory whose mark names no instance of this cluster (a new
 *		cluster, a mark file of an older release, another system identifier)
 *		gets a new one.  With claim (the worker id is resolved on first use,
 *		from a coordinator) it is written into the mark file at once, so that
 *		the holder name is known from the start; else snowid_save_instance()
 *		writes it before anything is claimed under it.
 */
void
snowid_record_instance(SnowidShared *s, bool claim)
{
	if (s->instance == 0)
	{
		s->instance = snowid_new_instance();
		s->instance_saved = false;
	}
	if (claim)
		snowid_write_instance(s);
}

/*
 * snowid_save_instance
 *		Makes sure the mark file names this data directory's instance, so
 *		that every claim made under it is made under a name the next start
 *		shares; returns whether it does.
 */
bool
snowid_save_instance(SnowidShared *s)
{
	bool		saved;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	snowid_write_instance(s);
	saved = s->instance_saved;
	LWLockRelease(s->lock);
	return saved;
}

/*
 * snowid_layout_settings
 *		A layout as the settings that make it, for messages; palloc'd.
 */
char *
snowid_layout_settings(const SnowidLayout *l)
{
	return psprintf("snowid.datacenter_bits = %d, snowid.worker_bits = %d, snowid.sequence_bits = %d and snowid.epoch = '%s'",
					l->datacenter_bits, l->worker_bits, l->sequence_bits,
					timestamptz_to_str(snowid_unix_ms_to_timestamptz(l->epoch_ms)));
}

/*
 * snowid_old_ids_bound
 *		A number above every id issued under the layout and mark found in
 *		the mark file: the smallest id of the mark's millisecond.
 */
int64
snowid_old_ids_bound(const SnowidShared *s)
{
	const SnowidLayout *l = &s->mark_layout;
	int64		ms = s->mark_high_water_ms - l->epoch_ms;

	if (ms <= 0)
		return 0;
	if (ms > SNOWID_FIELD_MAX(l->timestamp_bits))
		return PG_INT64_MAX;
	return ms << (SNOWID_ID_BITS - l->timestamp_bits);
}

/*
 * snowid_replayed_mark
 *		The mark as replay left it, for the mark file: the generator's
 *		high-water mark, with the drift budget of the server it came from.
 *		The caller holds the spinlock (only plain copies happen here) and
 *		names the owner with snowid_mark_owner() once it has released it,
 *		with the worker id returned.
 */
static inline int
snowid_replayed_mark(const SnowidShared *s, SnowidMark *mark)
{
	mark->layout = snowid_layout;
	mark->high_water_ms = s->high_water_ms + snowid_layout.epoch_ms;
	mark->max_drift_ms = s->source_drift_ms;
	mark->takeover = s->takeover_pending;
	return s->worker_id;
}

/*
 * snowid_save_replayed_mark
 *		Before the first id after recovery: writes a replayed mark that could
 *		not be written during replay, and refuses ids until it is written.
 *		Ids below a mark that is only in shared memory would lie above the
 *		mark file after a crash, where replay may not bring the mark back.
 */
void
snowid_save_replayed_mark(SnowidShared *s)
{
	SnowidMark	mark;
	bool		unsaved;
	int			worker_id;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->replay_unsaved)
	{
		SpinLockAcquire(&s->mutex);
		worker_id = snowid_replayed_mark(s, &mark);
		SpinLockRelease(&s->mutex);
		snowid_mark_owner(s, mark.takeover, worker_id, &mark);
		s->replay_unsaved = !snowid_mark_write(&mark, WARNING);
	}
	unsaved = s->replay_unsaved;
	LWLockRelease(s->lock);

	if (unsaved)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not save the snowid high-water mark replayed from WAL"),
				 errdetail("The mark file \"%s\" must cover the marks replayed before this server issues an id; a crash could otherwise bring back an older mark.",
						   SNOWID_MARK_FILE),
				 errhint("The warning before this error says why the file could not be written.  Fix that, then call again.")));
}

/*
 * snowid_skip_after_takeover
 *		Recovery has ended on a server that started in archive recovery: skip
 *		past any id the server it was copied from may have issued.  Those
 *		its replayed marks cover lie below the generator's position already;
 *		the others, with a clock that agrees with ours, lie at most its
 *		snowid.max_drift_ms ahead (see snowid_record_takeover()), that
 *		millisecond included: the first id comes a millisecond after it.  The first
 *		backend to get here skips, and logs where it went.
 */
void
snowid_skip_after_takeover(SnowidShared *s)
{
	int64		now = Max(snowid_clock_ms(), 0);
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int			drift_ms;
	int64		position;
	bool		skipped = false;

	SpinLockAcquire(&s->mutex);
	drift_ms = snowid_takeover_drift_ms(s);
	if (s->takeover_pending)
	{
		s->position = Max(s->position,
						  snowid_last_position(now + drift_ms, max_ms));
		s->takeover_pending = false;
		skipped = true;
	}
	position = s->position;
	SpinLockRelease(&s->mutex);

	if (skipped)
		ereport(LOG,
				(errmsg("snowid continues %lld ms ahead of the clock after recovery",
						(long long) Max((position >> snowid_layout.sequence_bits) + 1 - now, 0)),
				 errdetail("The next id lies above the last high-water mark replayed and past %d ms, the largest of this server's snowid.max_drift_ms and those the server it took over from wrote its marks with, ahead of the clock.",
						   drift_ms)));
}

/*
 * snowid_takeover_drift_ms
 *		How far ahead of the clock the server this one took over from may
 *		have issued ids: its snowid.max_drift_ms as the mark said, or ours if
 *		larger.  Caller holds the mutex, or is alone.
 */
int
snowid_takeover_drift_ms(const SnowidShared *s)
{
	return Max(snowid_max_drift_ms, s->source_drift_ms);
}

/*
 * snowid_foreign_mark
 *		The mark file's line for a replayed mark of another layout or epoch.
 *		Caller holds lock, or is alone.
 */
void
snowid_foreign_mark(const SnowidShared *s, SnowidMark *mark)
{
	mark->layout = s->mark_layout;
	mark->high_water_ms = s->mark_high_water_ms;
	mark->max_drift_ms = s->source_drift_ms;
	mark->takeover = s->takeover_pending;
	snowid_mark_owner(s, mark->takeover, s->worker_id, mark);
}

/*
 * snowid_mark_owner
 *		Says in a mark about to be written whose ids it covers: this
 *		cluster's and this server's node (worker_id as the generator has it),
 *		and the instance of this data directory.  While a takeover is
 *		pending, the node stays the one the copied mark file or the last
 *		replayed mark named, that of the server copied, whatever this
 *		server's own worker id: so snowid_check_copy() compares against the
 *		worker id the copied cluster issued under.  While the takeover of a
 *		cluster with another system identifier is pending, the mark keeps
 *		naming that cluster too, after any number of restarts until the
 *		takeover is made.
 */
void
snowid_mark_owner(const SnowidShared *s, bool takeover, int worker_id,
				  SnowidMark *mark)
{
	bool		copied_node = takeover && s->mark_worker_id >= 0 &&
		!s->mark_mismatch;

	mark->system_identifier = (takeover && s->copied_sysid != 0) ?
		s->copied_sysid : GetSystemIdentifier();
	mark->datacenter_id = copied_node ?
		s->mark_datacenter_id : snowid_datacenter_id;
	mark->worker_id = copied_node ? s->mark_worker_id : worker_id;
	mark->instance = s->instance;
}

/*
 * snowid_check_copy
 *		Before the first id of a takeover: refuses the worker id of the
 *		server this data directory was copied from, if the data directory
 *		has become a cluster of its own since (its system identifier
 *		changed: pg_createsubscriber turns a standby into one) and the
 *		worker id comes from snowid.worker_id.  Unlike a promoted standby,
 *		which replaces its primary, such a server runs next to the one it
 *		was copied from, and both would issue the same ids.  A worker id
 *		claimed from the coordinator is safe: the claim is made under the new
 *		system identifier, so the coordinator hands out one that no running
 *		server holds.
 */
void
snowid_check_copy(SnowidShared *s)
{
	int			worker_id;
	SnowidWorkerSource source;
	bool		takeover;

	if (s->copied_sysid == 0)
		return;

	SpinLockAcquire(&s->mutex);
	worker_id = s->worker_id;
	source = s->worker_source;
	takeover = s->takeover_pending;
	SpinLockRelease(&s->mutex);
	if (!takeover)
		return;

	if (source == SNOWID_WORKER_CONFIG &&
		worker_id == s->mark_worker_id &&
		snowid_datacenter_id == s->mark_datacenter_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid will not issue ids with worker id %d of datacenter %d in a copy of another cluster",
						worker_id, snowid_datacenter_id),
				 errdetail("This data directory was copied from the cluster with system identifier " UINT64_FORMAT " (as a standby or a backup) and has become a cluster of its own, with system identifier " UINT64_FORMAT ", as pg_createsubscriber makes it.  The server it was copied from may still issue ids with this worker id, and the two servers would issue the same ids.",
						   s->copied_sysid, GetSystemIdentifier()),
				 errhint("Set snowid.worker_id to a worker id that no other server of datacenter %d uses, or claim one through snowid.coordinator_url, and restart the server.",
						 snowid_datacenter_id)));

	ereport(LOG,
			(errmsg("snowid takes over the high-water mark of a copy of another cluster with worker id %d of datacenter %d",
					worker_id, snowid_datacenter_id),
			 errdetail("This data directory was copied from the cluster with system identifier " UINT64_FORMAT ", and has system identifier " UINT64_FORMAT " now.",
					   s->copied_sysid, GetSystemIdentifier())));
}

/*
 * snowid_replay_mark
 *		Replays a mark record (wal.c), in the startup process.  The
 *		generator moves up to the mark and remembers the largest drift budget
 *		a writer had, for a takeover (ids issued under a larger budget may
 *		lie further ahead than the last mark's budget says); both go into the mark file before replay goes
 *		on, so that the file always covers every record before the last
 *		restartpoint, which is where a restart resumes replay (PostgreSQL
 *		calls no extension at a restartpoint, so the file cannot wait for
 *		one).  A mark of
 *		another layout or epoch makes the server refuse ids once promoted,
 *		as such a mark file does; the first one seen stays.  Reports no
 *		error: a failed write is retried with the next record, at a clean
 *		shutdown, and before the first id once recovery has ended
 *		(snowid_save_replayed_mark()).
 */
void
snowid_replay_mark(const SnowidMark *mark)
{
	SnowidShared *s = snowid_shared;
	int64		max_ms = snowid_max_ms(&snowid_layout);
	int64		mark_ms = mark->high_water_ms - snowid_layout.epoch_ms;
	bool		foreign = !snowid_mark_layout_matches(mark, &snowid_layout);
	bool		changed = false;
	bool		drift_changed;
	int			worker_id;
	SnowidMark	file;

	Assert(s != NULL);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);

	if (!s->mark_mismatch && foreign)
	{
		s->mark_mismatch = true;
		s->mark_layout = mark->layout;
		s->mark_high_water_ms = mark->high_water_ms;
		changed = true;
	}
	else if (s->mark_mismatch && foreign &&
			 snowid_mark_layout_matches(mark, &s->mark_layout) &&
			 mark->high_water_ms > s->mark_high_water_ms)
	{
		s->mark_high_water_ms = mark->high_water_ms;
		changed = true;
	}

	SpinLockAcquire(&s->mutex);
	if (!s->mark_mismatch && mark_ms > s->high_water_ms)
	{
		s->high_water_ms = mark_ms;
		s->position = Max(s->position,
						  snowid_last_position(mark_ms - 1, max_ms));
		changed = true;
	}
	drift_changed = (mark->max_drift_ms > s->source_drift_ms);
	/* the node the replayed cluster issues under, if the record names it */
	if (mark->worker_id >= 0 &&
		(mark->worker_id != s->mark_worker_id ||
		 mark->datacenter_id != s->mark_datacenter_id))
	{
		s->mark_datacenter_id = mark->datacenter_id;
		s->mark_worker_id = mark->worker_id;
		changed = true;
	}
	s->source_drift_ms = Max(s->source_drift_ms, mark->max_drift_ms);
	worker_id = snowid_replayed_mark(s, &file);
	SpinLockRelease(&s->mutex);
	snowid_mark_owner(s, file.takeover, worker_id, &file);

	if (s->mark_mismatch)
		snowid_foreign_mark(s, &file);
	if ((changed || drift_changed || s->replay_unsaved) &&
		(s->mark_status == SNOWID_MARK_OK ||
		 s->mark_status == SNOWID_MARK_MISSING))
		s->replay_unsaved = !snowid_mark_write(&file, WARNING);
	LWLockRelease(s->lock);

	if (drift_changed && mark->max_drift_ms > snowid_max_drift_ms)
		ereport(LOG,
				(errmsg("snowid replayed a high-water mark written with snowid.max_drift_ms = %d, more than this server's %d",
						mark->max_drift_ms, snowid_max_drift_ms),
				 errdetail("Once promoted, this server starts its ids that far ahead of its clock, and callers wait until the clock is within its own snowid.max_drift_ms."),
				 errhint("Give this server the snowid.max_drift_ms of its primary.")));
}

/*
 * snowid_advance_mark
 *		Moves the persisted high-water mark a step past needed_ms, in the
 *		mark file and in WAL, where standbys and restores find it.  With
 *		wait, blocks for the lock and reports a failed write as an error (no
 *		id can be issued without the mark); without, it is a best-effort
 *		early renewal that gives way to anyone already renewing.  A failed
 *		early renewal warns, and none is tried again until a write succeeds:
 *		a read-only or full disk would otherwise warn on every call for half
 *		a lease.  The mark running out then tries again, and fails with an
 *		error until the write succeeds.
 */
void
snowid_advance_mark(int64 needed_ms, bool wait)
{
	SnowidShared *s = snowid_shared;
	SnowidMark	mark;
	int64		high_water_ms;
	int64		new_ms;
	bool		takeover;
	bool		renewal_failed;
	bool		written;
	int			worker_id;

	if (wait)
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(s->lock, LW_EXCLUSIVE))
		return;

	SpinLockAcquire(&s->mutex);
	high_water_ms = s->high_water_ms;
	takeover = s->takeover_pending;
	renewal_failed = s->renewal_failed;
	worker_id = s->worker_id;
	SpinLockRelease(&s->mutex);

	/* someone renewed it meanwhile, or an early renewal failed before */
	if (high_water_ms > needed_ms + SNOWID_MARK_STEP_MS / 2 ||
		(!wait && renewal_failed))
	{
		LWLockRelease(s->lock);
		return;
	}

	new_ms = Max(needed_ms, snowid_clock_ms()) + SNOWID_MARK_STEP_MS;
	mark.layout = snowid_layout;
	mark.high_water_ms = new_ms + snowid_layout.epoch_ms;
	mark.max_drift_ms = snowid_max_drift_ms;
	mark.takeover = takeover;	/* cleared once the skip is made */
	snowid_mark_owner(s, takeover, worker_id, &mark);
	pgstat_report_wait_start(snowid_wait_event(SNOWID_WAIT_MARK_WRITE));
	written = snowid_mark_write(&mark, wait ? ERROR : WARNING);
	pgstat_report_wait_end();
	if (written)
	{
		/*
		 * File first, then WAL: a base backup copies the file after its
		 * starting checkpoint, so it holds every mark logged before that
		 * checkpoint.  The record is flushed before any id uses the mark.
		 */
		snowid_wal_log_mark(&mark);
	}
	SpinLockAcquire(&s->mutex);
	if (written)
		s->high_water_ms = Max(s->high_water_ms, new_ms);
	s->renewal_failed = !written;
	SpinLockRelease(&s->mutex);
	LWLockRelease(s->lock);
}
